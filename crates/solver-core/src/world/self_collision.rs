//! Self-collision of cloth and open surfaces: particles of one body kept a thickness apart
//! (Müller, Ten Minute Physics 15, "Self-collision of cloth"), found with a dense spatial hash.
//!
//! Theory. Each particle is a sphere of diameter `r` (the thickness, about the cloth's edge
//! length so that the spheres cover the sheet); a pair closer than `r` gets the contact
//! `|x_i - x_j| >= min(r, |x̄_i - x̄_j|)` (the rest distance `x̄` lowers the bound for
//! neighbours that start closer than `r`). Bounded travel: every velocity is clamped to
//! `max_travel / h` before the substep, so a particle moves at most `max_travel` in it; two
//! particles that end a substep closer than `r` were therefore within `r + 2 max_travel` at
//! its start, which is the query distance of the hash (cell size the same, each pair sought in 14 of the 27 cells around a particle).
//! Two particles joined by a distance constraint get no pair contact
//! ([`SelfCollision::skip_linked`], which [`crate::world::World::enable_self_collision`] applies
//! to the body's distance table): the constraint already holds them at their rest distance,
//! the bound `min(r, rest)` the contact would have kept, and on a sheet such neighbours are
//! most of the pairs the hash finds.
//! The hash is rebuilt every substep (the cadence `benches/world.rs` measures): with the clamp
//! a longer cadence would need a query distance growing with it, so the pair list would grow
//! as the square of it.
//!
//! Remaining failures: particle-particle contact cannot stop a particle crossing a triangle
//! between particles whose spacing exceeds `r`, so a thickness much below the edge length lets
//! sheets pass; a sheet that starts intersected stays tangled (nothing tells which side a
//! particle belongs on); the velocity clamp slows a body moving faster than `max_travel / h`
//! (use more substeps); pair contacts have no friction.

use crate::body::particles::Packed4;
use crate::error::{Result, WobbleError};
use crate::world::contacts::WorldContacts;
use glam::Vec3;

/// The cell itself and the 13 of its 26 neighbours that come after it in (z, y, x) order, as
/// (dz, dy, dx).
const FORWARD_CELLS: [(i32, i32, i32); 14] = [
    (0, 0, 0),
    (0, 0, 1),
    (0, 1, -1),
    (0, 1, 0),
    (0, 1, 1),
    (1, -1, -1),
    (1, -1, 0),
    (1, -1, 1),
    (1, 0, -1),
    (1, 0, 0),
    (1, 0, 1),
    (1, 1, -1),
    (1, 1, 0),
    (1, 1, 1),
];

/// Self-collision settings and the buffers of its spatial hash.
#[derive(Clone, Debug)]
pub struct SelfCollision {
    /// Least distance between two particles (m).
    pub thickness: f32,
    /// Most a particle moves in one substep (m): velocities are clamped to `max_travel / h`.
    pub max_travel: f32,
    rest: Vec<Vec3>,
    cell_start: Vec<u32>,
    cell_entries: Vec<u32>,
    /// The particles each particle is joined to and gets no pair contact with, as a sorted
    /// list per particle: particle `i`'s are `linked[linked_start[i]..linked_start[i + 1]]`
    /// (empty `linked_start`: none).
    linked_start: Vec<u32>,
    linked: Vec<u32>,
    /// Each particle's cell.
    cells: Vec<glam::IVec3>,
}

impl SelfCollision {
    /// Self-collision at `thickness` for a body whose rest positions are `rest` (with
    /// `max_travel` = `thickness`).
    pub fn new(rest: &[Packed4], thickness: f32) -> Result<Self> {
        if !(thickness.is_finite() && thickness > 0.0) {
            return Err(WobbleError::BadParameter {
                name: "self-collision thickness",
                value: thickness as f64,
                reason: "must be finite and > 0 (metres)",
            });
        }
        Ok(SelfCollision {
            thickness,
            max_travel: thickness,
            rest: rest.iter().map(|p| p.xyz()).collect(),
            cell_start: Vec::new(),
            cell_entries: Vec::new(),
            linked_start: Vec::new(),
            linked: Vec::new(),
            cells: Vec::new(),
        })
    }

    /// Leaves out the pair contacts of the particle pairs `pairs` (a body's distance
    /// constraints: module doc); replaces any earlier list.
    pub fn skip_linked(&mut self, pairs: &[[u32; 2]]) -> Result<()> {
        let n = self.rest.len();
        for (c, &[i, j]) in pairs.iter().enumerate() {
            crate::error::check_index("self-collision linked pair", c, i.max(j) as usize, n)?;
        }
        let mut count = vec![0u32; n + 1];
        for &[i, j] in pairs {
            count[i as usize] += 1;
            count[j as usize] += 1;
        }
        let mut start = Vec::with_capacity(n + 1);
        let mut total = 0;
        start.push(0);
        for c in &count[..n] {
            total += c;
            start.push(total);
        }
        let mut fill = start.clone();
        let mut linked = vec![0u32; total as usize];
        for &[i, j] in pairs {
            for (a, b) in [(i, j), (j, i)] {
                linked[fill[a as usize] as usize] = b;
                fill[a as usize] += 1;
            }
        }
        for i in 0..n {
            linked[start[i] as usize..start[i + 1] as usize].sort_unstable();
        }
        self.linked_start = start;
        self.linked = linked;
        Ok(())
    }

    /// True when particles `i` and `j` are joined ([`SelfCollision::skip_linked`]).
    fn linked(&self, i: usize, j: u32) -> bool {
        self.linked_start.len() > i + 1
            && self.linked[self.linked_start[i] as usize..self.linked_start[i + 1] as usize]
                .binary_search(&j)
                .is_ok()
    }

    /// Clamps every velocity to `max_travel / h`.
    pub fn clamp_velocities(&self, v: &mut [Packed4], h: f32) {
        let max = self.max_travel / h;
        for vi in v {
            let s = vi.xyz().length();
            if s > max {
                vi.set_xyz(vi.xyz() * (max / s));
            }
        }
    }

    /// Adds a pair contact for every two particles within the query distance at `x` (the
    /// substep's start).
    pub fn find_pairs(&mut self, x: &[Packed4], out: &mut WorldContacts) -> Result<()> {
        let n = x.len();
        if self.rest.len() != n {
            return Err(WobbleError::IndexOutOfRange {
                what: "self-collision rest positions",
                index: 0,
                value: n as u64,
                len: self.rest.len(),
            });
        }
        let query = self.thickness + 2.0 * self.max_travel;
        let (q2, inv) = (query * query, 1.0 / query);
        // A power of two at least 2n, so that a bucket is a mask of the hash.
        let mask = (2 * n).next_power_of_two() - 1;
        let cell = |p: Vec3| (p * inv).floor().as_ivec3();
        let hash = |c: glam::IVec3| {
            let h = (c.x.wrapping_mul(92_837_111))
                ^ (c.y.wrapping_mul(689_287_499))
                ^ (c.z.wrapping_mul(283_923_481));
            h as u32 as usize & mask
        };
        self.cells.clear();
        self.cells.extend(x.iter().map(|p| cell(p.xyz())));
        self.cell_start.clear();
        self.cell_start.resize(mask + 2, 0);
        for &c in &self.cells {
            self.cell_start[hash(c)] += 1;
        }
        let mut total = 0;
        for s in self.cell_start.iter_mut() {
            total += *s;
            *s = total;
        }
        self.cell_entries.clear();
        self.cell_entries.resize(n, 0);
        for (i, &c) in self.cells.iter().enumerate() {
            let h = hash(c);
            self.cell_start[h] -= 1;
            self.cell_entries[self.cell_start[h] as usize] = i as u32;
        }
        // Each pair once: a particle's own cell (partners after it) and the 13 neighbour cells
        // after it in (z, y, x) order; a bucket may hold other cells too, so every partner's
        // cell is compared.
        let (cells, entries, starts) = (&self.cells, &self.cell_entries, &self.cell_start);
        for (i, p) in x.iter().enumerate() {
            let (pi, c) = (p.xyz(), cells[i]);
            for &(dz, dy, dx) in &FORWARD_CELLS {
                let target = c + glam::IVec3::new(dx, dy, dz);
                let own = (dz, dy, dx) == (0, 0, 0);
                let h = hash(target);
                for &j in &entries[starts[h] as usize..starts[h + 1] as usize] {
                    let ju = j as usize;
                    // SAFETY: every entry is a particle index below n (the fill above), and
                    // `cells` and `x` hold n items.
                    let (cj, xj) = unsafe { (*cells.get_unchecked(ju), *x.get_unchecked(ju)) };
                    if (own && ju <= i) || cj != target {
                        continue;
                    }
                    if (p.w == 0.0 && xj.w == 0.0) || (xj.xyz() - pi).length_squared() >= q2 {
                        continue;
                    }
                    if !self.linked(i, j) {
                        let rest = (self.rest[ju] - self.rest[i]).length();
                        let (a, b) = (i.min(ju) as u32, i.max(ju) as u32);
                        out.push_pair(a, b, self.thickness.min(rest));
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constraints::ConstraintKind;

    /// The hash's pairs are exactly those a test of every pair finds: within the query
    /// distance, not both pinned, not linked; each once.
    #[test]
    fn find_pairs_gives_each_close_pair_once_as_every_pair_tested_does() {
        // A small generator, so that the cloud is the same on every run.
        let mut seed = 0x2545_f491_u32;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as f32 / u32::MAX as f32
        };
        let x: Vec<Packed4> = (0..600)
            .map(|i| {
                let p = Vec3::new(next(), next(), next()) * 0.6 - Vec3::splat(0.3);
                Packed4::new(p, if i % 7 == 0 { 0.0 } else { 1.0 })
            })
            .collect();
        let linked: Vec<[u32; 2]> = (0..599).step_by(3).map(|i| [i, i + 1]).collect();
        let mut sc = SelfCollision::new(&x, 0.05).unwrap();
        sc.max_travel = 0.01;
        sc.skip_linked(&linked).unwrap();
        let mut table = WorldContacts::default();
        table.clear(1.0);
        sc.find_pairs(&x, &mut table).unwrap();
        let mut found: Vec<[u32; 2]> = (0..table.len())
            .map(|c| [table.particles(c)[0], table.particles(c)[1]])
            .collect();
        found.sort_unstable();
        let q = sc.thickness + 2.0 * sc.max_travel;
        let mut expected = Vec::new();
        for i in 0..x.len() {
            for j in i + 1..x.len() {
                let both_pinned = x[i].w == 0.0 && x[j].w == 0.0;
                let close = (x[i].xyz() - x[j].xyz()).length_squared() < q * q;
                let joined = linked.contains(&[i as u32, j as u32]);
                if close && !both_pinned && !joined {
                    expected.push([i as u32, j as u32]);
                }
            }
        }
        assert!(
            expected.len() > 100,
            "the cloud is dense enough to test: {}",
            expected.len()
        );
        assert_eq!(found, expected);
    }
}

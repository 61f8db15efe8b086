//! Self-collision of cloth and open surfaces: particles of one body kept a thickness apart
//! (Müller, Ten Minute Physics 15, "Self-collision of cloth"), found with a dense spatial hash.
//!
//! Theory. Each particle is a sphere of diameter `r` (the thickness, about the cloth's edge
//! length so that the spheres cover the sheet); a pair closer than `r` gets the contact
//! `|x_i - x_j| >= min(r, |x̄_i - x̄_j|)` (the rest distance `x̄` lowers the bound for
//! neighbours that start closer than `r`). Bounded travel: every velocity is clamped to
//! `max_travel / h` before the substep, so a particle moves at most `max_travel` in it; two
//! particles that end a substep closer than `r` were therefore within `r + 2 max_travel` at
//! its start, which is the query distance of the hash (cell size the same, 27 cells searched).
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
        })
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
        self.cell_start.clear();
        self.cell_start.resize(mask + 2, 0);
        for p in x {
            self.cell_start[hash(cell(p.xyz()))] += 1;
        }
        let mut total = 0;
        for s in self.cell_start.iter_mut() {
            total += *s;
            *s = total;
        }
        self.cell_entries.clear();
        self.cell_entries.resize(n, 0);
        for (i, p) in x.iter().enumerate() {
            let h = hash(cell(p.xyz()));
            self.cell_start[h] -= 1;
            self.cell_entries[self.cell_start[h] as usize] = i as u32;
        }
        let mut buckets = [0usize; 27];
        for (i, p) in x.iter().enumerate() {
            let pi = p.xyz();
            let c = cell(pi);
            let mut k = 0;
            for dz in -1..=1 {
                for dy in -1..=1 {
                    for dx in -1..=1 {
                        buckets[k] = hash(c + glam::IVec3::new(dx, dy, dz));
                        k += 1;
                    }
                }
            }
            // Two neighbour cells may share a bucket: visit each bucket once.
            buckets.sort_unstable();
            for (b, &h) in buckets.iter().enumerate() {
                if b > 0 && buckets[b - 1] == h {
                    continue;
                }
                let range = self.cell_start[h] as usize..self.cell_start[h + 1] as usize;
                for &j in &self.cell_entries[range] {
                    let ju = j as usize;
                    if ju <= i || (p.w == 0.0 && x[ju].w == 0.0) {
                        continue;
                    }
                    if (x[ju].xyz() - pi).length_squared() < q2 {
                        let rest = (self.rest[ju] - self.rest[i]).length();
                        out.push_pair(i as u32, j, self.thickness.min(rest));
                    }
                }
            }
        }
        Ok(())
    }
}

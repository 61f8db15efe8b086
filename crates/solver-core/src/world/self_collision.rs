//! Self-collision of cloth and open surfaces: particles of one body kept a thickness apart
//! (Müller, Ten Minute Physics 15, "Self-collision of cloth"), found with a grid of cells (an
//! array over the body's box, or a dense spatial hash where that box is too large).
//!
//! Theory. Each particle is a sphere of diameter `r` (the thickness, about the cloth's edge
//! length so that the spheres cover the sheet); a pair closer than `r` gets the contact
//! `|x_i - x_j| >= min(r, |x̄_i - x̄_j|)` (the rest distance `x̄` lowers the bound for
//! neighbours that start closer than `r`). Bounded travel: every velocity is clamped to
//! `max_travel / h` before the substep, so a particle moves at most `max_travel` in it; two
//! particles that end a substep closer than `r` were therefore within `r + 2 max_travel` at
//! its start, which is the query distance of the grid (cell size the same, each pair sought in
//! 14 of the 27 cells around a particle).
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

use crate::error::{Result, WobbleError};
use crate::geometry::packed::Packed4;
use crate::world::contacts::WorldContacts;
use glam::{IVec3, Vec3, Vec3A, Vec4};

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
    /// The particles each particle is joined to and gets no pair contact with, as a sorted
    /// list per particle: particle `i`'s are `linked[linked_start[i]..linked_start[i + 1]]`
    /// (empty `linked_start`: none).
    linked_start: Vec<u32>,
    linked: Vec<u32>,
    grid: CellGrid,
    /// `marks[j] == i` while `find_pairs` tests the candidates of a particle `i` that `j` is
    /// linked to.
    marks: Vec<u32>,
}

/// The particles sorted by cell for one substep, each cell's entries in descending particle
/// order, and their positions copied into that order so that a cell's scan reads contiguous
/// memory. The buckets are the cells of a dense array over the particles' box
/// ([`CellGrid::build_dense`]) or, for a box too large, those of a spatial hash, where a
/// bucket holds one run of entries per cell that hashes to it.
#[derive(Clone, Debug, Default)]
struct CellGrid {
    /// Each particle's cell.
    cells: Vec<IVec3>,
    /// Each particle's bucket.
    buckets: Vec<u32>,
    /// Start of each bucket's entries, plus the end.
    bucket_start: Vec<u32>,
    /// Particle indices in bucket order, then cell order within a bucket.
    entries: Vec<u32>,
    /// The positions of `entries` (w the inverse mass), in the same order.
    sorted: Vec<Vec4>,
    /// Hash only: for each entry, the end of its cell's run.
    run_end: Vec<u32>,
    /// For each particle, its run (hash only) and its place in `entries`.
    run_of: Vec<u32>,
    place: Vec<u32>,
    /// Hash only: each run's cell and first entry.
    run_cells: Vec<IVec3>,
    run_start: Vec<u32>,
    /// Hash only: the entry ranges of the occupied cells of [`FORWARD_CELLS`] after the first (the run's
    /// own), in that order: run `r`'s are `forward[forward_start[r]..forward_start[r + 1]]`.
    forward: Vec<(u32, u32)>,
    forward_start: Vec<u32>,
    /// Scratch for grouping a bucket that holds several cells.
    scratch: Vec<u32>,
    /// The row length and layer size of the dense grid (`CellGrid::build_dense`) while it
    /// is used; the buckets are then its cells, in (z, y, x) order.
    dense: Option<(usize, usize)>,
}

/// Most cells per particle the dense grid may have (a memset and a prefix sum over them each
/// substep); a larger box uses the hash.
const DENSE_CELLS_PER_PARTICLE: usize = 8;

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
            linked_start: Vec::new(),
            linked: Vec::new(),
            grid: CellGrid::default(),
            marks: Vec::new(),
        })
    }

    /// Follows a change of the body: rest positions from `x` when its particle count changed,
    /// and the linked pairs from `pairs` ([`SelfCollision::skip_linked`]).
    pub fn refit(&mut self, x: &[Packed4], pairs: &[[u32; 2]]) -> Result<()> {
        if x.len() != self.rest.len() {
            self.rest = x.iter().map(|p| p.xyz()).collect();
        }
        self.skip_linked(pairs)
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
        self.grid.build(x, inv);
        // Each particle's linked partners marked with its index while its candidates are
        // tested: one load per candidate instead of a search of its list.
        self.marks.clear();
        self.marks.resize(n, u32::MAX);
        let has_links = self.linked_start.len() == n + 1;
        // Each pair once: a particle's own cell (partners after it, which come before it in
        // the run's descending order) and the 13 neighbour cells after it in (z, y, x) order.
        let g = &self.grid;
        for (i, p) in x.iter().enumerate() {
            if has_links {
                let (s, e) = (
                    self.linked_start[i] as usize,
                    self.linked_start[i + 1] as usize,
                );
                for &j in &self.linked[s..e] {
                    self.marks[j as usize] = i as u32;
                }
            }
            let pi = Vec3A::new(p.x, p.y, p.z);
            let mut ranges = [(0u32, 0u32); 14];
            let count = g.forward_ranges(i, &mut ranges);
            for &(s, e) in &ranges[..count] {
                let (s, e) = (s as usize, e as usize);
                // SAFETY: every range lies within the n entries (`CellGrid::build`), and
                // `sorted` and `entries` hold n items.
                let range = unsafe { g.sorted.get_unchecked(s..e) };
                for (k, &xj) in range.iter().enumerate() {
                    if (Vec3A::from_vec4(xj) - pi).length_squared() >= q2
                        || (p.w == 0.0 && xj.w == 0.0)
                    {
                        continue;
                    }
                    let j = unsafe { *g.entries.get_unchecked(s + k) };
                    let ju = j as usize;
                    if self.marks[ju] != i as u32 {
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

/// `v.floor() as i32` (saturating, NaN to 0) without the library call `floor` is on targets
/// without SSE4.1: a truncation moved down where it rounded up.
#[inline]
fn floor_to_i32(v: f32) -> i32 {
    let t = v as i32;
    t - ((t as f32) > v) as i32
}

impl CellGrid {
    /// The grid as an array of cells over the particles' box (one cell of margin where
    /// [`FORWARD_CELLS`] reach), when that array holds at most [`DENSE_CELLS_PER_PARTICLE`]
    /// cells per particle: a counting sort by cell index in (z, y, x) order then puts the
    /// three cells of a forward row next to each other. Returns false (nothing built) for a
    /// box too large.
    fn build_dense(&mut self, x: &[Packed4]) -> bool {
        let n = x.len();
        let Some((&first, rest)) = self.cells.split_first() else {
            return false;
        };
        let (lo, hi) = rest
            .iter()
            .fold((first, first), |(lo, hi), &c| (lo.min(c), hi.max(c)));
        let span = |l: i32, h: i32, pad: i64| h as i64 - l as i64 + 1 + pad;
        let (nx, ny, nz) = (
            span(lo.x, hi.x, 2),
            span(lo.y, hi.y, 2),
            span(lo.z, hi.z, 1),
        );
        let total = nx * ny * nz;
        if total > (DENSE_CELLS_PER_PARTICLE * n.max(64)) as i64 {
            return false;
        }
        let (nx, ny, total) = (nx as usize, ny as usize, total as usize);
        let origin = lo.wrapping_sub(IVec3::new(1, 1, 0));
        self.buckets.clear();
        self.buckets.extend(self.cells.iter().map(|&c| {
            let d = c.wrapping_sub(origin).as_uvec3();
            ((d.z as usize * ny + d.y as usize) * nx + d.x as usize) as u32
        }));
        self.sort_by_bucket(total);
        self.sorted.clear();
        self.sorted.extend(self.entries.iter().map(|&j| {
            let p = x[j as usize];
            Vec4::new(p.x, p.y, p.z, p.w)
        }));
        self.dense = Some((nx, nx * ny));
        true
    }

    /// Writes the entry ranges particle `i` is tested against, in [`FORWARD_CELLS`] order
    /// (its own cell's part holding the particles after it), into `ranges`; returns how many.
    #[inline]
    fn forward_ranges(&self, i: usize, ranges: &mut [(u32, u32); 14]) -> usize {
        if let Some((nx, layer)) = self.dense {
            let cs = &self.bucket_start;
            let k = self.buckets[i] as usize;
            let row = |first: usize| (cs[first - 1], cs[first + 2]);
            ranges[0] = (cs[k], self.place[i]);
            ranges[1] = (cs[k + 1], cs[k + 2]);
            ranges[2] = row(k + nx);
            ranges[3] = row(k + layer - nx);
            ranges[4] = row(k + layer);
            ranges[5] = row(k + layer + nx);
            return 6;
        }
        let run = self.run_of[i] as usize;
        ranges[0] = (self.run_start[run], self.place[i]);
        let forward =
            &self.forward[self.forward_start[run] as usize..self.forward_start[run + 1] as usize];
        ranges[1..1 + forward.len()].copy_from_slice(forward);
        1 + forward.len()
    }

    /// Counting sort of the particles by `buckets` (each below `slots`): afterwards bucket `b`'s
    /// particles are `entries[bucket_start[b]..bucket_start[b + 1]]`, in descending order (each
    /// bucket is filled from its end in ascending particle order), and `place[i]` is where
    /// particle `i` stands in `entries`.
    fn sort_by_bucket(&mut self, slots: usize) {
        let n = self.buckets.len();
        self.bucket_start.clear();
        self.bucket_start.resize(slots + 1, 0);
        for &b in &self.buckets {
            self.bucket_start[b as usize] += 1;
        }
        let mut sum = 0;
        for s in self.bucket_start.iter_mut() {
            sum += *s;
            *s = sum;
        }
        self.entries.clear();
        self.entries.resize(n, 0);
        self.place.clear();
        self.place.resize(n, 0);
        for (i, &b) in self.buckets.iter().enumerate() {
            let s = &mut self.bucket_start[b as usize];
            *s -= 1;
            self.entries[*s as usize] = i as u32;
            self.place[i] = *s;
        }
    }

    /// Sorts the particles at `x` into cells of size `1 / inv`.
    fn build(&mut self, x: &[Packed4], inv: f32) {
        let n = x.len();
        self.cells.clear();
        self.cells.extend(x.iter().map(|p| {
            let f = |v: f32| floor_to_i32(v * inv);
            IVec3::new(f(p.x), f(p.y), f(p.z))
        }));
        if self.build_dense(x) {
            return;
        }
        self.dense = None;
        // A power of two at least 2n, so that a bucket is a mask of the hash.
        let mask = (2 * n).next_power_of_two() - 1;
        let hash = |c: IVec3| {
            let h = (c.x.wrapping_mul(92_837_111))
                ^ (c.y.wrapping_mul(689_287_499))
                ^ (c.z.wrapping_mul(283_923_481));
            h as u32 & mask as u32
        };
        self.buckets.clear();
        self.buckets.extend(self.cells.iter().map(|&c| hash(c)));
        self.sort_by_bucket(mask + 1);
        // Runs: a bucket that holds several cells is grouped by cell, stably, so that each run
        // keeps the descending order.
        self.run_end.clear();
        self.run_end.resize(n, 0);
        self.run_of.clear();
        self.run_of.resize(n, 0);
        self.run_cells.clear();
        self.run_start.clear();
        for h in 0..=mask {
            let (a, b) = (
                self.bucket_start[h] as usize,
                self.bucket_start[h + 1] as usize,
            );
            if a == b {
                continue;
            }
            let c0 = self.cells[self.entries[a] as usize];
            let mixed = self.entries[a + 1..b]
                .iter()
                .any(|&j| self.cells[j as usize] != c0);
            if mixed {
                self.scratch.clear();
                self.scratch.extend_from_slice(&self.entries[a..b]);
                let mut w = a;
                while w < b {
                    let first = self.scratch.iter().position(|&j| j != u32::MAX).unwrap();
                    let c = self.cells[self.scratch[first] as usize];
                    for j in self.scratch[first..].iter_mut() {
                        if *j != u32::MAX && self.cells[*j as usize] == c {
                            self.entries[w] = *j;
                            w += 1;
                            *j = u32::MAX;
                        }
                    }
                }
            }
            let mut r = a;
            while r < b {
                let c = self.cells[self.entries[r] as usize];
                let mut e = r + 1;
                while e < b && self.cells[self.entries[e] as usize] == c {
                    e += 1;
                }
                let run = self.run_cells.len() as u32;
                self.run_cells.push(c);
                self.run_start.push(r as u32);
                for pos in r..e {
                    let j = self.entries[pos] as usize;
                    self.run_end[pos] = e as u32;
                    self.run_of[j] = run;
                    self.place[j] = pos as u32;
                }
                r = e;
            }
        }
        self.sorted.clear();
        self.sorted.extend(self.entries.iter().map(|&j| {
            let p = x[j as usize];
            Vec4::new(p.x, p.y, p.z, p.w)
        }));
        self.forward.clear();
        self.forward_start.clear();
        self.forward_start.push(0);
        for &c in &self.run_cells {
            for &(dz, dy, dx) in &FORWARD_CELLS[1..] {
                let target = c + IVec3::new(dx, dy, dz);
                let h = hash(target) as usize;
                let (mut s, e) = (
                    self.bucket_start[h] as usize,
                    self.bucket_start[h + 1] as usize,
                );
                while s < e {
                    let end = self.run_end[s] as usize;
                    if self.cells[self.entries[s] as usize] == target {
                        self.forward.push((s as u32, end as u32));
                        break;
                    }
                    s = end;
                }
            }
            self.forward_start.push(self.forward.len() as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constraints::ConstraintKind;

    /// A cloud of 600 particles in a box, one in seven pinned, every third pair linked.
    fn cloud() -> (Vec<Packed4>, Vec<[u32; 2]>) {
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
        (x, linked)
    }

    /// The pairs `find_pairs` gives for `x`, in its order.
    fn pairs_found(x: &[Packed4], linked: &[[u32; 2]]) -> (Vec<[u32; 2]>, f32) {
        let mut sc = SelfCollision::new(x, 0.05).unwrap();
        sc.max_travel = 0.01;
        sc.skip_linked(linked).unwrap();
        let mut table = WorldContacts::default();
        table.clear(1.0);
        sc.find_pairs(x, &mut table).unwrap();
        let found = (0..table.len())
            .map(|c| [table.particles(c)[0], table.particles(c)[1]])
            .collect();
        (found, sc.thickness + 2.0 * sc.max_travel)
    }

    /// The hash's pairs are exactly those a test of every pair finds: within the query
    /// distance, not both pinned, not linked; each once.
    #[test]
    fn find_pairs_gives_each_close_pair_once_as_every_pair_tested_does() {
        let (x, linked) = cloud();
        let (mut found, q) = pairs_found(&x, &linked);
        found.sort_unstable();
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

    /// A particle far from the others makes the box too large for the dense grid, so the
    /// hash is used; it gives the same pairs in the same order (the far particle has none).
    #[test]
    fn find_pairs_gives_the_same_pairs_in_the_same_order_through_the_hash() {
        let (mut x, linked) = cloud();
        let (dense, _) = pairs_found(&x, &linked);
        x.push(Packed4::new(Vec3::splat(1e4), 1.0));
        let (hashed, _) = pairs_found(&x, &linked);
        assert!(dense.len() > 100, "pairs to compare: {}", dense.len());
        assert_eq!(hashed, dense);
    }
}

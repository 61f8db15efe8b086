//! Particle orderings: renumber a body's particles once, and everything that names a particle
//! consistently (constraints of every kind, triangles, tetrahedra, attachments).
//!
//! Theory: a solver sweep touches particles in the order the constraints name them, so the
//! particle numbering decides how far apart in memory two consecutive accesses are.
//! - natural: as the scene built it (row by row for the grids).
//! - shuffled: a seeded uniformly random permutation (Fisher-Yates): the worst case for caches.
//! - reverse Cuthill-McKee (Cuthill & McKee 1969; George 1971): breadth-first search of the
//!   particle graph (particles linked when a constraint holds both) from a pseudo-peripheral
//!   particle, neighbours in ascending degree, then reversed; it makes the graph's adjacency
//!   matrix banded with a small bandwidth.
//! - Morton: particles sorted by the Z-order code of their positions when the ordering is
//!   applied (the rest pose, when applied right after the scene is built as the harness does):
//!   each coordinate quantized to 21 bits over the bounding box, the bits interleaved, so
//!   particles close in space get close numbers.
//!
//! Only particle indices change: constraints keep their order, so a solver that visits
//! constraints in storage order performs the same arithmetic in any numbering (the same result,
//! bit for bit, only the memory layout differs). That is what makes the cache study clean.

use crate::incidence::Incidence;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_pcg::Pcg64;
use solver_core::{Body, WobbleError};
use std::collections::VecDeque;
use std::str::FromStr;

/// The seed `shuffled` uses when none is given.
pub const DEFAULT_SHUFFLE_SEED: u64 = 1;

/// A particle numbering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ordering {
    /// As the scene built it.
    Natural,
    /// A seeded random permutation.
    Shuffled {
        /// Seed of the permutation.
        seed: u64,
    },
    /// Reverse Cuthill-McKee of the particle graph.
    ReverseCuthillMcKee,
    /// Z-order (Morton code) of the rest positions.
    Morton,
}

impl FromStr for Ordering {
    type Err = WobbleError;
    /// Parses `natural`, `shuffled`, `shuffled:SEED`, `rcm` or `morton`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "natural" => Ok(Ordering::Natural),
            "shuffled" => Ok(Ordering::Shuffled {
                seed: DEFAULT_SHUFFLE_SEED,
            }),
            "rcm" => Ok(Ordering::ReverseCuthillMcKee),
            "morton" => Ok(Ordering::Morton),
            other => match other.strip_prefix("shuffled:") {
                Some(seed) => seed
                    .parse()
                    .map(|seed| Ordering::Shuffled { seed })
                    .map_err(|_| WobbleError::UnknownName {
                        what: "ordering",
                        name: other.into(),
                        expected: "shuffled:N with N an unsigned integer".into(),
                    }),
                None => Err(WobbleError::UnknownName {
                    what: "ordering",
                    name: other.into(),
                    expected: "natural, shuffled, shuffled:SEED, rcm or morton".into(),
                }),
            },
        }
    }
}

impl Ordering {
    /// The name the CLI uses (`shuffled` whatever the seed).
    pub fn name(&self) -> &'static str {
        match self {
            Ordering::Natural => "natural",
            Ordering::Shuffled { .. } => "shuffled",
            Ordering::ReverseCuthillMcKee => "rcm",
            Ordering::Morton => "morton",
        }
    }
}

/// Renumbers the body's particles; returns the permutation `new_index[old_index]`.
///
/// Particles (positions, previous positions, velocities, forces, masses), every constraint's
/// particle indices (extra kinds through `ConstraintKind::remap_particles`), triangles,
/// tetrahedra and attachments are renumbered together; the body's topology id changes unless
/// the ordering is natural (the identity, which changes nothing).
pub fn apply_ordering(body: &mut Body, ordering: Ordering) -> Result<Vec<u32>, WobbleError> {
    let n = body.len();
    if n >= u32::MAX as usize {
        return Err(WobbleError::BadCount {
            name: "particles",
            value: n as u64,
            max: u32::MAX as u64 - 1,
        });
    }
    let new_index = match ordering {
        Ordering::Natural => return Ok((0..n as u32).collect()),
        Ordering::Shuffled { seed } => shuffled(n, seed),
        Ordering::ReverseCuthillMcKee => {
            let graph = particle_graph(&Incidence::without_entries(body.constraints(), n)?);
            invert(&reverse_cuthill_mckee(&graph.0, &graph.1))
        }
        Ordering::Morton => morton(body),
    };
    renumber(body, &new_index)?;
    Ok(new_index)
}

/// Applies `new_index[old]` to everything in the body that names a particle
/// ([`Body::renumber_particles`]).
pub fn renumber(body: &mut Body, new_index: &[u32]) -> Result<(), WobbleError> {
    body.renumber_particles(new_index)
}

pub use solver_core::body::check_permutation;

/// The inverse of a permutation: turns a visiting order (`order[new] = old`) into
/// `new_index[old]` and back.
pub fn invert(perm: &[u32]) -> Vec<u32> {
    let mut out = vec![0u32; perm.len()];
    for (a, &b) in perm.iter().enumerate() {
        out[b as usize] = a as u32;
    }
    out
}

fn shuffled(n: usize, seed: u64) -> Vec<u32> {
    let mut v: Vec<u32> = (0..n as u32).collect();
    v.shuffle(&mut Pcg64::seed_from_u64(seed));
    v
}

/// The particle graph as CSR (`offsets`, `neighbours`): particles linked when a constraint
/// holds both; each row ascending, without the particle itself.
pub fn particle_graph(inc: &Incidence) -> (Vec<u32>, Vec<u32>) {
    let n = inc.particles();
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0u32);
    let mut neighbours = Vec::new();
    for p in 0..n {
        let start = neighbours.len();
        for &g in inc.particle_constraints.row(p) {
            neighbours.extend(
                inc.constraint_particles
                    .row(g as usize)
                    .iter()
                    .filter(|&&q| q as usize != p),
            );
        }
        neighbours[start..].sort_unstable();
        let mut w = start;
        for r in start..neighbours.len() {
            if w == start || neighbours[r] != neighbours[w - 1] {
                neighbours[w] = neighbours[r];
                w += 1;
            }
        }
        neighbours.truncate(w);
        offsets.push(neighbours.len() as u32);
    }
    (offsets, neighbours)
}

/// Reverse Cuthill-McKee order of a symmetric graph given as CSR; returns the visiting order
/// (`order[new] = old`). Every connected component is started from a pseudo-peripheral node
/// (George-Liu: repeated BFS from the farthest node of least degree); ties go to the lower
/// index, so the result is deterministic.
pub fn reverse_cuthill_mckee(offsets: &[u32], neighbours: &[u32]) -> Vec<u32> {
    let n = offsets.len() - 1;
    let row = |p: usize| &neighbours[offsets[p] as usize..offsets[p + 1] as usize];
    let degree = |p: usize| offsets[p + 1] - offsets[p];
    let mut order: Vec<u32> = Vec::with_capacity(n);
    let mut placed = vec![false; n];
    let mut level = vec![u32::MAX; n];
    let mut queue = VecDeque::new();
    let mut scratch: Vec<u32> = Vec::new();
    // BFS levels from `root` inside its component; returns (depth, last level's nodes).
    let bfs = |root: usize, level: &mut [u32], touched: &mut Vec<u32>| -> u32 {
        for &t in touched.iter() {
            level[t as usize] = u32::MAX;
        }
        touched.clear();
        level[root] = 0;
        touched.push(root as u32);
        let mut head = 0;
        while head < touched.len() {
            let p = touched[head] as usize;
            head += 1;
            for &q in row(p) {
                if level[q as usize] == u32::MAX {
                    level[q as usize] = level[p] + 1;
                    touched.push(q);
                }
            }
        }
        level[*touched.last().unwrap() as usize]
    };
    let mut touched: Vec<u32> = Vec::new();
    for start in 0..n {
        if placed[start] {
            continue;
        }
        // Pseudo-peripheral node of this component.
        let mut root = start;
        let mut depth = bfs(root, &mut level, &mut touched);
        loop {
            let far = touched
                .iter()
                .copied()
                .filter(|&t| level[t as usize] == depth)
                .min_by_key(|&t| (degree(t as usize), t))
                .unwrap() as usize;
            let d = bfs(far, &mut level, &mut touched);
            if d > depth {
                root = far;
                depth = d;
            } else {
                break;
            }
        }
        // Cuthill-McKee from the root: neighbours in ascending degree.
        placed[root] = true;
        queue.push_back(root as u32);
        while let Some(p) = queue.pop_front() {
            order.push(p);
            scratch.clear();
            scratch.extend(row(p as usize).iter().filter(|&&q| !placed[q as usize]));
            scratch.sort_unstable_by_key(|&q| (degree(q as usize), q));
            for &q in &scratch {
                placed[q as usize] = true;
                queue.push_back(q);
            }
        }
    }
    order.reverse();
    order
}

/// Interleaves the low 21 bits of `v` with two zero bits between each.
fn spread3(v: u64) -> u64 {
    let mut x = v & 0x1f_ffff;
    x = (x | x << 32) & 0x001f_0000_0000_ffff;
    x = (x | x << 16) & 0x001f_0000_ff00_00ff;
    x = (x | x << 8) & 0x100f_00f0_0f00_f00f;
    x = (x | x << 4) & 0x10c3_0c30_c30c_30c3;
    x = (x | x << 2) & 0x1249_2492_4924_9249;
    x
}

/// The Morton code of each particle's position over the body's bounding box.
pub fn morton_codes(body: &Body) -> Vec<u64> {
    let x = &body.particles().x();
    let lo = x.iter().fold([f32::INFINITY; 3], |m, p| {
        [m[0].min(p.x), m[1].min(p.y), m[2].min(p.z)]
    });
    let hi = x.iter().fold([f32::NEG_INFINITY; 3], |m, p| {
        [m[0].max(p.x), m[1].max(p.y), m[2].max(p.z)]
    });
    let cells = ((1u32 << 21) - 1) as f64;
    let quantize = |v: f32, a: usize| -> u64 {
        let extent = (hi[a] - lo[a]) as f64;
        if extent > 0.0 {
            (((v - lo[a]) as f64 / extent) * cells).round() as u64
        } else {
            0
        }
    };
    x.iter()
        .map(|p| {
            spread3(quantize(p.x, 0))
                | spread3(quantize(p.y, 1)) << 1
                | spread3(quantize(p.z, 2)) << 2
        })
        .collect()
}

fn morton(body: &Body) -> Vec<u32> {
    let codes = morton_codes(body);
    let mut order: Vec<u32> = (0..body.len() as u32).collect();
    order.sort_by_key(|&p| (codes[p as usize], p));
    invert(&order)
}

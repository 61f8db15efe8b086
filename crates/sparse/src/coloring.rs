//! Graph coloring of the constraint graph: constraints that share a particle get different
//! colors, so all constraints of one color can be projected at once.
//!
//! Theory: the constraint graph has one node per constraint and an edge between two
//! constraints that share a particle (an off-diagonal entry of `B Bᵀ`, with `B` the incidence).
//! A proper coloring partitions the constraints into independent sets; Gauss-Seidel over the
//! colors in a fixed sequence is then parallel (and SIMD) inside each color.
//!
//! - [`Coloring::greedy`]: constraints in storage order, each takes the smallest color none of
//!   its neighbours holds (at most `Δ + 1` colors, Δ the largest degree). On the cloth it gives 6
//!   colors, the lower bound set by an interior vertex's 6 edges.
//! - [`Coloring::randomized`]: the randomized palette coloring of Vivace (Fratarcangeli,
//!   Tibaldo, Pellacini 2016, "Vivace: a practical Gauss-Seidel method for stable soft body
//!   dynamics", Alg. 1). Each node starts with a palette of `max(1, ⌈deg / shrink⌉)` colors;
//!   each round every uncolored node picks a random color of its palette (tentative coloring),
//!   keeps it when no uncolored neighbour of lower id picked the same one (conflict
//!   resolution; the lowest id wins, so every round colors at least one node), and the kept
//!   colors are removed from the neighbours' palettes; a node whose palette runs empty gets a
//!   new color none of its neighbours holds ("feed the hungry"). Run serially with a seeded
//!   generator, it is deterministic.
//!
//! Inside a color, distance constraints are cut into groups of [`LANES`] for the SIMD kernel;
//! [`ColoringReport`] gives the color count, the balance and that split.

use crate::colored::simd::LANES;
use crate::incidence::Incidence;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use solver_core::WobbleError;

const UNCOLORED: u32 = u32::MAX;

/// A partition of the constraints (global ids) into colors, each an independent set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coloring {
    color_of: Vec<u32>,
    offsets: Vec<u32>,
    members: Vec<u32>,
}

impl Coloring {
    /// Builds the color lists from one color per constraint (colors `0..k`, all used).
    fn from_colors(color_of: Vec<u32>) -> Self {
        let colors = color_of.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
        let mut offsets = vec![0u32; colors + 1];
        for &c in &color_of {
            offsets[c as usize + 1] += 1;
        }
        for k in 0..colors {
            offsets[k + 1] += offsets[k];
        }
        let mut next = offsets.clone();
        let mut members = vec![0u32; color_of.len()];
        for (g, &c) in color_of.iter().enumerate() {
            members[next[c as usize] as usize] = g as u32;
            next[c as usize] += 1;
        }
        Coloring {
            color_of,
            offsets,
            members,
        }
    }

    /// Greedy coloring in storage order (smallest free color first).
    pub fn greedy(inc: &Incidence) -> Self {
        let b = &inc.constraint_particles;
        let bt = &inc.particle_constraints;
        let mut color_of = vec![UNCOLORED; inc.constraints()];
        // stamp[color] == g + 1 marks the color as taken by a neighbour of constraint g.
        let mut stamp: Vec<u32> = Vec::new();
        for g in 0..inc.constraints() {
            let mark = g as u32 + 1;
            for &p in b.row(g) {
                // Rows of Bᵀ are ascending: only constraints before g are colored.
                for &h in bt.row(p as usize) {
                    if h as usize >= g {
                        break;
                    }
                    stamp[color_of[h as usize] as usize] = mark;
                }
            }
            let color = stamp.iter().position(|&s| s != mark).unwrap_or(stamp.len());
            if color == stamp.len() {
                stamp.push(0);
            }
            color_of[g] = color as u32;
        }
        Self::from_colors(color_of)
    }

    /// Randomized palette coloring (Vivace 2016), seeded; `shrink` >= 1 sets the initial
    /// palette size `⌈deg / shrink⌉` (larger: fewer colors, more rounds).
    pub fn randomized(inc: &Incidence, seed: u64, shrink: f32) -> Result<Self, WobbleError> {
        if !(shrink.is_finite() && shrink >= 1.0) {
            return Err(WobbleError::BadParameter {
                name: "palette shrink factor",
                value: shrink as f64,
                reason: "must be finite and >= 1",
            });
        }
        let m = inc.constraints();
        let b = &inc.constraint_particles;
        let bt = &inc.particle_constraints;
        let neighbours = |g: usize| {
            b.row(g)
                .iter()
                .flat_map(move |&p| bt.row(p as usize).iter().copied())
                .filter(move |&h| h as usize != g)
        };
        let mut palette: Vec<Vec<u32>> = (0..m)
            .map(|g| {
                let degree = neighbours(g).count();
                let size = ((degree as f32 / shrink).ceil() as u32).max(1);
                (0..size).collect()
            })
            .collect();
        let mut color_of = vec![UNCOLORED; m];
        let mut tentative = vec![UNCOLORED; m];
        let mut uncolored: Vec<u32> = (0..m as u32).collect();
        let mut kept: Vec<u32> = Vec::new();
        let mut rng = Pcg64::seed_from_u64(seed);
        while !uncolored.is_empty() {
            for &g in &uncolored {
                let p = &palette[g as usize];
                tentative[g as usize] = p[rng.random_range(0..p.len())];
            }
            kept.clear();
            for &g in &uncolored {
                let t = tentative[g as usize];
                let beaten = neighbours(g as usize).any(|h| {
                    h < g && color_of[h as usize] == UNCOLORED && tentative[h as usize] == t
                });
                if !beaten {
                    kept.push(g);
                }
            }
            for &g in &kept {
                color_of[g as usize] = tentative[g as usize];
            }
            for &g in &kept {
                let t = color_of[g as usize];
                for h in neighbours(g as usize) {
                    if color_of[h as usize] == UNCOLORED {
                        palette[h as usize].retain(|&c| c != t);
                    }
                }
            }
            uncolored.retain(|&g| color_of[g as usize] == UNCOLORED);
            for &g in &uncolored {
                if palette[g as usize].is_empty() {
                    // Feed the hungry: the smallest color no neighbour holds.
                    let mut taken: Vec<u32> = neighbours(g as usize)
                        .map(|h| color_of[h as usize])
                        .filter(|&c| c != UNCOLORED)
                        .collect();
                    taken.sort_unstable();
                    taken.dedup();
                    let fresh = taken
                        .iter()
                        .enumerate()
                        .find(|&(k, &c)| c != k as u32)
                        .map_or(taken.len() as u32, |(k, _)| k as u32);
                    palette[g as usize].push(fresh);
                }
            }
        }
        // Renumber the colors actually used as 0..k, keeping their order.
        let top = color_of.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
        let mut renumber = vec![UNCOLORED; top];
        color_of.iter().for_each(|&c| renumber[c as usize] = 0);
        for (next, r) in renumber.iter_mut().filter(|r| **r == 0).enumerate() {
            *r = next as u32;
        }
        color_of.iter_mut().for_each(|c| *c = renumber[*c as usize]);
        Ok(Self::from_colors(color_of))
    }

    /// Number of colors.
    pub fn colors(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// The constraints (global ids, ascending) of color `k`.
    pub fn color(&self, k: usize) -> &[u32] {
        &self.members[self.offsets[k] as usize..self.offsets[k + 1] as usize]
    }

    /// The color of constraint `g`.
    pub fn color_of(&self, g: usize) -> u32 {
        self.color_of[g]
    }

    /// Checks that the coloring covers every constraint of `inc` once and that no color holds
    /// two constraints on one particle.
    pub fn check(&self, inc: &Incidence) -> Result<(), WobbleError> {
        if self.color_of.len() != inc.constraints() || self.members.len() != inc.constraints() {
            return Err(WobbleError::BadCount {
                name: "colored constraints",
                value: self.color_of.len() as u64,
                max: inc.constraints() as u64,
            });
        }
        for k in 0..self.colors() {
            for &g in self.color(k) {
                if self.color_of[g as usize] != k as u32 {
                    return Err(WobbleError::InvalidStructure {
                        what: "coloring",
                        detail: format!(
                            "it lists constraint {g} in color {k} but gives it color {}",
                            self.color_of[g as usize]
                        ),
                    });
                }
            }
        }
        let mut seen = vec![UNCOLORED; self.colors()];
        for p in 0..inc.particles() {
            for &g in inc.particle_constraints.row(p) {
                let c = self.color_of[g as usize] as usize;
                if seen[c] == p as u32 {
                    return Err(WobbleError::InvalidStructure {
                        what: "coloring",
                        detail: format!("color {c} holds two constraints on particle {p}"),
                    });
                }
                seen[c] = p as u32;
            }
        }
        Ok(())
    }

    /// Color count, balance and the SIMD split of each color; the first `distance`
    /// constraints (global ids) are distance constraints, the others go through the generic path.
    pub fn report(&self, distance: usize) -> ColoringReport {
        let sizes: Vec<usize> = (0..self.colors()).map(|k| self.color(k).len()).collect();
        let lanes = (0..self.colors())
            .map(|k| LaneSplit::of(self.color(k), distance))
            .collect();
        let total: usize = sizes.iter().sum();
        let mean = if sizes.is_empty() {
            0.0
        } else {
            total as f64 / sizes.len() as f64
        };
        let largest = sizes.iter().copied().max().unwrap_or(0);
        ColoringReport {
            colors: sizes.len(),
            smallest: sizes.iter().copied().min().unwrap_or(0),
            largest,
            mean,
            balance: if mean > 0.0 {
                largest as f64 / mean
            } else {
                1.0
            },
            sizes,
            lanes,
        }
    }
}

/// How one color splits for the colored solver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaneSplit {
    /// Full SIMD groups of [`LANES`] distance constraints.
    pub simd_groups: usize,
    /// Distance constraints left over after the full groups (projected scalar).
    pub scalar_tail: usize,
    /// Constraints of other kinds (projected through the generic path).
    pub generic: usize,
}

impl LaneSplit {
    /// The split of the constraints `ids` (ascending global ids), of which those below
    /// `distance` are distance constraints.
    pub fn of(ids: &[u32], distance: usize) -> Self {
        let d = ids.partition_point(|&g| (g as usize) < distance);
        LaneSplit {
            simd_groups: d / LANES,
            scalar_tail: d % LANES,
            generic: ids.len() - d,
        }
    }
}

/// Color count and balance of a coloring.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ColoringReport {
    /// Number of colors.
    pub colors: usize,
    /// Constraints per color.
    pub sizes: Vec<usize>,
    /// Smallest color.
    pub smallest: usize,
    /// Largest color.
    pub largest: usize,
    /// Mean color size.
    pub mean: f64,
    /// Largest color over the mean (1 = perfectly balanced).
    pub balance: f64,
    /// The SIMD split of each color.
    pub lanes: Vec<LaneSplit>,
}

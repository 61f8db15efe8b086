//! `colored` on the GPU: the CPU's coloring (sparse's [`Coloring`], greedy or randomized as
//! [`sparse::ColoredOptions::coloring`] says), one dispatch per color per iteration.
//!
//! The constraints are uploaded color after color; within a color no two share a particle, so
//! a thread per constraint projects them all at once with the arithmetic of solver-core's
//! scalar `project_distance_pair`. Tethers leave the colors as on the CPU: batch `r` holds the
//! `r`-th tether of every particle, one dispatch each after the colors of every iteration.
//! This is the CPU's whole-body sweep (the order `Kernel::Scalar` runs on a body too small to
//! tile); on bodies the CPU tiles (at least four tiles of `tile_particles`), the CPU's order
//! differs and so does the rounding.

use crate::error::{GpuError, Result};
use crate::kernels::{storage, uniform, Kernels, Slot};
use crate::solver::{Setup, Solve};
use solver_core::constraints::Tethers;
use solver_core::Constraints;
use sparse::colored::simd::TetherBatch;
use sparse::coloring::Coloring;
use sparse::{ColoringMethod, Incidence, SolverKind};
use std::collections::HashSet;

/// `Color` of `colored.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct ColorRange {
    start: u32,
    count: u32,
    pad: [u32; 2],
}

/// The colored Gauss-Seidel solver's device state.
#[derive(Debug)]
pub(crate) struct Colored {
    kernels: Kernels,
    /// One bind group per color and per tether batch (its range uniform differs), with its size.
    colors: Vec<(wgpu::BindGroup, usize)>,
    /// The coloring's colors (the tether batches follow them in `colors`).
    color_count: usize,
    lambda: wgpu::Buffer,
}

impl Colored {
    /// Colors `constraints` as the CPU solver does and uploads them color after color.
    pub fn new(setup: &Setup) -> Result<Self> {
        let Setup {
            gpu,
            shared,
            constraints,
            rows,
            positions,
            particles,
            kind,
        } = *setup;
        let SolverKind::Colored(opts) = kind else {
            unreachable!("GpuSolver::of picked the colored solver for {kind}")
        };
        let inc = Incidence::without_entries(constraints, particles)?;
        let coloring = match opts.coloring {
            ColoringMethod::Greedy => Coloring::greedy(&inc),
            ColoringMethod::Randomized => {
                Coloring::randomized(&inc, opts.seed, opts.palette_shrink)?
            }
        };
        coloring.check(&inc)?;
        let (tethers, taken) = tether_batches(constraints, positions)?;
        let mut ordered = Vec::with_capacity(rows.len());
        let mut ranges = Vec::with_capacity(coloring.colors() + tethers.len());
        let mut push_range = |ids: &mut dyn Iterator<Item = u32>| {
            let start = ordered.len();
            ordered.extend(ids.map(|g| rows[g as usize]));
            ranges.push(ColorRange {
                start: start as u32,
                count: (ordered.len() - start) as u32,
                pad: [0; 2],
            });
        };
        for k in 0..coloring.colors() {
            push_range(
                &mut coloring
                    .color(k)
                    .iter()
                    .copied()
                    .filter(|g| !taken.contains(g)),
            );
        }
        for batch in &tethers {
            push_range(&mut batch.iter().copied());
        }
        ranges.retain(|r| r.count > 0);
        let color_count = ranges.len() - tethers.iter().filter(|b| !b.is_empty()).count();
        let kernels = Kernels::new(
            gpu,
            "colored",
            include_str!("colored.wgsl"),
            &[
                Slot::Uniform,
                Slot::Storage,
                Slot::Read,
                Slot::Storage,
                Slot::Uniform,
            ],
            &["project_color"],
        );
        let cons = storage(gpu, "colored constraints", &ordered);
        let lambda = storage(gpu, "colored multipliers", &vec![0f32; ordered.len()]);
        let colors = ranges
            .iter()
            .map(|r| {
                let range = uniform(gpu, "color range", r);
                let bind = kernels.bind(gpu, &[&shared.params, &shared.x, &cons, &lambda, &range]);
                (bind, r.count as usize)
            })
            .collect();
        Ok(Colored {
            kernels,
            colors,
            color_count,
            lambda,
        })
    }
}

/// The tethers taken out of the colors, as sparse's `colored` takes them: for each tether table
/// that [`TetherBatch::split`] cuts, its batches (the `r`-th tether of every particle) as global
/// ids, projected after the colors of every iteration; and the set of ids taken. A table the
/// split refuses stays in the colors (where no two constraints share a particle, so a free
/// anchor is moved as on the CPU). A batch runs one thread per tether, so its anchors, which
/// several tethers share, must be pinned (never written); a free anchor there is refused.
fn tether_batches(
    constraints: &Constraints,
    positions: &[[f32; 4]],
) -> Result<(Vec<Vec<u32>>, HashSet<u32>)> {
    let mut batches = Vec::new();
    let mut taken = HashSet::new();
    let mut offset = constraints.distance.len() as u32;
    for kind in &constraints.extra {
        let Some(table) = kind.as_any().downcast_ref::<Tethers>() else {
            offset += kind.len() as u32;
            continue;
        };
        if let Some(split) = TetherBatch::split(table, positions.len())? {
            // Indices were checked by the split.
            if let Some((c, &[_, a])) = (table.pairs.iter().enumerate())
                .find(|(_, &[_, a])| positions[a as usize][3] != 0.0)
            {
                return Err(GpuError::Unsupported(format!(
                    "tether {c} hangs from particle {a}, which is not pinned (the GPU's \
                     colored solver projects a tether batch in parallel, so it writes no anchor; \
                     jacobi and chebyshev run such tethers)"
                )));
            }
            for batch in split {
                let ids: Vec<u32> = batch.ids.iter().map(|&c| offset + c).collect();
                taken.extend(ids.iter().copied());
                batches.push(ids);
            }
        }
        offset += table.pairs.len() as u32;
    }
    Ok((batches, taken))
}

impl Solve for Colored {
    fn begin(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.clear_buffer(&self.lambda, 0, None);
    }

    fn iterate(&self, pass: &mut wgpu::ComputePass) {
        for (bind, count) in &self.colors {
            self.kernels.dispatch(pass, bind, "project_color", *count);
        }
    }

    fn dispatches_per_iteration(&self) -> usize {
        self.colors.len()
    }

    fn colors(&self) -> Option<usize> {
        Some(self.color_count)
    }
}

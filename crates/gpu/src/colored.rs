//! `colored` on the GPU: the CPU's coloring (sparse's [`Coloring`], greedy or randomized as
//! [`SolverOptions::coloring`] says), one dispatch per color per iteration.
//!
//! The constraints are uploaded color after color; within a color no two share a particle, so
//! a thread per constraint projects them all at once with the arithmetic of solver-core's
//! scalar `project_distance_pair`. This is the CPU's whole-body sweep (the order
//! `Kernel::Scalar` runs on a body too small to tile); on bodies the CPU tiles (at least four
//! tiles of `tile_particles`), the CPU's order differs and so does the rounding.

use crate::error::Result;
use crate::kernels::{storage, uniform, Kernels, Slot};
use crate::solver::{Setup, Solve};
use sparse::coloring::Coloring;
use sparse::{ColoringMethod, Incidence};

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
    /// One bind group per color (its range uniform differs), with each color's size.
    colors: Vec<(wgpu::BindGroup, usize)>,
    lambda: wgpu::Buffer,
}

impl Colored {
    /// Colors `constraints` as the CPU solver does and uploads them color after color.
    pub fn new(setup: &Setup) -> Result<Self> {
        let Setup {
            gpu,
            shared,
            constraints,
            particles,
            opts,
        } = *setup;
        let inc = Incidence::without_entries(constraints, particles)?;
        let coloring = match opts.coloring {
            ColoringMethod::Greedy => Coloring::greedy(&inc),
            ColoringMethod::Randomized => {
                Coloring::randomized(&inc, opts.seed, opts.palette_shrink)?
            }
        };
        coloring.check(&inc)?;
        let all = crate::solver::constraint_rows(constraints);
        let mut ordered = Vec::with_capacity(all.len());
        let mut ranges = Vec::with_capacity(coloring.colors());
        for k in 0..coloring.colors() {
            let ids = coloring.color(k);
            ranges.push(ColorRange {
                start: ordered.len() as u32,
                count: ids.len() as u32,
                pad: [0; 2],
            });
            ordered.extend(ids.iter().map(|&g| all[g as usize]));
        }
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
            lambda,
        })
    }
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
        Some(self.colors.len())
    }
}

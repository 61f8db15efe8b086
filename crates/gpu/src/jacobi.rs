//! `jacobi` on the GPU (sparse's [`sparse::jacobi`], same relaxation ω and [`Averaging`]): a
//! dispatch over the constraints writing each one's per-slot corrections into its own entries
//! of the incidence, then a dispatch over the particles summing their entries through the
//! particle -> entries CSR (sparse's [`Incidence`]) in ascending constraint order. No float
//! atomics, so every run gives the same bits.

use crate::error::Result;
use crate::kernels::{storage, zeroed, Kernels, Slot};
use crate::solver::{Setup, Solve};
use sparse::{Averaging, Incidence};

/// How `jacobi.wgsl` numbers [`Averaging`].
pub(crate) fn averaging_code(a: Averaging) -> u32 {
    match a {
        Averaging::Off => 0,
        Averaging::Constraint => 1,
        Averaging::Particle => 2,
    }
}

/// The Jacobi family's device state (also the first half of a Chebyshev iteration).
#[derive(Debug)]
pub(crate) struct Jacobi {
    pub kernels: Kernels,
    pub bind: wgpu::BindGroup,
    pub lambda: wgpu::Buffer,
    /// Each particle's Jacobi step, and its squares (Chebyshev only; 16 bytes otherwise).
    pub steps: wgpu::Buffer,
    pub squares: wgpu::Buffer,
    /// The multipliers before an iteration's update (Chebyshev only).
    pub lambda_k: wgpu::Buffer,
    pub constraints: usize,
    pub particles: usize,
}

impl Jacobi {
    /// Uploads the constraints, the incidence and the counts; `chebyshev` sizes the buffers
    /// the acceleration reads.
    pub fn new(setup: &Setup, chebyshev: bool) -> Result<Self> {
        let Setup {
            gpu,
            shared,
            constraints,
            rows: records,
            particles,
            ..
        } = *setup;
        let inc = Incidence::new(constraints, particles)?;
        let bt = &inc.particle_constraints;
        let counts: Vec<f32> = (0..particles)
            .map(|p| bt.row_range(p).len() as f32)
            .collect();
        let m = records.len();
        let kernels = Kernels::new(
            gpu,
            "jacobi",
            include_str!("jacobi.wgsl"),
            &[
                Slot::Uniform,
                Slot::Storage,
                Slot::Read,
                Slot::Storage,
                Slot::Storage,
                Slot::Read,
                Slot::Read,
                Slot::Read,
                Slot::Storage,
                Slot::Storage,
                Slot::Storage,
            ],
            &["corrections", "apply_steps", "store_steps"],
        );
        let cons = storage(gpu, "jacobi constraints", records);
        let lambda = zeroed(gpu, "jacobi multipliers", 4 * m);
        let corr = zeroed(
            gpu,
            "jacobi corrections",
            16 * inc.constraint_particles.nnz(),
        );
        let counts = storage(gpu, "jacobi counts", &counts);
        let rows = storage(gpu, "jacobi rows", bt.offsets());
        let entries = storage(gpu, "jacobi entries", &inc.particle_entries);
        let (s, q, l) = if chebyshev {
            (16 * particles, 8 * particles, 4 * m)
        } else {
            (16, 16, 16)
        };
        let steps = zeroed(gpu, "jacobi steps", s);
        let squares = zeroed(gpu, "jacobi squares", q);
        let lambda_k = zeroed(gpu, "jacobi multipliers before", l);
        let bind = kernels.bind(
            gpu,
            &[
                &shared.params,
                &shared.x,
                &cons,
                &lambda,
                &corr,
                &counts,
                &rows,
                &entries,
                &steps,
                &squares,
                &lambda_k,
            ],
        );
        Ok(Jacobi {
            kernels,
            bind,
            lambda,
            steps,
            squares,
            lambda_k,
            constraints: m,
            particles,
        })
    }

    /// Phase 1: the corrections of every constraint.
    pub fn corrections(&self, pass: &mut wgpu::ComputePass) {
        self.kernels
            .dispatch(pass, &self.bind, "corrections", self.constraints);
    }
}

impl Solve for Jacobi {
    fn begin(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.clear_buffer(&self.lambda, 0, None);
    }

    fn iterate(&self, pass: &mut wgpu::ComputePass) {
        self.corrections(pass);
        self.kernels
            .dispatch(pass, &self.bind, "apply_steps", self.particles);
    }

    fn dispatches_per_iteration(&self) -> usize {
        2
    }
}

//! `chebyshev` on the GPU (sparse's [`sparse::chebyshev`]: the same delayed start S, the same
//! spectral radius probe when [`sparse::ChebyshevOptions::rho`] is `None`, the same adaptive
//! restart), with the sequence's state on the device: per iteration the Jacobi corrections,
//! each particle's step stored with its squares, a fixed-tree sum of the squares (blocks of
//! 4096 particles, then the blocks in order on one thread, which also decides ω), the
//! extrapolation of the positions, then of the multipliers. The norms are f32 sums (the CPU
//! sums in f64), so a probe may read a slightly different ρ.

use crate::error::Result;
use crate::jacobi::Jacobi;
use crate::kernels::{storage, zeroed, Kernels, Slot};
use crate::solver::{Setup, Solve};
use sparse::chebyshev::MAX_ESTIMATED_RHO;
use sparse::SolverKind;

/// Particles per workgroup of the norm's first stage (`REDUCE_BLOCK` in `chebyshev.wgsl`).
const REDUCE_BLOCK: usize = 4096;

/// `Control` of `chebyshev.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Control {
    rho: f32,
    has_rho: u32,
    probing: u32,
    k: u32,
    norm_a: f32,
    norm_b: f32,
    omega: f32,
    start: u32,
    last_norm: f32,
    restarts: u32,
    delay: u32,
    max_rho: f32,
}

/// The Chebyshev solver's device state.
#[derive(Debug)]
pub(crate) struct Chebyshev {
    jacobi: Jacobi,
    kernels: Kernels,
    bind: wgpu::BindGroup,
    x: wgpu::Buffer,
    prev: wgpu::Buffer,
    prev_lambda: wgpu::Buffer,
    blocks: u32,
}

impl Chebyshev {
    /// The Jacobi state plus the history, the partial sums and the control word.
    pub fn new(setup: &Setup) -> Result<Self> {
        let Setup {
            gpu,
            shared,
            particles,
            kind,
            ..
        } = *setup;
        let SolverKind::Chebyshev(opts) = kind else {
            unreachable!("GpuSolver::of picked the Chebyshev solver for {kind}")
        };
        let jacobi = Jacobi::new(setup, true)?;
        let kernels = Kernels::new(
            gpu,
            "chebyshev",
            include_str!("chebyshev.wgsl"),
            &[
                Slot::Uniform,
                Slot::Storage,
                Slot::Storage,
                Slot::Storage,
                Slot::Storage,
                Slot::Storage,
                Slot::Storage,
                Slot::Storage,
                Slot::Storage,
                Slot::Storage,
            ],
            &[
                "begin",
                "reduce_blocks",
                "decide",
                "extrapolate",
                "extrapolate_multipliers",
            ],
        );
        let m = jacobi.constraints;
        let prev = zeroed(gpu, "chebyshev previous positions", 16 * particles);
        let prev_lambda = zeroed(gpu, "chebyshev previous multipliers", 4 * m);
        let blocks = particles.div_ceil(REDUCE_BLOCK).max(1);
        let partials = zeroed(gpu, "chebyshev partial sums", 8 * blocks);
        let control = Control {
            rho: opts.rho.unwrap_or(0.0),
            has_rho: opts.rho.is_some() as u32,
            probing: 0,
            k: 0,
            norm_a: 0.0,
            norm_b: 0.0,
            omega: 1.0,
            start: 0,
            last_norm: f32::INFINITY,
            restarts: 0,
            delay: opts.delay.min(u32::MAX as usize) as u32,
            max_rho: MAX_ESTIMATED_RHO,
        };
        let control = storage(gpu, "chebyshev control", &[control]);
        let bind = kernels.bind(
            gpu,
            &[
                &shared.params,
                &shared.x,
                &prev,
                &jacobi.lambda,
                &prev_lambda,
                &jacobi.lambda_k,
                &jacobi.steps,
                &jacobi.squares,
                &partials,
                &control,
            ],
        );
        Ok(Chebyshev {
            jacobi,
            kernels,
            bind,
            x: shared.x.clone(),
            prev,
            prev_lambda,
            blocks: blocks as u32,
        })
    }
}

impl Solve for Chebyshev {
    fn begin(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.clear_buffer(&self.jacobi.lambda, 0, None);
        encoder.clear_buffer(&self.prev_lambda, 0, None);
        encoder.copy_buffer_to_buffer(&self.x, 0, &self.prev, 0, None);
    }

    fn begin_in_pass(&self, pass: &mut wgpu::ComputePass) {
        self.kernels
            .dispatch_groups(pass, &self.bind, "begin", 1, 1);
    }

    fn iterate(&self, pass: &mut wgpu::ComputePass) {
        let j = &self.jacobi;
        j.corrections(pass);
        j.kernels
            .dispatch(pass, &j.bind, "store_steps", j.particles);
        self.kernels
            .dispatch_groups(pass, &self.bind, "reduce_blocks", self.blocks, 1);
        self.kernels
            .dispatch_groups(pass, &self.bind, "decide", 1, 1);
        self.kernels
            .dispatch(pass, &self.bind, "extrapolate", j.particles);
        self.kernels
            .dispatch(pass, &self.bind, "extrapolate_multipliers", j.constraints);
    }

    fn dispatches_per_iteration(&self) -> usize {
        6
    }
}

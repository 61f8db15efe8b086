//! # gpu
//!
//! wobble's solvers on the GPU: `colored`, `jacobi` and `chebyshev` as compute kernels (WGSL,
//! the `.wgsl` files beside the modules that run them) on wgpu (Vulkan, Metal, DX12), with the
//! body resident on the device. A [`Gpu`] finds the adapter (a [`GpuError::NoAdapter`], never a
//! panic, when there is none); a [`GpuBody`] is a solver-core [`solver_core::Body`] uploaded
//! with a solver ([`GpuSolver`]: the CPU's `SolverKind`s it runs); [`GpuBody::step`] records a whole step and submits it;
//! [`GpuBody::read_positions`] or [`GpuBody::read_into`] read back, when the caller asks (once
//! per frame for rendering or figures), never inside a step (but in
//! [`GpuBody::step_with_residuals`], which reads back after every iteration for convergence
//! figures).
//!
//! The math is the CPU's: the step loop of solver-core (prediction, pins, attachments, ground
//! planes and spheres with friction and restitution, velocities; substeps split as
//! `StepParams::planned` splits them), the coloring of sparse's `colored`, and the Jacobi and
//! Chebyshev updates of sparse's `jacobi` and `chebyshev` with the same [`SolverKind`] options
//! (ω, averaging, ρ or its probe, the delayed start, the adaptive restart). Distance
//! constraints (bending links among them) and tethers (`colored`: to pinned anchors, as its
//! tether batches share anchors between threads): a body with other constraint kinds, wind or
//! external forces, or another collider shape is refused ([`GpuError::Unsupported`]). The kernels run the CPU's operations
//! in the CPU's order; they may differ in the last bits where the device fuses a multiply-add
//! or rounds a square root differently, which the tests bound.
//!
//! [`SolverKind`]: sparse::SolverKind
//!
//! ## What a step costs
//! Derived from [`GpuBody::step`] (`GpuStepReport` counts the dispatches it recorded): one
//! command submission per step, whatever the substeps and iterations; per substep, with `c`
//! colors, `t` tether batches (the most tethers of one particle; 0 without tethers), `I`
//! iterations and `K` = 1 with colliders (0 without):
//!
//! | solver | dispatches per substep |
//! | --- | --- |
//! | colored | `1 + [attachments] + K + I (c + t + K) + 1 + 2K` |
//! | jacobi | `1 + [attachments] + K + I (2 + K) + 1 + 2K` |
//! | chebyshev | `1 + [attachments] + K + 1 + I (6 + K) + 1 + 2K` |
//!
//! plus, per substep, one buffer clear of the multipliers (chebyshev: two clears and a copy of
//! the positions). Bytes moved per iteration with n particles and m distance constraints (16
//! bytes a particle, 16 a constraint record, 4 a multiplier): `colored` reads each constraint
//! and its multiplier and reads and writes its two particles, about `m (16 + 8 + 64)` bytes
//! over the colors; `jacobi` reads `16 m` of constraints, `32 m` of particles, `8 m` of
//! counts, reads and writes `8 m` of multipliers and writes `32 m` of corrections, then reads
//! the `32 m` corrections and `8 m` of entry indices and reads and writes `32 n` of positions;
//! `chebyshev` adds a `4 m` copy of the multipliers, a `16 n + 8 n` store of the steps and
//! squares, their `8 n` sum, `48 n` of extrapolation and `16 m` of multiplier extrapolation.
//! Nothing crosses the bus inside a step but the 80-byte parameter block written before it;
//! a read-back moves `16 n` bytes per buffer.

mod body;
mod chebyshev;
mod colored;
mod device;
mod error;
mod jacobi;
mod kernels;
mod params;
mod solver;

pub use body::{GpuBody, GpuStepReport};
pub use device::{Gpu, SKIP_MESSAGE};
pub use error::{GpuError, Result};
pub use solver::{GpuSolver, GPU_SOLVER_NAMES};

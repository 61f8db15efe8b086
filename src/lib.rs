//! # wobble
//!
//! Real-time soft-body and cloth solvers (position-based dynamics, PBD and XPBD).
//!
//! This package re-exports the workspace's crates for users:
//! - [`core`] (`solver-core`): particles, constraints, the step loop, SIMD kernels, scenes;
//! - [`sparse`]: the solvers compared (Gauss-Seidel, colored parallel Gauss-Seidel, Jacobi,
//!   Chebyshev, Newton on CSR), built by name with [`sparse::make_solver`].
//!
//! ```
//! use wobble::core::{scenes, step, StepParams, GaussSeidel};
//! let mut cloth = scenes::cloth(16).unwrap();
//! let mut solver = GaussSeidel::new();
//! step(&mut cloth, &StepParams::default(), &mut solver, None).unwrap();
//! ```

pub use glam;
pub use solver_core as core;
pub use sparse;

//! # wobble
//!
//! Real-time soft-body and cloth solvers (position-based dynamics, PBD and XPBD).
//!
//! This package re-exports the workspace's crates for users:
//! - [`core`] (`solver-core`): particles, constraints, the step loop, SIMD kernels, scenes;
//! - [`sparse`]: the solvers compared (Gauss-Seidel, colored parallel Gauss-Seidel, Jacobi,
//!   Chebyshev, Newton on CSR), built by name with [`sparse::make_solver`].
//!
//! A cloth pinned at two corners, hanging under gravity for one second:
//!
//! ```
//! use wobble::core::{figures, scenes, step, GaussSeidel, StepParams};
//!
//! let mut cloth = scenes::cloth(16)?; // 16 x 16 particles, pinned at two corners
//! let mut solver = GaussSeidel::new(); // or wobble::sparse::make_solver("colored", &opts)?
//! let params = StepParams::default(); // 60 frames per second, gravity, 8 iterations
//! for _ in 0..60 {
//!     step(&mut cloth, &params, &mut solver, None)?;
//! }
//! let (mean_stretch, _max) = figures::stretch(&cloth);
//! assert!(figures::lowest_y(&cloth) < 0.5, "it fell and hangs from its pins");
//! assert!(mean_stretch < 0.1, "and it is still a cloth");
//! # Ok::<(), wobble::core::WobbleError>(())
//! ```
//!
//! The examples in `examples/` show what a game does next (`cargo run --release --example NAME`):
//! - `flag`: the flag scene in the wind with the colored solver;
//! - `drag_cloth`: a ray picks a hanging cloth, a grab drags it, it swings back when released;
//! - `jelly_deformer`: the Unity-style jelly deformer on a sphere, poked and springing back;
//! - `embedded_mesh`: a high-resolution render mesh riding on a low-resolution body, with normals.
//! - `custom_solver`: a damped Jacobi solver written outside the crates, beside Gauss-Seidel.
//!
//! Feature `serde` (off by default): [`core::BodyState`], what [`core::Body::state`] saves and
//! [`core::Body::restore`] puts back (to rewind in memory, with or without the feature), is
//! `Serialize` and `Deserialize`, so a game can write it to a save file or send it over a network.

pub use glam;
pub use solver_core as core;
pub use sparse;

//! # wobble
//!
//! Real-time soft-body and cloth solvers (position-based dynamics, PBD and XPBD).
//!
//! This package re-exports the workspace's crates for users:
//! - [`core`] (`solver-core`): particles, constraints, the step loop, colliders, meshes,
//!   builders, the world (the benchmark scenes are in the `scenes` crate, not here);
//! - [`sparse`]: the solvers compared (Gauss-Seidel, colored parallel Gauss-Seidel with its SIMD
//!   kernels, Jacobi, Chebyshev, Gauss-Newton on CSR), each chosen by a [`SolverKind`] with its
//!   own options and built with the [`SolverOptions`] they share;
//! - [`prelude`]: what a game uses, in one `use wobble::prelude::*;`;
//!
//! and, at the root, what a game loop needs: the builders ([`Cloth`], [`Flag`], [`Rope`],
//! [`SoftBody`], [`TetBody`]), [`step()`] with its [`StepParams`], the solvers, [`Collider`]
//! constructors, read-back ([`Body::positions_into`], in world coordinates, and [`vertex_normals_into`]) and
//! [`picking`] (a [`Picker`], grabs and [`picking::grab_state`]).
//!
//! A cloth pinned at two corners, hanging under gravity for one second:
//!
//! ```
//! use wobble::{figures, glam::Vec3, step, Cloth, GaussSeidel, StepParams};
//!
//! let mut cloth = Cloth::new().resolution(16, 16).at(Vec3::Y).pin_corners().build()?;
//! let mut solver = GaussSeidel::new(); // or, parallel: see the next example
//! for _ in 0..60 {
//!     step(&mut cloth, &StepParams::default(), &mut solver, None)?; // 1/60 s, gravity
//! }
//! let mut vertices = vec![[0.0f32; 3]; cloth.len()]; // what a vertex buffer holds
//! cloth.positions_into(&mut vertices)?; // world positions
//! assert!(vertices.iter().all(|v| v[1] <= 1.0), "it fell and hangs from its pins");
//! assert!(figures::stretch(&cloth).0 < 0.1, "and it is still a cloth");
//! # Ok::<(), wobble::WobbleError>(())
//! ```
//!
//! Another solver, with options of its own: colored Gauss-Seidel on two threads, relaxed Jacobi.
//!
//! ```
//! use wobble::{ColoredOptions, JacobiOptions, SolverKind, SolverOptions};
//!
//! let threads = SolverOptions { threads: 2, ..Default::default() }; // what every solver shares
//! # let threads = if wobble::sparse::PARALLEL { threads } else { SolverOptions::default() };
//! let colored = SolverKind::Colored(ColoredOptions::default()).build(&threads)?;
//! let relaxed = JacobiOptions { omega: 0.8, ..Default::default() };
//! let jacobi = SolverKind::Jacobi(relaxed).build(&threads)?;
//! assert_eq!((colored.name(), jacobi.name()), ("colored", "jacobi"));
//! # Ok::<(), wobble::WobbleError>(())
//! ```
//!
//! The examples in `examples/` show what a game does next (`cargo run --release --example NAME`):
//! - `flag`: a flag on a pole in the wind, stepped with the colored solver, read back with
//!   normals every frame;
//! - `drag_cloth`: a ray picks a hanging cloth, a grab drags it, it swings back when released;
//! - `jelly_deformer`: the Unity-style jelly deformer on a sphere, poked and springing back;
//! - `embedded_mesh`: a high-resolution render mesh riding on a low-resolution soft body, with
//!   normals;
//! - `custom_solver`: a damped Jacobi solver written outside the crates;
//! - `cape`: a cape skinned to an animated torso over a capsule proxy (joint matrices in,
//!   positions and normals out);
//! - `many_bodies`: eight hammocks with a soft ball in each, one `World` on a shared pool.
//!
//! Several bodies: give each its own solver, and the parallel solvers one shared [`Pool`]
//! (`SolverOptions { pool: Some(Pool::new(2)?), .. }`), never a pool per body. Bodies that
//! touch go into one [`World`], which spreads them over rayon's current pool, or over the
//! game's pool with `World::set_executor(Some(pool.world_executor()))` (for a pool of one
//! thread that is the caller's thread; `Pool::executor` is `None` there, which would mean
//! rayon's pool), each body's solver serial. Grabbing,
//! moving a grab, releasing and moving attachments cost no re-preparation; tearing and adding
//! constraints do (see [`Solver`]). [`step()`] splits a frame longer than
//! [`StepParams::max_substep`] into substeps and says so in its [`StepReport`].
//!
//! Feature `parallel` (on by default): rayon threads for the parallel solvers; without it every
//! solver runs on the caller's thread.
//!
//! Feature `gpu` (off by default): `wobble::gpu`, the GPU backend (`colored`, `jacobi` and
//! `chebyshev` as wgpu compute kernels on a body resident on the device).
//!
//! Feature `rapier` (off by default): `World::set_rapier` steps a rapier3d world with the
//! world's soft bodies, whose contacts push the rigid bodies back (`tests/world_rapier.rs`);
//! `wobble::RapierCoupling` is one body with a rapier world (example `jelly_knocks_box`).
//!
//! Feature `serde` (off by default): [`core::BodyState`], what [`core::Body::state`] saves and
//! [`core::Body::restore`] puts back (to rewind in memory, with or without the feature), is
//! `Serialize` and `Deserialize`, so a game can write it to a save file or send it over a network.

pub use glam;
#[cfg(feature = "gpu")]
pub use gpu;
pub use solver_core as core;
pub use sparse;

pub use solver_core::build::{Bending, Cloth, Flag, Rope, SoftBody, TetBody};
pub use solver_core::figures;
pub use solver_core::interaction::picking;
pub use solver_core::interaction::picking::{GrabId, GrabState, Hit, Picker};
pub use solver_core::mesh::vertex_normals_into;
pub use solver_core::step::{StepReport, StepWarning};
pub use solver_core::{
    step, Body, BodyHandle, Collider, ColliderHandle, GaussSeidel, MeshCollider, Shape, Skin,
    Solver, StepParams, Wind, WobbleError, World, WorldReport,
};
pub use sparse::{
    ChebyshevOptions, ColoredOptions, GaussNewtonOptions, InnerSolve, JacobiOptions, Pool,
    SolverKind, SolverOptions,
};

/// Two-way coupling with rapier3d rigid bodies (feature `rapier`), and rapier itself.
#[cfg(feature = "rapier")]
pub use solver_core::coupling::rapier::{self as rapier_coupling, rapier3d, RapierCoupling};

/// What a game uses, in one import: `use wobble::prelude::*;`. Bodies and their builders, the
/// world and its handles, colliders and shapes, skinning, the step and its parameters, the
/// solvers and their options, the error type and glam's vectors.
pub mod prelude {
    pub use crate::glam::{DVec3, Mat4, Quat, Vec3};
    #[cfg(feature = "rapier")]
    pub use crate::RapierCoupling;
    pub use solver_core::build::{Bending, Cloth, Flag, Rope, SoftBody, TetBody};
    pub use solver_core::step::{StepReport, StepWarning, Stiffness};
    pub use solver_core::{
        step, Body, BodyHandle, Collider, ColliderHandle, GaussSeidel, Material, MeshCollider,
        Particles, Result, SelfCollision, Shape, Skin, SkinDesc, SkinningMethod, Solver,
        StepParams, Wind, WobbleError, World, WorldBody, WorldReport,
    };
    pub use sparse::{
        ChebyshevOptions, ColoredOptions, JacobiOptions, Pool, SolverKind, SolverOptions,
    };
}

//! # solver-core
//!
//! The data and the hot kernels of wobble, a position-based dynamics (PBD/XPBD) library.
//!
//! - [`particles`]: structure-of-arrays particle storage; each position is packed with its
//!   inverse mass as `[x, y, z, w]` ([`Packed4`]).
//! - [`constraints`]: one table per constraint kind behind the [`ConstraintKind`] trait;
//!   distance constraints first, with their scalar Gauss-Seidel projection.
//! - [`simd`]: the SIMD projection of a batch of independent distance constraints (what the
//!   colored solver runs), beside its scalar twin.
//! - [`body`]: a [`Body`] ties particles, constraints, topology, colliders and attachments.
//! - [`solver`]: the [`Solver`] trait, the only thing the step loop knows of solvers, and the
//!   reference sequential [`GaussSeidel`].
//! - [`step`]: the step loop (forces → predict → solve with contacts → velocities).
//! - [`passes`]: the step loop's per-particle passes, in fixed blocks a solver's threads may run.
//! - [`collide`]: plane, sphere, capsule and box colliders with friction and restitution.
//! - [`mesh`]: triangle meshes, welding, edge adjacency, normals, OBJ loading.
//! - [`repair`]: mesh repair (or strict refusal) of duplicate vertices and triangles, zero-area
//!   triangles, unused vertices, non-manifold edges; the fuzz target's entry point.
//! - [`diagnose`]: the NaN guard's replay, naming the particle and stage a divergence began at.
//! - [`scenes`]: the standard scenes of SCENES.md.
//! - [`figures`]: stretch, residual, energy, volume and state hash of a state.
//! - [`analytic`]: bodies with closed-form answers (the hanging chain, the free cloth's
//!   momentum) that the analytic tests and the claims measure.
//! - [`deformer`]: the Unity "jelly" mesh deformer (spring-back vertices, falloff forces).
//! - [`embedding`]: a render mesh driven by a simulation mesh; parallel vertex normals.
//! - [`mass_spring`]: the force-based mass-spring model, its integrators and their stability.
//! - [`materials`]: XPBD compliances from Young's modulus and Poisson's ratio.
//! - [`picking`]: ray picking through a refitted BVH, dragging, impulses at points.
//! - [`plasticity`]: rest lengths and angles that flow past a yield strain.
//! - [`tearing`]: breaking over-stretched constraints and splitting the surface.
//! - [`tetgen`]: tetrahedral meshes and TetGen `.node`/`.ele` loading.
//! - [`wind`]: aerodynamic drag and lift on triangles.
//! - [`error`]: [`WobbleError`], the one error type.
//!
//! Data flows one way: a scene or mesh builds a `Body`; [`step()`] advances it with any
//! `Solver`; `figures` read the result. `glam::Vec3` appears at the API edges only; the hot
//! loops work on slices of `Packed4` and `u32` indices.

pub mod analytic;
pub mod body;
pub mod collide;
pub mod constraints;
pub mod deformer;
pub mod diagnose;
pub mod embedding;
pub mod error;
pub mod figures;
pub mod mass_spring;
pub mod materials;
pub mod mesh;
pub mod particles;
pub mod passes;
pub mod picking;
pub mod plasticity;
pub mod repair;
pub mod scenes;
pub mod simd;
pub mod solver;
pub mod step;
pub mod tearing;
pub mod tetgen;
pub mod wind;

pub use body::{Attachment, Body, Topology};
pub use collide::{Collider, Shape};
pub use constraints::{ConstraintKind, Constraints, DistanceConstraints};
pub use error::{Result, WobbleError};
pub use glam;
pub use materials::Material;
pub use particles::{Packed4, Particles};
pub use scenes::Scene;
pub use solver::{GaussSeidel, SolveState, Solver, ThreadHome};
pub use step::{step, StepParams, Stiffness};
pub use tetgen::TetMesh;
pub use wind::Wind;

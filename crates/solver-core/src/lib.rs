//! # solver-core
//!
//! The data and the hot kernels of wobble, a position-based dynamics (PBD/XPBD) library.
//!
//! - [`body`]: a [`Body`] ties particles, constraints, topology, colliders and attachments;
//!   [`body::state`] saves and restores what changes as it steps ([`BodyState`]; with the
//!   `serde` feature, serializable);
//!   [`body::particles`] is the structure-of-arrays storage (each position packed with its
//!   inverse mass as `[x, y, z, w]`, [`Packed4`]; read back with
//!   [`Particles::positions_into`]); [`body::materials`] turns Young's modulus
//!   and Poisson's ratio into XPBD compliances.
//! - [`build`]: builders for cloth, flags, ropes, closed soft bodies and tetrahedral bodies
//!   from a size, a resolution, a placement, a mass, pins and compliances, checked.
//! - [`constraints`]: one table per constraint kind behind the [`ConstraintKind`] trait, one
//!   kind per file (distance, tether, bending, volume, neo-Hookean, drag).
//! - [`simd`]: the SIMD projection of a batch of independent distance constraints (what the
//!   colored solver runs), beside its scalar twin.
//! - [`solver`]: the [`Solver`] trait, the only thing the step loop knows of solvers, and the
//!   reference sequential [`GaussSeidel`].
//! - [`step`](mod@step): the step loop (forces → predict → solve with contacts → velocities), its
//!   per-particle passes ([`step::passes`]) and the NaN guard's replay ([`step::diagnose`]),
//!   which names the particle and stage a divergence began at.
//! - [`collide`]: plane, sphere, capsule and box colliders with friction and restitution
//!   ([`Collider::sphere`] and the other checked constructors).
//! - `coupling` (feature `rapier`): two-way coupling of a body with rapier3d rigid bodies
//!   (`coupling::rapier::RapierCoupling`: contacts push the rigid bodies back with impulses).
//! - [`mesh`]: mesh input: triangle meshes, welding, edge adjacency, normals (also straight
//!   from particles, [`mesh::vertex_normals_into`]), OBJ loading;
//!   [`mesh::repair`] (repair or strict refusal of an artist's defects), [`mesh::tetgen`]
//!   (tetrahedral meshes, TetGen `.node`/`.ele`), [`mesh::fuzz`] (the fuzz target's path).
//! - [`world`]: a [`World`] of several bodies stepped together, with contacts between them,
//!   against triangle-mesh colliders ([`MeshCollider`]) and within a cloth ([`SelfCollision`]).
//! - [`scenes`]: the standard scenes of `docs/SCENES.md`.
//! - [`figures`]: stretch, residual, energy, volume and state hash of a state.
//! - [`analytic`]: bodies with closed-form answers (the hanging chain, the free cloth's
//!   momentum) that the analytic tests and the claims measure.
//! - [`interaction`]: ray picking through a refitted BVH, grabs (and where they are,
//!   [`interaction::picking::grab_state`]) and impulses at points ([`interaction::picking`]);
//!   the Unity "jelly" deformer ([`interaction::deformer`]).
//! - [`effects`]: wind, tearing, plasticity, and a render mesh embedded in the simulation mesh.
//! - [`mass_spring`]: the force-based mass-spring model, its integrators and their stability
//!   (the baseline PBD is compared with; it does not use the step loop).
//! - [`shared_mut`]: the raw pointer the parallel passes and solvers share a slice through.
//! - [`error`]: [`WobbleError`], the one error type.
//!
//! Data flows one way: a builder, scene or mesh builds a `Body`; [`step()`] advances it with any
//! `Solver`; `figures` read the result. `glam::Vec3` appears at the API edges only; the hot
//! loops work on slices of `Packed4` and `u32` indices.

pub mod body;
pub mod build;
pub mod collide;
pub mod constraints;
#[cfg(feature = "rapier")]
pub mod coupling;
pub mod effects;
pub mod error;
pub mod figures;
pub mod geometry;
pub mod interaction;
pub mod mesh;
mod par;
pub mod shared_mut;
pub mod simd;
pub mod solver;
pub mod step;
pub mod wind;
pub mod world;

pub use body::particles::Particles;
pub use body::state::BodyState;
pub use body::{Attachment, Body, Topology};
pub use build::{Bending, Cloth, Flag, Rope, SoftBody, TetBody};
pub use collide::{Collider, Shape};
pub use constraints::material::Material;
pub use constraints::{ConstraintKind, Constraints, DistanceConstraints};
pub use error::{Result, WobbleError};
pub use geometry::packed::{Packed4, Xyz};
pub use glam;
pub use mesh::tetgen::TetMesh;
pub use solver::{
    prepare_solver, Executor, GaussSeidel, Preparation, Serial, SolveState, Solver, SolverReport,
};
pub use step::{step, StepParams, Stiffness};
pub use wind::Wind;
pub use world::{
    BodyHandle, ColliderHandle, MeshCollider, SelfCollision, World, WorldBody, WorldContacts,
    WorldReport,
};

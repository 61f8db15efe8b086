//! # solver-core
//!
//! The data, the hot kernels and the step of wobble, a position-based dynamics (PBD/XPBD)
//! library: what a game compiles. The modules stand in floors, each importing only from its
//! own floor or below (`tests/import_floors.rs` at the workspace root checks there is no
//! import cycle), ground first:
//!
//! 1. [`error`]: [`WobbleError`], the one error type, its `check_*` helpers and the divergence
//!    bound [`error::MAX_SPEED`]; [`handle`]: the handles a world names its bodies and colliders
//!    by, so that an error names a body as the world does.
//! 2. [`geometry`]: plain data and geometry: [`Packed4`] (a position packed with its inverse
//!    mass, `[x, y, z, w]`), [`Xyz`] (what a read-back writes into), the refitted triangle BVH,
//!    segment-triangle and closest-point queries, volumes and winding numbers.
//! 3. [`mesh`]: triangle meshes, welding, adjacency, normals ([`mesh::vertex_normals_into`]),
//!    OBJ loading; [`mesh::repair`] (repair or strict refusal of an artist's defects),
//!    [`mesh::tetgen`] (tetrahedral meshes), [`mesh::shapes`] (icosphere, tetrahedral cube).
//! 4. [`constraints`]: one table per constraint kind behind [`ConstraintKind`], one kind per
//!    file (distance, tether, bending, volume, neo-Hookean, drag), and
//!    [`constraints::material`] (compliances from Young's modulus and Poisson's ratio). Beside
//!    them: [`collide`] (plane, sphere, capsule and box colliders with friction and
//!    restitution) and [`wind`].
//! 5. [`body`]: a [`Body`] ties particles, constraints, topology, colliders and
//!    attachments, and keeps what a solver prepares from behind methods that record a change;
//!    [`body::state`] saves and restores what changes as it steps ([`BodyState`]).
//! 6. [`solver`]: the [`Solver`] trait, the only thing the step loop knows of solvers, and the
//!    reference sequential [`GaussSeidel`]. [`figures`]: stretch, residual, energy, volume and
//!    state hash of a state.
//! 7. [`step`](mod@step): the step loop (forces → predict → solve with contacts → velocities),
//!    its per-particle passes (`step::passes`, with their AVX2 twins) and the NaN guard's replay
//!    ([`step::diagnose`]), which names the particle and stage a divergence began at.
//! 8. [`build`]: builders for cloth, flags, ropes, closed soft bodies and tetrahedral bodies
//!    from a size, a resolution, a placement, a mass, pins and compliances, checked; bodies from
//!    meshes; materials applied to a body. [`interaction`]: ray picking, grabs and impulses at
//!    points, the Unity "jelly" deformer. [`effects`]: tearing, plasticity, a render mesh
//!    embedded in the simulation mesh. [`skin`]: clothing on an animated character, a mesh
//!    skinned to a skeleton (linear blend or dual-quaternion skinning) whose vertices the
//!    skinned constraints ([`constraints::skinned`]: max distance, back stop) hold near the
//!    animation.
//! 9. [`world`]: a [`World`] of several bodies (named by [`BodyHandle`]) stepped together, with
//!    contacts between them, against triangle-mesh colliders ([`MeshCollider`]) and within a
//!    cloth ([`SelfCollision`]), and (feature `rapier`, `World::set_rapier`) with the rigid
//!    bodies of a rapier3d world, both ways (`world::rigid`).
//! 10. `coupling` (feature `rapier`): `coupling::rapier::RapierCoupling`, one body and a
//!     rapier3d world: a world of one body with rapier.
//!
//! Data flows one way: a builder or mesh builds a `Body`; [`step()`] advances it with any
//! `Solver`; `figures` read the result. `glam::Vec3` appears at the API edges only; the hot
//! loops work on slices of `Packed4` and `u32` indices. The benchmark scenes of
//! `docs/SCENES.md` are in the `scenes` crate, above this one.

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
pub mod handle;
pub mod interaction;
pub mod mesh;
mod par;
#[doc(hidden)]
pub mod shared_mut;
pub mod skin;
pub mod solver;
pub mod step;
pub mod wind;
pub mod world;

pub use body::particles::{Particles, ParticlesMut};
pub use body::state::BodyState;
pub use body::{Attachment, Body, Topology};
pub use build::{Bending, Cloth, Flag, Rope, SoftBody, TetBody};
pub use collide::{Collider, Shape};
pub use constraints::material::Material;
pub use constraints::{ConstraintKind, Constraints, DistanceConstraints, SkinnedVertex};
pub use error::{Result, WobbleError};
pub use geometry::packed::{Packed4, Xyz};
pub use glam;
pub use mesh::tetgen::TetMesh;
pub use skin::{Skin, SkinDesc, SkinningMethod};
pub use solver::{
    prepare_solver, Executor, GaussSeidel, Preparation, Serial, SolveState, Solver, SolverReport,
};
pub use step::{step, StepParams, Stiffness};
pub use wind::Wind;
pub use world::{
    BodyHandle, ColliderHandle, MeshCollider, SelfCollision, Tangle, TriangleContactSettings,
    TriangleContacts, World, WorldBody, WorldContacts, WorldReport,
};

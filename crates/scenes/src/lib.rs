//! # scenes
//!
//! What wobble is measured on, kept apart from the library a game compiles: the harness, the
//! benches and the tests build their bodies here, a game builds its own with solver-core's
//! builders.
//!
//! - [`standard`]: the standard scenes of `docs/SCENES.md` (cloth, rope, flag, jelly, cube, a
//!   mesh file), built exactly as written there, and [`Scene`], a scene and its size by name.
//! - [`worlds`]: the world scenes (`stack`, `drape`, `tunnel`), several bodies or one body
//!   against colliders and itself, stepped by solver-core's `World`.
//! - [`character`]: clothing on an animated character (a cape and a skirt skinned to a
//!   procedural skeleton, a body proxy of capsules moved with it, a scripted teleport).
//! - [`analytic`]: bodies with closed-form answers (the hanging chain, the free cloth's
//!   momentum) that the analytic tests and the claims measure.
//! - [`mass_spring`]: the force-based mass-spring model, its integrators and their stability
//!   (the baseline PBD is compared with; it does not use the step loop).
//! - [`fuzz`]: the OBJ fuzz target's whole path, shared with its regression tests.
//!
//! Data flows one way: solver-core's meshes, builders and bodies in, bodies and worlds out;
//! nothing in solver-core imports this crate.

pub mod analytic;
pub mod character;
pub mod contact;
pub mod fuzz;
pub mod mass_spring;
pub mod standard;
pub mod worlds;

pub use standard::*;
pub use worlds::*;

//! # bevy_wobble
//!
//! wobble's soft bodies and cloth inside a Bevy app: a [`WobblePlugin`] that steps them on
//! Bevy's fixed clock, writes their positions and normals into `Mesh` assets, moves colliders
//! with entities and drags bodies with the pointer.
//!
//! The parts, and how data flows through them each frame:
//!
//! 1. [`body`]: the [`SoftBody`] component a game spawns, made from a wobble [`wobble::Body`]
//!    (any builder or scene) or from a Bevy [`Mesh`](bevy::mesh::Mesh) asset
//!    ([`MeshBody`]: its positions and indices become particles and triangles, pins from a
//!    vertex attribute or a closure). In `Update` the plugin moves it into the one wobble
//!    [`World`](wobble::core::World) of [`WobbleWorld`] and gives the entity a
//!    [`SoftBodyHandle`], [`SoftBodyStats`] and a `Mesh3d` of its own.
//! 2. [`collider`]: the [`WobbleCollider`] component (plane, sphere, capsule, box, triangle
//!    mesh): its shape follows the entity's `GlobalTransform` every fixed step, and the
//!    solver interpolates the motion across substeps.
//! 3. [`pointer`](mod@pointer): [`PointerInput`] messages (a press, drag or release with a ray) grab the
//!    surface point under the ray, move the grab, let go; [`PointerGrab`] says what is held.
//! 4. [`systems`]: in `FixedUpdate` the world is stepped once per fixed timestep (the
//!    [`WobbleParams`] with `dt` = the timestep), unless [`SimulationControl`] pauses it;
//!    each body's [`SoftBodyStats`] and the [`WobbleStats`] are updated and [`WobbleEvent`]s
//!    written (warnings, a body restored after a failed substep); in `PostUpdate` the meshes
//!    are written.
//!
//! Bevy's math is glam 0.32 and wobble's is glam 0.34: [`to_wobble`] and [`to_bevy`] convert
//! a `Vec3` across (the same three floats).
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_wobble::{prelude::*, wobble};
//!
//! fn setup(mut commands: Commands, mut materials: ResMut<Assets<StandardMaterial>>) {
//!     let cloth = wobble::Cloth::new().resolution(32, 32).at(wobble::glam::Vec3::Y).pin_corners().build().unwrap();
//!     commands.spawn((SoftBody::new(cloth).with_solver(wobble::SolverKind::Gs), MeshMaterial3d(materials.add(Color::WHITE))));
//!     commands.spawn((WobbleCollider::sphere(0.2), Transform::from_xyz(0.5, 0.5, 0.3))); // moves with its Transform
//! }
//!
//! fn main() {
//!     App::new().add_plugins((DefaultPlugins, WobblePlugin::default())).add_systems(Startup, setup).run();
//! }
//! ```
//!
//! (README.md's "Bevy" section shows these lines; the doc test compiles them.)

pub mod body;
pub mod collider;
pub mod pointer;
pub mod systems;

pub use body::{MeshBody, MeshBodyKind, Pins, SoftBody, SoftBodyHandle, SoftBodyStats};
pub use collider::{ColliderShape, WobbleCollider};
pub use pointer::{PointerGrab, PointerInput};
pub use systems::{
    SimulationControl, WobbleEvent, WobbleParams, WobblePlugin, WobbleStats, WobbleSystems,
    WobbleWorld,
};
pub use wobble;

/// What a game imports: the plugin, the components, the resources and the messages.
pub mod prelude {
    pub use crate::{
        ColliderShape, MeshBody, MeshBodyKind, Pins, PointerGrab, PointerInput, SimulationControl,
        SoftBody, SoftBodyHandle, SoftBodyStats, WobbleCollider, WobbleEvent, WobbleParams,
        WobblePlugin, WobbleStats, WobbleSystems, WobbleWorld,
    };
}

/// A Bevy `Vec3` as wobble's (the same three floats).
#[must_use]
pub fn to_wobble(v: bevy::math::Vec3) -> wobble::glam::Vec3 {
    wobble::glam::Vec3::from_array(v.to_array())
}

/// A wobble `Vec3` as Bevy's (the same three floats).
#[must_use]
pub fn to_bevy(v: wobble::glam::Vec3) -> bevy::math::Vec3 {
    bevy::math::Vec3::from_array(v.to_array())
}

/// A Bevy `Quat` as wobble's (the same four floats).
#[must_use]
pub fn quat_to_wobble(q: bevy::math::Quat) -> wobble::glam::Quat {
    wobble::glam::Quat::from_array(q.to_array())
}

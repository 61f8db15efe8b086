//! Grabbing a soft body with the pointer: [`PointerInput`] messages in, the grab held in
//! [`PointerGrab`].
//!
//! A game turns its cursor into a ray (`Camera::viewport_to_world`) and writes a
//! [`PointerInput::Press`] when the button goes down, [`PointerInput::Drag`] while it moves,
//! [`PointerInput::Release`] when it comes up. A press grabs the nearest surface point of any
//! soft body the ray hits (wobble's `Picker`, both faces counting); a drag moves the grab to
//! the point of the new ray at the distance of the hit, so the grabbed point stays under the
//! cursor; a release lets go.

use bevy::ecs::message::Message;
use bevy::ecs::resource::Resource;
use bevy::math::Ray3d;
use bevy::prelude::Entity;
use wobble::GrabId;

/// What the pointer did, as a ray from the camera through the cursor.
#[derive(Message, Clone, Copy, Debug, PartialEq)]
pub enum PointerInput {
    /// The button went down: grab what the ray hits.
    Press(Ray3d),
    /// The pointer moved with the button down: move the grab.
    Drag(Ray3d),
    /// The button came up: let go.
    Release,
}

/// The grab the pointer holds, if any.
#[derive(Resource, Clone, Debug, Default, PartialEq)]
pub struct PointerGrab {
    /// What is held.
    pub held: Option<Held>,
}

/// A point of a soft body held by the pointer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Held {
    /// The soft body's entity.
    pub entity: Entity,
    /// The grab within the body.
    pub grab: GrabId,
    /// The hit's distance along the press's ray (m): a drag keeps the point this far out.
    pub distance: f32,
    /// Where the grab pulls the point to (world coordinates).
    pub target: bevy::math::Vec3,
}

/// How stiff the pointer's grab is (XPBD compliance, m/N): 0 is a rigid hold.
pub const GRAB_COMPLIANCE: f32 = 1e-4;

/// The longest ray a press follows (m).
pub const PICK_DISTANCE: f32 = 1000.0;

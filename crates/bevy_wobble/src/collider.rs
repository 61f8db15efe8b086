//! The [`WobbleCollider`] component: a collider every soft body meets, placed by its entity's
//! `GlobalTransform`.

use bevy::ecs::component::Component;
use bevy::mesh::Mesh;
use bevy::prelude::{GlobalTransform, Handle, Transform};
use wobble::{Collider, WobbleError};

/// The shape of a [`WobbleCollider`], in its entity's frame.
#[derive(Clone, Debug, PartialEq)]
pub enum ColliderShape {
    /// The plane through the entity's origin, its normal the entity's +Y: the solid side is
    /// below.
    Plane,
    /// A sphere at the entity's origin (scaled by the transform's largest scale).
    Sphere {
        /// Radius (m).
        radius: f32,
    },
    /// A capsule along the entity's Y axis.
    Capsule {
        /// Half the length of its axis segment (m).
        half_length: f32,
        /// Radius (m).
        radius: f32,
    },
    /// A box centred on the entity, rotated with it.
    Cuboid {
        /// Half its extents along the entity's axes (m, scaled by the transform).
        half_extents: bevy::math::Vec3,
    },
    /// A triangle mesh asset, static but for the entity's translation (a rotation or scale is
    /// refused): the soft bodies keep `thickness` away from it.
    Mesh {
        /// The mesh (a triangle list).
        mesh: Handle<Mesh>,
        /// Distance kept from its surface (m).
        thickness: f32,
    },
}

/// A collider the soft bodies meet, moving with its entity: the solver interpolates its motion
/// across substeps, with friction relative to the moving surface.
#[derive(Component, Clone, Debug, PartialEq)]
#[require(Transform)]
pub struct WobbleCollider {
    /// Its shape.
    pub shape: ColliderShape,
    /// Coulomb friction.
    pub friction: f32,
}

impl WobbleCollider {
    /// A ground plane (the entity's XZ plane), friction 0.5.
    #[must_use]
    pub fn plane() -> Self {
        WobbleCollider::with(ColliderShape::Plane)
    }
    /// A sphere of `radius`, friction 0.5.
    #[must_use]
    pub fn sphere(radius: f32) -> Self {
        WobbleCollider::with(ColliderShape::Sphere { radius })
    }
    /// A capsule along Y, friction 0.5.
    #[must_use]
    pub fn capsule(half_length: f32, radius: f32) -> Self {
        WobbleCollider::with(ColliderShape::Capsule {
            half_length,
            radius,
        })
    }
    /// A box of these half extents, friction 0.5.
    #[must_use]
    pub fn cuboid(half_extents: bevy::math::Vec3) -> Self {
        WobbleCollider::with(ColliderShape::Cuboid { half_extents })
    }
    /// A triangle mesh, 1 cm thick, friction 0.5.
    #[must_use]
    pub fn mesh(mesh: Handle<Mesh>) -> Self {
        WobbleCollider::with(ColliderShape::Mesh {
            mesh,
            thickness: 0.01,
        })
    }
    fn with(shape: ColliderShape) -> Self {
        WobbleCollider {
            shape,
            friction: 0.5,
        }
    }
    /// The same with friction `mu`.
    #[must_use]
    pub fn friction(mut self, mu: f32) -> Self {
        self.friction = mu;
        self
    }

    /// The collider at `at`, with this one's friction (`None` for a mesh, which the world
    /// holds apart).
    pub(crate) fn collider_at(
        &self,
        at: &GlobalTransform,
    ) -> Result<Option<Collider>, WobbleError> {
        let (scale, rotation, translation) = at.to_scale_rotation_translation();
        let (scale, rotation, centre) = (
            crate::to_wobble(scale),
            crate::quat_to_wobble(rotation),
            crate::to_wobble(translation),
        );
        let up = rotation * wobble::glam::Vec3::Y;
        let largest = scale.abs().max_element();
        let collider = match &self.shape {
            ColliderShape::Plane => Collider::plane(up, up.dot(centre))?,
            ColliderShape::Sphere { radius } => Collider::sphere(centre, radius * largest)?,
            ColliderShape::Capsule {
                half_length,
                radius,
            } => {
                let half = up * (half_length * scale.y.abs());
                Collider::capsule(centre - half, centre + half, radius * largest)?
            }
            ColliderShape::Cuboid { half_extents } => Collider::cuboid(
                centre,
                crate::to_wobble(*half_extents) * scale.abs(),
                rotation,
            )?,
            ColliderShape::Mesh { .. } => return Ok(None),
        };
        Ok(Some(collider.with_friction(self.friction)?))
    }
}

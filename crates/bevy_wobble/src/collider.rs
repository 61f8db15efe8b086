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

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::math::{Quat, Vec3};
    use wobble::core::Shape;

    fn at(t: Transform) -> GlobalTransform {
        GlobalTransform::from(t)
    }

    fn shape(c: &WobbleCollider, t: Transform) -> Shape {
        c.collider_at(&at(t))
            .expect("valid")
            .expect("a shape")
            .shape
    }

    fn close(a: wobble::glam::Vec3, b: Vec3) -> bool {
        (crate::to_bevy(a) - b).length() < 1e-5
    }

    #[test]
    fn a_plane_takes_the_entity_up_as_its_normal_and_passes_through_its_origin() {
        let t = Transform::from_xyz(0.0, 2.0, 0.0).with_rotation(Quat::from_rotation_z(0.3));
        let Shape::Plane { normal, offset } = shape(&WobbleCollider::plane(), t) else {
            panic!("a plane")
        };
        let up = t.rotation * Vec3::Y;
        assert!(close(normal, up));
        assert!((offset - up.dot(t.translation)).abs() < 1e-6);
    }

    #[test]
    fn a_capsule_lies_along_the_entity_y_axis_scaled() {
        let t = Transform::from_xyz(1.0, 0.5, -1.0)
            .with_rotation(Quat::from_rotation_x(std::f32::consts::FRAC_PI_2))
            .with_scale(Vec3::new(1.0, 2.0, 1.0));
        let Shape::Capsule { a, b, radius } = shape(&WobbleCollider::capsule(0.25, 0.1), t) else {
            panic!("a capsule")
        };
        // Turned a quarter about x, the Y axis points along +z; scaled twice along it.
        assert!(close(a, Vec3::new(1.0, 0.5, -1.5)) && close(b, Vec3::new(1.0, 0.5, -0.5)));
        assert!(
            (radius - 0.2).abs() < 1e-6,
            "the radius takes the largest scale: {radius}"
        );
    }

    #[test]
    fn a_box_takes_the_entity_rotation_and_scale() {
        let q = Quat::from_rotation_y(0.7);
        let t = Transform::from_xyz(0.0, 1.0, 0.0)
            .with_rotation(q)
            .with_scale(Vec3::splat(2.0));
        let Shape::Cuboid {
            center,
            half,
            rotation,
        } = shape(&WobbleCollider::cuboid(Vec3::new(0.1, 0.2, 0.3)), t)
        else {
            panic!("a box")
        };
        assert!(close(center, Vec3::Y) && close(half, Vec3::new(0.2, 0.4, 0.6)));
        assert!(Quat::from_array(rotation.to_array()).abs_diff_eq(q, 1e-6));
    }

    #[test]
    fn a_sphere_follows_the_translation_and_a_bad_radius_is_an_error() {
        let t = Transform::from_xyz(3.0, 2.0, 1.0);
        let Shape::Sphere { center, radius } = shape(&WobbleCollider::sphere(0.5), t) else {
            panic!("a sphere")
        };
        assert!(close(center, t.translation) && radius == 0.5);
        assert!(WobbleCollider::sphere(-1.0).collider_at(&at(t)).is_err());
        assert!(WobbleCollider::sphere(0.5)
            .friction(f32::NAN)
            .collider_at(&at(t))
            .is_err());
    }
}

//! Builders: a body from what a game knows of it (size, resolution, placement, mass, pins,
//! compliances) rather than from meshes and constraint tables.
//!
//! | builder | body | constraints |
//! | --- | --- | --- |
//! | [`Cloth`] | a `cols` x `rows` grid in the local XZ plane | stretch (rows, columns), shear (one diagonal per quad), optional bending |
//! | [`Flag`] | a grid in the local XY plane, pinned along its pole (local x = 0) | as the cloth, dihedral bending, and wind |
//! | [`Rope`] | particles along the local x axis | stretch between neighbours, optional bending links |
//! | [`SoftBody`] | a closed surface (an icosphere or any closed [`TriMesh`](crate::mesh::TriMesh)) | stretch on every edge, one volume (pressure) constraint, optional bending |
//! | [`TetBody`] | a tetrahedral mesh (a cube of cells or any [`TetMesh`](crate::mesh::tetgen::TetMesh)) | stretch on every tetrahedron edge, volume per tetrahedron |
//!
//! Every builder starts from defaults (`new()` or a shape constructor), is set up by chained
//! calls that cannot fail, and checks everything in `build()`, which returns the body or a
//! [`WobbleError`] naming what is wrong. The common settings:
//!
//! - placement: [`transform`](Cloth::transform) (a glam `Affine3A`), [`transform_mat4`](Cloth::transform_mat4),
//!   or [`at`](Cloth::at) and [`rotated`](Cloth::rotated); rest lengths and volumes are those of
//!   the placed body, so a scaling transform scales the body;
//! - [`mass`](Cloth::mass): the total, shared equally by the particles; a pinned particle's
//!   share is not redistributed (the standard scenes of docs/SCENES.md count mass this way);
//! - [`pin`](Cloth::pin) by particle index, or [`pin_where`](Cloth::pin_where) by a test on
//!   the placed rest position;
//! - [`stretch`](Cloth::stretch): the compliance (m/N, 0 = rigid) of the structural distance
//!   constraints, which are the first `topology.structural` ones, so that
//!   [`figures::stretch`](crate::figures::stretch) measures only them;
//! - [`collider`](Cloth::collider): colliders added to the body (checked by `build()`), in
//!   world coordinates;
//! - [`origin`](Cloth::origin): the body's origin in the world, in `f64` (the placed body is
//!   built relative to it: the way to build a body kilometres out, see [`crate::body`]).
//!
//! The particle numbering of the grid builders is that of docs/SCENES.md (`v = j * cols + i`,
//! constraints horizontal, vertical, then diagonal), so `Cloth` and `Flag` with the scene's
//! settings build the scene's body bit for bit (the tests check it).

pub mod cloth;
pub mod convert;
pub mod flag;
mod grid;
pub mod materials;
pub mod rope;
pub mod soft;
pub mod tet;

pub use cloth::Cloth;
pub use convert::{body_from_tetmesh, body_from_trimesh};
pub use flag::Flag;
pub use rope::Rope;
pub use soft::SoftBody;
pub use tet::TetBody;

use crate::body::Body;
use crate::collide::Collider;
use crate::constraints::{DihedralBending, IsometricBending};
use crate::error::{check_index, check_parameter};
use crate::error::{Result, WobbleError};
use glam::{Affine3A, Mat4, Vec3, Vec4};

/// Largest accepted size parameter for the grid builders and scenes (n = 4096 is 16.7M vertices).
pub const MAX_N: usize = 4096;

/// Appends Godot/Bullet bending links to `body` (see
/// [`DistanceConstraints::push_bending_links`](crate::constraints::DistanceConstraints::push_bending_links)):
/// a distance constraint with `compliance` between every pair of particles two edges apart.
/// Returns how many were added. The structural prefix (`topology.structural`) is unchanged; the
/// body's topology id is renewed.
pub fn add_bending_links(body: &mut Body, compliance: f32) -> Result<usize> {
    let added = body
        .constraints
        .distance
        .push_bending_links(&body.particles.x, compliance)?;
    body.topology_changed();
    Ok(added)
}

/// How a surface resists bending.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub enum Bending {
    /// No bending resistance (only what the shear diagonals give).
    #[default]
    None,
    /// Dihedral-angle constraints on every pair of triangles sharing an edge, with this
    /// compliance (1 / (N·m per rad²)).
    Dihedral(f32),
    /// Isometric bending (a quadratic energy in the rest shape) on every pair of triangles
    /// sharing an edge, with this compliance.
    Isometric(f32),
    /// Distance links between particles two edges apart (Godot/Bullet style), with this
    /// compliance (m/N); they are not structural.
    Links(f32),
}

/// A test on a placed rest position: the particles it accepts are pinned.
type PinTest = Box<dyn Fn(Vec3) -> bool>;

/// What every builder shares: placement, mass, pins, stretch compliance, colliders.
struct Common {
    transform: Affine3A,
    /// A `Mat4` given through `transform_mat4`, checked by `build()`.
    projective: Option<Mat4>,
    mass: f32,
    pins: Vec<u32>,
    pin_tests: Vec<PinTest>,
    stretch: f32,
    colliders: Vec<Collider>,
    /// The built body's origin in the world (`origin`).
    origin: glam::DVec3,
}

impl Common {
    fn new() -> Self {
        Common {
            transform: Affine3A::IDENTITY,
            projective: None,
            mass: 1.0,
            pins: Vec::new(),
            pin_tests: Vec::new(),
            stretch: 0.0,
            colliders: Vec::new(),
            origin: glam::DVec3::ZERO,
        }
    }

    /// The checked placement.
    fn placement(&self) -> Result<Affine3A> {
        if let Some(m) = self.projective {
            if !m.is_finite() || m.row(3) != Vec4::W {
                return Err(WobbleError::BadParameter {
                    name: "transform",
                    value: m.row(3).length() as f64,
                    reason: "a placement needs a finite affine Mat4 (last row 0, 0, 0, 1)",
                });
            }
        }
        let t = self.transform;
        let det = t.matrix3.determinant();
        if !(t.is_finite() && det.is_finite() && det.abs() > 1e-12) {
            return Err(WobbleError::BadParameter {
                name: "transform determinant",
                value: det as f64,
                reason: "a placement needs a finite, invertible transform",
            });
        }
        Ok(t)
    }

    /// Places local positions with the checked transform.
    fn place(&self, local: impl Iterator<Item = Vec3>) -> Result<Vec<Vec3>> {
        let t = self.placement()?;
        Ok(local.map(|p| t.transform_point3(p)).collect())
    }

    /// Checks the total mass and the stretch compliance.
    fn check(&self) -> Result<()> {
        if !(self.mass.is_finite() && self.mass > 0.0) {
            return Err(WobbleError::BadMass {
                what: "body total",
                index: 0,
                value: self.mass,
            });
        }
        check_compliance("stretch compliance", self.stretch)
    }

    /// Pins the listed particles and those the tests accept (at their current positions).
    fn apply_pins(&self, body: &mut Body) -> Result<()> {
        let n = body.len();
        for (k, &p) in self.pins.iter().enumerate() {
            check_index("pin", k, p as usize, n)?;
            body.particles.pin(p as usize)?;
        }
        if !self.pin_tests.is_empty() {
            for i in 0..n {
                let p = body.particles.position(i);
                if self.pin_tests.iter().any(|test| test(p)) {
                    body.particles.pin(i)?;
                }
            }
        }
        Ok(())
    }

    /// The last step of every build: checks and adds the colliders, then validates the body.
    fn finish(&self, mut body: Body) -> Result<Body> {
        for c in &self.colliders {
            body.add_collider(*c)?;
        }
        body.validate()?;
        body.translate(self.origin)?;
        Ok(body)
    }
}

fn check_compliance(name: &'static str, alpha: f32) -> Result<()> {
    let reason = "a compliance must be finite and >= 0 (0 = rigid)";
    check_parameter(name, alpha, alpha >= 0.0, reason)
}

fn check_length(name: &'static str, value: f32) -> Result<()> {
    check_parameter(name, value, value > 0.0, "must be finite and > 0 (metres)")
}

/// Adds the bending of a triangulated surface to `body` (after its distance constraints, so
/// the structural prefix is kept).
fn add_bending(body: &mut Body, bending: Bending) -> Result<()> {
    match bending {
        Bending::None => {}
        Bending::Dihedral(c) => {
            check_compliance("bending compliance", c)?;
            let kind =
                DihedralBending::from_triangles(&body.particles.x, &body.topology.triangles, c)?;
            body.constraints.push_kind(Box::new(kind));
        }
        Bending::Isometric(c) => {
            check_compliance("bending compliance", c)?;
            let kind =
                IsometricBending::from_triangles(&body.particles.x, &body.topology.triangles, c)?;
            body.constraints.push_kind(Box::new(kind));
        }
        Bending::Links(c) => {
            check_compliance("bending compliance", c)?;
            add_bending_links(body, c)?;
        }
    }
    body.topology_changed();
    Ok(())
}

/// The setters every builder has (placement, mass, pins, stretch, colliders), written once.
/// Builder-style setters that store their arguments in a field of the builder:
/// `name(arg: Type) => field;`, or with several arguments, stored as an array.
macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),+) => $($field:ident).+;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(mut self, $($arg: $ty),+) -> Self {
                self.$($field).+ = setters!(@value $($arg),+);
                self
            }
        )*
    };
    (@value $arg:ident) => {
        $arg
    };
    (@value $($arg:ident),+) => {
        [$($arg),+]
    };
}
use setters;

macro_rules! common_setters {
    () => {
        /// Places the body: local coordinates go through `transform` (default: identity).
        pub fn transform(mut self, transform: glam::Affine3A) -> Self {
            self.common.transform = transform;
            self.common.projective = None;
            self
        }

        /// Places the body with a `Mat4`, which `build()` checks is affine.
        pub fn transform_mat4(mut self, transform: glam::Mat4) -> Self {
            self.common.transform = glam::Affine3A::from_mat4(transform);
            self.common.projective = Some(transform);
            self
        }

        /// Moves the body's local origin to `position` (keeping the rotation and scale set).
        pub fn at(mut self, position: glam::Vec3) -> Self {
            self.common.transform.translation = position.into();
            self
        }

        /// Places the body's origin (see [`Body::origin`](crate::Body::origin)) at the world
        /// position `origin`, in `f64`: the placed body (after `transform`) is built relative to
        /// it, so a body far from the world's origin keeps the precision it has at the origin.
        /// Colliders stay in world coordinates.
        pub fn origin(mut self, origin: glam::DVec3) -> Self {
            self.common.origin = origin;
            self
        }

        /// Rotates the body about its local origin (replacing the rotation and scale set).
        pub fn rotated(mut self, rotation: glam::Quat) -> Self {
            self.common.transform.matrix3 = glam::Mat3A::from_quat(rotation);
            self
        }

        /// Total mass in kg (default 1), shared equally by the particles.
        pub fn mass(mut self, kg: f32) -> Self {
            self.common.mass = kg;
            self
        }

        /// Pins particle `index` (it stays where it is built).
        pub fn pin(mut self, index: u32) -> Self {
            self.common.pins.push(index);
            self
        }

        /// Pins every particle whose placed rest position passes `test`.
        pub fn pin_where(mut self, test: impl Fn(glam::Vec3) -> bool + 'static) -> Self {
            self.common.pin_tests.push(Box::new(test));
            self
        }

        /// Compliance of the structural distance constraints (m/N; default 0 = rigid).
        pub fn stretch(mut self, compliance: f32) -> Self {
            self.common.stretch = compliance;
            self
        }

        /// Adds a collider (see [`Collider`](crate::collide::Collider)'s constructors).
        pub fn collider(mut self, collider: crate::collide::Collider) -> Self {
            self.common.colliders.push(collider);
            self
        }
    };
}
use common_setters;

#[cfg(test)]
mod tests;

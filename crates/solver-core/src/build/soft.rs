//! [`SoftBody`]: a closed surface that keeps its volume (a jelly, a ball, a cushion).

use super::convert::body_from_trimesh;
use super::{add_bending, check_compliance, common_setters, setters, Bending, Common};
use crate::body::Body;
use crate::constraints::SurfaceVolume;
use crate::error::{Result, WobbleError};
use crate::geometry::packed::Packed4;
use crate::mesh::shapes::icosphere;
use crate::mesh::TriMesh;

/// The surface a [`SoftBody`] is made of, in local coordinates.
enum Surface {
    Sphere { radius: f32, subdivisions: usize },
    Mesh(TriMesh),
}

/// Builds a closed soft body: one particle per surface vertex, a distance constraint on every
/// edge (all structural, `stretch`), one global volume constraint keeping `pressure` times
/// the rest volume (`volume` compliance), optional bending, then placed.
///
/// Defaults: 1 kg, rigid edges and volume, pressure 1, no bending, no pins, no collider, at the
/// origin. `SoftBody::sphere(0.25, s).at(Vec3::Y).collider(Collider::ground(0.5, 0.0))` is the
/// standard `jelly` scene of docs/SCENES.md, bit for bit in its particles and constraints
/// (the builder also marks the edges structural).
///
/// ```
/// use solver_core::build::SoftBody;
/// use solver_core::{glam::Vec3, Collider};
///
/// let jelly = SoftBody::sphere(0.3, 2)
///     .at(Vec3::new(0.0, 1.0, 0.0))
///     .stretch(1e-4)
///     .volume(1e-5)
///     .collider(Collider::ground(0.5, 0.0))
///     .build()?;
/// assert!(jelly.topology().closed);
/// # Ok::<(), solver_core::WobbleError>(())
/// ```
pub struct SoftBody {
    common: Common,
    surface: Surface,
    volume: f32,
    pressure: f32,
    bending: Bending,
}

impl SoftBody {
    /// An icosphere of `radius` (m) centred on the local origin, `subdivisions` levels deep
    /// (0 is the 12-vertex icosahedron; each level multiplies the triangles by four).
    pub fn sphere(radius: f32, subdivisions: usize) -> Self {
        Self::with(Surface::Sphere {
            radius,
            subdivisions,
        })
    }

    /// Any closed triangle mesh, in local coordinates (triangles facing inward are turned
    /// outward).
    pub fn from_mesh(mesh: TriMesh) -> Self {
        Self::with(Surface::Mesh(mesh))
    }

    fn with(surface: Surface) -> Self {
        SoftBody {
            common: Common::new(),
            surface,
            volume: 0.0,
            pressure: 1.0,
            bending: Bending::None,
        }
    }

    common_setters!();

    setters! {
        /// Compliance of the volume constraint (inverse stiffness; default 0 = incompressible).
        volume(compliance: f32) => volume;
        /// The volume kept, as a factor of the rest volume (> 0; default 1; above 1 inflates).
        pressure(factor: f32) => pressure;
        /// Bending resistance of the surface (default none).
        bending(bending: Bending) => bending;
    }

    /// Checks every setting and builds the body.
    pub fn build(&self) -> Result<Body> {
        self.common.check()?;
        check_compliance("volume compliance", self.volume)?;
        let local = match &self.surface {
            Surface::Sphere {
                radius,
                subdivisions,
            } => icosphere(glam::Vec3::ZERO, *radius, *subdivisions)?,
            Surface::Mesh(mesh) => mesh.clone(),
        };
        let positions = self.common.place(local.positions.iter().copied())?;
        let mut mesh = TriMesh::new(positions, local.triangles)?;
        let x: Vec<Packed4> = mesh
            .positions
            .iter()
            .map(|&p| Packed4::new(p, 1.0))
            .collect();
        if crate::figures::enclosed_volume(&mesh.triangles, &x) < 0.0 {
            mesh.triangles.iter_mut().for_each(|t| t.swap(1, 2));
        }
        let mut body = body_from_trimesh(&mesh, self.common.mass, self.common.stretch)?;
        if !body.topology.closed {
            return Err(WobbleError::UnsuitableBody {
                what: "a soft body (a volume constraint)",
                needs: "a closed surface: every edge shared by exactly two triangles",
            });
        }
        body.topology.structural = body.constraints.distance.len();
        self.common.apply_pins(&mut body)?;
        let volume = SurfaceVolume::new(&body.particles.x, &mesh.triangles, self.volume)?
            .with_pressure(self.pressure)?;
        body.constraints.push_kind(Box::new(volume));
        add_bending(&mut body, self.bending)?;
        self.common.finish(body)
    }
}

//! [`TetBody`]: a solid body of tetrahedra.

use super::convert::body_from_tetmesh;
use super::{check_compliance, check_length, common_setters, setters, Common};
use crate::body::Body;
use crate::error::Result;
use crate::mesh::shapes::cube_tets;
use crate::mesh::tetgen::TetMesh;

/// The tetrahedra a [`TetBody`] is made of, in local coordinates.
enum Solid {
    Cube { size: f32, cells: usize },
    Mesh(TetMesh),
}

/// Builds a solid body: one particle per vertex, a distance constraint on every tetrahedron
/// edge (all structural, `stretch`) and a volume constraint per tetrahedron (`volume`
/// compliance), then placed.
///
/// Defaults: 1 kg, rigid, no pins, no collider, at the origin.
/// `TetBody::cube(0.5, k).at(Vec3::new(-0.25, 0.5, -0.25)).collider(Collider::ground(0.5, 0.0))`
/// is the standard `cube` scene of docs/SCENES.md, bit for bit in its particles and
/// constraints (the builder also marks the edges structural).
///
/// ```
/// use solver_core::build::TetBody;
/// use solver_core::{glam::Vec3, Collider};
///
/// let block = TetBody::cube(0.4, 3)
///     .at(Vec3::new(0.0, 0.5, 0.0))
///     .volume(1e-6)
///     .collider(Collider::ground(0.5, 0.0))
///     .build()?;
/// assert_eq!(block.topology().tets.len(), 5 * 27);
/// # Ok::<(), solver_core::WobbleError>(())
/// ```
pub struct TetBody {
    common: Common,
    solid: Solid,
    volume: f32,
}

impl TetBody {
    /// A cube of side `size` (m) spanning `[0, size]³` in local coordinates, of `cells`³ cells
    /// of five tetrahedra each.
    pub fn cube(size: f32, cells: usize) -> Self {
        Self::with(Solid::Cube { size, cells })
    }

    /// Any tetrahedral mesh, in local coordinates (for instance from
    /// [`load_tetgen`](crate::mesh::tetgen::load_tetgen)).
    pub fn from_mesh(mesh: TetMesh) -> Self {
        Self::with(Solid::Mesh(mesh))
    }

    fn with(solid: Solid) -> Self {
        TetBody {
            common: Common::new(),
            solid,
            volume: 0.0,
        }
    }

    common_setters!();

    setters! {
        /// Compliance of the per-tetrahedron volume constraints (default 0).
        volume(compliance: f32) => volume;
    }

    /// Checks every setting and builds the body.
    pub fn build(&self) -> Result<Body> {
        self.common.check()?;
        check_compliance("volume compliance", self.volume)?;
        let local = match &self.solid {
            Solid::Cube { size, cells } => {
                check_length("cube size", *size)?;
                cube_tets(*cells, glam::Vec3::ZERO, *size)?
            }
            Solid::Mesh(mesh) => mesh.clone(),
        };
        let positions = self.common.place(local.positions.iter().copied())?;
        // Built again: a mirroring placement turns every tetrahedron over, and this puts them
        // back to positive volume.
        let mesh = TetMesh::new(positions, local.tets)?;
        let mut body =
            body_from_tetmesh(&mesh, self.common.mass, self.common.stretch, self.volume)?;
        body.topology.structural = body.constraints.distance.len();
        self.common.apply_pins(&mut body)?;
        self.common.finish(body)
    }
}

//! Bodies from meshes: one particle per vertex, the mass shared equally, a distance constraint
//! per edge, and (for closed surfaces and tetrahedral meshes) volume constraints.

use crate::body::particles::Particles;
use crate::body::{Body, Topology};
use crate::constraints::{Constraints, DistanceConstraints, TetVolume};
use crate::error::{Result, WobbleError};
use crate::geometry::volume::enclosed_volume;
use crate::mesh::tetgen::TetMesh;
use crate::mesh::TriMesh;
use glam::Vec3;

/// Particles at `positions` sharing `total_mass` equally.
pub fn equal_mass_particles(positions: &[Vec3], total_mass: f32) -> Result<Particles> {
    if !(total_mass.is_finite() && total_mass > 0.0) {
        return Err(WobbleError::BadMass {
            what: "body total",
            index: 0,
            value: total_mass,
        });
    }
    let n = positions.len();
    Particles::new(positions, &vec![total_mass / n as f32; n])
}

/// A body from a triangle mesh: one particle per vertex, `total_mass` shared equally, one
/// distance constraint (compliance `compliance`) per unique edge, in order of first appearance.
pub fn body_from_trimesh(mesh: &TriMesh, total_mass: f32, compliance: f32) -> Result<Body> {
    mesh.validate()?;
    let particles = equal_mass_particles(&mesh.positions, total_mass)?;
    let adj = mesh.edge_adjacency();
    let mut distance = DistanceConstraints::default();
    for (e, &[a, b]) in adj.edges.iter().enumerate() {
        distance
            .push_rest(&particles.x, a, b, compliance)
            .map_err(|err| match err {
                WobbleError::ZeroLengthConstraint { kind, i, j, .. } => {
                    WobbleError::ZeroLengthConstraint {
                        kind,
                        index: e,
                        i,
                        j,
                    }
                }
                other => other,
            })?;
    }
    let closed = adj.is_closed();
    let rest_volume = if closed {
        enclosed_volume(&mesh.triangles, &particles.x) as f32
    } else {
        0.0
    };
    let topology = Topology {
        triangles: mesh.triangles.clone(),
        structural: 0,
        closed,
        rest_volume,
        tets: Vec::new(),
    };
    Body::new(
        particles,
        Constraints {
            distance,
            extra: Vec::new(),
        },
        topology,
    )
}

/// A body from a tetrahedral mesh: one particle per vertex, `total_mass` shared equally, one
/// distance constraint per unique tetrahedron edge (`edge_compliance`) and one volume
/// constraint per tetrahedron (`volume_compliance`); the boundary faces are its triangles.
pub fn body_from_tetmesh(
    mesh: &TetMesh,
    total_mass: f32,
    edge_compliance: f32,
    volume_compliance: f32,
) -> Result<Body> {
    let particles = equal_mass_particles(&mesh.positions, total_mass)?;
    let mut distance = DistanceConstraints::default();
    for [a, b] in mesh.edges() {
        distance.push_rest(&particles.x, a, b, edge_compliance)?;
    }
    let volume = TetVolume::new(&particles.x, &mesh.tets, volume_compliance)?;
    let topology = Topology {
        triangles: mesh.boundary_triangles(),
        tets: mesh.tets.clone(),
        structural: 0,
        closed: true,
        rest_volume: mesh.volume() as f32,
    };
    Body::new(
        particles,
        Constraints {
            distance,
            extra: vec![Box::new(volume)],
        },
        topology,
    )
}

//! Bad input gives an error naming what and where, never a panic.

use solver_core::build::body_from_trimesh;
use solver_core::glam::Vec3;
use solver_core::mesh::{parse_obj, TriMesh};
use solver_core::{DistanceConstraints, Particles, WobbleError};
use std::path::Path;

fn quad() -> TriMesh {
    TriMesh::new(
        vec![Vec3::ZERO, Vec3::X, Vec3::new(1.0, 0.0, 1.0), Vec3::Z],
        vec![[0, 1, 2], [0, 2, 3]],
    )
    .unwrap()
}

#[test]
fn mesh_errors_name_the_offender() {
    let e = TriMesh::new(
        vec![Vec3::ZERO, Vec3::X, Vec3::new(f32::NAN, 0.0, 0.0)],
        vec![[0, 1, 2]],
    )
    .unwrap_err();
    assert!(matches!(e, WobbleError::NonFinite { index: 2, .. }), "{e}");
    let e = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 7]]).unwrap_err();
    assert!(
        matches!(
            e,
            WobbleError::IndexOutOfRange {
                index: 0,
                value: 7,
                ..
            }
        ),
        "{e}"
    );
    let e = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::X * 2.0], vec![[0, 1, 2]]).unwrap_err();
    assert!(
        matches!(e, WobbleError::DegenerateTriangle { index: 0, .. }),
        "{e}"
    );
    assert!(matches!(
        TriMesh::new(vec![], vec![]).unwrap_err(),
        WobbleError::EmptyMesh(_)
    ));
}

#[test]
fn obj_files_that_are_not_meshes_are_refused() {
    let p = Path::new("x.obj");
    assert!(parse_obj(b"", p).is_err());
    assert!(parse_obj(&[0u8, 159, 146, 150, 1, 2, 3], p).is_err());
    assert!(parse_obj(b"hello world\n", p).is_err());
    assert!(parse_obj(b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n", p).is_err());
    let m = parse_obj(b"v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n", p).unwrap();
    assert_eq!(m.triangles.len(), 2, "quads are triangulated");
    let e = solver_core::mesh::load_obj(Path::new("/nonexistent/file.obj")).unwrap_err();
    assert!(e.to_string().contains("/nonexistent/file.obj"));
}

#[test]
fn particle_and_constraint_errors() {
    assert!(matches!(
        Particles::new(&[Vec3::ZERO], &[0.0]).unwrap_err(),
        WobbleError::BadMass { .. }
    ));
    assert!(matches!(
        Particles::new(&[Vec3::ZERO], &[-1.0]).unwrap_err(),
        WobbleError::BadMass { .. }
    ));
    assert!(Particles::new(&[Vec3::new(0.0, f32::INFINITY, 0.0)], &[1.0]).is_err());
    let mut d = DistanceConstraints::default();
    assert!(matches!(
        d.push(0, 1, 0.0, 0.0).unwrap_err(),
        WobbleError::ZeroLengthConstraint { .. }
    ));
    assert!(matches!(
        d.push(3, 3, 1.0, 0.0).unwrap_err(),
        WobbleError::RepeatedParticle { .. }
    ));
    assert!(d.push(0, 1, 1.0, -1.0).is_err());
    let p = Particles::new(&[Vec3::ZERO, Vec3::ZERO], &[1.0, 1.0]).unwrap();
    assert!(matches!(
        d.push_rest(&p.x(), 0, 1, 0.0).unwrap_err(),
        WobbleError::ZeroLengthConstraint { .. }
    ));
    assert!(matches!(
        d.push_rest(&p.x(), 0, 5, 0.0).unwrap_err(),
        WobbleError::IndexOutOfRange { value: 5, .. }
    ));
    assert!(body_from_trimesh(&quad(), 0.0, 0.0).is_err());
}

#[test]
fn mesh_building_welds_and_finds_adjacency() {
    let m = quad();
    let adj = m.edge_adjacency();
    assert_eq!(adj.edges.len(), 5);
    assert!(!adj.is_closed());
    let shared = adj.edges.iter().position(|&e| e == [0, 2]).unwrap();
    assert_eq!(adj.triangles[shared], [0, 1]);
    let normals = m.vertex_normals(&m.positions);
    assert!(normals.iter().all(|n| (n.y.abs() - 1.0).abs() < 1e-6));
    // Two triangles with their own copies of the shared edge weld into the quad.
    let split = TriMesh::new(
        vec![
            Vec3::ZERO,
            Vec3::X,
            Vec3::new(1.0, 0.0, 1.0),
            Vec3::ZERO,
            Vec3::new(1.0, 0.0, 1.0),
            Vec3::Z,
        ],
        vec![[0, 1, 2], [3, 4, 5]],
    )
    .unwrap();
    let (welded, remap) = split.weld(1e-6);
    assert_eq!(welded.positions.len(), 4);
    assert_eq!(remap, vec![0, 1, 2, 0, 2, 3]);
    let body = body_from_trimesh(&welded, 1.0, 0.0).unwrap();
    assert_eq!(body.constraints().distance.len(), 5);
    assert!((body.particles().mass().iter().sum::<f32>() - 1.0).abs() < 1e-6);
}

//! Vertex normals straight from particles against the prepared normals of an embedding.

use glam::Vec3;
use solver_core::effects::embedding::VertexNormals;
use solver_core::mesh::shapes::icosphere;
use solver_core::mesh::vertex_normals_into;
use solver_core::{Packed4, WobbleError};

#[test]
fn normals_from_particles_match_the_prepared_normals_and_refuse_bad_input() {
    let sphere = icosphere(Vec3::new(0.5, 1.0, 0.0), 0.3, 2).unwrap();
    let x: Vec<Packed4> = sphere
        .positions
        .iter()
        .map(|&p| Packed4::new(p, 1.0))
        .collect();
    let mut arrays = vec![[0.0f32; 3]; x.len()];
    let mut vecs = vec![Vec3::ZERO; x.len()];
    vertex_normals_into(&sphere.triangles, &x, &mut arrays).unwrap();
    vertex_normals_into(&sphere.triangles, &x, &mut vecs).unwrap();
    let prepared = VertexNormals::new(&sphere.triangles, x.len()).unwrap();
    let mut reference = vec![Vec3::ZERO; x.len()];
    prepared.compute(&sphere.positions, &mut reference).unwrap();
    for ((a, v), r) in arrays.iter().zip(&vecs).zip(&reference) {
        assert_eq!(Vec3::from_array(*a), *v);
        assert!((*v - *r).length() < 1e-5, "{v} vs {r}");
    }
    assert_eq!(vecs, sphere.vertex_normals(&sphere.positions));
    // Outward on a sphere.
    for (p, n) in sphere.positions.iter().zip(&vecs) {
        assert!(n.dot(*p - Vec3::new(0.5, 1.0, 0.0)) > 0.0);
    }
    let short = vertex_normals_into(&sphere.triangles, &x, &mut vecs[1..]);
    assert!(matches!(short, Err(WobbleError::InvalidStructure { .. })));
    let bad = [[0, 1, x.len() as u32]];
    let mut untouched = vec![Vec3::ONE; x.len()];
    let err = vertex_normals_into(&bad, &x, &mut untouched).unwrap_err();
    assert!(matches!(
        err,
        WobbleError::IndexOutOfRange {
            what: "triangle",
            index: 0,
            ..
        }
    ));
    assert!(
        untouched.iter().all(|&n| n == Vec3::ONE),
        "nothing written on error"
    );
}

//! Embedding: a high-resolution mesh follows a deformed low-resolution cube with bounded
//! error; parallel paths equal serial ones bit for bit.

use solver_core::effects::embedding::{Embedding, EmbeddingScratch, VertexNormals};
use solver_core::glam::{Mat3, Vec3};
use solver_core::mesh::shapes::cube_tets;
use solver_core::mesh::shapes::icosphere;
use solver_core::mesh::TriMesh;
use solver_core::Packed4;

fn packed(p: &[Vec3]) -> Vec<Packed4> {
    p.iter().map(|&v| Packed4::new(v, 1.0)).collect()
}

fn max_error(a: &[Vec3], b: &[Vec3]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(p, q)| (*p - *q).length())
        .fold(0.0, f32::max)
}

#[test]
fn an_embedded_sphere_follows_a_deformed_cube() {
    let cube = cube_tets(3, Vec3::splat(-0.25), 0.5).unwrap();
    // The render mesh: a 642-vertex sphere inside the cube, and a few vertices just outside.
    let mut render = icosphere(Vec3::new(0.02, -0.01, 0.03), 0.2, 3)
        .unwrap()
        .positions;
    render.push(Vec3::new(0.27, 0.0, 0.0));
    let e = Embedding::in_tets(&render, &packed(&cube.positions), &cube.tets).unwrap();
    assert_eq!(e.len(), render.len());
    let mut out = vec![Vec3::ZERO; render.len()];
    let mut scratch = EmbeddingScratch::default();
    // An affine deformation is reproduced exactly (inside and, by extrapolation, outside).
    let a = Mat3::from_cols(
        Vec3::new(1.3, 0.1, 0.0),
        Vec3::new(0.2, 0.8, 0.1),
        Vec3::new(0.0, -0.1, 1.1),
    );
    let affine = |p: Vec3| a * p + Vec3::new(0.5, 1.0, -0.2);
    let moved: Vec<Vec3> = cube.positions.iter().map(|&p| affine(p)).collect();
    e.update(&packed(&moved), &mut out, &mut scratch).unwrap();
    let exact: Vec<Vec3> = render.iter().map(|&p| affine(p)).collect();
    let err = max_error(&out, &exact);
    assert!(err < 1e-5, "affine error {err}");
    // A bend y += 0.6 x²: linear interpolation errs by at most h²/8 |f''| along an edge of
    // x-extent h = 0.5/3 (the cell): 4.2 mm.
    let bend = |p: Vec3| Vec3::new(p.x, p.y + 0.6 * p.x * p.x, p.z);
    let moved: Vec<Vec3> = cube.positions.iter().map(|&p| bend(p)).collect();
    e.update(&packed(&moved), &mut out, &mut scratch).unwrap();
    let exact: Vec<Vec3> = render.iter().map(|&p| bend(p)).collect();
    let err = max_error(&out[..642], &exact[..642]);
    eprintln!("bend error {err}");
    let h = 0.5f32 / 3.0;
    let bound = h * h / 8.0 * 1.2;
    assert!(
        err <= 1.01 * bound,
        "bend error {err} over the bound {bound}"
    );
    // Parallel placement gives the same bits.
    let mut par = vec![Vec3::ZERO; render.len()];
    e.update_parallel(&packed(&moved), &mut par, &mut scratch)
        .unwrap();
    assert_eq!(out, par);
}

#[test]
fn a_surface_embedding_follows_rigid_motion_exactly_and_stretch_closely() {
    let sim = icosphere(Vec3::ZERO, 1.0, 1).unwrap();
    let render_mesh = icosphere(Vec3::ZERO, 1.05, 3).unwrap();
    let render = &render_mesh.positions;
    let e = Embedding::on_surface(render, &packed(&sim.positions), &sim.triangles).unwrap();
    let mut out = vec![Vec3::ZERO; render.len()];
    let mut scratch = EmbeddingScratch::default();
    e.update(&packed(&sim.positions), &mut out, &mut scratch)
        .unwrap();
    assert!(max_error(&out, render) < 1e-5, "identity");
    let rot = solver_core::glam::Quat::from_euler(solver_core::glam::EulerRot::XYZ, 0.3, -1.1, 0.7);
    let rigid = |p: Vec3| rot * p + Vec3::new(2.0, 0.5, -1.0);
    let moved: Vec<Vec3> = sim.positions.iter().map(|&p| rigid(p)).collect();
    e.update(&packed(&moved), &mut out, &mut scratch).unwrap();
    let exact: Vec<Vec3> = render.iter().map(|&p| rigid(p)).collect();
    assert!(
        max_error(&out, &exact) < 1e-5,
        "rigid error {}",
        max_error(&out, &exact)
    );
    // A 10% stretch along x: the shell follows within a few millimetres of the stretched shell.
    let stretch = |p: Vec3| Vec3::new(1.1 * p.x, p.y, p.z);
    let moved: Vec<Vec3> = sim.positions.iter().map(|&p| stretch(p)).collect();
    e.update_parallel(&packed(&moved), &mut out, &mut scratch)
        .unwrap();
    let exact: Vec<Vec3> = render.iter().map(|&p| stretch(p)).collect();
    let err = max_error(&out, &exact);
    eprintln!("surface stretch error {err}");
    assert!(err < 0.02, "stretch error {err}");
}

#[test]
fn render_normals_in_parallel_equal_the_serial_ones_and_the_mesh_normals() {
    let mesh = icosphere(Vec3::ZERO, 1.0, 4).unwrap();
    let vn = VertexNormals::new(&mesh.triangles, mesh.positions.len()).unwrap();
    let (mut a, mut b) = (vec![Vec3::ZERO; vn.len()], vec![Vec3::ZERO; vn.len()]);
    vn.compute(&mesh.positions, &mut a).unwrap();
    vn.compute_parallel(&mesh.positions, &mut b).unwrap();
    assert_eq!(a, b);
    let reference = TriMesh::vertex_normals(&mesh, &mesh.positions);
    assert!(max_error(&a, &reference) < 1e-5);
    for (n, p) in a.iter().zip(&mesh.positions) {
        assert!(n.dot(*p) > 0.99, "outward unit normals");
    }
    assert!(VertexNormals::new(&[[0, 1, 9]], 3).is_err());
    assert!(vn.compute(&mesh.positions[..3], &mut a).is_err());
}

#[test]
fn bad_embedding_input_is_an_error() {
    let cube = cube_tets(1, Vec3::ZERO, 1.0).unwrap();
    let sim = packed(&cube.positions);
    assert!(Embedding::in_tets(&[], &sim, &cube.tets).is_err());
    assert!(Embedding::in_tets(&[Vec3::NAN], &sim, &cube.tets).is_err());
    assert!(Embedding::in_tets(&[Vec3::ZERO], &sim, &[]).is_err());
    assert!(Embedding::in_tets(&[Vec3::ZERO], &sim, &[[0, 1, 2, 99]]).is_err());
    let e = Embedding::in_tets(&[Vec3::splat(0.5)], &sim, &cube.tets).unwrap();
    let mut out = vec![Vec3::ZERO; 1];
    assert!(e
        .update(&sim[..4], &mut out, &mut EmbeddingScratch::default())
        .is_err());
    assert!(e
        .update(&sim, &mut [], &mut EmbeddingScratch::default())
        .is_err());
}

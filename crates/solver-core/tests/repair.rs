//! Mesh repair: what default loading repairs (and reports), what strict mode refuses, what is
//! always an error, and OBJ errors that name the line.

use solver_core::glam::Vec3;
use solver_core::mesh::repair::{bending_hinges, parse_obj_repaired, repair, MeshOptions};
use solver_core::mesh::{parse_obj, parse_obj_raw};
use solver_core::WobbleError;
use std::path::Path;

fn quad_positions() -> Vec<Vec3> {
    vec![Vec3::ZERO, Vec3::X, Vec3::new(1.0, 0.0, 1.0), Vec3::Z]
}

fn strict() -> MeshOptions {
    MeshOptions::default().strict(true)
}

fn obj(
    text: &str,
) -> Result<
    (
        solver_core::mesh::TriMesh,
        solver_core::mesh::repair::RepairReport,
    ),
    WobbleError,
> {
    parse_obj_repaired(text.as_bytes(), Path::new("m.obj"), &MeshOptions::default())
}

fn obj_strict(text: &str) -> WobbleError {
    parse_obj_repaired(text.as_bytes(), Path::new("m.obj"), &strict()).unwrap_err()
}

#[test]
fn a_clean_mesh_passes_both_modes_unchanged() {
    let faces = vec![vec![0u32, 1, 2], vec![0, 2, 3]];
    let (m, r) = repair(&quad_positions(), &faces, &MeshOptions::default()).unwrap();
    let (ms, rs) = repair(&quad_positions(), &faces, &strict()).unwrap();
    assert_eq!(m, ms);
    assert_eq!(r, rs);
    assert!(r.is_clean());
    assert_eq!(r.to_string(), "mesh is clean: nothing repaired");
    assert_eq!(m.positions, quad_positions());
    assert_eq!(m.triangles, vec![[0, 1, 2], [0, 2, 3]]);
    assert_eq!(r.vertex_map, vec![0, 1, 2, 3]);
}

#[test]
fn polygons_are_fan_triangulated_without_a_warning() {
    let (m, r) = repair(&quad_positions(), &[vec![0u32, 1, 2, 3]], &strict()).unwrap();
    assert_eq!(m.triangles, vec![[0, 1, 2], [0, 2, 3]]);
    assert_eq!(r.polygons_triangulated, 1);
    assert!(r.is_clean());
}

#[test]
fn duplicate_vertices_are_welded_or_refused() {
    // The quad's two triangles each with their own copy of the diagonal, plus a spare vertex.
    let mut pos = quad_positions();
    pos.push(Vec3::ZERO); // 4 = copy of 0
    pos.push(Vec3::new(1.0, 0.0, 1.0)); // 5 = copy of 2
    let faces = [[0u32, 1, 2], [4, 5, 3]];
    let (m, r) = repair(&pos, &faces, &MeshOptions::default()).unwrap();
    assert_eq!(r.welded_vertices, 2);
    assert_eq!(m.positions.len(), 4);
    assert_eq!(m.triangles, vec![[0, 1, 2], [0, 2, 3]]);
    assert_eq!(r.vertex_map, vec![0, 1, 2, 3, 0, 2]);
    assert_eq!(r.to_string(), "mesh repaired: 2 duplicate vertices welded");
    let e = repair(&pos, &faces, &strict()).unwrap_err();
    assert!(
        matches!(&e, WobbleError::RefusedInStrictMode(inner)
            if matches!(**inner, WobbleError::DuplicateVertex { index: 4, of: 0, .. })),
        "{e}"
    );
    assert!(e.to_string().contains("strict mode refuses"), "{e}");
}

#[test]
fn the_weld_tolerance_decides_what_is_a_duplicate() {
    let mut pos = quad_positions();
    pos.push(Vec3::new(0.0, 1e-4, 0.0)); // near 0
    let faces = [[0u32, 1, 2], [4, 2, 3]];
    let (_, exact) = repair(&pos, &faces, &MeshOptions::default()).unwrap();
    assert_eq!(
        exact.welded_vertices, 0,
        "0 welds exactly equal vertices only"
    );
    let (m, near) = repair(&pos, &faces, &MeshOptions::default().weld_tolerance(1e-3)).unwrap();
    assert_eq!(near.welded_vertices, 1);
    assert_eq!(m.triangles, vec![[0, 1, 2], [0, 2, 3]]);
    assert!(repair(&pos, &faces, &MeshOptions::default().weld_tolerance(-1.0)).is_err());
    assert!(repair(
        &pos,
        &faces,
        &MeshOptions::default().weld_tolerance(f32::NAN)
    )
    .is_err());
}

#[test]
fn zero_area_and_duplicate_triangles_and_unused_vertices_are_dropped_or_refused() {
    let mut pos = quad_positions();
    pos.push(Vec3::new(2.0, 0.0, 0.0)); // 4: collinear with 0 and 1
    pos.push(Vec3::new(5.0, 5.0, 5.0)); // 5: unused
    let faces = [
        vec![0u32, 1, 2],
        vec![0, 2, 3],
        vec![0, 1, 4], // zero area
        vec![2, 0, 3], // duplicate of face 1, other orientation
        vec![1, 1, 2], // repeated corner
    ];
    let (m, r) = repair(&pos, &faces, &MeshOptions::default()).unwrap();
    assert_eq!(m.triangles, vec![[0, 1, 2], [0, 2, 3]]);
    assert_eq!(m.positions.len(), 4);
    assert_eq!(r.degenerate_triangles, 2);
    assert_eq!(r.duplicate_triangles, 1);
    assert_eq!(
        r.unused_vertices, 2,
        "vertex 4 (only in a dropped face) and 5"
    );
    assert_eq!(r.vertex_map[4], u32::MAX);
    assert_eq!(
        r.to_string(),
        "mesh repaired: 2 zero-area triangles dropped, 1 duplicate triangle dropped, 2 unused vertices dropped"
    );
    let e = repair(&pos, &faces, &strict()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("triangle 2 (0, 1, 4) is degenerate"),
        "{e}"
    );
    let e = repair(&pos, &faces[..2], &strict()).unwrap_err();
    assert!(
        e.to_string().starts_with("vertex 4 is used by no face"),
        "{e}"
    );
    let e = repair(
        &pos[..4],
        &[faces[0].clone(), faces[1].clone(), faces[3].clone()],
        &strict(),
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("face 2 repeats face 1"), "{e}");
}

#[test]
fn non_manifold_edges_are_listed_and_left_out_of_bending() {
    // Three triangles on the edge (0, 1), like pages of a book.
    let pos = vec![
        Vec3::ZERO,
        Vec3::X,
        Vec3::new(0.5, 1.0, 0.0),
        Vec3::new(0.5, 0.0, 1.0),
        Vec3::new(0.5, -1.0, 0.0),
    ];
    let faces = [[0u32, 1, 2], [1, 0, 3], [0, 1, 4]];
    let (m, r) = repair(&pos, &faces, &MeshOptions::default()).unwrap();
    assert_eq!(r.non_manifold_edges, vec![[0, 1]]);
    assert_eq!(m.triangles.len(), 3, "the triangles stay");
    assert_eq!(
        r.to_string(),
        "mesh repaired: 1 non-manifold edge left out of bending"
    );
    let h = bending_hinges(&m);
    assert_eq!(h.non_manifold, vec![[0, 1]]);
    assert!(h.hinges.is_empty(), "{:?}", h.hinges);
    let e = repair(&pos, &faces, &strict()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("edge (0, 1) is non-manifold: face 2"),
        "{e}"
    );
}

#[test]
fn bending_hinges_pair_the_two_triangles_of_each_interior_edge() {
    let (m, _) = repair(&quad_positions(), &[[0u32, 1, 2], [0, 2, 3]], &strict()).unwrap();
    let h = bending_hinges(&m);
    assert_eq!(h.hinges, vec![[0, 2, 1, 3]]);
    assert!(h.non_manifold.is_empty());
}

#[test]
fn what_cannot_be_repaired_is_an_error_in_both_modes() {
    let pos = quad_positions();
    for options in [MeshOptions::default(), strict()] {
        let mut bad = pos.clone();
        bad[2].y = f32::NAN;
        let e = repair(&bad, &[[0u32, 1, 2]], &options).unwrap_err();
        assert!(matches!(e, WobbleError::NonFinite { index: 2, .. }), "{e}");
        let e = repair(&pos, &[[0u32, 1, 9]], &options).unwrap_err();
        assert!(
            matches!(
                e,
                WobbleError::IndexOutOfRange {
                    index: 0,
                    value: 9,
                    len: 4,
                    ..
                }
            ),
            "{e}"
        );
        let e = repair(&pos, &[vec![0u32, 1, 2], vec![2, 3]], &options).unwrap_err();
        assert!(
            matches!(
                e,
                WobbleError::FaceTooSmall {
                    index: 1,
                    vertices: 2
                }
            ),
            "{e}"
        );
        let e = repair(&pos, &[[0u32, 1, 1]], &options).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("degenerate") || text.contains("empty"),
            "{text}"
        );
        let none: [[u32; 3]; 0] = [];
        assert!(matches!(
            repair(&pos, &none, &options).unwrap_err(),
            WobbleError::EmptyMesh(_)
        ));
        let huge = vec![
            Vec3::splat(-3e38),
            Vec3::splat(3e38),
            Vec3::new(3e38, 0.0, 0.0),
        ];
        let e = repair(&huge, &[[0u32, 1, 2]], &options).unwrap_err();
        assert!(e.to_string().contains("mesh extent"), "{e}");
    }
}

#[test]
fn obj_errors_name_the_file_and_line() {
    let cases: &[(&str, &str)] = &[
        (
            "v 0 0 0\nv 1 nan 0\nv 0 1 0\nf 1 2 3\n",
            "m.obj:2: vertex 2 has a non-finite coordinate: y = NaN",
        ),
        (
            "v 0 0 0\nv 1 1e39 0\n",
            "m.obj:2: vertex 2 has a non-finite coordinate: y = inf",
        ),
        (
            "v 0 0 0\nv 1 0 0\nv 0 1 0\n\nf 1 2 4\n",
            "m.obj:5: vertex index 4 is out of range: 3 vertices are defined above this line",
        ),
        (
            "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n",
            "m.obj:4: vertex index 0 is invalid: OBJ indices start at 1",
        ),
        (
            "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -4 1 2\n",
            "m.obj:4: vertex index -4 is out of range",
        ),
        (
            "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 x\n",
            "m.obj:4: vertex index 'x' is not an integer",
        ),
        (
            "v 0 0 0\nv 1 0 0\nf 1 2\n",
            "m.obj:3: face 1 has 2 vertices; a face needs at least 3",
        ),
        (
            "v 0 0\n",
            "m.obj:1: vertex line has 2 coordinates; it needs x y z",
        ),
        (
            "v 0 zero 0\n",
            "m.obj:1: vertex coordinate 'zero' is not a number",
        ),
        (
            "v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nf 1/1 2/5 3/1\n",
            "m.obj:5: texture coordinate index 5 is out of range",
        ),
        (
            "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1/1/1/1 2 3\n",
            "m.obj:4: face vertex '1/1/1/1' has more than three parts",
        ),
        ("v 0 0 0 0\n", "m.obj:1: vertex weight w is 0"),
        (
            "v 0 0 0\nv 1 0 0\nv 0 1 0\nvn 0 x 1\nf 1 2 3\n",
            "m.obj:4: not a valid Wavefront OBJ file: normal",
        ),
        (
            "",
            "m.obj (an OBJ file with 0 vertices and no face) is empty",
        ),
        (
            "hello world\n",
            "m.obj (an OBJ file with 0 vertices and no face) is empty",
        ),
        (
            "v 0 0 0\nv 1 0 0\nv 0 1 0\n",
            "m.obj (an OBJ file with 3 vertices and no face) is empty",
        ),
    ];
    for (text, expected) in cases {
        let e = obj(text).unwrap_err().to_string();
        assert!(
            e.starts_with(expected),
            "{text:?}\n got: {e}\nwant: {expected}"
        );
    }
    let binary = [b'v', b' ', 0u8, 1, 2];
    let e = parse_obj_repaired(&binary, Path::new("m.obj"), &MeshOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("m.obj:1: binary data (NUL byte)"), "{e}");
    let e = parse_obj_repaired(
        &[0xff, 0xfe, b'\n'],
        Path::new("m.obj"),
        &MeshOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("m.obj:1: not a text file (invalid UTF-8)"),
        "{e}"
    );
}

#[test]
fn strict_obj_errors_name_the_line_of_the_defect() {
    let head = "v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\n";
    let e = obj_strict(&format!("{head}f 1 2 3\nf 1 3 4\nf 3 1 4\n")).to_string();
    assert!(e.starts_with("m.obj:7: face 2 repeats face 1"), "{e}");
    assert!(e.contains("strict mode refuses this"), "{e}");
    assert!(e.ends_with("[vertex and face numbers count from 0]"), "{e}");
    let e = obj_strict(&format!("{head}v 0 0 0\nf 1 2 3\nf 5 3 4\n")).to_string();
    assert!(
        e.starts_with("m.obj:5: vertex 4 duplicates vertex 0"),
        "{e}"
    );
    let e = obj_strict(&format!("{head}v 9 9 9\nf 1 2 3\nf 1 3 4\n")).to_string();
    assert!(e.starts_with("m.obj:5: vertex 4 is used by no face"), "{e}");
    let e = obj_strict(&format!("{head}f 1 2 3\n\nf 1 2 2\n")).to_string();
    assert!(
        e.starts_with("m.obj:7: triangle 1 (0, 1, 1) is degenerate"),
        "{e}"
    );
    // The strict loader of mesh.rs is this strict mode.
    assert!(parse_obj(
        format!("{head}v 9 9 9\nf 1 2 3\n").as_bytes(),
        Path::new("m.obj")
    )
    .is_err());
}

#[test]
fn obj_loading_keeps_file_numbering_across_groups_and_reads_like_tobj() {
    // Two groups sharing the diagonal: tobj numbers each group apart; the loader keeps the
    // file's numbering, so nothing is split or welded.
    let text = "v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\ng a\nusemtl x\nf 1 2 3\ng b\nf -4 -2 -1\nl 1 2 3\np 1\n";
    let (m, r) = obj(text).unwrap();
    assert!(r.is_clean(), "{r}");
    assert_eq!(m.positions.len(), 4);
    assert_eq!(m.triangles, vec![[0, 1, 2], [0, 2, 3]]);
    // w divides, v/vt/vn forms, CRLF line ends, comments.
    let text =
        "# c\r\nv 0 0 0 2\r\nv 2 0 0 2\r\nv 0 2 0 2\r\nvt 0 0\r\nvn 0 0 1\r\nf 1/1/1 2//1 3/1\r\n";
    let raw = parse_obj_raw(text.as_bytes(), Path::new("m.obj")).unwrap();
    assert_eq!(raw.positions, vec![Vec3::ZERO, Vec3::X, Vec3::Y]);
    assert_eq!(raw.vertex_lines, vec![2, 3, 4]);
    assert_eq!(raw.face_lines, vec![7]);
}

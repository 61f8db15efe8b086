//! TetGen loading and the `mesh FILE` scene's closed-surface and tetrahedral cases.

use scenes::mesh_scene;
use solver_core::glam::Vec3;
use solver_core::mesh::shapes::cube_tets;
use solver_core::mesh::tetgen::{load_tetgen, parse_tetgen};
use solver_core::{figures, step, GaussSeidel, StepParams, WobbleError};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wobble-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// TetGen text for a mesh, numbered from `base`, with comments and boundary markers.
fn tetgen_text(
    positions: &[Vec3],
    tets: &[[u32; 4]],
    base: u32,
    nodes_per_tet: usize,
) -> (String, String) {
    let mut node = String::from("# written by the test\n");
    writeln!(node, "{} 3 0 1", positions.len()).unwrap();
    for (k, p) in positions.iter().enumerate() {
        writeln!(
            node,
            "  {} {} {} {} 1  # a point",
            k as u32 + base,
            p.x,
            p.y,
            p.z
        )
        .unwrap();
    }
    let mut ele = String::new();
    writeln!(ele, "{} {} 0", tets.len(), nodes_per_tet).unwrap();
    for (k, t) in tets.iter().enumerate() {
        // Write every other tetrahedron turned over: the loader reorients them.
        let t = if k % 2 == 0 {
            *t
        } else {
            [t[0], t[1], t[3], t[2]]
        };
        write!(ele, "{}", k as u32 + base).unwrap();
        for v in t {
            write!(ele, " {}", v + base).unwrap();
        }
        for _ in 4..nodes_per_tet {
            write!(ele, " {}", base).unwrap();
        }
        ele.push('\n');
    }
    (node, ele)
}

#[test]
fn tetgen_files_load_with_either_numbering() {
    let cube = cube_tets(2, Vec3::ZERO, 1.0).unwrap();
    for (base, per) in [(0, 4), (1, 4), (1, 10)] {
        let (node, ele) = tetgen_text(&cube.positions, &cube.tets, base, per);
        let mesh = parse_tetgen(
            node.as_bytes(),
            Path::new("a.node"),
            ele.as_bytes(),
            Path::new("a.ele"),
        )
        .unwrap();
        assert_eq!(mesh.positions, cube.positions);
        assert_eq!(mesh.tets.len(), cube.tets.len());
        assert!(
            (mesh.volume() - 1.0).abs() < 1e-5,
            "all reoriented positive: {}",
            mesh.volume()
        );
    }
    let dir = temp_dir("tetgen");
    let (node, ele) = tetgen_text(&cube.positions, &cube.tets, 1, 4);
    std::fs::write(dir.join("c.node"), node).unwrap();
    std::fs::write(dir.join("c.ele"), ele).unwrap();
    for p in ["c.node", "c.ele", "c"] {
        let mesh = load_tetgen(&dir.join(p)).unwrap();
        assert_eq!(mesh.tets.len(), 40);
    }
    std::fs::remove_file(dir.join("c.ele")).unwrap();
    assert!(matches!(
        load_tetgen(&dir.join("c.node")),
        Err(WobbleError::Io { .. })
    ));
}

#[test]
fn bad_tetgen_files_are_errors_naming_the_line() {
    let node = "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n";
    let good = "1 4 0\n0 0 1 2 3\n";
    let p = |n: &str, e: &str| {
        parse_tetgen(
            n.as_bytes(),
            Path::new("m.node"),
            e.as_bytes(),
            Path::new("m.ele"),
        )
    };
    assert!(p(node, good).is_ok());
    let cases: [(&str, &str, &str); 8] = [
        ("4 2 0 0\n", good, "dimension"),
        ("4 3 0 0\n0 0 0 0\n1 1 0 x\n", good, "coordinate"),
        ("4 3 0 0\n0 0 0 0\n", good, "promises"),
        (node, "1 4 0\n0 0 1 2 9\n", "refers to index"),
        (node, "1 4 0\n0 0 1 2 2\n", "twice"),
        (node, "1 3 0\n0 0 1 2\n", "nodes per tetrahedron"),
        (
            "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 2 0 0\n3 3 0 0\n",
            good,
            "inverted or flat",
        ),
        (node, "", "empty"),
    ];
    for (n, e, needle) in cases {
        let err = p(n, e).unwrap_err().to_string();
        assert!(err.contains(needle), "expected '{needle}' in: {err}");
    }
    let err = p("4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 nan 0\n3 0 0 1\n", good).unwrap_err();
    assert!(matches!(err, WobbleError::NonFinite { .. }), "{err}");
    let err = p(&node.replace("0 0 0 0\n1", "5 0 0 0\n1"), good).unwrap_err();
    assert!(err.to_string().contains("numbers from 0 or 1"), "{err}");
}

#[test]
fn the_mesh_scene_drops_tetgen_meshes_like_the_cube() {
    let cube = cube_tets(2, Vec3::new(3.0, -7.0, 1.0), 0.4).unwrap();
    let dir = temp_dir("scene");
    let (node, ele) = tetgen_text(&cube.positions, &cube.tets, 1, 4);
    std::fs::write(dir.join("box.node"), node).unwrap();
    std::fs::write(dir.join("box.ele"), ele).unwrap();
    let mut body = mesh_scene(&dir.join("box.ele")).unwrap();
    assert!(body.constraints().kind_named("tet_volume").is_some());
    assert_eq!(body.topology().tets.len(), 40);
    assert!(
        (figures::lowest_y(&body) - 0.2).abs() < 1e-5,
        "half its height above the ground"
    );
    assert_eq!(body.colliders().len(), 1);
    let total: f32 = body.particles().mass().iter().sum();
    assert!((total - 1.0).abs() < 1e-5);
    let mut gs = GaussSeidel::new();
    for _ in 0..60 {
        step(&mut body, &StepParams::default(), &mut gs, None).unwrap();
    }
    assert!(figures::lowest_y(&body).abs() < 0.01, "landed");
}

#[test]
fn the_mesh_scene_treats_a_closed_obj_like_jelly() {
    let sphere = solver_core::mesh::shapes::icosphere(Vec3::new(0.0, 5.0, 0.0), 2.0, 1).unwrap();
    let mut obj = String::new();
    for p in &sphere.positions {
        writeln!(obj, "v {} {} {}", p.x, p.y, p.z).unwrap();
    }
    for t in &sphere.triangles {
        // Inward-facing on purpose: the scene turns it outward.
        writeln!(obj, "f {} {} {}", t[0] + 1, t[2] + 1, t[1] + 1).unwrap();
    }
    let dir = temp_dir("obj");
    std::fs::write(dir.join("ball.obj"), obj).unwrap();
    let body = mesh_scene(&dir.join("ball.obj")).unwrap();
    assert!(body.topology().closed);
    let kind = body.constraints().kind_named("surface_volume").unwrap();
    assert!(kind.is_global());
    assert!(body.topology().rest_volume > 0.0);
    assert!((figures::volume_ratio(&body).unwrap() - 1.0).abs() < 1e-6);
    assert!((figures::lowest_y(&body) - 2.0).abs() < 1e-4);
}

#[test]
fn inverted_tetrahedra_are_turned_over_and_reported_or_refused_in_strict_mode() {
    use scenes::mesh_scene_with;
    use solver_core::mesh::repair::MeshOptions;
    let dir = temp_dir("tets");
    let node = dir.join("two.node");
    std::fs::write(
        &node,
        "5 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n4 0 0 -1\n",
    )
    .unwrap();
    // The second tetrahedron is written inside-out against the first.
    std::fs::write(dir.join("two.ele"), "2 4 0\n0 0 1 2 3\n1 0 1 2 4\n").unwrap();
    let (body, report) = mesh_scene_with(&node, &MeshOptions::default()).unwrap();
    assert_eq!(report.tets_turned_over, 1);
    assert!(
        report
            .to_string()
            .contains("1 inverted tetrahedron turned over"),
        "{report}"
    );
    assert!(solver_core::figures::tet_volume(&body.topology().tets, &body.particles().x()) > 0.0);
    let err = mesh_scene_with(&node, &MeshOptions::default().strict(true)).unwrap_err();
    assert!(err.to_string().contains("strict mode refuses"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

//! `wobble step` on a world scene and the contact figures: `contacts`, `self_intersections`
//! and `--dump-obj` (one OBJ object per body).

mod common;

/// The JSON report of `wobble step` with `args`, from the first step on.
fn step(args: &[&str]) -> serde_json::Value {
    common::step_json(&[args, &["--json", "--warmup", "0"]].concat())
}

#[test]
fn the_tunnel_world_reports_its_contacts_and_dumps_every_body() {
    let dir = std::env::temp_dir().join(format!("wobble-world-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let obj = dir.join("tunnel.obj");
    // Two steps: the bodies meet their walls in the second.
    let r = step(&[
        "--scene",
        "tunnel",
        "--steps",
        "2",
        "--dump-obj",
        obj.to_str().unwrap(),
    ]);
    assert!(r["contacts"].as_u64().unwrap() > 0, "{r}");
    assert_eq!(r["self_intersections"].as_u64(), Some(0), "{r}");
    assert_eq!(r["finite"].as_bool(), Some(true));
    let text = std::fs::read_to_string(&obj).unwrap();
    let objects = text.lines().filter(|l| l.starts_with("o ")).count();
    let vertices = text.lines().filter(|l| l.starts_with("v ")).count() as u64;
    assert_eq!(objects, 2);
    assert_eq!(Some(vertices), r["vertices"].as_u64());
    // Every vertex of the dump lies before the walls at x = 0.
    for l in text.lines().filter(|l| l.starts_with("v ")) {
        let x: f32 = l.split(' ').nth(1).unwrap().parse().unwrap();
        assert!(x < 0.0, "{l}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_single_body_counts_self_intersections_only_when_asked() {
    let plain = step(&["--scene", "cloth", "--n", "8", "--steps", "2"]);
    assert!(plain["self_intersections"].is_null(), "{plain}");
    let counted = step(&[
        "--scene",
        "cloth",
        "--n",
        "8",
        "--steps",
        "2",
        "--intersections",
    ]);
    // A hanging 8 x 8 cloth after two steps has not folded through itself.
    assert_eq!(counted["self_intersections"].as_u64(), Some(0), "{counted}");
}

#[test]
fn the_bodies_world_loads_one_body_per_mesh_stacked_in_the_order_given() {
    let dir = std::env::temp_dir().join(format!("wobble-bodies-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tetra = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/corpus/obj_body/tetra.obj"
    );
    let octa = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/corpus/obj_body/octahedron.obj"
    );
    let obj = dir.join("bodies.obj");
    let r = step(&[
        "--scene",
        "bodies",
        "--mesh",
        octa,
        "--mesh",
        tetra,
        "--steps",
        "1",
        "--dump-obj",
        obj.to_str().unwrap(),
    ]);
    assert_eq!(r["vertices"].as_u64(), Some(6 + 4), "{r}");
    assert_eq!(r["finite"].as_bool(), Some(true));
    // One object per body, in the order given, the second above the first.
    let text = std::fs::read_to_string(&obj).unwrap();
    let mut heights: Vec<Vec<f32>> = Vec::new();
    for l in text.lines() {
        if l.starts_with("o ") {
            heights.push(Vec::new());
        } else if let Some(v) = l.strip_prefix("v ") {
            let y: f32 = v.split(' ').nth(1).unwrap().parse().unwrap();
            heights.last_mut().unwrap().push(y);
        }
    }
    assert_eq!(heights.iter().map(Vec::len).collect::<Vec<_>>(), [6, 4]);
    let top_of_first = heights[0].iter().copied().fold(f32::MIN, f32::max);
    let bottom_of_second = heights[1].iter().copied().fold(f32::MAX, f32::min);
    assert!(
        bottom_of_second > top_of_first,
        "{bottom_of_second} vs {top_of_first}"
    );
    // Without a mesh the world is refused; a single-body scene takes one mesh only.
    let err = common::refused(&["step", "--scene", "bodies"]);
    assert!(err.contains("one --mesh FILE per body"), "{err}");
    let err = common::refused(&["step", "--scene", "mesh", "--mesh", octa, "--mesh", tetra]);
    assert!(err.contains("--mesh given 2 times"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

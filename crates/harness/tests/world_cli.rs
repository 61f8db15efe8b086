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

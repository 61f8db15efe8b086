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

/// The frames of the GIF at `path`, each as RGBA pixels of the whole canvas.
fn gif_frames(path: &std::path::Path) -> Vec<Vec<u8>> {
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut decoder = options.read_info(file).unwrap();
    let (w, h) = (decoder.width() as usize, decoder.height() as usize);
    let mut frames = Vec::new();
    while let Some(frame) = decoder.read_next_frame().unwrap() {
        // plotters writes every frame over the whole canvas.
        assert_eq!((frame.width as usize, frame.height as usize), (w, h));
        frames.push(frame.buffer.to_vec());
    }
    frames
}

/// The hue of `c` in degrees, and its chroma (largest channel less smallest).
fn hue(c: [f32; 3]) -> (f32, f32) {
    let (max, min) = (c[0].max(c[1]).max(c[2]), c[0].min(c[1]).min(c[2]));
    let chroma = max - min;
    if chroma == 0.0 {
        return (0.0, 0.0);
    }
    let h = if max == c[0] {
        60.0 * ((c[1] - c[2]) / chroma)
    } else if max == c[1] {
        60.0 * ((c[2] - c[0]) / chroma + 2.0)
    } else {
        60.0 * ((c[0] - c[1]) / chroma + 4.0)
    };
    (h.rem_euclid(360.0), chroma)
}

/// How many pixels of `rgba` show each body's colour ([`harness::commands::render::BODY_COLOURS`],
/// front or back): a pixel is body k's when its hue is within 8 degrees of one of body k's
/// base colours. The shading scales every channel alike and a translucent grey collider in
/// front mixes in grey, neither of which turns the hue; greys (the background, the ground
/// grid, the colliders alone, the text) have too little chroma to have one and count for no
/// body.
fn body_pixels(rgba: &[u8]) -> Vec<usize> {
    use harness::commands::render::BODY_COLOURS;
    let of = |c: (u8, u8, u8)| hue([c.0 as f32, c.1 as f32, c.2 as f32]).0;
    let mut counts = vec![0; BODY_COLOURS.len()];
    for px in rgba.chunks_exact(4) {
        let (h, chroma) = hue([px[0] as f32, px[1] as f32, px[2] as f32]);
        if chroma < 30.0 {
            continue;
        }
        let near = |c: (u8, u8, u8)| {
            let d = (h - of(c)).abs();
            d.min(360.0 - d) < 8.0
        };
        if let Some(k) = BODY_COLOURS.iter().position(|&(f, b)| near(f) || near(b)) {
            counts[k] += 1;
        }
    }
    counts
}

#[test]
fn render_draws_every_body_of_each_world_scene_in_its_own_colour() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus/obj_body");
    let octa = format!("{corpus}/octahedron.obj");
    let tetra = format!("{corpus}/tetra.obj");
    // (scene and its own arguments, bodies in the world)
    let worlds: [(&[&str], usize); 4] = [
        (&["--scene", "drape", "--n", "12"], 1),
        (&["--scene", "tunnel"], 2),
        (&["--scene", "stack"], 3),
        (&["--scene", "bodies", "--mesh", &octa, "--mesh", &tetra], 2),
    ];
    let frames = 5;
    for (scene, bodies) in worlds {
        let gif = dir.path().join(format!("{}.gif", scene[1]));
        let tail = [
            "--frames",
            "5",
            "--width",
            "320",
            "--height",
            "240",
            "--stills",
            "1",
            "--out",
            gif.to_str().unwrap(),
        ];
        common::ok(&[&["render"], scene, &tail].concat());
        let shown = gif_frames(&gif);
        assert_eq!(shown.len(), frames, "{scene:?}");
        for (k, rgba) in shown.iter().enumerate() {
            let counts = body_pixels(rgba);
            // Every body's colour is on screen (the camera frames them all), and next to
            // nothing of a body the world does not have (the quantised GIF palette turns a
            // few pixels of a dark outline).
            let total: usize = counts.iter().sum();
            for (b, &c) in counts.iter().enumerate() {
                if b < bodies {
                    assert!(
                        c >= 50,
                        "{scene:?} frame {k}: body {b} has {c} pixels {counts:?}"
                    );
                } else {
                    assert!(c * 100 <= total, "{scene:?} frame {k}: {counts:?}");
                }
            }
        }
        assert!(gif
            .with_file_name(format!("{}_frame004.png", scene[1]))
            .exists());
    }
}

#[test]
fn render_refuses_what_a_world_scene_cannot_take_and_names_the_scenes() {
    // A scene that does not exist: clap's error lists every scene, the worlds among them.
    let err = common::refused(&["render", "--scene", "nosuch"]);
    for scene in ["cloth", "mesh", "drape", "tunnel", "stack", "bodies"] {
        assert!(err.contains(scene), "{scene}: {err}");
    }
    let err = common::refused(&["render", "--scene", "bodies"]);
    assert!(err.contains("one --mesh FILE per body"), "{err}");
    let err = common::refused(&["render", "--scene", "stack", "--mesh", "a.obj"]);
    assert!(
        err.contains("the stack world builds its own bodies"),
        "{err}"
    );
    let err = common::refused(&["render", "--scene", "drape", "--n", "1"]);
    assert!(!err.contains("panicked") && err.contains("drape"), "{err}");
}

#[test]
fn the_newton_reference_runs_every_scene_it_can_solve_and_refuses_the_others_by_name() {
    // As a new user would try it: every scene, default sizes but the large ones cut down.
    for (scene, n) in [
        ("cloth", Some("8")),
        ("rope", None),
        ("flag", Some("8")),
        ("jelly", Some("1")),
        ("cube", Some("2")),
        ("drape", Some("12")),
        ("tunnel", None),
        ("stack", None),
    ] {
        let mut args = vec![
            "step", "--scene", scene, "--solver", "newton", "--steps", "2",
        ];
        args.extend(["--warmup", "0", "--json"]);
        if let Some(n) = n {
            args.extend(["--n", n]);
        }
        let o = common::wobble(&args);
        if scene == "flag" {
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(!o.status.success(), "{scene}: bending accepted");
            assert!(
                err.contains("dihedral_bending") && err.contains("newton"),
                "{err}"
            );
            continue;
        }
        assert!(
            o.status.success(),
            "{scene}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(r["solver"].as_str(), Some("newton"), "{r}");
        assert_eq!(r["finite"].as_bool(), Some(true), "{scene}: {r}");
    }
}

/// A teapot of three parts steps as a world of three bodies whose intersections at load are
/// gone after 4 s; stepped as one body (`--no-part-contacts`, or a command that cannot step a
/// world) it warns that the parts pass through each other.
#[test]
fn a_mesh_of_parts_is_a_world_and_one_stepped_as_one_body_warns() {
    let teapot = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenes/tests/data/teapot_parts.obj"
    );
    let r = step(&["--scene", "mesh", "--mesh", teapot, "--steps", "240"]);
    assert_eq!(r["bodies"].as_u64(), Some(3), "{r}");
    assert!(r["intersecting_pairs_at_load"].as_u64().unwrap() > 0, "{r}");
    assert_eq!(r["intersecting_pairs"].as_u64(), Some(0), "{r}");
    let out = common::ok(&[
        "step",
        "--scene",
        "mesh",
        "--mesh",
        teapot,
        "--no-part-contacts",
        "--steps",
        "1",
        "--warmup",
        "0",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("a mesh of 3 parts stepped as one body"),
        "{err}"
    );
}

#[test]
fn wobble_bodies_steps_the_crowd_on_every_thread_count_to_the_same_bits() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_wobble"))
        .args([
            "bodies", "--json", "--warmup", "30", "--rounds", "2", "--turn", "1",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["bodies"].as_u64(), Some(64), "{r}");
    assert_eq!(r["touching_pairs"].as_u64(), Some(16), "{r}");
    assert_eq!(r["same_bits"].as_bool(), Some(true), "{r}");
    let worlds = r["worlds"].as_array().unwrap();
    assert_eq!(worlds.len(), 2, "{r}");
    for w in worlds {
        let ms = w["ms_per_step"]["median"].as_f64().unwrap();
        assert!(ms.is_finite() && ms > 0.0, "{r}");
        assert!(w["over_alone"]["median"].as_f64().unwrap() > 0.0, "{r}");
    }
    // After 30 steps the jellies have landed, in their hammocks or on the ground.
    assert!(r["contacts"].as_u64().unwrap() > 0, "{r}");
    let apart = std::process::Command::new(env!("CARGO_BIN_EXE_wobble"))
        .args([
            "bodies",
            "--apart",
            "--json",
            "--warmup",
            "1",
            "--rounds",
            "1",
            "--turn",
            "1",
            "--threads",
            "2",
        ])
        .output()
        .unwrap();
    assert!(apart.status.success());
    let a: serde_json::Value = serde_json::from_slice(&apart.stdout).unwrap();
    assert_eq!(a["touching_pairs"].as_u64(), Some(0), "{a}");
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_wobble"))
        .args(["bodies", "--rounds", "0"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--rounds"));
}

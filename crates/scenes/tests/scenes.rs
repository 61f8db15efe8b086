//! The standard scenes are built exactly as docs/SCENES.md writes them, and the cloth hangs.

use solver_core::{figures, step, GaussSeidel, StepParams};

#[test]
fn cloth_has_the_documented_counts_and_pins() {
    for n in [2usize, 3, 16, 23] {
        let body = scenes::cloth(n).unwrap();
        assert_eq!(body.len(), n * n);
        assert_eq!(
            body.constraints().distance.len(),
            3 * n * n - 4 * n + 1,
            "n = {n}"
        );
        assert_eq!(body.topology().triangles.len(), 2 * (n - 1) * (n - 1));
        assert_eq!(body.topology().structural, 2 * n * (n - 1));
        for v in 0..n * n {
            let pinned = v == 0 || v == n - 1;
            assert_eq!(body.particles().inv_mass(v) == 0.0, pinned, "vertex {v}");
            if !pinned {
                assert!((body.particles().mass()[v] - 1.0 / (n * n) as f32).abs() < 1e-9);
            }
        }
    }
}

#[test]
fn cloth_constraint_order_and_rest_pose_follow_scenes_md() {
    let n = 4;
    let body = scenes::cloth(n).unwrap();
    let d = &body.constraints().distance;
    assert_eq!(d.pairs[0], [0, 1]);
    assert_eq!(d.pairs[n - 1], [n as u32, n as u32 + 1]);
    assert_eq!(d.pairs[n * (n - 1)], [0, n as u32]);
    assert_eq!(d.pairs[2 * n * (n - 1)], [0, n as u32 + 1]);
    assert_eq!(body.topology().triangles[0], [0, n as u32 + 1, 1]);
    assert_eq!(body.topology().triangles[1], [0, n as u32, n as u32 + 1]);
    let p = body.particles().position(n * 2 + 3);
    assert_eq!(p.to_array(), [1.0, 1.0, 2.0 / 3.0]);
    assert!((d.rest[2 * n * (n - 1)] - std::f32::consts::SQRT_2 / 3.0).abs() < 1e-6);
}

#[test]
fn rope_is_a_pinned_chain() {
    let body = scenes::rope(11).unwrap();
    assert_eq!(body.constraints().distance.len(), 10);
    assert_eq!(body.particles().inv_mass(0), 0.0);
    assert!((body.particles().position(10).x - 1.0).abs() < 1e-6);
}

#[test]
fn hanging_cloth_keeps_pins_exact_hangs_and_stays_finite() {
    let mut body = scenes::cloth(32).unwrap();
    let pins = [body.particles().x()[0], body.particles().x()[31]];
    let mut solver = GaussSeidel::new();
    let params = StepParams::default();
    for s in 0..1000 {
        step(&mut body, &params, &mut solver, None).unwrap();
        if s == 299 {
            let low = figures::lowest_y(&body);
            assert!(low < 0.2, "lowest point {low} after 300 steps");
        }
    }
    assert_eq!(body.particles().x()[0], pins[0]);
    assert_eq!(body.particles().x()[31], pins[1]);
    assert!(figures::all_finite(&body));
}

#[test]
fn unknown_scenes_and_a_mesh_scene_without_file_fail_clearly() {
    assert!(scenes::Scene::parse("teapot", 2, None).is_err());
    assert!(scenes::Scene::parse("mesh", 2, None).is_err());
}

//! Long-range attachments: rest lengths, the unilateral projection, and the done-when figure
//! (cloth n = 32, 8 iterations: stretch_mean_avg at least 2x lower with tethers).

use solver_core::constraints::{
    project_generic, project_tethers, ConstraintKind, TetherDistance, Tethers,
};
use solver_core::{figures, step, Body, GaussSeidel, StepParams};

#[test]
fn tethers_reach_every_free_particle_from_each_pin() {
    let body = scenes::cloth(8).unwrap();
    let t = Tethers::from_pins(
        &body.particles().x(),
        &body.constraints().distance,
        TetherDistance::Euclidean,
        2,
        0.0,
    )
    .unwrap();
    assert_eq!(t.len(), 2 * (64 - 2));
    // Particle 63 (far corner (1, 1, 1)) from pin 0 at (0, 1, 0): √2.
    let k = t.pairs.iter().position(|&p| p == [63, 0]).unwrap();
    assert!((t.rest[k] - std::f32::consts::SQRT_2).abs() < 1e-5);
    // Through the graph it is never shorter than the straight line.
    let g = Tethers::from_pins(
        &body.particles().x(),
        &body.constraints().distance,
        TetherDistance::Graph,
        2,
        0.0,
    )
    .unwrap();
    let sorted = |mut v: Vec<[u32; 2]>| {
        v.sort_unstable();
        v
    };
    assert_eq!(sorted(g.pairs.clone()), sorted(t.pairs.clone()));
    for (c, pair) in g.pairs.iter().enumerate() {
        let e = t.pairs.iter().position(|p| p == pair).unwrap();
        assert!(g.rest[c] >= t.rest[e] - 1e-6);
    }
    let one = Tethers::from_pins(
        &body.particles().x(),
        &body.constraints().distance,
        TetherDistance::Euclidean,
        1,
        0.0,
    )
    .unwrap();
    assert_eq!(one.len(), 62);
    assert!(Tethers::from_pins(
        &body.particles().x(),
        &body.constraints().distance,
        TetherDistance::Euclidean,
        0,
        0.0
    )
    .is_err());
    assert!(Tethers::to_anchors(
        &body.particles().x(),
        &body.constraints().distance,
        &[99],
        TetherDistance::Euclidean,
        1,
        0.0
    )
    .is_err());
    assert!(Tethers::from_pins(
        &body.particles().x(),
        &body.constraints().distance,
        TetherDistance::Euclidean,
        1,
        -1.0
    )
    .is_err());
}

#[test]
fn tethers_act_only_when_too_far_and_the_fast_path_equals_the_generic_one() {
    let body = scenes::cloth(6).unwrap();
    let t = Tethers::from_pins(
        &body.particles().x(),
        &body.constraints().distance,
        TetherDistance::Euclidean,
        2,
        1e-4,
    )
    .unwrap();
    let mut x = body.particles().x().to_vec();
    // Pull half of the particles away (too far: C > 0), push the rest inward (C < 0).
    for (i, p) in x.iter_mut().enumerate() {
        if i % 2 == 0 {
            p.z += 0.3;
        } else {
            p.x = 0.5 + 0.5 * (p.x - 0.5);
        }
    }
    let (mut a, mut b) = (x.clone(), x.clone());
    let (mut la, mut lb) = (vec![0.0; t.len()], vec![0.0; t.len()]);
    for (c, l) in la.iter_mut().enumerate() {
        project_generic(&t, c, &mut a, l, t.compliance[c] * 3600.0, 1.0);
    }
    project_tethers(&mut b, &t, 0..t.len(), &mut lb, 3600.0, 1.0);
    for i in 0..x.len() {
        assert!((a[i].xyz() - b[i].xyz()).length() < 1e-6, "particle {i}");
    }
    assert!(
        lb.iter().all(|&l| l <= 0.0),
        "unilateral: tethers only pull (λ <= 0)"
    );
    // Slack tethers (C <= 0) move nothing; a taut one alone, at compliance 0, ends at C = 0.
    let mut g = [solver_core::glam::Vec3::ZERO; 4];
    for c in 0..t.len() {
        let mut y = x.clone();
        let mut l = 0.0;
        let before = t.evaluate(c, &x, &mut g);
        project_generic(&t, c, &mut y, &mut l, 0.0, 1.0);
        if before <= 0.0 {
            assert_eq!(y, x, "slack tether {c} moved a particle");
        } else {
            assert!(t.evaluate(c, &y, &mut g).abs() < 1e-5, "taut tether {c}");
        }
    }
}

fn stretch_mean_avg(mut body: Body, steps: usize) -> f64 {
    let mut gs = GaussSeidel::new();
    let params = StepParams::default();
    let mut sum = 0.0f64;
    for _ in 0..steps {
        step(&mut body, &params, &mut gs, None).unwrap();
        sum += figures::stretch(&body).0 as f64;
    }
    assert!(figures::all_finite(&body));
    sum / steps as f64
}

#[test]
fn tethers_halve_the_stretch_of_the_hanging_cloth() {
    // As `wobble step` measures it: cloth n = 32, 8 iterations, 20 + 100 steps.
    let plain = stretch_mean_avg(scenes::cloth(32).unwrap(), 120);
    let mut body = scenes::cloth(32).unwrap();
    let t = Tethers::from_pins(
        &body.particles().x(),
        &body.constraints().distance,
        TetherDistance::Euclidean,
        2,
        0.0,
    )
    .unwrap();
    body.constraints_mut().push_kind(Box::new(t));
    body.topology_changed();
    let tethered = stretch_mean_avg(body, 120);
    eprintln!(
        "stretch_mean_avg: plain {plain:.5}, tethered {tethered:.5}, ratio {:.2}",
        plain / tethered
    );
    assert!(
        tethered * 2.0 <= plain,
        "tethered {tethered} vs plain {plain}"
    );
}

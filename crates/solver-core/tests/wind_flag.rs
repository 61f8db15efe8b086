//! Wind: the force on one triangle, and the flag of docs/SCENES.md in a steady wind.

use solver_core::glam::Vec3;
use solver_core::{figures, step, Body, GaussSeidel, StepParams, Wind};

fn kinetic(body: &Body) -> f64 {
    let p = &body.particles();
    (0..p.len())
        .map(|i| 0.5 * p.mass()[i] as f64 * p.v()[i].xyz().length_squared() as f64)
        .sum()
}

#[test]
fn the_wind_force_on_a_triangle_follows_the_flat_plate_model() {
    let wind = Wind::new(Vec3::new(0.0, 0.0, 4.0), 1.2, 1.0, 0.0).unwrap();
    // A right triangle of area 0.5 in the XY plane, facing the wind (normal +z).
    let p = [Vec3::ZERO, Vec3::X, Vec3::Y];
    let still = [Vec3::ZERO; 3];
    let f = wind.triangle_force(p, still);
    let expected = 0.5 * 1.2 * 1.0 * 0.5 * 16.0;
    assert!((f - Vec3::new(0.0, 0.0, expected)).length() < 1e-5, "{f}");
    // The winding does not matter: the force follows the air.
    let f2 = wind.triangle_force([p[0], p[2], p[1]], still);
    assert!((f2 - f).length() < 1e-5);
    // Edge-on, or moving with the air: no force.
    let edge_on = [Vec3::ZERO, Vec3::X, Vec3::Z];
    assert!(wind.triangle_force(edge_on, still).length() < 1e-6);
    assert!(
        wind.triangle_force(p, [Vec3::new(0.0, 0.0, 4.0); 3])
            .length()
            < 1e-6
    );
    // In still air a moving plate is slowed (drag opposes its motion).
    let calm = Wind::new(Vec3::ZERO, 1.2, 1.0, 0.5).unwrap();
    let v = [Vec3::new(0.3, 0.0, 2.0); 3];
    assert!(calm.triangle_force(p, v).dot(v[0]) < 0.0);
    // Lift: at 45 degrees it is perpendicular to the flow.
    let lifted = Wind::new(Vec3::new(0.0, 0.0, 4.0), 1.2, 0.0, 1.0).unwrap();
    let tilted = [Vec3::ZERO, Vec3::X, Vec3::new(0.0, 1.0, 1.0)];
    let fl = lifted.triangle_force(tilted, still);
    assert!(fl.length() > 0.1 && fl.z.abs() < 1e-5, "{fl}");
    assert!(Wind::new(Vec3::NAN, 1.2, 1.0, 0.0).is_err());
    assert!(Wind::new(Vec3::X, -1.0, 1.0, 0.0).is_err());
    assert!(Wind::new(Vec3::X, 1.2, f32::INFINITY, 0.0).is_err());
}

#[test]
fn a_bad_wind_on_a_body_is_an_error_at_step() {
    let mut body = scenes::flag(4).unwrap();
    body.wind_mut().unwrap().drag = f32::NAN;
    let err = step(
        &mut body,
        &StepParams::default(),
        &mut GaussSeidel::new(),
        None,
    );
    assert!(err.is_err());
}

#[test]
fn the_flag_is_built_as_scenes_md_says() {
    let body = scenes::flag(12).unwrap();
    assert_eq!(body.len(), 23 * 12);
    assert_eq!(body.topology().structural, 12 * 22 + 11 * 23);
    assert_eq!(
        body.constraints().distance.len(),
        12 * 22 + 11 * 23 + 11 * 22
    );
    assert!((0..12).all(|j| body.particles().inv_mass(j * 23) == 0.0));
    assert_eq!(
        (0..body.len())
            .filter(|&v| body.particles().inv_mass(v) == 0.0)
            .count(),
        12
    );
    assert!((body.particles().position(23 * 12 - 1) - Vec3::new(2.0, 2.0, 0.0)).length() < 1e-6);
    assert!(
        (body.particles().position(23 + 1) - Vec3::new(2.0 / 22.0, 1.0 + 1.0 / 11.0, 0.0)).length()
            < 1e-6
    );
    assert!((body.particles().mass()[1] - 1.0 / 276.0).abs() < 1e-9);
    assert_eq!(
        body.wind().copied(),
        Some(solver_core::build::flag::flag_wind())
    );
}

#[test]
fn the_flag_keeps_moving_in_a_steady_wind() {
    // n = 16 diverged within 120 steps before the dihedral trust region.
    let mut body = scenes::flag(16).unwrap();
    let bending = body.constraints().kind_named("dihedral_bending").unwrap();
    assert_eq!(bending.compliance(0), 1e-4);
    let mut gs = GaussSeidel::new();
    let params = StepParams::default();
    let mut least = f64::INFINITY;
    for s in 0..600 {
        step(&mut body, &params, &mut gs, None).unwrap();
        if s >= 500 {
            least = least.min(kinetic(&body));
        }
    }
    eprintln!("least kinetic energy over steps 500..600: {least} J");
    assert!(figures::all_finite(&body));
    assert!(least > 1e-3, "the flag came to rest: {least} J");
}

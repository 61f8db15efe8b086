//! The force-based mass-spring model: springs, integrators against the analytic oscillator,
//! and the stability search (explicit Euler's largest stable stiffness is the smallest).

use scenes::mass_spring::{
    is_stable, largest_stable_stiffness, Integrator, MassSpring, SpringKind, SpringParams,
};
use solver_core::glam::Vec3;
use solver_core::{Body, Collider, Constraints, DistanceConstraints, Particles, Topology};

#[test]
fn cloth_gets_structural_shear_and_bend_springs() {
    let body = scenes::cloth(4).unwrap();
    let ms =
        MassSpring::from_body(&body, SpringParams::uniform(10.0, 0.1), Integrator::Rk4).unwrap();
    let count = |k| ms.kind.iter().filter(|&&x| x == k).count();
    assert_eq!(count(SpringKind::Structural), 24);
    assert_eq!(count(SpringKind::Shear), 9);
    // (i, i+2) along each of 4 rows and 4 columns.
    assert_eq!(count(SpringKind::Bend), 16);
    let b = ms.kind.iter().position(|&k| k == SpringKind::Bend).unwrap();
    assert!((ms.rest[b] - 2.0 / 3.0).abs() < 1e-6);
    assert!(
        MassSpring::from_body(&body, SpringParams::uniform(f32::NAN, 0.0), Integrator::Rk4)
            .is_err()
    );
    assert!(
        MassSpring::from_body(&body, SpringParams::uniform(1.0, -1.0), Integrator::Rk4).is_err()
    );
}

#[test]
fn integrators_parse_by_their_cli_names() {
    for i in Integrator::ALL {
        assert_eq!(i.name().parse::<Integrator>().unwrap(), i);
    }
    assert!("leapfrog".parse::<Integrator>().is_err());
}

/// One free 0.5 kg particle on a 1 m spring to a pinned one, stretched by 0.1 m, no gravity.
fn oscillator() -> Body {
    let p = Particles::new(
        &[Vec3::ZERO, Vec3::new(1.1, 0.0, 0.0)],
        &[f32::INFINITY, 0.5],
    )
    .unwrap();
    let mut d = DistanceConstraints::default();
    d.push(0, 1, 1.0, 0.0).unwrap();
    Body::new(
        p,
        Constraints {
            distance: d,
            extra: vec![],
        },
        Topology {
            structural: 1,
            ..Default::default()
        },
    )
    .unwrap()
}

#[test]
fn integrators_follow_the_analytic_oscillator_as_their_order_says() {
    // k = 50 N/m, m = 0.5 kg: ω = 10 rad/s. After 1 s: x = 1 + 0.1 cos(10).
    let exact = 1.0 + 0.1 * 10f32.cos();
    let dt = 1.0 / 240.0;
    let mut errors = Vec::new();
    let mut energies = Vec::new();
    for integrator in Integrator::ALL {
        let mut body = oscillator();
        let mut ms =
            MassSpring::from_body(&body, SpringParams::uniform(50.0, 0.0), integrator).unwrap();
        let e0 = ms.energy(&body, Vec3::ZERO);
        for _ in 0..240 {
            ms.step(&mut body, dt, Vec3::ZERO).unwrap();
        }
        assert_eq!(body.particles().position(0), Vec3::ZERO, "the pin stays");
        errors.push((body.particles().position(1).x - exact).abs());
        energies.push(ms.energy(&body, Vec3::ZERO) / e0);
    }
    eprintln!("position error after 1 s {errors:?}; energy ratio {energies:?}");
    let [explicit, semi, verlet, rk4] = [errors[0], errors[1], errors[2], errors[3]];
    assert!(rk4 < 1e-4, "RK4 error {rk4}");
    assert!(verlet < semi && semi < explicit + 1e-3, "{errors:?}");
    // Explicit Euler gains energy, RK4 and Verlet keep it.
    assert!(
        energies[0] > 1.1,
        "explicit Euler energy ratio {}",
        energies[0]
    );
    assert!(
        (energies[2] - 1.0).abs() < 0.02 && (energies[3] - 1.0).abs() < 0.02,
        "{energies:?}"
    );
}

#[test]
fn damping_and_the_ground_take_energy_out() {
    let mut body = scenes::jelly(1).unwrap();
    assert_eq!(body.colliders(), vec![Collider::ground(0.5, 0.0)]);
    let mut ms = MassSpring::from_body(
        &body,
        SpringParams::uniform(200.0, 0.5),
        Integrator::SemiImplicitEuler,
    )
    .unwrap();
    let g = Vec3::new(0.0, -9.81, 0.0);
    for _ in 0..300 {
        ms.step(&mut body, 1.0 / 240.0, g).unwrap();
    }
    let low = solver_core::figures::lowest_y(&body);
    assert!(low > -1e-4 && low < 0.05, "rests on the ground: {low}");
    assert!(solver_core::figures::all_finite(&body));
}

#[test]
fn explicit_euler_has_the_smallest_largest_stable_stiffness() {
    let body = scenes::cloth(6).unwrap();
    let dt = 1.0 / 60.0;
    let mut found = Vec::new();
    for integrator in Integrator::ALL {
        let k = largest_stable_stiffness(&body, integrator, dt, 0.0, 200).unwrap();
        assert!(k > 0.0);
        // The answer is stable and 5% more is not (the search's bracket, to its 1%).
        assert!(is_stable(&body, integrator, k, dt, 0.0, 200).unwrap());
        assert!(
            !is_stable(&body, integrator, k * 1.05, dt, 0.0, 200).unwrap(),
            "{integrator:?} {k}"
        );
        found.push(k);
    }
    eprintln!("largest stable stiffness (N/m) explicit, semi-implicit, verlet, rk4: {found:?}");
    assert!(
        found[0] < found[1] && found[0] < found[2] && found[0] < found[3],
        "{found:?}"
    );
    assert!(
        found[3] > found[1],
        "RK4's region reaches further than symplectic Euler's: {found:?}"
    );
    assert!(largest_stable_stiffness(&body, Integrator::Rk4, 0.0, 0.0, 10).is_err());
    assert!(largest_stable_stiffness(&body, Integrator::Rk4, dt, f32::NAN, 10).is_err());
    assert!(largest_stable_stiffness(&body, Integrator::Rk4, dt, 0.0, 0).is_err());
}

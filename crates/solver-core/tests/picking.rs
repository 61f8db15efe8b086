//! Picking: the BVH finds what brute force finds, barycentrics are exact to 1e-5, and dragging
//! brings the grabbed point within 1 cm of its target.

use solver_core::glam::Vec3;
use solver_core::interaction::picking::{
    grab, impulse_at, move_grab, raycast_brute_force, release, teleport_body, TriangleBvh,
};
use solver_core::{figures, step, GaussSeidel, Packed4, StepParams};

#[test]
fn a_ray_through_a_known_point_returns_its_triangle_and_barycentrics() {
    let body = scenes::cloth(9).unwrap();
    let x = &body.particles().x();
    let tris = &body.topology().triangles;
    let bvh = TriangleBvh::build(tris, x).unwrap();
    for (t, b) in [
        (0usize, [0.2f32, 0.3, 0.5]),
        (37, [0.6, 0.1, 0.3]),
        (127, [1.0 / 3.0; 3]),
    ] {
        let c = tris[t];
        let p = x[c[0] as usize].xyz() * b[0]
            + x[c[1] as usize].xyz() * b[1]
            + x[c[2] as usize].xyz() * b[2];
        let origin = p + Vec3::new(0.01, 2.0, -0.02);
        let hit = bvh
            .raycast(x, origin, p - origin, f32::INFINITY)
            .unwrap()
            .unwrap();
        assert_eq!(hit.triangle as usize, t);
        assert_eq!(hit.corners, c);
        for k in 0..3 {
            assert!(
                (hit.barycentric[k] - b[k]).abs() < 1e-5,
                "{:?} vs {b:?}",
                hit.barycentric
            );
        }
        assert!((hit.distance - (p - origin).length()).abs() < 1e-5);
        assert!((hit.point - p).length() < 1e-5);
        // Too short a ray misses; a ray pointing away misses.
        assert!(bvh.raycast(x, origin, p - origin, 1.0).unwrap().is_none());
        assert!(bvh
            .raycast(x, origin, origin - p, f32::INFINITY)
            .unwrap()
            .is_none());
    }
}

#[test]
fn the_bvh_agrees_with_brute_force_after_deformation_and_refit() {
    let mut body = scenes::jelly(3).unwrap();
    let mut bvh = TriangleBvh::build(&body.topology().triangles, &body.particles().x()).unwrap();
    // Squash and twist the ball, then refit.
    for p in body.particles_mut().x_mut().iter_mut() {
        let (y, a) = (p.y - 1.0, 2.0 * (p.y - 1.0));
        let (s, c) = a.sin_cos();
        *p = Packed4::new(
            Vec3::new(c * p.x - s * p.z, 1.0 + 0.5 * y, s * p.x + c * p.z),
            p.w,
        );
    }
    bvh.refit(&body.particles().x()).unwrap();
    let mut seed = 12345u64;
    let mut rnd = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    let mut hits = 0;
    for _ in 0..300 {
        let origin = Vec3::new(0.6 * rnd(), 1.0 + 0.4 * rnd(), 1.5);
        let dir = Vec3::new(rnd() * 0.2, rnd() * 0.2, -1.0);
        let a = bvh
            .raycast(&body.particles().x(), origin, dir, 10.0)
            .unwrap();
        let b = raycast_brute_force(
            &body.topology().triangles,
            &body.particles().x(),
            origin,
            dir,
            10.0,
        )
        .unwrap();
        match (a, b) {
            (Some(a), Some(b)) => {
                hits += 1;
                assert!((a.distance - b.distance).abs() < 1e-6, "{a:?} {b:?}");
            }
            (None, None) => {}
            other => panic!("BVH and brute force disagree: {other:?}"),
        }
    }
    assert!(hits > 100 && hits < 300, "enough rays hit: {hits}");
}

#[test]
fn bad_rays_and_meshes_are_errors() {
    let body = scenes::cloth(3).unwrap();
    let x = &body.particles().x();
    let bvh = TriangleBvh::build(&body.topology().triangles, x).unwrap();
    assert!(bvh.raycast(x, Vec3::ZERO, Vec3::ZERO, 1.0).is_err());
    assert!(bvh.raycast(x, Vec3::NAN, Vec3::Y, 1.0).is_err());
    assert!(bvh.raycast(x, Vec3::ZERO, Vec3::Y, -1.0).is_err());
    assert!(bvh.raycast(x, Vec3::ZERO, Vec3::Y, f32::NAN).is_err());
    assert!(TriangleBvh::build(&[], x).is_err());
    assert!(TriangleBvh::build(&[[0, 1, 99]], x).is_err());
    let mut bvh = bvh;
    assert!(bvh.refit(&x[..3]).is_err());
}

#[test]
fn dragging_brings_the_grabbed_point_to_its_target_and_release_frees_it() {
    let mut body = scenes::cloth(10).unwrap();
    let bvh = TriangleBvh::build(&body.topology().triangles, &body.particles().x()).unwrap();
    let origin = Vec3::new(0.43, 2.0, 0.61);
    let hit = bvh
        .raycast(&body.particles().x(), origin, -Vec3::Y, 5.0)
        .unwrap()
        .unwrap();
    let id = grab(&mut body, &hit, 1e-6).unwrap();
    assert!(body.constraints().kind_named("drag").is_some());
    let target = Vec3::new(0.5, 1.1, 0.4);
    let mut gs = GaussSeidel::new();
    let params = StepParams {
        damping: 1.0,
        ..Default::default()
    };
    // The target moves there over the first 30 steps, then stays.
    let start = hit.point;
    for s in 0..180 {
        let t = ((s + 1) as f32 / 30.0).min(1.0);
        move_grab(&mut body, id, start.lerp(target, t)).unwrap();
        step(&mut body, &params, &mut gs, None).unwrap();
    }
    let x = &body.particles().x();
    let b = hit.barycentric;
    let p = x[hit.corners[0] as usize].xyz() * b[0]
        + x[hit.corners[1] as usize].xyz() * b[1]
        + x[hit.corners[2] as usize].xyz() * b[2];
    eprintln!(
        "grabbed point {p} target {target}: {} m",
        (p - target).length()
    );
    assert!(
        (p - target).length() < 0.01,
        "{} m from the target",
        (p - target).length()
    );
    let before = body.constraints().len();
    release(&mut body, id).unwrap();
    assert_eq!(body.constraints().len(), before - 1);
    assert!(body.constraints().kind_named("drag").is_none());
    assert!(release(&mut body, id).is_err());
    assert!(move_grab(&mut body, id, target).is_err());
    for _ in 0..60 {
        step(&mut body, &params, &mut gs, None).unwrap();
    }
    assert!(figures::lowest_y(&body) < 0.9, "released, it falls");
}

#[test]
fn an_impulse_at_a_point_conserves_momentum_and_teleport_keeps_velocity() {
    let mut body = scenes::cloth(5).unwrap();
    let bvh = TriangleBvh::build(&body.topology().triangles, &body.particles().x()).unwrap();
    let hit = bvh
        .raycast(
            &body.particles().x(),
            Vec3::new(0.55, 3.0, 0.45),
            -Vec3::Y,
            5.0,
        )
        .unwrap()
        .unwrap();
    impulse_at(&mut body, &hit, Vec3::new(0.0, 0.2, 0.0)).unwrap();
    let momentum: Vec3 = (0..body.len())
        .map(|i| body.particles().velocity(i) * body.particles().mass()[i])
        .sum();
    assert!(
        (momentum - Vec3::new(0.0, 0.2, 0.0)).length() < 1e-6,
        "{momentum}"
    );
    let v = body.particles().v().to_vec();
    let x0 = body.particles().position(7);
    teleport_body(&mut body, Vec3::new(1.0, 0.0, 0.0)).unwrap();
    assert_eq!(body.particles().v(), v);
    assert!((body.particles().position(7) - x0 - Vec3::X).length() < 1e-6);
    assert!(teleport_body(&mut body, Vec3::NAN).is_err());
}

#[test]
fn the_parallel_refit_equals_the_serial_one_bit_for_bit() {
    let body = scenes::cloth(80).unwrap();
    let x0 = &body.particles().x();
    let mut a = TriangleBvh::build(&body.topology().triangles, x0).unwrap();
    let mut b = a.clone();
    let moved: Vec<Packed4> = x0
        .iter()
        .map(|p| {
            Packed4::new(
                Vec3::new(p.x, p.y + 0.1 * (9.0 * p.x).sin() * p.z, p.z * 1.1),
                p.w,
            )
        })
        .collect();
    a.refit(&moved).unwrap();
    b.refit_parallel(&moved).unwrap();
    let (ba, bb): (Vec<_>, Vec<_>) = (a.boxes().collect(), b.boxes().collect());
    assert_eq!(ba, bb);
    // The root box holds every particle.
    let (lo, hi) = ba[0];
    assert!(moved
        .iter()
        .all(|p| p.xyz().cmpge(lo).all() && p.xyz().cmple(hi).all()));
    assert!(b.refit_parallel(&moved[..10]).is_err());
}

//! Large worlds (issue 34, item 2): a body kilometres from the world's origin behaves as the
//! same body at the origin. Its particles are stored in `f32` relative to the body's origin
//! (`Body::origin`, `f64`; see solver-core's `body` module doc), so the solve meets the
//! coordinates it meets at the origin; the frames of shape colliders, world contacts and
//! read-back are converted at the edges.
//!
//! The reference is the same body built at the origin. A body placed far out with
//! `Body::translate` (or a builder's `origin`) has exactly the body-frame state of the one at
//! the origin, and every consumer converts world coordinates that are exact in `f32` (the
//! offsets below are integers, the colliders' coordinates small integers and halves) without
//! rounding, so "within the f32 noise of the body at the origin" is met here with the same bits:
//! the tolerances are set at 1e-6 relative anyway, the size of one f32 rounding, so that a
//! conversion that rounds once per step still passes and one that quantises to the world grid
//! (1 mm at 10 km) does not. The failure the issue reported is kept as a check too: the same
//! cloth stored in world coordinates (origin zero) at 10 km is a different cloth.

use wobble::core::figures::{energy, stretch};
use wobble::core::{Collider, World};
use wobble::glam::{DVec3, Vec3};
use wobble::sparse::{ColoredOptions, SolverKind, SolverOptions};
use wobble::{step, Body, Solver, StepParams};

const FAR: [f64; 2] = [1.0e4, 1.0e5];

fn solver(kind: SolverKind) -> Box<dyn Solver> {
    kind.build(&SolverOptions::default()).unwrap()
}

fn kinds() -> [SolverKind; 2] {
    [SolverKind::Gs, SolverKind::Colored(ColoredOptions::DEFAULT)]
}

/// The body's centroid in world coordinates (f64 read-back).
fn centroid(body: &Body) -> DVec3 {
    let mut x = vec![DVec3::ZERO; body.len()];
    body.positions_f64_into(&mut x).unwrap();
    x.iter().sum::<DVec3>() / x.len() as f64
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-12)
}

/// The standard 32 x 32 cloth hanging for 2 s; returns (mean stretch, energy).
fn hang(kind: SolverKind, offset: Option<DVec3>, world_coordinates: bool) -> (f32, f64) {
    let mut body = scenes::cloth(32).unwrap();
    if let Some(o) = offset {
        body.translate(o).unwrap();
        if world_coordinates {
            // The body as it was before origins: its positions in world f32, never recentred.
            body.set_origin(DVec3::ZERO).unwrap();
            body.set_recentre_distance(f32::MAX).unwrap();
        }
    }
    let params = StepParams::default();
    let mut s = solver(kind);
    for _ in 0..120 {
        step(&mut body, &params, s.as_mut(), None).unwrap();
    }
    (stretch(&body).0, energy(&body, params.gravity))
}

#[test]
fn a_hanging_cloth_far_out_stretches_as_at_the_origin() {
    for kind in kinds() {
        let (s0, e0) = hang(kind, None, false);
        for d in FAR {
            let (s, e) = hang(kind, Some(DVec3::new(d, 0.0, d)), false);
            eprintln!(
                "{kind} at {d} m: mean stretch {s:.6e} ({:+.1e} relative to the origin's {s0:.6e})",
                (s as f64 - s0 as f64) / s0 as f64
            );
            assert!(
                close(s as f64, s0 as f64, 1e-6) && close(e, e0, 1e-6),
                "{kind} at {d} m: stretch {s} energy {e}, at the origin {s0} {e0}"
            );
        }
    }
}

#[test]
fn the_same_cloth_in_world_f32_coordinates_at_10_km_is_another_cloth() {
    // The failure of issue 34 item 2, kept so that the check above is known to be able to fail:
    // the same cloth in world f32 coordinates, not recentred, ends outside the check's 1e-6 limit
    // by far (how far depends on the solver and the step loop; a thousand times the limit is
    // asked here, so that rounding noise alone cannot pass).
    for kind in kinds() {
        let (s0, e0) = hang(kind, None, false);
        let (s, e) = hang(kind, Some(DVec3::new(1.0e4, 0.0, 1.0e4)), true);
        eprintln!(
            "{kind} in world f32 at 10 km: mean stretch {s:.6e} ({:+.1}% relative to the origin's)",
            100.0 * (s as f64 - s0 as f64) / s0 as f64
        );
        assert!(
            !close(s as f64, s0 as f64, 1e-3) || !close(e, e0, 1e-3),
            "{kind}: world-f32 stretch {s} energy {e} vs {s0} {e0} at the origin"
        );
    }
}

/// The jelly thrown at a sphere collider (placed at the same offset) and the ground for 2 s;
/// returns the centroid trajectory less the offset, every 10 steps, and the final energy.
fn thrown(offset: DVec3) -> (Vec<DVec3>, f64, Body) {
    let mut body = scenes::jelly(2).unwrap();
    for v in body.particles_mut().v_mut().iter_mut() {
        v.set_xyz(Vec3::new(6.0, 3.0, 0.0));
    }
    // A thrown body follows itself (at the origin too, where it is not the default).
    body.follow();
    body.translate(offset).unwrap();
    let at = offset.as_vec3();
    body.add_collider(
        Collider::sphere(at + Vec3::new(2.0, 0.5, 0.0), 0.5)
            .unwrap()
            .with_friction(0.3)
            .unwrap(),
    )
    .unwrap();
    let params = StepParams {
        substeps: 4,
        ..Default::default()
    };
    let mut s = solver(SolverKind::Colored(ColoredOptions::DEFAULT));
    let mut path = Vec::new();
    for k in 0..120 {
        step(&mut body, &params, s.as_mut(), None).unwrap();
        if k % 10 == 9 {
            path.push(centroid(&body) - offset);
        }
    }
    let e = energy(&body, params.gravity);
    (path, e, body)
}

#[test]
fn a_thrown_jelly_hitting_a_collider_far_out_moves_as_at_the_origin() {
    let (p0, e0, b0) = thrown(DVec3::ZERO);
    assert!(b0.origin().x > 3.0, "{}", b0.origin());
    // It did travel.
    assert!(p0.last().unwrap().x > 3.0, "{:?}", p0.last());
    for d in FAR {
        let (p, e, b) = thrown(DVec3::new(d, 0.0, d));
        // Its origin followed it.
        assert!(
            (b.origin() - DVec3::new(d, 0.0, d)).x > 3.0,
            "{}",
            b.origin()
        );
        // Recentring snaps its shift to a grid on which the origin's update is exact in f64,
        // so the body frame far out holds the bits of the body frame at the origin: what is
        // left is the f64 read-back (an ulp of 1e5 is 1.5e-11 m). The world grid of f32 at
        // 10 km is 1e-3 m.
        for (a, b) in p.iter().zip(&p0) {
            assert!((*a - *b).length() < 1e-9, "at {d} m: {a} vs {b}");
        }
        assert!(close(e, e0, 1e-9), "at {d} m: energy {e} vs {e0}");
        // The body frame stays near the body: coordinates within a few body sizes.
        let largest = b
            .particles()
            .positions()
            .iter()
            .map(|x| x.abs().max_element())
            .fold(0.0f32, f32::max);
        assert!(largest < 2.0 * b.recentre_distance(), "{largest}");
    }
}

/// A jelly dropped onto a hammock (a 16 x 16 cloth pinned at its corners), two bodies of one
/// world, for 1.5 s; returns the jelly's centroid less the offset, and the cloth's stretch.
fn dropped(offset: DVec3, cloth_offset: DVec3) -> (DVec3, f32) {
    let mut cloth = scenes::cloth(16).unwrap();
    cloth.particles_mut().pin(16 * 15).unwrap();
    cloth.particles_mut().pin(16 * 16 - 1).unwrap();
    let mut jelly = scenes::jelly(2).unwrap();
    jelly.clear_colliders();
    for p in jelly.particles_mut().x_mut().iter_mut() {
        p.set_xyz(p.xyz() + Vec3::new(0.5, 0.5, 0.5));
    }
    // The cloth's own origin differs from the jelly's by `cloth_offset`, its particles moved
    // back by as much: the same world positions in another frame.
    cloth.translate(offset + cloth_offset).unwrap();
    let back = cloth_offset.as_vec3();
    let slices = cloth.particles_mut().slices_mut();
    for p in slices.x.iter_mut().chain(slices.x_prev.iter_mut()) {
        p.set_xyz(p.xyz() - back);
    }
    jelly.translate(offset).unwrap();
    let mut world = World::new();
    let c = world.add_body(cloth, Some(solver(SolverKind::Gs))).unwrap();
    let j = world.add_body(jelly, Some(solver(SolverKind::Gs))).unwrap();
    let params = StepParams {
        substeps: 4,
        ..Default::default()
    };
    for _ in 0..90 {
        world.step(&params).unwrap();
    }
    let jelly = world.body(j).unwrap().body();
    (
        centroid(jelly) - offset,
        stretch(world.body(c).unwrap().body()).0,
    )
}

#[test]
fn two_bodies_of_a_world_far_out_touch_as_at_the_origin() {
    let (j0, s0) = dropped(DVec3::ZERO, DVec3::ZERO);
    // The jelly rests in the hammock: below where it started (y = 1.5), above the floor of a
    // world without a ground.
    assert!(j0.y < 1.4 && j0.y > 0.0, "{j0}");
    // The f32 noise at the origin: the cloth in a frame 4 m away from the jelly's (its
    // coordinates x - 4 rounded once), which contacts amplify over 1.5 s.
    let apart = DVec3::new(4.0, 0.0, -2.0);
    let (jn, sn) = dropped(DVec3::ZERO, apart);
    let (noise, stretch_noise) = ((jn - j0).length(), (sn - s0).abs() as f64);
    for d in FAR {
        for cloth_offset in [DVec3::ZERO, apart] {
            let (j, s) = dropped(DVec3::new(d, 0.0, d), cloth_offset);
            assert!(
                (j - j0).length() <= 3.0 * noise + 1e-6
                    && ((s - s0).abs() as f64) <= 3.0 * stretch_noise + 1e-6 * s0 as f64,
                "at {d} m, cloth origin {cloth_offset} apart: jelly {j} vs {j0}, stretch {s} vs {s0} (noise {noise:e}, {stretch_noise:e})"
            );
        }
    }
}

#[test]
fn origin_read_back_and_state_agree() {
    let mut body = scenes::cloth(8).unwrap();
    let x0 = body.particles().positions();
    body.translate(DVec3::new(1.0e5, 2.0, -3.0e4)).unwrap();
    let mut world = vec![Vec3::ZERO; body.len()];
    body.positions_into(&mut world).unwrap();
    let mut world64 = vec![DVec3::ZERO; body.len()];
    body.positions_f64_into(&mut world64).unwrap();
    for ((w, w64), x) in world.iter().zip(&world64).zip(&x0) {
        assert_eq!(*w64, DVec3::new(1.0e5, 2.0, -3.0e4) + x.as_dvec3());
        assert_eq!(*w, w64.as_vec3());
    }
    // set_origin keeps world positions (to one f32 rounding of the new coordinates).
    let state = body.state();
    body.set_origin(DVec3::new(1.0e5 + 0.25, 0.0, -3.0e4))
        .unwrap();
    for (i, w) in world64.iter().enumerate() {
        assert!((body.world_position(i) - *w).length() < 1e-6);
    }
    body.restore(&state).unwrap();
    assert_eq!(body.origin(), DVec3::new(1.0e5, 2.0, -3.0e4));
    assert_eq!(body.particles().positions(), x0);
    assert!(body.translate(DVec3::new(f64::NAN, 0.0, 0.0)).is_err());
}

//! Skinned constraints (issue 35): a cloth skinned to a skeleton and held near the animation,
//! as Jolt's skinned constraints hold clothing on a character. What a player would see: a
//! fully driven vertex follows the animation exactly, a vertex pushed inside the body it
//! dresses is put back on the back stop's surface, a hard skin puts the cloth on the skin at
//! rest, free vertices stay within their max distance, and the same bits on any thread count.

mod common;

use common::configs;
use wobble::core::constraints::SkinConstraints;
use wobble::core::skin::{Skin, SkinDesc, SkinningMethod};
use wobble::core::{SkinnedVertex, World};
use wobble::glam::{DVec3, Mat4, Quat, Vec3};
use wobble::{figures, step, Body, Cloth, SolverKind, SolverOptions, StepParams, WobbleError};

/// An 8 x 8 cloth of 1 m lying flat at y = 1, unpinned.
fn cloth() -> Body {
    Cloth::new()
        .resolution(8, 8)
        .at(Vec3::Y)
        .build()
        .expect("cloth")
}

/// Every particle bound to joint 0 alone, the bind pose the identity.
fn one_joint(body: &Body, method: SkinningMethod) -> SkinDesc {
    let n = body.len();
    SkinDesc {
        inverse_bind: vec![Mat4::IDENTITY],
        joints: vec![[0; 4]; n],
        weights: vec![[1.0, 0.0, 0.0, 0.0]; n],
        method,
        ..Default::default()
    }
}

/// A skin of `body` on one joint (see [`one_joint`]) holding `vertices`.
fn skin_of(
    body: &mut Body,
    method: SkinningMethod,
    vertices: &[SkinnedVertex],
) -> Result<Skin, WobbleError> {
    let desc = one_joint(body, method);
    Skin::new(body, desc, vertices)
}

/// The row j = 0 (particles 0..8) driven by the skin, the others free.
fn first_row_driven() -> Vec<SkinnedVertex> {
    (0..8).map(|i| SkinnedVertex::within(i, 0.0)).collect()
}

/// The joint's pose at step `k`: a turn about y and a sway along x.
fn pose(k: usize) -> Mat4 {
    let t = k as f32 / 60.0;
    Mat4::from_rotation_translation(
        Quat::from_rotation_y(0.8 * (2.0 * t).sin()),
        Vec3::new(0.3 * (3.0 * t).sin(), 0.1 * t, 0.0),
    )
}

/// The skinned constraints' table of `body`.
fn table(body: &Body) -> &SkinConstraints {
    body.constraints()
        .kinds()
        .find_map(|k| k.as_any().downcast_ref::<SkinConstraints>())
        .expect("a skin table")
}

#[test]
fn skinning_one_joint_is_its_rigid_motion_with_either_method() {
    for method in [SkinningMethod::Linear, SkinningMethod::DualQuaternion] {
        let mut body = cloth();
        let bind: Vec<Vec3> = body.particles().x().iter().map(|x| x.xyz()).collect();
        let mut skin = skin_of(&mut body, method, &[]).unwrap();
        let m = pose(40);
        skin.pose(&mut body, &[m]).unwrap();
        for (i, (s, p)) in skin.skinned().iter().zip(&bind).enumerate() {
            let want = m.transform_point3(*p);
            assert!(
                (*s - want).length() < 2e-6,
                "{method:?} particle {i}: {s} against {want}"
            );
        }
        // The flat cloth's normals turn with it (the winding of the builder's triangles).
        let n = skin.normals()[27];
        let want = m.transform_vector3(skin_normal_at_bind());
        assert!((n - want).length() < 1e-5, "{method:?}: normal {n}, {want}");
    }
}

/// The normal of the flat cloth's triangles in the bind pose, from the builder's winding.
fn skin_normal_at_bind() -> Vec3 {
    let mut body = cloth();
    let skin = skin_of(&mut body, SkinningMethod::Linear, &[]).unwrap();
    skin.normals()[27]
}

#[test]
fn dual_quaternions_keep_a_twisted_joint_s_radius_where_linear_blending_shrinks_it() {
    // A vertex 1 m from the x axis, weighted half to a joint at rest and half to one turned
    // 120 degrees about x: LBS gives the chord's midpoint (radius cos 60 = 0.5 m), DQS the
    // point turned 60 degrees (radius 1 m).
    let mut body = cloth();
    let n = body.len();
    let mut desc = one_joint(&body, SkinningMethod::Linear);
    desc.inverse_bind = vec![Mat4::IDENTITY; 2];
    desc.joints = vec![[0, 1, 0, 0]; n];
    desc.weights = vec![[0.5, 0.5, 0.0, 0.0]; n];
    let joints = [
        Mat4::IDENTITY,
        Mat4::from_quat(Quat::from_rotation_x(120f32.to_radians())),
    ];
    let radius = |skin: &Skin, bind: &[Vec3], i: usize| {
        let (s, b) = (skin.skinned()[i], bind[i]);
        (s.y.hypot(s.z), b.y.hypot(b.z))
    };
    let bind: Vec<Vec3> = body.particles().x().iter().map(|x| x.xyz()).collect();
    let mut lbs_body = body.clone();
    let mut lbs = Skin::new(&mut lbs_body, desc.clone(), &[]).unwrap();
    lbs.pose(&mut lbs_body, &joints).unwrap();
    desc.method = SkinningMethod::DualQuaternion;
    let mut dqs = Skin::new(&mut body, desc, &[]).unwrap();
    dqs.pose(&mut body, &joints).unwrap();
    for i in [0, 9, 63] {
        let (r_lbs, r0) = radius(&lbs, &bind, i);
        let (r_dqs, _) = radius(&dqs, &bind, i);
        assert!(
            (r_lbs - 0.5 * r0).abs() < 1e-5,
            "LBS particle {i}: {r_lbs} of {r0}"
        );
        assert!(
            (r_dqs - r0).abs() < 1e-5,
            "DQS particle {i}: {r_dqs} of {r0}"
        );
    }
}

#[test]
fn a_vertex_with_max_distance_zero_follows_its_skinned_position_exactly() {
    for cfg in configs() {
        for substeps in [1, 4] {
            let mut body = cloth();
            let mut skin = skin_of(&mut body, SkinningMethod::Linear, &first_row_driven()).unwrap();
            let mut solver = cfg.solver();
            let params = StepParams {
                substeps,
                ..Default::default()
            };
            for k in 1..=90 {
                skin.pose(&mut body, &[pose(k)]).unwrap();
                step(&mut body, &params, solver.as_mut(), None)
                    .unwrap_or_else(|e| panic!("{} step {k}: {e}", cfg.label));
                for i in 0..8 {
                    assert_eq!(
                        body.particles().x()[i].xyz(),
                        skin.skinned()[i],
                        "{} x{substeps} step {k}: particle {i} off its skinned position",
                        cfg.label
                    );
                }
            }
            // The free rows hang from the driven one: finite and below it.
            let lowest = figures::lowest_y(&body);
            assert!(
                lowest.is_finite() && lowest < 0.9,
                "{}: lowest {lowest}",
                cfg.label
            );
        }
    }
}

#[test]
fn free_vertices_stay_within_their_max_distance_through_the_motion() {
    let mut body = cloth();
    let d = 0.05;
    let vertices: Vec<SkinnedVertex> = (0..body.len() as u32)
        .map(|i| SkinnedVertex::within(i, if i < 8 { 0.0 } else { d }))
        .collect();
    let mut skin = skin_of(&mut body, SkinningMethod::Linear, &vertices).unwrap();
    let mut solver = wobble::GaussSeidel::new();
    let params = StepParams::default();
    for k in 1..=120 {
        skin.pose(&mut body, &[pose(k)]).unwrap();
        step(&mut body, &params, &mut solver, None).unwrap();
        let t = table(&body);
        for (row, &p) in t.particles_skinned().iter().enumerate() {
            let (over, inside) = t.violations(row, body.particles().x()[p as usize].xyz());
            assert!(
                over <= 1e-6 && inside == 0.0,
                "step {k} particle {p}: {over} m over"
            );
        }
    }
}

#[test]
fn a_vertex_pushed_inside_its_back_stop_is_put_back_on_its_surface() {
    // A flat cloth at rest on its skin, no gravity; each vertex has a back stop sphere of
    // radius 0.5 m touching 2 cm below the skin. A vertex pushed 10 cm below the skin is put
    // back on the sphere's surface by the next step (to the millimetre its neighbours pull it
    // out by), and no vertex ends inside.
    let mut body = cloth();
    let vertices: Vec<SkinnedVertex> = (0..body.len() as u32)
        .map(|i| SkinnedVertex::within(i, f32::INFINITY).with_backstop(0.02, 0.5))
        .collect();
    let mut skin = skin_of(&mut body, SkinningMethod::Linear, &vertices).unwrap();
    skin.hard_skin(&mut body, &[Mat4::IDENTITY]).unwrap();
    let n = skin.normals()[27];
    let pushed = body.particles().x()[27].xyz() - 0.1 * n;
    body.particles_mut().x_mut()[27].set_xyz(pushed);
    let mut solver = wobble::GaussSeidel::new();
    let params = StepParams {
        gravity: Vec3::ZERO,
        ..Default::default()
    };
    skin.pose(&mut body, &[Mat4::IDENTITY]).unwrap();
    step(&mut body, &params, &mut solver, None).unwrap();
    let t = table(&body);
    let row = t.particles_skinned().iter().position(|&p| p == 27).unwrap();
    let (s, normal) = t.target(row);
    let centre = s - normal * (0.5 + 0.02);
    let r = (body.particles().x()[27].xyz() - centre).length();
    // On the surface to the millimetre the cloth around it pulls it back out by, never inside.
    assert!(
        (0.5 - 1e-6..0.5 + 1e-3).contains(&r),
        "particle 27 at {r} m from the back stop's centre"
    );
    for (row, &p) in t.particles_skinned().iter().enumerate() {
        let (_, inside) = t.violations(row, body.particles().x()[p as usize].xyz());
        assert!(
            inside <= 1e-6,
            "particle {p} {inside} m inside its back stop"
        );
    }
}

#[test]
fn a_hard_skin_puts_every_vertex_on_the_skin_at_rest() {
    let mut body = cloth();
    let mut skin = skin_of(
        &mut body,
        SkinningMethod::DualQuaternion,
        &first_row_driven(),
    )
    .unwrap();
    let mut solver = wobble::GaussSeidel::new();
    for k in 1..=30 {
        skin.pose(&mut body, &[pose(k)]).unwrap();
        step(&mut body, &StepParams::default(), &mut solver, None).unwrap();
    }
    // The skeleton teleports 500 m: a hard skin puts the cloth there, on the skin, at rest.
    let far = Mat4::from_translation(Vec3::new(500.0, 0.0, 0.0)) * pose(30);
    skin.hard_skin(&mut body, &[far]).unwrap();
    for i in 0..body.len() {
        assert_eq!(
            body.particles().x()[i].xyz(),
            skin.skinned()[i],
            "particle {i}"
        );
        assert_eq!(body.particles().v()[i].xyz(), Vec3::ZERO, "particle {i}");
    }
    // The next step starts from there: no interpolation across the teleport.
    skin.pose(&mut body, &[far]).unwrap();
    step(&mut body, &StepParams::default(), &mut solver, None).unwrap();
    let fastest = body
        .particles()
        .v()
        .iter()
        .map(|v| v.xyz().length())
        .fold(0.0f32, f32::max);
    assert!(
        fastest < 1.0,
        "a particle at {fastest} m/s after the teleport"
    );
}

#[test]
fn skinned_targets_are_interpolated_across_a_world_s_substeps() {
    // One frame of 4 substeps moves the skin 8 cm along x: the driven row ends the frame
    // moving at 8 cm / dt, as when the body steps alone, not at 4 times that (a jump in the
    // first substep) or 0 (standing at the end).
    let dt = 1.0 / 60.0;
    let params = StepParams {
        dt,
        substeps: 4,
        gravity: Vec3::ZERO,
        ..Default::default()
    };
    let moved = Mat4::from_translation(Vec3::new(0.08, 0.0, 0.0));
    let mut alone = cloth();
    let mut skin_alone = skin_of(&mut alone, SkinningMethod::Linear, &first_row_driven()).unwrap();
    skin_alone.pose(&mut alone, &[moved]).unwrap();
    step(&mut alone, &params, &mut wobble::GaussSeidel::new(), None).unwrap();

    let mut body = cloth();
    let mut skin = skin_of(&mut body, SkinningMethod::Linear, &first_row_driven()).unwrap();
    let mut world = World::new();
    let h = world.add_body(body, None).unwrap();
    skin.pose(world.body_mut(h).unwrap().body_mut(), &[moved])
        .unwrap();
    world.step(&params).unwrap();
    let body = world.body(h).unwrap().body();
    for i in 0..8 {
        let v = body.particles().v()[i].x;
        let want = alone.particles().v()[i].x;
        assert!(
            (v - 0.08 / dt).abs() < 1e-3 * want.abs(),
            "particle {i}: {v} m/s, alone {want}"
        );
        assert_eq!(body.particles().x()[i].xyz(), skin.skinned()[i]);
    }
}

#[test]
fn a_skinned_cloth_gives_the_same_bits_on_one_and_two_threads() {
    if !wobble::sparse::PARALLEL {
        eprintln!("skipped: built without the `parallel` feature");
        return;
    }
    let run = |threads: usize| {
        let mut body = Cloth::new().resolution(24, 24).at(Vec3::Y).build().unwrap();
        let vertices: Vec<SkinnedVertex> = (0..body.len() as u32)
            .map(|i| {
                SkinnedVertex::within(i, if i < 24 { 0.0 } else { 0.2 }).with_backstop(0.01, 0.3)
            })
            .collect();
        let mut skin = skin_of(&mut body, SkinningMethod::Linear, &vertices).unwrap();
        let options = SolverOptions {
            threads,
            chunk: 16,
            parallel_threshold: 1,
            ..Default::default()
        };
        let mut solver = SolverKind::Colored(wobble::ColoredOptions::DEFAULT)
            .build(&options)
            .unwrap();
        for k in 1..=60 {
            skin.pose(&mut body, &[pose(k)]).unwrap();
            step(&mut body, &StepParams::default(), &mut solver, None).unwrap();
        }
        figures::state_hash(&body.particles().x())
    };
    assert_eq!(run(1), run(2));
}

#[test]
fn bad_skins_and_poses_are_refused_with_what_and_where() {
    let mut body = cloth();
    let n = body.len();
    let mut d = one_joint(&body, SkinningMethod::Linear);
    d.weights[5] = [0.0; 4];
    let e = Skin::new(&mut body, d, &[]).unwrap_err();
    assert!(matches!(e, WobbleError::BadParameter { .. }), "{e}");
    let mut d = one_joint(&body, SkinningMethod::Linear);
    d.joints[3] = [2, 0, 0, 0];
    let e = Skin::new(&mut body, d, &[]).unwrap_err();
    assert!(
        matches!(
            e,
            WobbleError::IndexOutOfRange {
                index: 3,
                value: 2,
                ..
            }
        ),
        "{e}"
    );
    let mut d = one_joint(&body, SkinningMethod::Linear);
    d.weights.pop();
    assert!(matches!(
        Skin::new(&mut body, d, &[]),
        Err(WobbleError::BadCount { .. })
    ));
    let twice = [SkinnedVertex::within(4, 0.1), SkinnedVertex::within(4, 0.2)];
    let e = skin_of(&mut body, SkinningMethod::Linear, &twice).unwrap_err();
    assert!(
        matches!(e, WobbleError::RepeatedParticle { particle: 4, .. }),
        "{e}"
    );
    let out = [SkinnedVertex::within(n as u32, 0.1)];
    assert!(skin_of(&mut body, SkinningMethod::Linear, &out).is_err());
    let negative = [SkinnedVertex::within(1, -0.1)];
    assert!(skin_of(&mut body, SkinningMethod::Linear, &negative).is_err());

    let mut skin = skin_of(&mut body, SkinningMethod::DualQuaternion, &[]).unwrap();
    let e = skin_of(&mut body, SkinningMethod::Linear, &[]).unwrap_err();
    assert!(
        matches!(e, WobbleError::Unsupported(_)),
        "a second skin: {e}"
    );
    assert!(matches!(
        skin.pose(&mut body, &[]),
        Err(WobbleError::BadCount {
            value: 0,
            max: 1,
            ..
        })
    ));
    let mut nan = Mat4::IDENTITY;
    nan.w_axis.x = f32::NAN;
    assert!(matches!(
        skin.pose(&mut body, &[nan]),
        Err(WobbleError::NonFinite { .. })
    ));
    let scaled = Mat4::from_scale(Vec3::splat(2.0));
    let e = skin.pose(&mut body, &[scaled]).unwrap_err();
    assert!(e.to_string().contains("rigid"), "{e}");
    assert!(skin.set_max_distance_multiplier(&mut body, -1.0).is_err());
    assert!(skin
        .pose_in(&mut body, &[Mat4::IDENTITY], DVec3::splat(f64::NAN))
        .is_err());
}

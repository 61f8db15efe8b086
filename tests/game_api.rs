//! The game-loop API end to end, as a game programmer uses it (issue "game", item 6): a flag on
//! a pole in the wind, a jelly dropped near a sphere and a drag, each built through the
//! builders, stepped, and read back (positions and normals) into a renderer's buffers.

use wobble::glam::Vec3;
use wobble::picking::{active_grabs, grab, grab_state, move_grab, release};
use wobble::{figures, step, vertex_normals_into, Collider, Flag, SoftBody};
use wobble::{Cloth, GaussSeidel, Picker, StepParams, WobbleError};
use wobble::{ColoredOptions, SolverKind, SolverOptions};

#[test]
fn a_flag_on_a_pole_flutters_in_the_wind_and_reads_back() -> Result<(), WobbleError> {
    // The flag of the game-loop trial: 32 x 32, pinned to a pole, dihedral bending, wind.
    let builder = Flag::new().resolution(32, 32).at(Vec3::new(0.0, 1.0, 0.0));
    let mut flag = builder.build()?;
    let colored = SolverKind::Colored(ColoredOptions::default());
    let mut solver = colored.build(&SolverOptions::default())?; // a Box, passed as it is
    let mut vertices = vec![[0.0f32; 3]; flag.len()];
    let mut normals = vec![Vec3::ZERO; flag.len()];
    flag.particles().positions_into(&mut vertices)?;
    let (pole, edge): (Vec<[f32; 3]>, Vec<u32>) = (
        (0..32).map(|j| vertices[j * 32]).collect(),
        builder.free_edge(),
    );
    let edge_z = |v: &[[f32; 3]]| edge.iter().map(|&i| v[i as usize][2]).sum::<f32>() / 32.0;
    let params = StepParams {
        substeps: 4,
        iterations: 4,
        ..StepParams::default()
    };
    for _ in 0..120 {
        step(&mut flag, &params, &mut solver, None)?;
        flag.particles().positions_into(&mut vertices)?;
        vertex_normals_into(
            &flag.topology().triangles,
            &flag.particles().x(),
            &mut normals,
        )?;
    }
    assert!(vertices.iter().flatten().all(|c| c.is_finite()));
    for (j, p) in pole.iter().enumerate() {
        assert_eq!(vertices[j * 32], *p, "pole particle {j} stays pinned");
    }
    assert!(
        normals.iter().all(|n| (n.length() - 1.0).abs() < 1e-4),
        "unit normals"
    );
    assert!(
        edge_z(&vertices) > 0.1,
        "the wind (+z) blows the free edge out of the pole's plane"
    );
    assert!(
        figures::stretch(&flag).0 < 0.05,
        "structural stretch stays small"
    );
    Ok(())
}

#[test]
fn a_jelly_dropped_near_a_sphere_slides_off_it_and_keeps_its_volume() -> Result<(), WobbleError> {
    let ball = Collider::sphere(Vec3::new(0.3, 0.3, 0.0), 0.3)?;
    let mut jelly = SoftBody::sphere(0.25, 2)
        .at(Vec3::new(0.0, 1.2, 0.0))
        .volume(1e-6)
        .collider(Collider::plane(Vec3::Y, 0.0)?)
        .collider(ball)
        .build()?;
    let mut solver = GaussSeidel::new();
    let mut vertices = vec![Vec3::ZERO; jelly.len()];
    let mut normals = vec![[0.0f32; 3]; jelly.len()];
    let mut deepest = 0.0f32;
    for _ in 0..150 {
        step(&mut jelly, &StepParams::default(), &mut solver, None)?;
        jelly.particles().positions_into(&mut vertices)?;
        vertex_normals_into(
            &jelly.topology().triangles,
            &jelly.particles().x(),
            &mut normals,
        )?;
        for v in &vertices {
            deepest = deepest.max(-ball.shape.signed_distance(*v).0);
        }
    }
    let centre = vertices.iter().sum::<Vec3>() / vertices.len() as f32;
    assert!(vertices.iter().all(|v| v.is_finite()));
    assert!(
        deepest < 0.01,
        "no particle sinks into the sphere ({deepest} m)"
    );
    assert!(
        centre.x < -0.05,
        "it slid off the sphere's side, away from it: {centre}"
    );
    assert!(centre.y < 0.4, "and fell to the ground: {centre}");
    let ratio = figures::volume_ratio(&jelly).expect("a closed body");
    assert!((ratio - 1.0).abs() < 0.1, "volume kept: {ratio}");
    let outward = vertices
        .iter()
        .zip(&normals)
        .filter(|(v, n)| Vec3::from_array(**n).dot(**v - centre) > 0.0)
        .count();
    assert_eq!(outward, vertices.len(), "normals point outward");
    Ok(())
}

#[test]
fn a_drag_through_the_picking_api_pulls_the_point_to_its_target() -> Result<(), WobbleError> {
    let mut cloth = Cloth::new()
        .resolution(20, 20)
        .at(Vec3::Y)
        .pin_corners()
        .build()?;
    let mut solver = GaussSeidel::new();
    for _ in 0..60 {
        step(&mut cloth, &StepParams::default(), &mut solver, None)?;
    }
    let camera = Vec3::new(0.5, 0.5, 3.0);
    let mut picker = Picker::new(&cloth)?;
    let hit = picker
        .pick(&cloth, camera, -Vec3::Z, 10.0)?
        .expect("the ray hits the cloth");
    let id = grab(&mut cloth, &hit, 1e-4)?;
    let start = grab_state(&cloth, id)?;
    assert!((start.point - hit.point).length() < 1e-5 && start.gap() < 1e-5);
    let target = start.point + Vec3::new(0.0, 0.0, 0.5);
    move_grab(&mut cloth, id, target)?;
    assert_eq!(grab_state(&cloth, id)?.target, target);
    let mut gaps = Vec::new();
    for _ in 0..30 {
        step(&mut cloth, &StepParams::default(), &mut solver, None)?;
        gaps.push(grab_state(&cloth, id)?.gap());
    }
    assert!(
        gaps[29] < 0.05 && gaps[29] < 0.2 * gaps[0],
        "pulled to its target: {gaps:?}"
    );
    let moved = grab_state(&cloth, id)?.point - start.point;
    assert!(moved.z > 0.4, "toward the target (+z): {moved}");
    // A later pick sees the moved surface.
    let again = picker
        .pick(&cloth, camera, -Vec3::Z, 10.0)?
        .expect("still there");
    assert!(
        again.point.z > hit.point.z + 0.2,
        "{} vs {}",
        again.point,
        hit.point
    );
    assert_eq!(active_grabs(&cloth), vec![id]);
    release(&mut cloth, id)?;
    assert!(active_grabs(&cloth).is_empty());
    assert!(matches!(
        grab_state(&cloth, id),
        Err(WobbleError::NoSuchGrab(_))
    ));
    let other = Cloth::new().resolution(5, 5).build()?;
    assert!(
        picker.pick(&other, camera, -Vec3::Z, 10.0).is_err(),
        "a picker is for its body"
    );
    Ok(())
}

#[test]
fn a_boxed_solver_steps_exactly_as_the_solver_it_boxes() -> Result<(), WobbleError> {
    let build = || Flag::new().resolution(9, 5).build();
    let (mut a, mut b) = (build()?, build()?);
    let mut boxed = SolverKind::Gs.build(&SolverOptions::default())?;
    let mut plain = GaussSeidel::new();
    for _ in 0..20 {
        step(&mut a, &StepParams::default(), &mut boxed, None)?;
        step(&mut b, &StepParams::default(), &mut plain, None)?;
    }
    assert_eq!(
        figures::state_hash(&a.particles().x()),
        figures::state_hash(&b.particles().x())
    );
    assert_eq!(wobble::Solver::name(&boxed), "gs");
    Ok(())
}

#[test]
fn read_back_refuses_buffers_of_the_wrong_length() -> Result<(), WobbleError> {
    let cloth = Cloth::new().resolution(4, 4).build()?;
    let mut short = vec![[0.0f32; 3]; 15];
    let err = cloth.particles().positions_into(&mut short).unwrap_err();
    assert!(
        err.to_string().contains("15 entries for 16 particles"),
        "{err}"
    );
    let mut long = vec![Vec3::ZERO; 17];
    assert!(vertex_normals_into(
        &cloth.topology().triangles,
        &cloth.particles().x(),
        &mut long
    )
    .is_err());
    Ok(())
}

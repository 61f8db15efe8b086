//! The plugin in a Bevy `App` without a window or a GPU (`MinimalPlugins`), one fixed step
//! per `update`: what a game would see on screen, asserted on the entities and mesh assets.

use bevy::mesh::{MeshVertexAttribute, VertexAttributeValues};
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_wobble::prelude::*;
use bevy_wobble::to_bevy;
use wobble::figures;

/// An app with the plugin, stepping once per `update` at 60 Hz, damped (1/s) so that a cloth
/// comes to rest within a few seconds.
fn app() -> App {
    app_on(1)
}

/// [`app`] on a pool of `threads`.
fn app_on(threads: usize) -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin::default(),
        bevy::mesh::MeshPlugin,
        TransformPlugin,
    ))
    .add_plugins(WobblePlugin {
        params: wobble::StepParams {
            damping: 1.0,
            ..Default::default()
        },
        threads,
    })
    .insert_resource(TimeUpdateStrategy::FixedTimesteps(1));
    app
}

/// A 16 x 16 cloth of 1 m at height 1, pinned at two corners of its edge z = 0.
fn cloth() -> wobble::Body {
    wobble::Cloth::new()
        .resolution(16, 16)
        .at(wobble::glam::Vec3::Y)
        .pin_corners()
        .build()
        .expect("a valid cloth")
}

fn run(app: &mut App, frames: usize) {
    for _ in 0..frames {
        app.update();
    }
}

/// The vectors of `attribute` (a `Float32x3` one) of `entity`'s render mesh.
fn mesh_vectors(app: &App, entity: Entity, attribute: MeshVertexAttribute) -> Vec<Vec3> {
    let handle = &app.world().get::<Mesh3d>(entity).expect("a Mesh3d").0;
    let meshes = app.world().resource::<Assets<Mesh>>();
    match meshes
        .get(handle)
        .expect("the mesh asset")
        .attribute(attribute)
    {
        Some(VertexAttributeValues::Float32x3(v)) => v.iter().map(|&v| Vec3::from(v)).collect(),
        other => panic!("{} is {other:?}", attribute.name),
    }
}

/// The positions of `entity`'s render mesh.
fn mesh_positions(app: &App, entity: Entity) -> Vec<Vec3> {
    mesh_vectors(app, entity, Mesh::ATTRIBUTE_POSITION)
}

fn mesh_normals(app: &App, entity: Entity) -> Vec<Vec3> {
    mesh_vectors(app, entity, Mesh::ATTRIBUTE_NORMAL)
}

#[test]
fn a_cloth_entity_falls_and_its_mesh_follows() {
    let mut app = app();
    let entity = app.world_mut().spawn(SoftBody::new(cloth())).id();
    run(&mut app, 1);
    let start = mesh_positions(&app, entity);
    assert_eq!(start.len(), 256);
    assert!(
        start.iter().all(|p| (p.y - 1.0).abs() < 1e-6),
        "the mesh starts as the cloth"
    );
    run(&mut app, 60);
    let after = mesh_positions(&app, entity);
    let normals = mesh_normals(&app, entity);
    assert!(after.iter().chain(&normals).all(|v| v.is_finite()));
    assert!(
        normals.iter().all(|n| (n.length() - 1.0).abs() < 1e-4),
        "unit normals"
    );
    let lowest = after.iter().map(|p| p.y).fold(f32::INFINITY, f32::min);
    assert!(
        lowest < 0.5,
        "a cloth pinned at two corners falls: lowest {lowest}"
    );
    assert_eq!(
        (after[0], after[15]),
        (start[0], start[15]),
        "its pins hold"
    );
    // The mesh is the body: the same positions as the world holds.
    let ww = app.world().resource::<WobbleWorld>();
    let handle = ww.handle_of(entity).expect("in the world");
    let world = ww.world();
    let body = world.body(handle).expect("the body").body();
    for (i, p) in after.iter().enumerate() {
        assert_eq!(*p, to_bevy(body.world_position(i).as_vec3()));
    }
    let stats = app.world().get::<SoftBodyStats>(entity).expect("stats");
    assert_eq!(
        stats.steps, 60,
        "one step per update after the body was added"
    );
    assert!(stats.stretch_mean < 0.05, "stretch {}", stats.stretch_mean);
}

#[test]
fn a_collider_entity_moved_up_lifts_the_cloth() {
    let mut app = app();
    let entity = app.world_mut().spawn(SoftBody::new(cloth())).id();
    // Under the hanging cloth's middle, then pushed up through where it hangs.
    let ball = app
        .world_mut()
        .spawn((
            WobbleCollider::sphere(0.15),
            Transform::from_xyz(0.5, 0.3, 1.0),
        ))
        .id();
    run(&mut app, 240);
    let before: f32 = mesh_positions(&app, entity)
        .iter()
        .map(|p| p.z)
        .sum::<f32>()
        / 256.0;
    // It hangs near the plane z = 0; the ball moves from z = 1 to z = -0.3 through it.
    for f in 1..=60 {
        let z = 1.0 - 1.3 * f as f32 / 60.0;
        app.world_mut()
            .get_mut::<Transform>(ball)
            .expect("a ball")
            .translation
            .z = z;
        run(&mut app, 1);
    }
    run(&mut app, 5);
    let after = mesh_positions(&app, entity);
    let mean_z = after.iter().map(|p| p.z).sum::<f32>() / 256.0;
    assert!(
        mean_z < before - 0.05,
        "the ball pushed the cloth back: mean z {before} -> {mean_z}"
    );
    let centre = Vec3::new(0.5, 0.3, -0.3);
    let inside = after
        .iter()
        .map(|p| p.distance(centre))
        .fold(f32::INFINITY, f32::min);
    assert!(
        inside > 0.15 - 0.02,
        "no particle inside the ball: {inside}"
    );
}

#[test]
fn a_pointer_drag_moves_the_grabbed_point_and_a_release_lets_go() {
    let mut app = app();
    let entity = app.world_mut().spawn(SoftBody::new(cloth())).id();
    run(&mut app, 120); // it swings down and hangs in the plane z = 0
    let camera = Vec3::new(0.5, 0.4, 3.0);
    let ray = |to: Vec3| Ray3d::new(camera, Dir3::new(to - camera).expect("a direction"));
    app.world_mut()
        .write_message(PointerInput::Press(ray(Vec3::new(0.5, 0.4, 0.0))));
    run(&mut app, 1);
    let held = app
        .world()
        .resource::<PointerGrab>()
        .held
        .expect("the ray hits the cloth");
    assert_eq!(held.entity, entity);
    let start = held.target;
    for f in 1..=40 {
        let s = f as f32 / 40.0;
        app.world_mut()
            .write_message(PointerInput::Drag(ray(Vec3::new(0.5 + 0.3 * s, 0.4, 0.0))));
        run(&mut app, 1);
    }
    run(&mut app, 20);
    let held = app
        .world()
        .resource::<PointerGrab>()
        .held
        .expect("still held");
    assert!(
        held.target.x > start.x + 0.25,
        "the target followed the pointer: {start} -> {}",
        held.target
    );
    let nearest = mesh_positions(&app, entity)
        .iter()
        .map(|p| p.distance(held.target))
        .fold(f32::INFINITY, f32::min);
    assert!(
        nearest < 0.05,
        "the cloth followed the grab: {nearest} m away"
    );
    app.world_mut().write_message(PointerInput::Release);
    run(&mut app, 1);
    assert!(app.world().resource::<PointerGrab>().held.is_none());
    let ww = app.world().resource::<WobbleWorld>();
    let world = ww.world();
    let body = world
        .body(ww.handle_of(entity).expect("in"))
        .expect("body")
        .body();
    assert!(
        wobble::picking::active_grabs(body).is_empty(),
        "the grab is released"
    );
}

#[test]
fn a_despawned_entity_frees_its_body() {
    let mut app = app();
    let a = app.world_mut().spawn(SoftBody::new(cloth())).id();
    let b = app
        .world_mut()
        .spawn((SoftBody::new(cloth()), Transform::from_xyz(3.0, 0.0, 0.0)))
        .id();
    run(&mut app, 5);
    assert_eq!(app.world().resource::<WobbleWorld>().world().len(), 2);
    app.world_mut().despawn(a);
    run(&mut app, 5);
    let ww = app.world().resource::<WobbleWorld>();
    assert_eq!((ww.len(), ww.world().len()), (1, 1));
    assert!(ww.handle_of(a).is_none() && ww.handle_of(b).is_some());
    // The other body was placed by its translation and keeps stepping.
    let x = mesh_positions(&app, b);
    assert!(
        x.iter().all(|p| p.x >= 3.0 - 0.01 && p.x <= 4.0 + 0.01),
        "moved by its transform"
    );
    assert_eq!(app.world().get::<SoftBodyStats>(b).expect("stats").steps, 9);
}

/// A cloth, a moving ball and a drag, `frames` updates: the bodies' positions.
fn scripted(frames: usize, threads: usize) -> Vec<Vec3> {
    let mut app = app_on(threads);
    let entity = app
        .world_mut()
        .spawn(SoftBody::new(cloth()).with_solver(wobble::SolverKind::Colored(Default::default())))
        .id();
    let ball = app
        .world_mut()
        .spawn((
            WobbleCollider::sphere(0.2),
            Transform::from_xyz(0.5, 0.5, 0.6),
        ))
        .id();
    app.world_mut()
        .spawn((WobbleCollider::plane(), Transform::default()));
    for f in 0..frames {
        app.world_mut()
            .get_mut::<Transform>(ball)
            .expect("ball")
            .translation
            .z = 0.6 - 0.01 * f as f32;
        if f == 30 {
            let ray = Ray3d::new(Vec3::new(0.2, 3.0, 0.2), Dir3::NEG_Y);
            app.world_mut().write_message(PointerInput::Press(ray));
        }
        if f > 30 {
            let ray = Ray3d::new(Vec3::new(0.2, 3.0, 0.2 + 0.005 * f as f32), Dir3::NEG_Y);
            app.world_mut().write_message(PointerInput::Drag(ray));
        }
        app.update();
    }
    mesh_positions(&app, entity)
}

fn bits(x: &[Vec3]) -> Vec<u32> {
    x.iter()
        .flat_map(|p| p.to_array())
        .map(f32::to_bits)
        .collect()
}

#[test]
fn two_runs_give_the_same_bits() {
    let (a, b) = (scripted(90, 1), scripted(90, 1));
    assert_eq!(bits(&a), bits(&b));
    assert!(a.iter().all(|p| p.is_finite()));
}

#[test]
fn two_threads_give_the_bits_of_one() {
    if !wobble::sparse::PARALLEL {
        return; // a build without threads refuses a pool of two (tested in wobble)
    }
    assert_eq!(bits(&scripted(90, 1)), bits(&scripted(90, 2)));
}

#[test]
fn a_cloth_falls_onto_a_mesh_collider_and_stays_on_top() {
    let mut app = app();
    let block = app
        .world_mut()
        .resource_mut::<Assets<Mesh>>()
        .add(Cuboid::new(0.6, 0.4, 0.6).mesh().build());
    // A box whose top is at y = 0.5 + 0.2, under the middle of a free 1 m cloth at y = 1.
    app.world_mut().spawn((
        WobbleCollider::mesh(block.clone()),
        Transform::from_xyz(0.5, 0.5, 0.5),
    ));
    let free = wobble::Cloth::new()
        .resolution(16, 16)
        .at(wobble::glam::Vec3::Y)
        .build()
        .expect("a cloth");
    let entity = app.world_mut().spawn(SoftBody::new(free)).id();
    run(&mut app, 150);
    let x = mesh_positions(&app, entity);
    let over_the_top: Vec<&Vec3> = x
        .iter()
        .filter(|p| (p.x - 0.5).abs() < 0.25 && (p.z - 0.5).abs() < 0.25)
        .collect();
    assert!(!over_the_top.is_empty());
    let lowest = over_the_top
        .iter()
        .map(|p| p.y)
        .fold(f32::INFINITY, f32::min);
    assert!(
        lowest > 0.7,
        "the cloth rests on the box top (y = 0.7): lowest {lowest}"
    );
    let edge = x.iter().map(|p| p.y).fold(f32::INFINITY, f32::min);
    assert!(edge < 0.6, "and drapes over its sides: lowest {edge}");
}

#[test]
fn a_body_from_a_bevy_mesh_keeps_its_uvs_and_lands_on_a_ground_entity() {
    let mut app = app();
    let (sphere, sheet) = {
        let mut meshes = app.world_mut().resource_mut::<Assets<Mesh>>();
        (
            meshes.add(Sphere::new(0.25).mesh().uv(16, 8)),
            meshes.add(Plane3d::default().mesh().size(1.0, 1.0).subdivisions(9)),
        )
    };
    let uv_count = {
        let meshes = app.world().resource::<Assets<Mesh>>();
        meshes.get(&sphere).expect("added").count_vertices()
    };
    let ball = app
        .world_mut()
        .spawn((
            SoftBody::from_mesh(MeshBody::closed(sphere).mass(0.5)),
            Transform::from_xyz(0.0, 0.6, 0.0),
        ))
        .id();
    // A sheet at height 1.5 pinned along its edge x = 2.5 (the test sees world positions).
    let pinned = Pins::Where(std::sync::Arc::new(|p: Vec3| p.x < 2.51));
    let flap = app
        .world_mut()
        .spawn((
            SoftBody::from_mesh(MeshBody::cloth(sheet.clone()).pinned(pinned)),
            Transform::from_xyz(3.0, 1.5, 0.0),
        ))
        .id();
    app.world_mut()
        .spawn((WobbleCollider::plane(), Transform::default()));
    run(&mut app, 180);
    let x = mesh_positions(&app, ball);
    assert_eq!(
        x.len(),
        uv_count,
        "the render mesh keeps the asset's vertices"
    );
    let handle = &app.world().get::<Mesh3d>(ball).expect("mesh").0;
    assert!(app
        .world()
        .resource::<Assets<Mesh>>()
        .get(handle)
        .expect("asset")
        .attribute(Mesh::ATTRIBUTE_UV_0)
        .is_some());
    let ww = app.world().resource::<WobbleWorld>();
    let world = ww.world();
    let body = world
        .body(ww.handle_of(ball).expect("in"))
        .expect("body")
        .body();
    assert!(
        body.len() < uv_count,
        "the UV seam welded: {} particles",
        body.len()
    );
    let lowest = x.iter().map(|p| p.y).fold(f32::INFINITY, f32::min);
    assert!(
        (-0.01..0.05).contains(&lowest),
        "it rests on the ground: lowest {lowest}"
    );
    let ratio = figures::volume_ratio(body).expect("a closed body");
    assert!(
        (ratio - 1.0).abs() < 0.2,
        "it keeps its volume: {ratio} of its rest volume"
    );
    let sheet_x = mesh_positions(&app, flap);
    let edge: Vec<usize> = match app
        .world()
        .resource::<Assets<Mesh>>()
        .get(&sheet)
        .expect("the asset")
        .attribute(Mesh::ATTRIBUTE_POSITION)
    {
        Some(VertexAttributeValues::Float32x3(p)) => {
            (0..p.len()).filter(|&v| p[v][0] < -0.49).collect()
        }
        other => panic!("positions are {other:?}"),
    };
    assert_eq!(
        edge.len(),
        11,
        "a plane subdivided 9 times has 11 vertices along an edge"
    );
    assert!(
        edge.iter()
            .all(|&v| (sheet_x[v] - Vec3::new(2.5, 1.5, sheet_x[v].z)).length() < 1e-5),
        "the pinned edge holds"
    );
    assert!(sheet_x.iter().any(|p| p.y < 1.0), "the rest hangs down");
}

#[test]
fn a_fine_render_mesh_embedded_in_a_coarse_body_follows_it() {
    let mut app = app();
    let fine = app
        .world_mut()
        .resource_mut::<Assets<Mesh>>()
        .add(Sphere::new(0.25).mesh().ico(15).expect("an icosphere"));
    let vertices = app
        .world()
        .resource::<Assets<Mesh>>()
        .get(&fine)
        .expect("added")
        .count_vertices();
    // 42 particles, drawn with a sphere of a few thousand vertices, dropped onto the ground.
    let coarse = wobble::SoftBody::sphere(0.25, 1).build().expect("a jelly");
    let particles = coarse.len();
    let ball = app
        .world_mut()
        .spawn((
            SoftBody::new(coarse).with_render_mesh(fine),
            Transform::from_xyz(0.0, 1.0, 0.0),
        ))
        .id();
    app.world_mut()
        .spawn((WobbleCollider::plane(), Transform::default()));
    run(&mut app, 1);
    let start = mesh_positions(&app, ball);
    assert_eq!(start.len(), vertices);
    assert!(
        vertices > 10 * particles,
        "{vertices} render vertices on {particles} particles"
    );
    let centre = |x: &[Vec3]| x.iter().sum::<Vec3>() / x.len() as f32;
    assert!(
        (centre(&start) - Vec3::Y).length() < 0.01,
        "placed by the transform"
    );
    run(&mut app, 120);
    let x = mesh_positions(&app, ball);
    let normals = mesh_normals(&app, ball);
    let ww = app.world().resource::<WobbleWorld>();
    let world = ww.world();
    let body = world
        .body(ww.handle_of(ball).expect("in"))
        .expect("body")
        .body();
    let sim: Vec<Vec3> = (0..body.len())
        .map(|i| to_bevy(body.world_position(i).as_vec3()))
        .collect();
    assert!(
        (centre(&x) - centre(&sim)).length() < 0.02,
        "the render mesh rides on the body: {} against {}",
        centre(&x),
        centre(&sim)
    );
    let lowest = x.iter().map(|p| p.y).fold(f32::INFINITY, f32::min);
    assert!(
        (-0.02..0.1).contains(&lowest),
        "it fell onto the ground: lowest {lowest}"
    );
    let c = centre(&x);
    let outward = x
        .iter()
        .zip(&normals)
        .filter(|(p, n)| n.dot(**p - c) > 0.0)
        .count();
    assert_eq!(outward, x.len(), "every render normal points outward");
}

#[test]
fn a_render_mesh_in_a_tetrahedral_body_moves_with_its_tetrahedra() {
    let mut app = app();
    // The `cube` scene's body: 0.5 m of tetrahedra with its corner at (-0.25, 0.5, -0.25); a box
    // mesh over it, both moved 2 m along x by the entity.
    let shell = Cuboid::new(0.5, 0.5, 0.5)
        .mesh()
        .build()
        .translated_by(Vec3::new(0.0, 0.75, 0.0));
    let shell = app.world_mut().resource_mut::<Assets<Mesh>>().add(shell);
    let cube = app
        .world_mut()
        .spawn((
            SoftBody::new(scenes::cube(2).expect("the cube")).with_render_mesh(shell),
            Transform::from_xyz(2.0, 0.0, 0.0),
        ))
        .id();
    run(&mut app, 1);
    let x = mesh_positions(&app, cube);
    assert_eq!(x.len(), 24, "a box mesh's 24 vertices");
    let (lo, hi) = x
        .iter()
        .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(*p), hi.max(*p))
        });
    assert!((lo - Vec3::new(1.75, 0.5, -0.25)).length() < 0.02, "{lo}");
    assert!((hi - Vec3::new(2.25, 1.0, 0.25)).length() < 0.02, "{hi}");
    run(&mut app, 120);
    let x = mesh_positions(&app, cube);
    let lowest = x.iter().map(|p| p.y).fold(f32::INFINITY, f32::min);
    let highest = x.iter().map(|p| p.y).fold(f32::NEG_INFINITY, f32::max);
    assert!(
        lowest > -0.02 && lowest < 0.05,
        "the box sits on the ground: lowest {lowest}"
    );
    assert!(
        (highest - lowest - 0.5).abs() < 0.05,
        "and keeps its height: {}",
        highest - lowest
    );
}

#[test]
fn bad_input_is_refused_with_an_event_not_a_panic() {
    let mut app = app();
    let turned = app
        .world_mut()
        .spawn((
            SoftBody::new(cloth()),
            Transform::from_rotation(Quat::from_rotation_x(0.5)),
        ))
        .id();
    let lines = {
        let mut meshes = app.world_mut().resource_mut::<Assets<Mesh>>();
        meshes.add(Mesh::new(
            bevy::mesh::PrimitiveTopology::LineList,
            bevy::asset::RenderAssetUsages::default(),
        ))
    };
    let not_a_surface = app
        .world_mut()
        .spawn(SoftBody::from_mesh(MeshBody::cloth(lines)))
        .id();
    run(&mut app, 2);
    let refused: Vec<Entity> = app
        .world_mut()
        .resource_mut::<Messages<WobbleEvent>>()
        .drain()
        .filter_map(|e| match e {
            WobbleEvent::Refused { entity, error } => {
                assert!(!error.is_empty());
                Some(entity)
            }
            _ => None,
        })
        .collect();
    assert_eq!(refused, vec![turned, not_a_surface]);
    assert!(app.world().get::<SoftBodyHandle>(turned).is_none());
    assert!(
        app.world().get::<SoftBody>(turned).is_none(),
        "not retried every frame"
    );
    assert_eq!(app.world().resource::<WobbleWorld>().len(), 0);
}

#[test]
fn a_mesh_asset_that_fails_to_load_is_refused() {
    let mut app = app();
    // No loader for this extension (the tests' app has none at all).
    let missing: Handle<Mesh> = app
        .world()
        .resource::<AssetServer>()
        .load("no_such_mesh.glb");
    let entity = app
        .world_mut()
        .spawn(SoftBody::from_mesh(MeshBody::cloth(missing.clone())))
        .id();
    let collider = app.world_mut().spawn(WobbleCollider::mesh(missing)).id();
    let mut refused = Vec::new();
    for _ in 0..200 {
        app.update();
        refused.extend(
            app.world_mut()
                .resource_mut::<Messages<WobbleEvent>>()
                .drain()
                .filter_map(|e| match e {
                    WobbleEvent::Refused { entity, error } => Some((entity, error)),
                    _ => None,
                }),
        );
        if refused.len() == 2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let mut who: Vec<Entity> = refused.iter().map(|(e, _)| *e).collect();
    let mut expected = vec![entity, collider];
    who.sort();
    expected.sort();
    assert_eq!(who, expected, "{refused:?}");
    assert!(
        refused.iter().all(|(_, e)| e.contains("failed to load")),
        "{refused:?}"
    );
}

#[test]
fn pause_stops_the_clock_and_step_once_runs_one_step() {
    let mut app = app();
    let entity = app.world_mut().spawn(SoftBody::new(cloth())).id();
    run(&mut app, 3);
    let steps = |app: &App| {
        app.world()
            .get::<SoftBodyStats>(entity)
            .expect("stats")
            .steps
    };
    let before = steps(&app);
    app.world_mut().resource_mut::<SimulationControl>().paused = true;
    let x = mesh_positions(&app, entity);
    run(&mut app, 10);
    assert_eq!(steps(&app), before);
    assert_eq!(
        mesh_positions(&app, entity),
        x,
        "nothing moves while paused"
    );
    app.world_mut()
        .resource_mut::<SimulationControl>()
        .step_once();
    run(&mut app, 10);
    assert_eq!(steps(&app), before + 1);
    app.world_mut().resource_mut::<SimulationControl>().paused = false;
    run(&mut app, 2);
    assert_eq!(steps(&app), before + 3);
}

#[test]
fn a_diverging_body_is_restored_and_reported() {
    let mut app = app();
    let entity = app.world_mut().spawn(SoftBody::new(cloth())).id();
    run(&mut app, 2);
    // Gravity no step can follow: a speed above wobble's divergence bound in one step.
    app.world_mut().resource_mut::<WobbleParams>().gravity =
        wobble::glam::Vec3::new(0.0, -1e9, 0.0);
    run(&mut app, 1);
    let events: Vec<WobbleEvent> = app
        .world_mut()
        .resource_mut::<Messages<WobbleEvent>>()
        .drain()
        .collect();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, WobbleEvent::Restored { entity: e2, .. } if *e2 == entity)),
        "{events:?}"
    );
    assert!(mesh_positions(&app, entity)
        .iter()
        .all(|p| p.is_finite() && p.y > 0.5));
}

#[test]
fn a_step_warning_reaches_the_game_as_an_event() {
    let mut app = app();
    let entity = app.world_mut().spawn(SoftBody::new(cloth())).id();
    run(&mut app, 3);
    app.world_mut()
        .resource_mut::<Messages<WobbleEvent>>()
        .clear();
    // A bound no falling cloth keeps: wobble's step warns, and the plugin passes it on.
    app.world_mut()
        .resource_mut::<WobbleParams>()
        .stretch_warning = 1e-9;
    run(&mut app, 1);
    let warnings: Vec<WobbleEvent> = app
        .world_mut()
        .resource_mut::<Messages<WobbleEvent>>()
        .drain()
        .collect();
    let stretch = app
        .world()
        .get::<SoftBodyStats>(entity)
        .expect("stats")
        .stretch_mean;
    assert_eq!(
        warnings,
        vec![WobbleEvent::Warning {
            entity,
            warning: wobble::StepWarning::Stretch {
                mean: stretch,
                bound: 1e-9
            }
        }]
    );
}

#[test]
fn residuals_are_recorded_per_iteration_when_asked() {
    let mut app = app();
    let params = app.world().resource::<WobbleParams>().0;
    let entity = app
        .world_mut()
        .spawn(SoftBody::new(cloth()).recording_residuals())
        .id();
    run(&mut app, 10);
    let stats = app.world().get::<SoftBodyStats>(entity).expect("stats");
    assert_eq!(stats.residuals.len(), params.substeps * params.iterations);
    assert!(stats.residuals.iter().all(|r| r.is_finite() && *r >= 0.0));
}

/// README's "Bevy" section shows the crate doc's example, which `cargo test` compiles: the
/// two must be the same lines.
#[test]
fn the_readme_example_is_the_compiled_doc_example() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("../../README.md")).expect("README.md");
    let section = &readme[readme.find("\n## Bevy\n").expect("a Bevy section")..];
    let block = |text: &str| -> Vec<String> {
        let start = text.find("```rust\n").expect("a rust block") + 8;
        let end = start + text[start..].find("```").expect("its end");
        text[start..end].lines().map(str::to_owned).collect()
    };
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).expect("lib.rs");
    let doc: String = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
        .replace("```no_run\n", "```rust\n");
    assert_eq!(block(section), block(&doc));
}

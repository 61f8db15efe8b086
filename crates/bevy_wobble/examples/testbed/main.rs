//! The wobble testbed: the standard scenes live in a window, their solver, iterations and
//! substeps switched while they run, the residual of the last step plotted per iteration.
//!
//! `cargo run -p bevy_wobble --release --example testbed`
//!
//! Keys: 1-7 scene (cloth, flag, jelly, cube, drape, stack, character), S next solver, Up/Down
//! iterations, Right/Left substeps, Space pause, N one step while paused, R restart the
//! scene. Mouse: left drag grabs a body, right drag orbits, the wheel zooms.
//!
//! With `WOBBLE_TESTBED_SCREENSHOT=out.png` it saves the window after two seconds and exits
//! (for a bug report, or to see it on a machine without a display: under `xvfb-run`).

mod scenes;

use bevy::input::mouse::{AccumulatedMouseMotion, AccumulatedMouseScroll};
use bevy::prelude::*;
use bevy::window::PrimaryWindow;
use bevy_wobble::prelude::*;
use bevy_wobble::wobble;
use scenes::{Scene, SceneItem};
use wobble::{ChebyshevOptions, ColoredOptions, JacobiOptions, SolverKind};

/// The solvers S cycles through.
const SOLVERS: [SolverKind; 4] = [
    SolverKind::Gs,
    SolverKind::Colored(ColoredOptions::DEFAULT),
    SolverKind::Jacobi(JacobiOptions::DEFAULT),
    SolverKind::Chebyshev(ChebyshevOptions::DEFAULT),
];

/// Bars of the residual plot (one per iteration, the first this many).
const BARS: usize = 64;

fn main() {
    App::new()
        .add_plugins(DefaultPlugins.set(WindowPlugin {
            primary_window: Some(Window {
                title: "wobble testbed".into(),
                ..default()
            }),
            ..default()
        }))
        .add_plugins(WobblePlugin {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get().min(4)),
            ..default()
        })
        .insert_resource(Time::<Fixed>::from_hz(60.0))
        .insert_resource(Testbed {
            scene: Scene::Cloth,
            solver: 1,
            restart: true,
        })
        .init_resource::<Orbit>()
        .add_systems(Startup, setup)
        .add_systems(
            Update,
            (
                keys,
                restart,
                orbit_camera,
                pointer.before(WobbleSystems::Attach),
                overlay,
                scenes::draw_colliders,
            ),
        )
        .add_systems(
            FixedUpdate,
            scenes::animate_character.before(WobbleSystems::Step),
        )
        .add_systems(Update, screenshot_and_exit)
        .run();
}

/// What runs now.
#[derive(Resource)]
pub struct Testbed {
    scene: Scene,
    solver: usize,
    restart: bool,
}

/// The camera's orbit about a point.
#[derive(Resource)]
struct Orbit {
    yaw: f32,
    pitch: f32,
    distance: f32,
    focus: Vec3,
}

impl Default for Orbit {
    fn default() -> Self {
        let (yaw, pitch, distance, focus) = scenes::START_VIEW;
        Orbit {
            yaw,
            pitch,
            distance,
            focus,
        }
    }
}

#[derive(Component)]
struct OverlayText;

#[derive(Component)]
struct Bar(usize);

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    commands.spawn((
        Camera3d::default(),
        // The default tonemapping needs lookup tables, a Bevy feature the testbed leaves out.
        bevy::core_pipeline::tonemapping::Tonemapping::None,
        scenes::view(scenes::START_VIEW),
    ));
    scenes::spawn_stage(&mut commands, &mut meshes, &mut materials);
    commands.spawn((
        Text::new(""),
        TextFont {
            font_size: FontSize::Px(15.0),
            ..default()
        },
        Node {
            position_type: PositionType::Absolute,
            top: Val::Px(8.0),
            left: Val::Px(8.0),
            ..default()
        },
        OverlayText,
    ));
    commands
        .spawn((
            Node {
                position_type: PositionType::Absolute,
                bottom: Val::Px(8.0),
                left: Val::Px(8.0),
                height: Val::Px(90.0),
                align_items: AlignItems::FlexEnd,
                column_gap: Val::Px(1.0),
                ..default()
            },
            BackgroundColor(Color::srgba(0.0, 0.0, 0.0, 0.35)),
        ))
        .with_children(|plot| {
            for k in 0..BARS {
                plot.spawn((
                    Node {
                        width: Val::Px(5.0),
                        height: Val::Px(0.0),
                        ..default()
                    },
                    BackgroundColor(Color::srgb(0.95, 0.75, 0.2)),
                    Bar(k),
                ));
            }
        });
}

fn keys(
    input: Res<ButtonInput<KeyCode>>,
    mut testbed: ResMut<Testbed>,
    mut params: ResMut<WobbleParams>,
    mut control: ResMut<SimulationControl>,
    ww: Res<WobbleWorld>,
) {
    let digits = [
        KeyCode::Digit1,
        KeyCode::Digit2,
        KeyCode::Digit3,
        KeyCode::Digit4,
        KeyCode::Digit5,
        KeyCode::Digit6,
        KeyCode::Digit7,
    ];
    for (k, key) in digits.iter().enumerate() {
        if input.just_pressed(*key) {
            testbed.scene = Scene::ALL[k];
            testbed.restart = true;
        }
    }
    if input.just_pressed(KeyCode::KeyR) {
        testbed.restart = true;
    }
    if input.just_pressed(KeyCode::KeyS) {
        testbed.solver = (testbed.solver + 1) % SOLVERS.len();
        // The running bodies change solver in place.
        let mut world = ww.world();
        for b in world.bodies_mut() {
            match SOLVERS[testbed.solver].build(&wobble::SolverOptions {
                pool: Some(ww.pool().clone()),
                ..default()
            }) {
                Ok(solver) => b.set_solver(solver),
                Err(e) => warn!("solver not changed: {e}"),
            }
        }
    }
    if input.just_pressed(KeyCode::ArrowUp) {
        params.iterations = (params.iterations * 2).min(256);
    }
    if input.just_pressed(KeyCode::ArrowDown) {
        params.iterations = (params.iterations / 2).max(1);
    }
    if input.just_pressed(KeyCode::ArrowRight) {
        params.substeps = (params.substeps * 2).min(64);
    }
    if input.just_pressed(KeyCode::ArrowLeft) {
        params.substeps = (params.substeps / 2).max(1);
    }
    if input.just_pressed(KeyCode::Space) {
        control.paused = !control.paused;
    }
    if input.just_pressed(KeyCode::KeyN) {
        control.step_once();
    }
}

fn restart(
    mut commands: Commands,
    mut testbed: ResMut<Testbed>,
    items: Query<Entity, With<SceneItem>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    if !std::mem::take(&mut testbed.restart) {
        return;
    }
    for e in &items {
        commands.entity(e).despawn();
    }
    if let Err(e) = scenes::spawn_scene(
        &mut commands,
        &mut materials,
        testbed.scene,
        SOLVERS[testbed.solver],
    ) {
        error!("scene {} not built: {e}", testbed.scene.name());
    }
}

fn orbit_camera(
    mut orbit: ResMut<Orbit>,
    buttons: Res<ButtonInput<MouseButton>>,
    motion: Res<AccumulatedMouseMotion>,
    scroll: Res<AccumulatedMouseScroll>,
    mut camera: Query<&mut Transform, With<Camera3d>>,
) {
    if buttons.pressed(MouseButton::Right) {
        orbit.yaw -= 0.005 * motion.delta.x;
        orbit.pitch = (orbit.pitch + 0.005 * motion.delta.y).clamp(-1.4, 1.4);
    }
    orbit.distance = (orbit.distance * (1.0 - 0.1 * scroll.delta.y)).clamp(0.5, 30.0);
    for mut t in &mut camera {
        *t = scenes::view((orbit.yaw, orbit.pitch, orbit.distance, orbit.focus));
    }
}

/// The left mouse button as the plugin's pointer: a ray from the camera through the cursor.
fn pointer(
    buttons: Res<ButtonInput<MouseButton>>,
    window: Query<&Window, With<PrimaryWindow>>,
    camera: Query<(&Camera, &GlobalTransform)>,
    mut out: MessageWriter<PointerInput>,
) {
    let (Ok(window), Ok((camera, at))) = (window.single(), camera.single()) else {
        return;
    };
    if buttons.just_released(MouseButton::Left) {
        out.write(PointerInput::Release);
        return;
    }
    let Some(ray) = window
        .cursor_position()
        .and_then(|cursor| camera.viewport_to_world(at, cursor).ok())
    else {
        return;
    };
    if buttons.just_pressed(MouseButton::Left) {
        out.write(PointerInput::Press(ray));
    } else if buttons.pressed(MouseButton::Left) {
        out.write(PointerInput::Drag(ray));
    }
}

#[allow(clippy::too_many_arguments)]
fn overlay(
    testbed: Res<Testbed>,
    params: Res<WobbleParams>,
    stats: Res<WobbleStats>,
    control: Res<SimulationControl>,
    bodies: Query<&SoftBodyStats>,
    mut text: Query<&mut Text, With<OverlayText>>,
    mut bars: Query<(&Bar, &mut Node)>,
    mut smoothed: Local<f64>,
) {
    *smoothed = if *smoothed == 0.0 {
        stats.step_ms
    } else {
        0.95 * *smoothed + 0.05 * stats.step_ms
    };
    let stretch = bodies.iter().map(|s| s.stretch_mean).fold(0.0f32, f32::max);
    let residuals: &[f32] = bodies.iter().next().map_or(&[], |s| &s.residuals);
    let last = residuals.last().copied().unwrap_or(0.0);
    for mut t in &mut text {
        t.0 = format!(
            "scene {} (1-7)   solver {} (S)   {} iterations (Up/Down) x {} substeps (Left/Right){}\n\
             {:.3} ms per step   mean stretch {:.2e}   residual of the last iteration {:.2e}\n\
             left drag: grab   right drag: orbit   wheel: zoom   Space: pause   N: one step   R: restart\n\
             bars: the residual after each iteration over the first's, log scale 1e-4 to 1",
            testbed.scene.name(),
            SOLVERS[testbed.solver].name(),
            params.iterations,
            params.substeps,
            if control.paused { "   PAUSED" } else { "" },
            *smoothed,
            stretch,
            last,
        );
    }
    // Each iteration's residual over the first iteration's, on a log scale from 1e-4 (no bar)
    // to 1 (full height): how far the step's iterations converge.
    let first = residuals.first().copied().unwrap_or(0.0);
    for (bar, mut node) in &mut bars {
        let h = residuals
            .get(bar.0)
            .filter(|_| first > 0.0)
            .map_or(0.0, |&r| {
                (((r / first).max(1e-12).log10() + 4.0) / 4.0).clamp(0.0, 1.0)
            });
        node.height = Val::Px(86.0 * h);
    }
}

/// `WOBBLE_TESTBED_SCREENSHOT=path`: the window saved to `path` after 120 frames, then exit.
fn screenshot_and_exit(
    mut commands: Commands,
    mut frame: Local<u32>,
    mut exit: MessageWriter<AppExit>,
) {
    let Some(path) = std::env::var_os("WOBBLE_TESTBED_SCREENSHOT") else {
        return;
    };
    *frame += 1;
    if *frame == 120 {
        use bevy::render::view::screenshot::{save_to_disk, Screenshot};
        commands
            .spawn(Screenshot::primary_window())
            .observe(save_to_disk(std::path::PathBuf::from(path)));
    }
    if *frame == 150 {
        exit.write(AppExit::Success);
    }
}

//! The testbed's cloth drawn by Bevy without a window: a camera renders into an image on
//! whatever adapter wgpu finds (in CI, Mesa's lavapipe on the CPU), a screenshot of a frame is
//! read back, and the cloth must cover pixels of its colour. The scene is the testbed's own (its stage,
//! its cloth, its starting camera), without the overlay. Saved as
//! `target/tmp/testbed_cloth.png`. Without an adapter it prints `skipped: no GPU adapter` and
//! passes, as the GPU backend's tests do.

#[path = "../examples/testbed/scenes.rs"]
#[allow(dead_code)]
mod testbed_scenes;

use bevy::camera::RenderTarget;
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::prelude::*;
use bevy::render::render_resource::TextureFormat;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};
use bevy::window::ExitCondition;
use bevy_wobble::prelude::*;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const WIDTH: u32 = 320;
const HEIGHT: u32 = 240;

/// The testbed's stage and cloth scene seen from its starting camera, which renders into an
/// image (returned beside the app) instead of a window.
fn app() -> (App, Handle<Image>) {
    let mut app = App::new();
    app.add_plugins(
        DefaultPlugins
            .set(WindowPlugin {
                primary_window: None,
                exit_condition: ExitCondition::DontExit,
                close_when_requested: false,
                ..default()
            })
            .disable::<bevy::winit::WinitPlugin>(),
    )
    .add_plugins(WobblePlugin::default());
    let image = app
        .world_mut()
        .resource_mut::<Assets<Image>>()
        .add(Image::new_target_texture(
            WIDTH,
            HEIGHT,
            TextureFormat::Rgba8UnormSrgb,
            None,
        ));
    let target = image.clone();
    app.add_systems(
        Startup,
        move |mut commands: Commands,
              mut meshes: ResMut<Assets<Mesh>>,
              mut materials: ResMut<Assets<StandardMaterial>>| {
            commands.spawn((
                Camera3d::default(),
                RenderTarget::Image(target.clone().into()),
                // The tonemapping lookup tables are a feature the testbed leaves out.
                Tonemapping::None,
                testbed_scenes::view(testbed_scenes::START_VIEW),
            ));
            testbed_scenes::spawn_stage(&mut commands, &mut meshes, &mut materials);
            testbed_scenes::spawn_scene(
                &mut commands,
                &mut materials,
                testbed_scenes::Scene::Cloth,
                bevy_wobble::wobble::SolverKind::Gs,
            )
            .expect("the cloth scene");
        },
    );
    (app, image)
}

#[test]
fn the_testbed_cloth_renders_into_an_image() {
    let built = std::panic::catch_unwind(|| {
        let (mut app, image) = app();
        app.finish();
        app.cleanup();
        (app, image)
    });
    let (mut app, image) = match built {
        Ok(app) => app,
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            assert!(
                message.contains("GPU"),
                "the app failed to start: {message}"
            );
            println!("skipped: no GPU adapter");
            return;
        }
    };
    let shot: Arc<Mutex<Option<Image>>> = Arc::default();
    let started = Instant::now();
    let mut frames = 0;
    // Pipelines compile in the background (seconds on a CPU rasterizer): ask for a screenshot
    // every 30 frames until one shows the cloth, for at most two minutes.
    let covered = loop {
        app.update();
        frames += 1;
        if frames % 30 == 0 {
            let sink = shot.clone();
            app.world_mut()
                .spawn(Screenshot::image(image.clone()))
                .observe(move |captured: On<ScreenshotCaptured>| {
                    *sink.lock().expect("the slot") = Some(captured.image.clone());
                });
        }
        if let Some(frame) = shot.lock().expect("the slot").take() {
            let data = frame.data.as_ref().expect("pixels on the CPU");
            // The cloth is the testbed's red, lit; the ground and the sky are grey and black.
            let red = data
                .chunks_exact(4)
                .filter(|p| p[0] > 50 && p[0] as f32 > 1.6 * p[1] as f32)
                .count();
            let ground = data
                .chunks_exact(4)
                .filter(|p| p[0] > 60 && p[0].abs_diff(p[1]) < 12 && p[1].abs_diff(p[2]) < 12)
                .count();
            if red > 0 {
                let path =
                    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("testbed_cloth.png");
                frame
                    .try_into_dynamic()
                    .expect("an RGBA image")
                    .save(&path)
                    .expect("saved");
                println!(
                    "{frames} frames, {:.1} s: {red} of {} pixels are cloth, {ground} ground; {}",
                    started.elapsed().as_secs_f64(),
                    WIDTH * HEIGHT,
                    path.display()
                );
                break (red, ground);
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no frame showed the cloth within two minutes ({frames} frames)"
        );
    };
    let share = |n: usize| n as f64 / (WIDTH * HEIGHT) as f64;
    let (cloth, ground) = (share(covered.0), share(covered.1));
    // From the starting camera the 1 m cloth covers about 3% of the frame, the ground most of
    // its lower part.
    assert!(
        cloth > 0.01,
        "the cloth covers {:.1}% of the image",
        100.0 * cloth
    );
    assert!(
        ground > 0.3,
        "the ground covers {:.1}% of the image",
        100.0 * ground
    );
}

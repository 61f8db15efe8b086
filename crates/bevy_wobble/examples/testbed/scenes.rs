//! The testbed's scenes: docs/SCENES.md's standard bodies and worlds, spawned as entities.

use bevy::prelude::*;
use bevy_wobble::prelude::*;
use bevy_wobble::wobble;
use scenes::character::Character;
use std::sync::Mutex;

/// The scenes, in the order of the number keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scene {
    Cloth,
    Flag,
    Jelly,
    Cube,
    Drape,
    Stack,
    Character,
}

impl Scene {
    pub const ALL: [Scene; 7] = [
        Scene::Cloth,
        Scene::Flag,
        Scene::Jelly,
        Scene::Cube,
        Scene::Drape,
        Scene::Stack,
        Scene::Character,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Scene::Cloth => "cloth",
            Scene::Flag => "flag",
            Scene::Jelly => "jelly",
            Scene::Cube => "cube",
            Scene::Drape => "drape",
            Scene::Stack => "stack",
            Scene::Character => "character",
        }
    }
}

/// Where the camera starts: yaw and pitch (rad), distance (m) and the point it orbits.
pub const START_VIEW: (f32, f32, f32, Vec3) = (0.6, 0.35, 3.5, Vec3::new(0.3, 0.6, 0.3));

/// The camera of an orbit (yaw, pitch, distance, focus), looking at its focus.
pub fn view((yaw, pitch, distance, focus): (f32, f32, f32, Vec3)) -> Transform {
    let offset = Quat::from_euler(EulerRot::YXZ, yaw, -pitch, 0.0) * Vec3::new(0.0, 0.0, distance);
    Transform::from_translation(focus + offset).looking_at(focus, Vec3::Y)
}

/// The light and the ground (drawn, and a collider every body meets).
pub fn spawn_stage(
    commands: &mut Commands,
    meshes: &mut Assets<Mesh>,
    materials: &mut Assets<StandardMaterial>,
) {
    commands.spawn((
        DirectionalLight {
            illuminance: 8000.0,
            shadow_maps_enabled: true,
            ..default()
        },
        Transform::from_xyz(2.0, 5.0, 3.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    commands.insert_resource(GlobalAmbientLight {
        brightness: 300.0,
        ..default()
    });
    commands.spawn((
        Mesh3d(meshes.add(Plane3d::default().mesh().size(20.0, 20.0))),
        MeshMaterial3d(materials.add(Color::srgb(0.35, 0.35, 0.38))),
        WobbleCollider::plane(),
        Transform::default(),
    ));
}

/// Everything a scene spawned (despawned when the scene changes).
#[derive(Component)]
pub struct SceneItem;

/// The animated character of the `character` scene, posed before every step.
#[derive(Resource)]
pub struct Animated {
    pub character: Mutex<Character>,
    pub entity: Entity,
}

/// A scene's bodies, each with its self-collision thickness, and the character if it has one.
type SceneBodies = (Vec<(wobble::Body, Option<f32>)>, Option<Character>);

/// The bodies of `which`.
pub fn bodies_of(which: Scene) -> wobble::core::Result<SceneBodies> {
    let one = |b: wobble::Body| Ok((vec![(b, None)], None));
    match which {
        Scene::Cloth => one(scenes::cloth(32)?),
        Scene::Flag => one(scenes::flag(32)?),
        Scene::Jelly => one(scenes::jelly(3)?),
        Scene::Cube => one(scenes::cube(4)?),
        Scene::Drape | Scene::Stack => {
            let mut world = if which == Scene::Drape {
                scenes::drape(32, true)?
            } else {
                scenes::stack()?
            };
            let handles: Vec<_> = world.bodies().map(|b| b.handle()).collect();
            let mut out = Vec::new();
            for h in handles {
                let thickness = world
                    .body(h)
                    .and_then(|b| b.self_collision())
                    .map(|s| s.thickness);
                out.push((world.remove_body(h)?, thickness));
            }
            Ok((out, None))
        }
        Scene::Character => {
            let mut character = Character::new(16)?;
            let body = std::mem::replace(&mut character.body, scenes::cloth(2)?);
            Ok((vec![(body, None)], Some(character)))
        }
    }
}

/// Spawns `which`: its bodies as [`SoftBody`] entities with a two-sided material.
pub fn spawn_scene(
    commands: &mut Commands,
    materials: &mut Assets<StandardMaterial>,
    which: Scene,
    solver: wobble::SolverKind,
) -> wobble::core::Result<()> {
    let (bodies, character) = bodies_of(which)?;
    let colours = [
        Color::srgb(0.85, 0.3, 0.25),
        Color::srgb(0.25, 0.55, 0.85),
        Color::srgb(0.35, 0.75, 0.35),
    ];
    let mut first = None;
    for (k, (body, self_collision)) in bodies.into_iter().enumerate() {
        let material = materials.add(StandardMaterial {
            base_color: colours[k % colours.len()],
            perceptual_roughness: 0.8,
            double_sided: true,
            cull_mode: None,
            ..default()
        });
        let mut soft = SoftBody::new(body)
            .with_solver(solver)
            .recording_residuals();
        soft.self_collision = self_collision;
        let entity = commands
            .spawn((soft, MeshMaterial3d(material), SceneItem))
            .id();
        first.get_or_insert(entity);
    }
    if let (Some(character), Some(entity)) = (character, first) {
        commands.insert_resource(Animated {
            character: Mutex::new(character),
            entity,
        });
    } else {
        commands.remove_resource::<Animated>();
    }
    Ok(())
}

/// Poses the character (its skin targets and capsule proxies) before each step: the body is
/// swapped into the `Character` for the call and back.
pub fn animate_character(
    ww: Res<WobbleWorld>,
    animated: Option<Res<Animated>>,
    time: Res<Time>,
    control: Res<SimulationControl>,
) {
    let Some(animated) = animated else { return };
    if control.paused {
        return;
    }
    let Some(handle) = ww.handle_of(animated.entity) else {
        return;
    };
    let mut world = ww.world();
    let Some(b) = world.body_mut(handle) else {
        return;
    };
    let mut character = animated.character.lock().unwrap_or_else(|p| p.into_inner());
    std::mem::swap(&mut character.body, b.body_mut());
    let posed = character.animate(time.delta_secs());
    std::mem::swap(&mut character.body, b.body_mut());
    if let Err(e) = posed {
        warn!("character not posed: {e}");
    }
}

/// Draws every body's own colliders (spheres, capsules, boxes; planes are the ground).
pub fn draw_colliders(ww: Res<WobbleWorld>, mut gizmos: Gizmos) {
    use wobble::core::Shape;
    let world = ww.world();
    let colour = Color::srgb(0.9, 0.9, 0.5);
    for b in world.bodies() {
        for c in b.body().colliders() {
            match c.shape {
                Shape::Sphere { center, radius } => {
                    gizmos.sphere(
                        Isometry3d::from_translation(bevy_wobble::to_bevy(center)),
                        radius,
                        colour,
                    );
                }
                Shape::Capsule { a, b, radius } => {
                    let (a, b) = (bevy_wobble::to_bevy(a), bevy_wobble::to_bevy(b));
                    let axis = (b - a).normalize_or(Vec3::Y);
                    let iso =
                        Isometry3d::new((a + b) / 2.0, Quat::from_rotation_arc(Vec3::Y, axis));
                    gizmos.primitive_3d(&Capsule3d::new(radius, (b - a).length()), iso, colour);
                }
                Shape::Cuboid {
                    center,
                    half,
                    rotation,
                } => {
                    let t = Transform {
                        translation: bevy_wobble::to_bevy(center),
                        rotation: Quat::from_array(rotation.to_array()),
                        scale: 2.0 * bevy_wobble::to_bevy(half),
                    };
                    gizmos.cube(t, colour);
                }
                _ => {}
            }
        }
    }
}

//! The triangle-contact scenes of docs/SCENES.md, `layers` and `fold`: cloth on cloth at a
//! 1 mm thickness, with triangle contacts ([`World::set_triangle_contacts`]), driven by a
//! script ([`ContactScene::before_step`]) that moves a sphere or pins between steps.

use crate::standard::{check_n, grid_body};
use glam::{Quat, Vec3};
use solver_core::build::body_from_trimesh;
use solver_core::error::check_size;
use solver_core::mesh::shapes::icosphere;
use solver_core::{BodyHandle, Collider, Particles, Result, TriangleContactSettings, World};

/// The most cloths `layers` stacks.
pub const MAX_LAYERS: usize = 256;

/// Edge length of the contact scenes' cloths (m): 3 cm, 30 times the thickness.
pub const CONTACT_EDGE: f32 = 0.03;

/// Distance the triangle contacts keep (m).
pub const CONTACT_THICKNESS: f32 = 0.001;

/// Vertical gap between two `layers` cloths at the start (m).
pub const LAYER_GAP: f32 = 0.004;

/// Height of the lowest `layers` cloth above the sphere's top at the start (m).
pub const LAYER_DROP: f32 = 0.05;

/// Radius of the `layers` sphere (m), resting on the ground.
pub const LAYER_SPHERE: f32 = 0.3;

/// When the `layers` sphere starts to turn (s) and its turning speed about the vertical
/// axis (rad/s); it turns for [`TWIST_TIME`].
pub const TWIST_START: f32 = 1.5;
/// See [`TWIST_START`].
pub const TWIST_SPEED: f32 = 0.5;
/// See [`TWIST_START`].
pub const TWIST_TIME: f32 = 10.0;

/// Time one `fold` fold takes (s), and the time the cloth is left to settle after each.
pub const FOLD_TIME: f32 = 2.0;
/// See [`FOLD_TIME`].
pub const FOLD_SETTLE: f32 = 0.5;

/// How far above the top of the cloth the `fold` axis runs (m): the folded part lands twice
/// this above the stack it folds onto.
pub const FOLD_LIFT: f32 = 0.003;

/// The triangle contact settings of the contact scenes: [`CONTACT_THICKNESS`], the defaults
/// otherwise.
pub fn contact_settings() -> TriangleContactSettings {
    TriangleContactSettings {
        thickness: CONTACT_THICKNESS,
        ..TriangleContactSettings::default()
    }
}

/// A contact scene: its world and the script that moves its sphere or pins.
pub struct ContactScene {
    /// The world (triangle contacts on).
    pub world: World,
    /// What moves the sphere or the pins.
    pub script: ContactScript,
}

/// What moves a contact scene's sphere or pins between steps
/// ([`ContactScript::before_step`]).
pub struct ContactScript {
    /// The scene's time (s) at the start of the next step.
    pub time: f32,
    script: Script,
}

enum Script {
    Layers {
        sphere: BodyHandle,
        /// The sphere's vertices at rest (world frame).
        rest: Vec<Vec3>,
    },
    Fold {
        cloth: BodyHandle,
        mass: f32,
        /// The fold under way: its index, and the pinned particles with their positions when
        /// it started.
        current: Option<(usize, Vec<(u32, Vec3)>, Fold)>,
    },
}

/// One fold: the cloth's part below `at` along `axis` turns over the line `y = height`,
/// `axis · x = at`, onto the rest.
#[derive(Clone, Copy)]
struct Fold {
    axis: Vec3,
    at: f32,
    height: f32,
}

/// The fold directions of `fold`: over +x, over +z, over +x again.
const FOLDS: [Vec3; 3] = [Vec3::X, Vec3::Z, Vec3::X];

/// An `n` x `n` cloth of [`CONTACT_EDGE`] edges, 1 kg, flat at height `y`, centred on
/// `(cx, cz)`, on the ground (friction 0.5).
fn sheet(n: usize, y: f32, cx: f32, cz: f32) -> Result<solver_core::Body> {
    let half = 0.5 * CONTACT_EDGE * (n - 1) as f32;
    let mut pos = Vec::with_capacity(n * n);
    for j in 0..n {
        for i in 0..n {
            pos.push(Vec3::new(
                cx - half + i as f32 * CONTACT_EDGE,
                y,
                cz - half + j as f32 * CONTACT_EDGE,
            ));
        }
    }
    let mut body = grid_body(Particles::new(&pos, &vec![1.0 / (n * n) as f32; n * n])?, n)?;
    body.add_collider(Collider::ground(0.5, 0.0))?;
    Ok(body)
}

/// The `layers` world: `layers` cloths of `n` x `n` vertices ([`CONTACT_EDGE`] edges, 1 kg
/// each), flat, [`LAYER_GAP`] apart, each shifted by (7, 11) mm in x and z from the one
/// below so that no vertex lies over another, the lowest [`LAYER_DROP`] above the top of a
/// sphere of radius [`LAYER_SPHERE`] resting on the ground; the sphere is a body of pinned
/// particles (an icosphere of 3 subdivisions) that the script turns about the vertical axis
/// at [`TWIST_SPEED`] from [`TWIST_START`] for [`TWIST_TIME`], so that friction twists the
/// cloths. Triangle contacts at [`CONTACT_THICKNESS`].
pub fn layers(layers: usize, n: usize) -> Result<ContactScene> {
    check_n("layers n", n)?;
    check_size("layers", layers, 1, MAX_LAYERS, "needs at least one cloth")?;
    let mut world = World::new();
    let centre = Vec3::new(0.0, LAYER_SPHERE, 0.0);
    let mesh = icosphere(centre, LAYER_SPHERE, 3)?;
    let mut sphere = body_from_trimesh(&mesh, 1.0, 0.0)?;
    for i in 0..sphere.len() {
        sphere.attach(i as u32)?;
    }
    let rest = mesh.positions.clone();
    let sphere = world.add_body(sphere, None)?;
    for k in 0..layers {
        let y = 2.0 * LAYER_SPHERE + LAYER_DROP + k as f32 * LAYER_GAP;
        let body = sheet(n, y, 0.007 * k as f32, 0.011 * k as f32)?;
        world.add_body(body, None)?;
    }
    world.set_triangle_contacts(Some(contact_settings()))?;
    Ok(ContactScene {
        world,
        script: ContactScript {
            time: 0.0,
            script: Script::Layers { sphere, rest },
        },
    })
}

/// The `fold` world: one `n` x `n` cloth ([`CONTACT_EDGE`] edges, 1 kg) lying flat on the
/// ground, folded onto itself three times (over +x, over +z, over +x), each fold by pinning
/// the particles of the part that turns (those more than 1.5 edges before the fold line
/// through the middle of the cloth's extent) and turning them over the line [`FOLD_LIFT`]
/// above the cloth's top in [`FOLD_TIME`], then releasing them for [`FOLD_SETTLE`]; after the
/// third fold the cloth (8 layers) is left free. Triangle contacts at [`CONTACT_THICKNESS`].
pub fn fold(n: usize) -> Result<ContactScene> {
    check_n("fold n", n)?;
    let mut world = World::new();
    let body = sheet(n, 0.0005, 0.0, 0.0)?;
    let cloth = world.add_body(body, None)?;
    world.set_triangle_contacts(Some(contact_settings()))?;
    Ok(ContactScene {
        world,
        script: ContactScript {
            time: 0.0,
            script: Script::Fold {
                cloth,
                mass: 1.0 / (n * n) as f32,
                current: None,
            },
        },
    })
}

/// The time `fold` takes to fold three times and settle (s).
pub const FOLD_SCENE_TIME: f32 = 3.0 * (FOLD_TIME + FOLD_SETTLE);

impl ContactScene {
    /// [`ContactScript::before_step`] on the scene's world.
    pub fn before_step(&mut self, dt: f32) -> Result<()> {
        self.script.before_step(&mut self.world, dt)
    }
}

impl ContactScript {
    /// Moves the sphere or the pins of `world` (the scene's) to where they must be at the end
    /// of a step of `dt`, and advances the scene's time.
    pub fn before_step(&mut self, world: &mut World, dt: f32) -> Result<()> {
        let (t0, t1) = (self.time, self.time + dt);
        self.time = t1;
        match &mut self.script {
            Script::Layers { sphere, rest } => {
                let angle = |t: f32| TWIST_SPEED * (t - TWIST_START).clamp(0.0, TWIST_TIME);
                if angle(t1) == angle(t0) {
                    return Ok(());
                }
                let turn = Quat::from_rotation_y(angle(t1));
                let body = world
                    .body_mut(*sphere)
                    .expect("the sphere is in the world")
                    .body_mut();
                for (a, p) in rest.iter().enumerate() {
                    body.move_attachment(a, turn * *p)?;
                }
                Ok(())
            }
            Script::Fold {
                cloth,
                mass,
                current,
            } => {
                let period = FOLD_TIME + FOLD_SETTLE;
                let k = (t0 / period) as usize;
                let into = t0 - k as f32 * period;
                let body = world
                    .body_mut(*cloth)
                    .expect("the cloth is in the world")
                    .body_mut();
                // Release the pins of a fold whose time is over.
                if let Some((fk, pins, _)) = current {
                    if *fk != k || into >= FOLD_TIME {
                        for _ in 0..pins.len() {
                            body.release_attachment(0, *mass)?;
                        }
                        *current = None;
                    }
                }
                if k >= FOLDS.len() || into >= FOLD_TIME {
                    return Ok(());
                }
                if current.is_none() {
                    let axis = FOLDS[k];
                    let x: Vec<Vec3> = (0..body.len())
                        .map(|i| body.particles().position(i))
                        .collect();
                    let along = x.iter().map(|p| p.dot(axis));
                    let (lo, hi) = along.fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), a| {
                        (lo.min(a), hi.max(a))
                    });
                    let top = x.iter().map(|p| p.y).fold(f32::NEG_INFINITY, f32::max);
                    let fold = Fold {
                        axis,
                        at: 0.5 * (lo + hi),
                        height: top + FOLD_LIFT,
                    };
                    let mut pins = Vec::new();
                    for (i, p) in x.iter().enumerate() {
                        if p.dot(axis) < fold.at - 1.5 * CONTACT_EDGE {
                            body.attach(i as u32)?;
                            pins.push((i as u32, *p));
                        }
                    }
                    *current = Some((k, pins, fold));
                }
                let (_, pins, fold) = current.as_ref().expect("a fold under way");
                let theta = std::f32::consts::PI * ((t1 - k as f32 * period) / FOLD_TIME).min(1.0);
                for (a, &(_, p)) in pins.iter().enumerate() {
                    body.move_attachment(a, fold.turned(p, theta))?;
                }
                Ok(())
            }
        }
    }
}

impl Fold {
    /// `p` turned by `theta` about the fold line (toward +axis over the top).
    fn turned(&self, p: Vec3, theta: f32) -> Vec3 {
        let u = p.dot(self.axis) - self.at;
        let v = p.y - self.height;
        let (s, c) = theta.sin_cos();
        // (u, v) rotated by -theta in the (axis, y) plane: u = -ρ goes up then over to +ρ.
        let (u2, v2) = (u * c + v * s, -u * s + v * c);
        p + self.axis * (u2 - u) + Vec3::Y * (v2 - v)
    }
}

//! The `character` scene of docs/SCENES.md: clothing on an animated character. A procedurally
//! animated skeleton (pelvis, torso, two arms, two legs) wears a cape skinned to its torso and
//! a skirt skinned to its pelvis, both one body of solver-core's skinned cloth; capsules on the
//! joints are its body proxy, kinematic colliders moved with the skeleton every frame. The
//! script swings the arms and legs, turns the character in place, and teleports it 3 m every
//! 4 s (a hard skin: every vertex put on the skin, at rest).

use solver_core::build::body_from_trimesh;
use solver_core::collide::{Collider, Shape};
use solver_core::constraints::SkinConstraints;
use solver_core::error::{check_size, Result};
use solver_core::glam::{Mat4, Quat, Vec3};
use solver_core::mesh::TriMesh;
use solver_core::skin::{Skin, SkinDesc, SkinningMethod};
use solver_core::{Body, SkinnedVertex};

/// Joints of the skeleton, in this order.
pub const JOINTS: [&str; 6] = [
    "pelvis",
    "torso",
    "left arm",
    "right arm",
    "left leg",
    "right leg",
];

/// Seconds between two teleports of the script.
pub const TELEPORT_EVERY_S: f32 = 4.0;
/// How far each teleport moves the character along x (m).
pub const TELEPORT_M: f32 = 3.0;
/// The contact margin the scene is stepped with (m): its colliders move, and a particle the
/// proxy's push drags in from beyond a 5 mm margin would not be a contact of that substep.
pub const CONTACT_MARGIN: f32 = 0.02;
/// The tolerance of the scene's figures (m): a vertex beyond its max distance, inside its
/// back stop or inside a proxy by more than this counts.
pub const TOLERANCE: f32 = 1e-3;

/// A proxy capsule: the joint it rides on, its ends in the joint's frame, its radius.
#[derive(Clone, Copy, Debug)]
pub struct Proxy {
    /// The joint.
    pub joint: usize,
    /// One end, in the joint's frame.
    pub a: Vec3,
    /// The other end.
    pub b: Vec3,
    /// Radius (m).
    pub radius: f32,
}

/// The body proxy: hips, torso, arms and legs.
pub const PROXIES: [Proxy; 6] = [
    Proxy {
        joint: 0,
        a: Vec3::new(-0.06, 0.0, 0.0),
        b: Vec3::new(0.06, 0.0, 0.0),
        radius: 0.12,
    },
    Proxy {
        joint: 1,
        a: Vec3::new(0.0, 0.0, 0.0),
        b: Vec3::new(0.0, 0.4, 0.0),
        radius: 0.16,
    },
    Proxy {
        joint: 2,
        a: Vec3::ZERO,
        b: Vec3::new(0.0, -0.55, 0.0),
        radius: 0.05,
    },
    Proxy {
        joint: 3,
        a: Vec3::ZERO,
        b: Vec3::new(0.0, -0.55, 0.0),
        radius: 0.05,
    },
    Proxy {
        joint: 4,
        a: Vec3::ZERO,
        b: Vec3::new(0.0, -0.9, 0.0),
        radius: 0.07,
    },
    Proxy {
        joint: 5,
        a: Vec3::ZERO,
        b: Vec3::new(0.0, -0.9, 0.0),
        radius: 0.07,
    },
];

/// The skeleton's joint matrices (world) at time `t` seconds of the script.
#[must_use]
pub fn pose(t: f32) -> [Mat4; 6] {
    let teleports = (t / TELEPORT_EVERY_S).floor();
    // Turn in place: a quarter turn between 1.5 s and 2.5 s of every teleport period.
    let local = t - teleports * TELEPORT_EVERY_S;
    let turn = std::f32::consts::FRAC_PI_2 * ((local - 1.5).clamp(0.0, 1.0) + teleports);
    let root = Mat4::from_rotation_translation(
        Quat::from_rotation_y(turn),
        Vec3::new(TELEPORT_M * teleports, 1.0, 0.0),
    );
    let swing = (2.0 * std::f32::consts::PI * 1.2 * t).sin();
    let torso = root
        * Mat4::from_rotation_translation(
            Quat::from_rotation_z(0.05 * swing),
            Vec3::new(0.0, 0.3, 0.0),
        );
    let limb = |parent: Mat4, at: Vec3, angle: f32| {
        parent * Mat4::from_rotation_translation(Quat::from_rotation_x(angle), at)
    };
    [
        root,
        torso,
        limb(torso, Vec3::new(-0.24, 0.42, 0.0), 0.6 * swing),
        limb(torso, Vec3::new(0.24, 0.42, 0.0), -0.6 * swing),
        limb(root, Vec3::new(-0.1, 0.0, 0.0), -0.4 * swing),
        limb(root, Vec3::new(0.1, 0.0, 0.0), 0.4 * swing),
    ]
}

/// The skeleton at rest (no swing, no turn, at the origin's column): the bind pose.
fn bind_pose() -> [Mat4; 6] {
    let root = Mat4::from_translation(Vec3::new(0.0, 1.0, 0.0));
    let torso = root * Mat4::from_translation(Vec3::new(0.0, 0.3, 0.0));
    [
        root,
        torso,
        torso * Mat4::from_translation(Vec3::new(-0.24, 0.42, 0.0)),
        torso * Mat4::from_translation(Vec3::new(0.24, 0.42, 0.0)),
        root * Mat4::from_translation(Vec3::new(-0.1, 0.0, 0.0)),
        root * Mat4::from_translation(Vec3::new(0.1, 0.0, 0.0)),
    ]
}

/// A garment's grid: `cols` x `rows` vertices at `at(i, j)`, the columns wrapped into a ring
/// when `ring`; triangles wound so that their normals point along `outward(p)`.
fn garment(
    cols: usize,
    rows: usize,
    ring: bool,
    at: impl Fn(usize, usize) -> Vec3,
    outward: impl Fn(Vec3) -> Vec3,
    mesh: &mut TriMesh,
) {
    let base = mesh.positions.len() as u32;
    for j in 0..rows {
        for i in 0..cols {
            mesh.positions.push(at(i, j));
        }
    }
    let v = |i: usize, j: usize| base + (j * cols + i % cols) as u32;
    let quads = if ring { cols } else { cols - 1 };
    let start = mesh.triangles.len();
    for j in 0..rows - 1 {
        for i in 0..quads {
            mesh.triangles.push([v(i, j), v(i + 1, j + 1), v(i + 1, j)]);
            mesh.triangles.push([v(i, j), v(i, j + 1), v(i + 1, j + 1)]);
        }
    }
    // Wind every triangle outward.
    let p = &mesh.positions;
    for t in &mut mesh.triangles[start..] {
        let [a, b, c] = t.map(|k| p[k as usize]);
        if (b - a).cross(c - a).dot(outward((a + b + c) / 3.0)) < 0.0 {
            t.swap(1, 2);
        }
    }
}

/// The scene: the skinned clothing, its skin, and where each garment's rows start.
pub struct Character {
    /// The cape (first) and the skirt, one body, with the proxy capsules as colliders.
    pub body: Body,
    /// The skin binding the clothing to the skeleton.
    pub skin: Skin,
    /// Particles of the cape (the skirt's follow).
    pub cape_particles: usize,
    /// Frames stepped so far.
    frame: usize,
    /// The teleport period the last frame was in.
    period: i64,
}

/// What `wobble step --json` reports for the scene after its last step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CharacterFigures {
    /// Skinned vertices farther than their max distance from the skin (beyond [`TOLERANCE`]).
    pub skin_max_distance_violations: usize,
    /// Skinned vertices inside their back stop sphere (beyond [`TOLERANCE`]).
    pub skin_backstop_violations: usize,
    /// Vertices inside a proxy capsule (beyond [`TOLERANCE`]).
    pub proxy_penetrations: usize,
}

impl Character {
    /// The character with a cape of `n` x `n` vertices and a skirt of `2n` x `n/2` (n >= 4),
    /// hard-skinned to the script's first frame.
    pub fn new(n: usize) -> Result<Character> {
        check_size(
            "character cloth n",
            n,
            4,
            256,
            "is below the smallest size (4)",
        )?;
        let mut mesh = TriMesh::default();
        // The cape: 0.3 m wide (clear of the arms as the torso sways), from the shoulders (y = 1.72) down to y = 0.9, 0.21 m behind the
        // torso's axis, normals out of the back.
        garment(
            n,
            n,
            false,
            |i, j| {
                let u = i as f32 / (n - 1) as f32;
                let v = j as f32 / (n - 1) as f32;
                Vec3::new(-0.15 + 0.3 * u, 1.72 - 0.82 * v, -0.21 - 0.02 * v)
            },
            |_| Vec3::NEG_Z,
            &mut mesh,
        );
        let cape = mesh.positions.len();
        // The skirt: a ring around the hips from y = 1.02 down to y = 0.55, widening from
        // 0.2 m to 0.3 m, normals outward.
        let (cols, rows) = (2 * n, (n / 2).max(3));
        garment(
            cols,
            rows,
            true,
            |i, j| {
                let a = 2.0 * std::f32::consts::PI * i as f32 / cols as f32;
                let v = j as f32 / (rows - 1) as f32;
                let r = 0.2 + 0.1 * v;
                Vec3::new(r * a.cos(), 1.02 - 0.47 * v, r * a.sin())
            },
            |p| Vec3::new(p.x, 0.0, p.z),
            &mut mesh,
        );
        let total = mesh.positions.len();
        let mut body = body_from_trimesh(&mesh, 1.0, 0.0)?;
        let bind = bind_pose();
        let mut joints = vec![[0u16; 4]; total];
        let mut vertices = Vec::with_capacity(total);
        for (k, j) in joints.iter_mut().enumerate() {
            let (joint, row, rows) = if k < cape {
                (1, k / n, n)
            } else {
                (0, (k - cape) / cols, rows)
            };
            *j = [joint, 0, 0, 0];
            let v = row as f32 / (rows - 1) as f32;
            let max = if row == 0 { 0.0 } else { 0.05 + 0.45 * v };
            vertices.push(SkinnedVertex::within(k as u32, max).with_backstop(0.01, 0.3));
        }
        let desc = SkinDesc {
            inverse_bind: bind.iter().map(|m| m.inverse()).collect(),
            joints,
            weights: vec![[1.0, 0.0, 0.0, 0.0]; total],
            method: SkinningMethod::DualQuaternion,
            ..Default::default()
        };
        let mut skin = Skin::new(&mut body, desc, &vertices)?;
        let at0 = pose(0.0);
        for p in PROXIES {
            body.add_collider(
                Collider::capsule(
                    at0[p.joint].transform_point3(p.a),
                    at0[p.joint].transform_point3(p.b),
                    p.radius,
                )?
                .with_friction(0.3)?,
            )?;
        }
        skin.hard_skin(&mut body, &at0)?;
        Ok(Character {
            body,
            skin,
            cape_particles: cape,
            frame: 0,
            period: 0,
        })
    }

    /// Poses the skeleton at the end of the next frame of `dt` seconds and moves the proxy
    /// there; a frame that crosses a teleport hard-skins the clothing and puts the proxy there
    /// at once. Call before each step.
    pub fn animate(&mut self, dt: f32) -> Result<()> {
        self.frame += 1;
        let t = self.frame as f32 * dt;
        let joints = pose(t);
        let period = (t / TELEPORT_EVERY_S).floor() as i64;
        let teleport = period != self.period;
        self.period = period;
        for (k, p) in PROXIES.iter().enumerate() {
            let shape = Shape::Capsule {
                a: joints[p.joint].transform_point3(p.a),
                b: joints[p.joint].transform_point3(p.b),
                radius: p.radius,
            };
            if teleport {
                self.body.colliders_mut()[k].shape = shape;
                self.body.colliders_mut()[k].motion = None;
            } else {
                self.body.move_collider(k, shape)?;
            }
        }
        if teleport {
            self.skin.hard_skin(&mut self.body, &joints)
        } else {
            self.skin.pose(&mut self.body, &joints)
        }
    }

    /// The scene's figures now (after a step).
    #[must_use]
    pub fn figures(&self) -> CharacterFigures {
        let mut f = CharacterFigures::default();
        let table = self
            .body
            .constraints()
            .kinds()
            .find_map(|k| k.as_any().downcast_ref::<SkinConstraints>());
        if let Some(t) = table {
            for (row, &p) in t.particles_skinned().iter().enumerate() {
                let (over, inside) = t.violations(row, self.body.particles().x()[p as usize].xyz());
                f.skin_max_distance_violations += (over > TOLERANCE) as usize;
                f.skin_backstop_violations += (inside > TOLERANCE) as usize;
            }
        }
        for x in self.body.particles().x() {
            let inside = self
                .body
                .colliders()
                .iter()
                .any(|c| c.shape.signed_distance(x.xyz()).0 < -TOLERANCE);
            f.proxy_penetrations += inside as usize;
        }
        f
    }
}

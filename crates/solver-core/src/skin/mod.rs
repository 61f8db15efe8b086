//! Skinning: clothing on an animated character. The cloth mesh is skinned to the character's
//! skeleton like any other mesh, and its simulated vertices are held near their skinned
//! positions by the skinned constraints ([`crate::constraints::skinned`]).
//!
//! # Theory
//!
//! A skeleton of `J` joints gives, every frame, each joint's matrix `M_j` (its pose in the
//! frame the game animates in); the mesh was bound to it in a bind pose, in which joint `j`
//! had the matrix whose inverse is `B_j` (the inverse bind matrix, as glTF stores it). A
//! vertex with bind position `p` and up to four joints `j_k` with weights `w_k` (`Σ w_k = 1`)
//! is skinned by
//!
//! - *linear blend skinning* (LBS): `s = Σ w_k (M_{j_k} B_{j_k}) p`, the weighted mean of the
//!   positions each joint alone would give: cheap, exact for one joint, but a blend of two
//!   rotations is not a rotation, so a twisted joint shrinks (the "candy wrapper");
//! - *dual-quaternion skinning* (DQS, Kavan et al. 2007): each skinning matrix
//!   `M_j B_j` written as a unit dual quaternion `q_j = r_j + ε ½ t_j r_j`, blended
//!   `q = Σ w_k σ_k q_{j_k}` with `σ_k = ±1` so that every rotation part lies in the
//!   hemisphere of the first one, normalised by `|r|`, and applied as a rigid motion: the blend
//!   of rigid motions is rigid, so volume is kept at twisting joints. It needs rigid skinning
//!   matrices (rotation and translation): a matrix with scale or shear is refused.
//!
//! The skinned normal of a vertex is the normalised sum of the doubled-area normals of the
//! skinned triangles around it (the body's triangles, their winding deciding which side is
//! out: a cape must be wound so that its normals point away from the body, for its back stops
//! to lie inside the body).
//!
//! The work is per vertex and independent between vertices: the joints' skinning matrices (or
//! dual quaternions) are formed once per frame, then one pass over the vertices, stored as
//! structures of arrays (joints, weights and bind positions each in its own array).
//!
//! # A frame
//!
//! The game calls [`Skin::pose`] with the frame's joint matrices, then steps the body: the
//! skinned positions become the targets at the end of the step, interpolated across its
//! substeps from the previous frame's. [`Skin::hard_skin`] puts every particle on its skinned
//! position with zero velocity (a spawn, or a skeleton that teleported: interpolating across
//! a teleport would drag the cloth through the world at the teleport's speed). Skinned
//! positions and normals can be read back ([`Skin::skinned`], [`Skin::normals`]).
//!
//! Joint matrices are given relative to a frame origin in `f64` (`Skin::pose_in`; `pose`
//! uses the world's origin), so a character kilometres out keeps the precision of one at the
//! origin: the skinned positions are computed in that frame and moved into the body's frame
//! in `f64` (see [`crate::body`]).

use crate::body::Body;
use crate::constraints::{SkinConstraints, SkinnedVertex};
use crate::error::{check_finite, check_index, Result, WobbleError};
use glam::{DVec3, Mat4, Quat, Vec3};

/// How skinned positions are formed from the joints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SkinningMethod {
    /// Linear blend skinning: the weighted mean of the joints' transforms.
    #[default]
    Linear,
    /// Dual-quaternion skinning: the blend of the joints' rigid motions (rigid joints only).
    DualQuaternion,
}

/// What a skin is made of: the skeleton's inverse bind matrices and each particle's joints
/// and weights (up to four; unused slots have weight 0).
#[derive(Clone, Debug, Default)]
pub struct SkinDesc {
    /// Inverse bind matrix of each joint, in the frame the joint matrices are given in.
    pub inverse_bind: Vec<Mat4>,
    /// The joints of each particle (one entry per particle of the body).
    pub joints: Vec<[u16; 4]>,
    /// The weights of those joints (finite, >= 0, not all 0; normalised to sum 1).
    pub weights: Vec<[f32; 4]>,
    /// LBS or DQS.
    pub method: SkinningMethod,
    /// Where the bind pose's (and the joint matrices') zero is in the world; the body's
    /// positions when the skin is made are its bind pose.
    pub frame_origin: DVec3,
}

/// A rigid motion as a unit dual quaternion: rotation `real`, translation `2 dual real*`.
#[derive(Clone, Copy, Debug)]
struct DualQuat {
    real: Quat,
    dual: Quat,
}

impl DualQuat {
    /// Of a rigid matrix, or `None` if it has scale or shear (beyond 1e-3).
    fn of(m: Mat4) -> Option<DualQuat> {
        let (scale, real, t) = m.to_scale_rotation_translation();
        let rebuilt = Mat4::from_rotation_translation(real, t);
        let rigid = (scale - Vec3::ONE).abs().max_element() <= 1e-3
            && rebuilt.abs_diff_eq(m, 1e-3 * (1.0 + t.length()));
        let dual = Quat::from_xyzw(t.x, t.y, t.z, 0.0) * real * 0.5;
        rigid.then_some(DualQuat { real, dual })
    }
}

/// A skin: binds the particles of one body to a skeleton and holds its skinned constraints'
/// settings. One per body.
#[derive(Clone, Debug)]
pub struct Skin {
    inverse_bind: Vec<Mat4>,
    joints: Vec<[u16; 4]>,
    weights: Vec<[f32; 4]>,
    bind: Vec<Vec3>,
    method: SkinningMethod,
    frame_origin: DVec3,
    triangles: Vec<[u32; 3]>,
    /// Per joint, this frame: `M_j B_j` (LBS) or its dual quaternion (DQS).
    matrices: Vec<Mat4>,
    dual: Vec<DualQuat>,
    skinned: Vec<Vec3>,
    normals: Vec<Vec3>,
    local: Vec<Vec3>,
}

/// Normalised weights of one particle, or why they are refused.
fn normalised(w: [f32; 4]) -> Option<[f32; 4]> {
    let sum: f32 = w.iter().sum();
    (w.iter().all(|x| x.is_finite() && *x >= 0.0) && sum > 0.0 && sum.is_finite())
        .then(|| w.map(|x| x / sum))
}

impl Skin {
    /// Binds `body` (in its bind pose now) to a skeleton as `desc` describes, and gives it the
    /// skinned constraints of `vertices` (the particles not listed are skinned, for the normals
    /// and the read-back, but not held). Refuses a joint or weight table whose length is not
    /// the particle count, a joint index past the inverse bind matrices, weights that are
    /// negative, not finite or all zero, a non-finite matrix, a body that has a skin already,
    /// and the constraint settings [`SkinConstraints::new`] refuses.
    pub fn new(body: &mut Body, desc: SkinDesc, vertices: &[SkinnedVertex]) -> Result<Skin> {
        let n = body.len();
        for (what, len) in [
            ("skin joint table", desc.joints.len()),
            ("skin weight table", desc.weights.len()),
        ] {
            if len != n {
                return Err(WobbleError::BadCount {
                    name: what,
                    value: len as u64,
                    max: n as u64,
                });
            }
        }
        if body
            .constraints()
            .position_of::<SkinConstraints>()
            .is_some()
        {
            return Err(WobbleError::Unsupported(
                "a second skin on one body: a body has one skin".into(),
            ));
        }
        for (j, m) in desc.inverse_bind.iter().enumerate() {
            check_finite("inverse bind matrix", j, m.to_cols_array().iter().sum())?;
        }
        let mut weights = Vec::with_capacity(n);
        for (i, (js, w)) in desc.joints.iter().zip(&desc.weights).enumerate() {
            for (k, &j) in js.iter().enumerate() {
                if w[k] != 0.0 {
                    check_index(
                        "skinned particle joint",
                        i,
                        j as usize,
                        desc.inverse_bind.len(),
                    )?;
                }
            }
            weights.push(normalised(*w).ok_or(WobbleError::BadParameter {
                name: "skin weights of a particle",
                value: w.iter().sum::<f32>() as f64,
                reason: "must be finite and >= 0 with a positive sum",
            })?);
        }
        let bind: Vec<Vec3> = (0..n)
            .map(|i| (body.world_position(i) - desc.frame_origin).as_vec3())
            .collect();
        let mut skin = Skin {
            inverse_bind: desc.inverse_bind,
            joints: desc.joints,
            weights,
            bind,
            method: desc.method,
            frame_origin: desc.frame_origin,
            triangles: body.topology().triangles.clone(),
            matrices: Vec::new(),
            dual: Vec::new(),
            skinned: Vec::new(),
            normals: Vec::new(),
            local: Vec::new(),
        };
        skin.skinned = skin.bind.clone();
        skin.normals = skin.normals_of_skinned();
        skin.place_in_body_frame(body);
        let table = SkinConstraints::new(vertices, n, &skin.local, &skin.normals)?;
        body.constraints_mut().push_kind(Box::new(table));
        Ok(skin)
    }

    /// The method.
    #[must_use]
    pub fn method(&self) -> SkinningMethod {
        self.method
    }

    /// Skins the mesh with this frame's joint matrices (`joints[j]`, relative to the skin's
    /// frame origin) and makes the skinned positions the targets at the end of the body's
    /// next step. Refuses a wrong joint count and non-finite matrices; with DQS, a matrix
    /// that is not rigid.
    pub fn pose(&mut self, body: &mut Body, joints: &[Mat4]) -> Result<()> {
        self.pose_with(body, joints, false)
    }

    /// As [`Skin::pose`], with the joint matrices relative to `frame_origin` (which becomes
    /// the skin's): a character far from the world's origin.
    pub fn pose_in(&mut self, body: &mut Body, joints: &[Mat4], frame_origin: DVec3) -> Result<()> {
        check_finite(
            "skin frame origin",
            0,
            (frame_origin.x + frame_origin.y + frame_origin.z) as f32,
        )?;
        self.frame_origin = frame_origin;
        self.pose_with(body, joints, false)
    }

    /// Skins the mesh with `joints` and puts every particle on its skinned position, at rest
    /// (its previous position the same, its velocity zero), with no interpolation from the
    /// last frame: a spawn, or a skeleton that teleported.
    pub fn hard_skin(&mut self, body: &mut Body, joints: &[Mat4]) -> Result<()> {
        self.pose_with(body, joints, true)?;
        let p = &mut body.particles;
        for (i, &s) in self.local.iter().enumerate() {
            p.x[i].set_xyz(s);
            p.x_prev[i].set_xyz(s);
            p.v[i].set_xyz(Vec3::ZERO);
        }
        Ok(())
    }

    /// Scales every max distance by `m` (0: every skinned vertex follows the animation).
    pub fn set_max_distance_multiplier(&self, body: &mut Body, m: f32) -> Result<()> {
        table_mut(body)?.set_max_distance_multiplier(m)
    }

    /// The skinned positions of the last pose, relative to the skin's frame origin.
    #[must_use]
    pub fn skinned(&self) -> &[Vec3] {
        &self.skinned
    }

    /// The skinned normals of the last pose (zero where a particle is on no triangle of
    /// non-zero area).
    #[must_use]
    pub fn normals(&self) -> &[Vec3] {
        &self.normals
    }

    fn pose_with(&mut self, body: &mut Body, joints: &[Mat4], jump: bool) -> Result<()> {
        if joints.len() != self.inverse_bind.len() {
            return Err(WobbleError::BadCount {
                name: "joint matrices of a pose",
                value: joints.len() as u64,
                max: self.inverse_bind.len() as u64,
            });
        }
        if body.len() != self.bind.len() {
            return Err(WobbleError::UnsuitableBody {
                what: "a skin's pose",
                needs: "the body the skin was made for (its particle count changed)",
            });
        }
        for (j, m) in joints.iter().enumerate() {
            check_finite("joint matrix", j, m.to_cols_array().iter().sum())?;
        }
        self.matrices.clear();
        self.matrices
            .extend(joints.iter().zip(&self.inverse_bind).map(|(m, b)| *m * *b));
        match self.method {
            SkinningMethod::Linear => self.skin_linear(),
            SkinningMethod::DualQuaternion => {
                self.dual.clear();
                for (j, m) in self.matrices.iter().enumerate() {
                    let q = DualQuat::of(*m).ok_or(WobbleError::BadParameter {
                        name: "skinning matrix of a joint (joint matrix x inverse bind)",
                        value: j as f64,
                        reason: "dual-quaternion skinning needs rigid joints (rotation and translation, no scale or shear); the value is the joint",
                    })?;
                    self.dual.push(q);
                }
                self.skin_dual();
            }
        }
        if let Some(i) = self.skinned.iter().position(|s| !s.is_finite()) {
            return Err(WobbleError::NonFinite {
                what: "skinned position",
                index: i,
                value: self.skinned[i].x + self.skinned[i].y + self.skinned[i].z,
            });
        }
        self.normals = self.normals_of_skinned();
        self.place_in_body_frame(body);
        table_mut(body)?.set_targets(&self.local, &self.normals, jump);
        Ok(())
    }

    /// LBS of every particle into `skinned`.
    fn skin_linear(&mut self) {
        let m = &self.matrices;
        self.skinned.clear();
        self.skinned
            .extend(
                self.joints
                    .iter()
                    .zip(&self.weights)
                    .zip(&self.bind)
                    .map(|((js, w), &p)| {
                        let mut s = Vec3::ZERO;
                        for k in 0..4 {
                            if w[k] != 0.0 {
                                s += w[k] * m[js[k] as usize].transform_point3(p);
                            }
                        }
                        s
                    }),
            );
    }

    /// DQS of every particle into `skinned`.
    fn skin_dual(&mut self) {
        let q = &self.dual;
        self.skinned.clear();
        self.skinned
            .extend(
                self.joints
                    .iter()
                    .zip(&self.weights)
                    .zip(&self.bind)
                    .map(|((js, w), &p)| {
                        let first = (0..4).find(|&k| w[k] != 0.0).unwrap_or(0);
                        let pivot = q[js[first] as usize].real;
                        let (mut real, mut dual) = (zero_quat(), zero_quat());
                        for k in 0..4 {
                            if w[k] != 0.0 {
                                let d = q[js[k] as usize];
                                let sign = if d.real.dot(pivot) < 0.0 { -w[k] } else { w[k] };
                                real += d.real * sign;
                                dual += d.dual * sign;
                            }
                        }
                        let len = real.length();
                        let (real, dual) = (real / len, dual / len);
                        // Translation of the normalised blend: the vector part of 2 dual real* (its
                        // scalar part, non-zero where the blend's dual is not orthogonal to its real
                        // part, is no translation and is dropped).
                        let t = (dual * real.conjugate()) * 2.0;
                        real * p + Vec3::new(t.x, t.y, t.z)
                    }),
            );
    }

    /// Area-weighted normals of the skinned triangles.
    fn normals_of_skinned(&self) -> Vec<Vec3> {
        let mut n = vec![Vec3::ZERO; self.skinned.len()];
        for t in &self.triangles {
            let [a, b, c] = t.map(|v| self.skinned[v as usize]);
            let face = (b - a).cross(c - a);
            for &v in t {
                n[v as usize] += face;
            }
        }
        n.iter_mut().for_each(|v| *v = v.normalize_or_zero());
        n
    }

    /// The skinned positions in the body's frame, into `local`.
    fn place_in_body_frame(&mut self, body: &Body) {
        let shift = self.frame_origin - body.origin();
        self.local.clear();
        self.local.extend(
            self.skinned
                .iter()
                .map(|s| (s.as_dvec3() + shift).as_vec3()),
        );
    }
}

fn zero_quat() -> Quat {
    Quat::from_xyzw(0.0, 0.0, 0.0, 0.0)
}

/// The body's skinned-constraint table.
fn table_mut(body: &mut Body) -> Result<&mut SkinConstraints> {
    let k =
        body.constraints()
            .position_of::<SkinConstraints>()
            .ok_or(WobbleError::UnsuitableBody {
                what: "a skin's pose",
                needs: "the skinned-constraint table its skin added (it was removed)",
            })?;
    // The targets are values, not structure: no solver prepares for them, so the change is
    // not recorded as a topology change.
    Ok(body.constraints.extra[k]
        .as_any_mut()
        .downcast_mut()
        .expect("position_of found this type"))
}

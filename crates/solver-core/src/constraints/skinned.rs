//! Skinned constraints: each simulated vertex of a skinned body (clothing on a character) is
//! held near its skinned position `s`, the position the character's animation gives it.
//!
//! # Theory
//!
//! Two unilateral constraints per vertex, projected by the step loop once per iteration after
//! the solver's sweep (so every solver gets them), max distance first:
//!
//! - *max distance*: `C = |x - s| - m d ≤ 0`, `d` the vertex's max distance and `m` the
//!   body's multiplier (1 by default; 0 makes every skinned vertex kinematic). The projection
//!   moves `x` onto the sphere of radius `m d` about `s`; at `m d = 0` it puts `x` on `s`
//!   exactly, so a fully driven vertex follows the animation to the bit and its velocity,
//!   `(x - x₀) / h`, is the skin's.
//! - *back stop*: `C = r - |x - c| ≤ 0` with the sphere's centre `c = s - n (r + b)`, `n` the
//!   skinned surface's unit normal at the vertex, `r` the back stop's radius and `b` its
//!   distance: the vertex stays outside a sphere that touches the point `s - n b` below the
//!   skin, so it never goes inside the body it dresses (a large `r` approximates the tangent
//!   plane at depth `b`). Projected after the max distance, so that where the two disagree the
//!   body's surface wins. A vertex whose normal is zero (on no triangle, or on triangles of zero
//!   area) has no back stop that substep.
//!
//! Both are hard (compliance 0) and act on the vertex alone, whatever its mass: the skin is
//! kinematic. Pinned vertices (inverse mass 0) are left where the game put them.
//!
//! The skinned positions and normals are given once per frame, at the frame's end
//! ([`SkinConstraints::set_targets`], which `crate::skin::Skin::pose` calls); the step loop
//! interpolates them across the substeps ([`ConstraintKind::begin_substep`]): a substep ending
//! at fraction `t` of the frame sees `s = lerp(s_from, s_to, t)` and the normalised
//! `lerp(n_from, n_to, t)`, as Jolt interpolates its skinned positions over a step's
//! iterations, so an arm swinging in one frame drags its sleeve smoothly, not in one jump. A
//! [`crate::World`] or a coupling, which step a body one substep at a time, give each of those
//! steps its share of the frame, so the targets move across the world's substeps too.

use super::{ConstraintKind, MAX_ARITY};
use crate::error::{check_index, check_non_negative, Result, WobbleError};
use crate::geometry::packed::Packed4;
use glam::{DVec3, Vec3};

/// The skinned-constraint settings of one vertex.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SkinnedVertex {
    /// The particle.
    pub particle: u32,
    /// How far (m) the vertex may move from its skinned position: 0 = driven by the skin,
    /// `f32::INFINITY` = no max distance.
    pub max_distance: f32,
    /// How far (m) below the skin the back stop sphere touches (`b`).
    pub backstop_distance: f32,
    /// The back stop sphere's radius (m; 0 = no back stop).
    pub backstop_radius: f32,
}

impl SkinnedVertex {
    /// A vertex held within `max_distance` of its skinned position, with no back stop.
    #[must_use]
    pub fn within(particle: u32, max_distance: f32) -> Self {
        SkinnedVertex {
            particle,
            max_distance,
            backstop_distance: 0.0,
            backstop_radius: 0.0,
        }
    }

    /// With a back stop sphere of `radius` touching `distance` below the skin.
    #[must_use]
    pub fn with_backstop(mut self, distance: f32, radius: f32) -> Self {
        self.backstop_distance = distance;
        self.backstop_radius = radius;
        self
    }
}

/// The skinned constraints of a body: one row per skinned vertex, with its targets in the body
/// frame.
#[derive(Clone, Debug, Default)]
pub struct SkinConstraints {
    particle: Vec<u32>,
    max_distance: Vec<f32>,
    backstop_distance: Vec<f32>,
    backstop_radius: Vec<f32>,
    multiplier: f32,
    /// Skinned positions and normals at the start and the end of the frame being stepped.
    from: Vec<Vec3>,
    to: Vec<Vec3>,
    normal_from: Vec<Vec3>,
    normal_to: Vec<Vec3>,
    /// The targets of the substep being solved.
    target: Vec<Vec3>,
    normal: Vec<Vec3>,
}

impl SkinConstraints {
    /// A table for `vertices` of a body of `particles` particles, every target at `at` (the
    /// skinned positions and normals of every particle, in the body frame). Refuses a particle
    /// out of range or named twice, and a distance or radius that is negative or NaN (a max
    /// distance may be infinite).
    pub fn new(
        vertices: &[SkinnedVertex],
        particles: usize,
        at: &[Vec3],
        normals: &[Vec3],
    ) -> Result<Self> {
        let mut seen = vec![false; particles];
        for (k, v) in vertices.iter().enumerate() {
            check_index("skinned vertex", k, v.particle as usize, particles)?;
            if std::mem::replace(&mut seen[v.particle as usize], true) {
                return Err(WobbleError::RepeatedParticle {
                    kind: "skinned",
                    index: k,
                    particle: v.particle,
                });
            }
            if v.max_distance.is_nan() || v.max_distance < 0.0 {
                check_non_negative("skinned vertex max distance", v.max_distance)?;
            }
            check_non_negative("skinned vertex back stop distance", v.backstop_distance)?;
            check_non_negative("skinned vertex back stop radius", v.backstop_radius)?;
        }
        let pick = |src: &[Vec3]| -> Vec<Vec3> {
            vertices.iter().map(|v| src[v.particle as usize]).collect()
        };
        let (s, n) = (pick(at), pick(normals));
        Ok(SkinConstraints {
            particle: vertices.iter().map(|v| v.particle).collect(),
            max_distance: vertices.iter().map(|v| v.max_distance).collect(),
            backstop_distance: vertices.iter().map(|v| v.backstop_distance).collect(),
            backstop_radius: vertices.iter().map(|v| v.backstop_radius).collect(),
            multiplier: 1.0,
            from: s.clone(),
            to: s.clone(),
            normal_from: n.clone(),
            normal_to: n.clone(),
            target: s,
            normal: n,
        })
    }

    /// The multiplier of every max distance (1 when built).
    #[must_use]
    pub fn max_distance_multiplier(&self) -> f32 {
        self.multiplier
    }

    /// Scales every max distance by `m` (finite, >= 0): 0 makes every skinned vertex follow
    /// the animation, 1 gives each its own max distance; between them the two blend.
    pub fn set_max_distance_multiplier(&mut self, m: f32) -> Result<()> {
        check_non_negative("max distance multiplier", m)?;
        self.multiplier = m;
        Ok(())
    }

    /// The skinned particles, one per row.
    #[must_use]
    pub fn particles_skinned(&self) -> &[u32] {
        &self.particle
    }

    /// Sets the targets at the end of the next step from the skinned positions and normals of
    /// every particle (`at`, `normals`, in the body frame); the targets at its start are the
    /// last ones set, or, with `jump`, these too (no interpolation: a teleport or a spawn).
    pub fn set_targets(&mut self, at: &[Vec3], normals: &[Vec3], jump: bool) {
        std::mem::swap(&mut self.from, &mut self.to);
        std::mem::swap(&mut self.normal_from, &mut self.normal_to);
        for (k, &p) in self.particle.iter().enumerate() {
            self.to[k] = at[p as usize];
            self.normal_to[k] = normals[p as usize];
        }
        if jump {
            self.from.copy_from_slice(&self.to);
            self.normal_from.copy_from_slice(&self.normal_to);
        }
        self.target.copy_from_slice(&self.to);
        self.normal.copy_from_slice(&self.normal_to);
    }

    /// The skinned position and normal of row `k` at the substep being solved.
    #[must_use]
    pub fn target(&self, k: usize) -> (Vec3, Vec3) {
        (self.target[k], self.normal[k])
    }

    /// How far row `k`'s vertex at `p` is outside its max-distance sphere and inside its back
    /// stop sphere (each 0 when the constraint holds), in metres.
    #[must_use]
    pub fn violations(&self, k: usize, p: Vec3) -> (f32, f32) {
        let (s, n) = self.target(k);
        let over = ((p - s).length() - self.multiplier * self.max_distance[k]).max(0.0);
        let r = self.backstop_radius[k];
        let inside = if r > 0.0 && n != Vec3::ZERO {
            let c = s - n * (r + self.backstop_distance[k]);
            (r - (p - c).length()).max(0.0)
        } else {
            0.0
        };
        (over, inside)
    }
}

/// Projects `p` (inverse mass > 0) onto row `k`'s constraints; returns the new position.
#[inline]
fn project_row(t: &SkinConstraints, k: usize, mut p: Vec3) -> Vec3 {
    let (s, n) = (t.target[k], t.normal[k]);
    let d = t.multiplier * t.max_distance[k];
    let e = p - s;
    let len2 = e.length_squared();
    if len2 > d * d {
        p = if d == 0.0 {
            s
        } else {
            s + e * (d / len2.sqrt())
        };
    }
    let r = t.backstop_radius[k];
    if r > 0.0 && n != Vec3::ZERO {
        let c = s - n * (r + t.backstop_distance[k]);
        let f = p - c;
        let l2 = f.length_squared();
        if l2 < r * r {
            p = if l2 > 0.0 {
                c + f * (r / l2.sqrt())
            } else {
                c + n * r
            };
        }
    }
    p
}

impl ConstraintKind for SkinConstraints {
    fn name(&self) -> &'static str {
        "skinned"
    }
    fn len(&self) -> usize {
        self.particle.len()
    }
    fn particles(&self, c: usize) -> &[u32] {
        std::slice::from_ref(&self.particle[c])
    }
    fn compliance(&self, _c: usize) -> f32 {
        0.0
    }
    fn evaluate(&self, c: usize, x: &[Packed4], grad: &mut [Vec3; MAX_ARITY]) -> f32 {
        let p = x[self.particle[c] as usize].xyz();
        let (s, n) = self.target(c);
        let e = p - s;
        let len = e.length();
        let over = len - self.multiplier * self.max_distance[c];
        grad[0] = if len > 0.0 { e / len } else { Vec3::ZERO };
        let r = self.backstop_radius[c];
        if r > 0.0 && n != Vec3::ZERO {
            let f = p - (s - n * (r + self.backstop_distance[c]));
            let l = f.length();
            if r - l > over {
                grad[0] = if l > 0.0 { -f / l } else { -n };
                return r - l;
            }
        }
        over
    }
    fn scale(&self) -> f32 {
        1.0
    }
    fn unilateral(&self) -> bool {
        true
    }
    fn projected_by_step_loop(&self) -> bool {
        true
    }
    fn project_all(&self, x: &mut [Packed4], _lambda: &mut [f32], _inv_dt2: f32, _k: f32) {
        for (k, &i) in self.particle.iter().enumerate() {
            let q = &mut x[i as usize];
            if q.w > 0.0 {
                q.set_xyz(project_row(self, k, q.xyz()));
            }
        }
    }
    fn begin_substep(&mut self, t: f32) {
        if t >= 1.0 {
            // The frame's end is its targets as given (a lerp at 1 may round off them).
            self.target.copy_from_slice(&self.to);
            self.normal.copy_from_slice(&self.normal_to);
            return;
        }
        for k in 0..self.particle.len() {
            self.target[k] = self.from[k].lerp(self.to[k], t);
            self.normal[k] = self.normal_from[k]
                .lerp(self.normal_to[k], t)
                .normalize_or_zero();
        }
    }
    fn move_frame(&mut self, shift: DVec3) {
        for v in self
            .from
            .iter_mut()
            .chain(self.to.iter_mut())
            .chain(self.target.iter_mut())
        {
            *v = (v.as_dvec3() - shift).as_vec3();
        }
    }
    fn particle_indices_mut(&mut self) -> &mut [u32] {
        &mut self.particle
    }
}

//! Rapier rigid bodies as a contact source of a [`World`] (feature `rapier`,
//! [`World::set_rapier`]): every soft body of the world meets every rapier collider, both ways
//! (the contacts push the rigid bodies back with impulses at the contact points, and moving
//! rigid bodies push the soft bodies), and rapier steps once per substep after every soft body.
//!
//! Each substep `h` of [`World::step`] with a rapier world does, in order:
//!
//! 1. Contacts, for each soft body at once (each reads the rapier world, none writes it).
//!    Every rapier collider (sensors, disabled and [excluded](World::set_rapier_coupled) ones
//!    aside) is placed at its body's predicted pose at the end of the substep (rapier's
//!    `predict_position_using_velocity`, plus `h² g` for a dynamic body; the target pose of a
//!    position-based kinematic body), and each free particle's predicted position (the world's
//!    prediction, the one its other contacts use) is projected onto it with parry's point
//!    projection. A particle within `thickness + search_distance` of the surface gets the plane
//!    contact `C = o - n · x <= 0`, `o = n · s + thickness` (`s` the surface point, `n` its
//!    outward normal), into the body's [`RigidContacts`] table, which the step loop projects
//!    after every solver iteration. A collider whose parent rigid body has CCD on
//!    (`ccd_enabled(true)`) gets the swept test instead (Theory, below); one without keeps this
//!    discrete test, as rapier's own bodies without CCD keep discrete contacts against other
//!    moving bodies.
//! 2. Each soft body steps its substep in the world's order (levels, [`crate::world`]), with
//!    the rigid contacts solved Gauss-Seidel style beside its own constraints and its other
//!    contacts.
//! 3. Every rigid contact that pushed gives the rigid body the opposite of the particle's
//!    momentum change, at the contact point (friction likewise). The impulses are collected per
//!    soft body while the bodies step, and handed to rapier (`apply_impulse_at_point`) after
//!    every body has stepped, in body order and contact order, so the rapier world receives
//!    the same sums in the same order whatever the thread count.
//! 4. rapier steps `h` (with the same gravity), integrating the impulses and solving the
//!    rigid bodies' own contacts and joints.
//!
//! Theory. A contact between particle `i` (inverse mass `w_i`) and a dynamic rigid body of mass
//! `M` and world inverse inertia `I⁻¹`, at the point `r` from its centre of mass, is a
//! two-body constraint with the generalized inverse masses `w_i` and
//! `w_b = n · (M⁻¹ n) + (r × n)ᵀ I⁻¹ (r × n)` (`M⁻¹` per axis, so locked axes count as
//! infinite mass; `w_b = 0` for fixed and kinematic bodies). Rather than move the rigid body
//! inside wobble's iterations, the contact is given the XPBD compliance `α = w_b h²`, i.e.
//! `α̃ = α / h² = w_b`: the update `Δλ = (-C - α̃ λ) / (w_i + α̃)` moves the particle by
//! `w_i / (w_i + w_b)` of the penetration, the two-body split, and at convergence leaves the
//! share `w_b |λ|` the rigid body would have moved. The rigid body then receives exactly the
//! momentum the particle gained: the contact moved the particle by `-k w_i λ n` (`k` the PBD
//! scale, 1 in XPBD), so its velocity `(x - x₀) / h` changed by that over `h` and its momentum
//! by `p = -k λ n / h`; the body gets `-p` at the contact point. Wobble's internal constraints
//! move particles by `w_j ∇_j C Δλ` with translation-invariant `C` (`Σ_j ∇_j C = 0`), so they
//! change no linear momentum, and the contacts between two soft bodies give each the opposite
//! push within the iterations' tolerance; the soft bodies' momentum therefore changes by
//! gravity, their own shape colliders ([`crate::Body::colliders`], kinematic, one-sided), the
//! world's static meshes and these contacts, and the sum `Σ m_i v_i + Σ M V` is conserved by
//! construction up to f32 rounding while the rigid bodies touch nothing else in rapier (a
//! fixed ledge takes momentum, as it should). Friction (Coulomb, Macklin et al. 2014 §6.1 as
//! in [`crate::collide`]) removes the tangential part of the particle's motion relative to the
//! rigid surface, `Δx_t`, whole when `|Δx_t| < μ d` (`d` the normal push) and by `μ d / |Δx_t|`
//! otherwise; the rigid body gets that momentum too. In PBD mode (`α̃ = 0`) a contact is rigid
//! for the particle (it takes the whole correction); the impulse, and so the conservation, is
//! the same.
//!
//! The swept test (CCD). A rigid body moving further than its own size in a substep is never
//! seen by the test at its end pose, or is seen so deep that the nearest face is the far one.
//! For a collider of a CCD-enabled body, every particle inside the AABB swept from the pose now
//! `P₀` to the predicted pose `P₁` (padded by the reach) is followed in the collider's frame,
//! from `a = P₀⁻¹ x` to `b = P₁⁻¹ x̃`: the straight segment is the relative motion, exact for
//! a translating body and first order in its rotation. When `|b - a|` is within the reach the
//! discrete test above is kept (bit for bit: slow CCD bodies cost only the wider AABB). Otherwise
//! a ball of radius `thickness` is cast from `a` along `b - a` against the shape (parry's
//! `cast_shapes`, time of impact `t ∈ [0, 1]`); a particle already within `thickness` takes its
//! nearest surface point at `a` instead. The surface point `s` and outward normal `n` of the
//! first touch, carried with the body to `P₁` (`P₁ s`, `R₁ n`), give the same plane contact as
//! the discrete test, so the momentum hand-over is the two-body contact above: the particle is
//! pushed ahead of the surface where it was first touched, and the body receives the opposite
//! of the particle's momentum change before rapier integrates it. No pose clamp is needed, unlike
//! rapier's CCD (which moves the body's next pose back to its time of impact and leaves the
//! velocities to the next step): the contact is solved at the end pose within the same substep,
//! so the body's end pose is `P₁` less its share `w_b λ`, where the contact assumed it.
//! A particle the sweep misses can still be dragged into the body by its neighbours during the
//! solve, as with the discrete test; `tests/fast_rigid_bodies.rs` bounds how deep.
//!
//! Why inside the iterations, and not a post-projection after the soft step: projecting
//! particles out of the rigid bodies after the solve moves them without their constraints (a
//! jelly's surface particle is pushed in alone, its edges and volume left violated until the
//! next step), while inside the iterations the body's constraints spread each push over the
//! whole body the same substep. The conservation argument is the same for both. Both are
//! measured in `tests/rapier_coupling.rs`.
//!
//! Limits. The rigid poses are frozen at their predictions during the soft substep (Jacobi
//! style): several particles, or several soft bodies, touching one light body each take their
//! split as if alone, so the body receives the sum and may move off further than the particles
//! expected (a gap, not an overlap, which the next substep closes); a particle moving more than
//! `thickness + search_distance` per substep into a thin collider of a body without CCD may
//! tunnel (enable CCD or use more substeps); a particle already deep inside a collider at the
//! start leaves through the nearest face. The contacts have no restitution (the bounce is the
//! soft body's own elasticity). Rigid bodies get the torques of the impulses too, but only
//! linear momentum is checked by the tests.

use crate::body::Body;
use crate::constraints::{ConstraintKind, MAX_ARITY};
use crate::error::{Result, WobbleError};
use crate::geometry::packed::Packed4;
use crate::step::StepParams;
use crate::world::contacts::friction_removal;
use glam::Vec3;
use rapier3d::math::{Pose, Vector};
use rapier3d::parry::query::{cast_shapes, ShapeCastOptions};
use rapier3d::parry::shape::{Ball, Shape};
use rapier3d::prelude::{
    ColliderHandle, ColliderSet, PhysicsWorld, RigidBody, RigidBodyHandle, RigidBodySet,
    RigidBodyType,
};
use std::collections::HashSet;

#[cfg(doc)]
use crate::world::World;

/// A wobble vector as rapier's (rapier uses its own glam version; converted by components).
#[inline]
#[must_use]
pub fn to_rapier(v: Vec3) -> Vector {
    Vector::new(v.x, v.y, v.z)
}

/// A rapier vector as wobble's.
#[inline]
#[must_use]
pub fn from_rapier(v: Vector) -> Vec3 {
    Vec3::new(v.x, v.y, v.z)
}

/// The plane contacts of one substep between a soft body's particles and rapier colliders, as
/// a constraint table the step loop projects after every solver iteration.
#[derive(Clone, Debug, Default)]
pub struct RigidContacts {
    /// The particle of each contact.
    particle: Vec<u32>,
    /// The outward normal of the rigid surface.
    normal: Vec<Vec3>,
    /// `o` of the free half-space `n · x >= o`.
    offset: Vec<f32>,
    /// `w_b h²`: the rigid body's generalized inverse mass as an XPBD compliance.
    compliance: Vec<f32>,
    /// The mean rest distance, the scale of the residual.
    scale: f32,
}

impl RigidContacts {
    fn clear(&mut self, scale: f32) {
        self.particle.clear();
        self.normal.clear();
        self.offset.clear();
        self.compliance.clear();
        self.scale = scale;
    }

    fn push(&mut self, particle: u32, normal: Vec3, offset: f32, compliance: f32) {
        self.particle.push(particle);
        self.normal.push(normal);
        self.offset.push(offset);
        self.compliance.push(compliance);
    }
}

impl ConstraintKind for RigidContacts {
    fn name(&self) -> &'static str {
        "rigid contact"
    }
    fn len(&self) -> usize {
        self.particle.len()
    }
    fn particles(&self, c: usize) -> &[u32] {
        std::slice::from_ref(&self.particle[c])
    }
    fn compliance(&self, c: usize) -> f32 {
        self.compliance[c]
    }
    fn evaluate(&self, c: usize, x: &[Packed4], grad: &mut [Vec3; MAX_ARITY]) -> f32 {
        let n = self.normal[c];
        grad[0] = -n;
        self.offset[c] - n.dot(x[self.particle[c] as usize].xyz())
    }
    crate::constraints::step_loop_contact_accessors!(particle);
}

/// The rigid side of one contact of a body's [`RigidContacts`] table (same index).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RigidSide {
    /// The dynamic body that takes the reaction (`None`: fixed, kinematic or parentless).
    body: Option<RigidBodyHandle>,
    /// The contact's material point on the body at the start of the substep (world coordinates).
    point: Vec3,
    /// How far that point moves over the substep (the surface's own motion, for friction).
    motion: Vec3,
}

/// The impulse one contact gives a dynamic rigid body, at a world point.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reaction {
    body: RigidBodyHandle,
    impulse: Vec3,
    point: Vec3,
}

/// What a soft body keeps of its rigid contacts over one substep.
#[derive(Default)]
pub(crate) struct RigidScratch {
    /// The rigid side of each contact of the body's table.
    sides: Vec<RigidSide>,
    /// The impulses its contacts give the rigid bodies, in contact order.
    pub(crate) reactions: Vec<Reaction>,
}

/// The rapier world a [`World`] steps with its soft bodies, and which of its colliders the
/// soft bodies ignore.
pub(crate) struct RigidBodies {
    pub(crate) physics: PhysicsWorld,
    excluded: HashSet<ColliderHandle>,
}

impl RigidBodies {
    pub(crate) fn new(physics: PhysicsWorld) -> Self {
        RigidBodies {
            physics,
            excluded: HashSet::new(),
        }
    }

    /// Stops or resumes the contacts of the soft bodies with collider `handle`.
    pub(crate) fn set_coupled(&mut self, handle: ColliderHandle, coupled: bool) -> Result<()> {
        if !self.physics.colliders.contains(handle) {
            return Err(unknown_handle("rapier collider handle", handle));
        }
        if coupled {
            self.excluded.remove(&handle);
        } else {
            self.excluded.insert(handle);
        }
        Ok(())
    }

    /// Linear momentum of the dynamic rapier bodies, `Σ M V` (kg m/s).
    pub(crate) fn momentum(&self) -> Vec3 {
        let sum = self
            .physics
            .bodies
            .iter()
            .filter(|(_, rb)| rb.is_dynamic())
            .fold(glam::DVec3::ZERO, |s, (_, rb)| {
                s + from_rapier(rb.linvel()).as_dvec3() * rb.mass() as f64
            });
        sum.as_vec3()
    }

    /// An error naming the first rigid body whose pose or velocity is not finite.
    pub(crate) fn check_state(&self) -> Result<()> {
        for (handle, rb) in self.physics.bodies.iter() {
            let pose = rb.position();
            let q = pose.rotation;
            let (t, lin, ang) = (pose.translation, rb.linvel(), rb.angvel());
            let values = [
                ("rapier rigid body translation", [t.x, t.y, t.z, 0.0]),
                ("rapier rigid body rotation", [q.x, q.y, q.z, q.w]),
                (
                    "rapier rigid body linear velocity",
                    [lin.x, lin.y, lin.z, 0.0],
                ),
                (
                    "rapier rigid body angular velocity",
                    [ang.x, ang.y, ang.z, 0.0],
                ),
            ];
            for (what, v) in values {
                if let Some(&value) = v.iter().find(|c| !c.is_finite()) {
                    return Err(WobbleError::NonFinite {
                        what,
                        index: handle.into_raw_parts().0 as usize,
                        value,
                    });
                }
            }
        }
        Ok(())
    }

    /// Sets rapier's gravity and step to the substep's.
    pub(crate) fn prepare(&mut self, sub: &StepParams) {
        self.physics.gravity = to_rapier(sub.gravity);
        self.physics.integration_parameters.dt = sub.dt;
    }

    /// Hands every soft body's reactions to rapier, in the order given (step 3 of the module
    /// doc); returns their sum.
    pub(crate) fn apply<'a>(&mut self, reactions: impl Iterator<Item = &'a [Reaction]>) -> Vec3 {
        let mut total = Vec3::ZERO;
        for r in reactions.flatten() {
            if let Some(rb) = self.physics.bodies.get_mut(r.body) {
                rb.apply_impulse_at_point(to_rapier(r.impulse), to_rapier(r.point), true);
                total += r.impulse;
            }
        }
        total
    }

    /// What the soft bodies read of the rapier world while they find their contacts, shared
    /// between the threads that step them.
    pub(crate) fn view(&self) -> RigidView<'_> {
        RigidView {
            bodies: &self.physics.bodies,
            colliders: &self.physics.colliders,
            excluded: &self.excluded,
        }
    }
}

/// The rigid bodies and colliders of a rapier world, and the colliders the soft bodies ignore.
#[derive(Clone, Copy)]
pub(crate) struct RigidView<'a> {
    bodies: &'a RigidBodySet,
    colliders: &'a ColliderSet,
    excluded: &'a HashSet<ColliderHandle>,
}

impl RigidView<'_> {
    /// Step 1 of a substep (module doc) for one soft body: fills its contact table (kind
    /// `kind` of its constraints) and `scratch`'s sides from its predicted positions
    /// `predicted`; returns the contact count. `held`: the body is not stepped this substep
    /// (its table is emptied).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn find_contacts(
        &self,
        body: &mut Body,
        kind: usize,
        predicted: &[Packed4],
        held: bool,
        sub: &StepParams,
        thickness: f32,
        reach: f32,
        scratch: &mut RigidScratch,
    ) -> usize {
        let scale = body.constraints.distance.mean_rest();
        let origin = body.origin();
        let Body {
            particles,
            constraints,
            ..
        } = body;
        let table: &mut RigidContacts = constraints.extra[kind]
            .as_any_mut()
            .downcast_mut()
            .expect("the world's rigid contact table");
        table.clear(scale);
        scratch.sides.clear();
        scratch.reactions.clear();
        if held {
            return 0;
        }
        let (bodies, colliders) = (self.bodies, self.colliders);
        let (h, g) = (sub.dt, sub.gravity);
        for (handle, collider) in colliders.iter() {
            if collider.is_sensor() || !collider.is_enabled() || self.excluded.contains(&handle) {
                continue;
            }
            let parent = collider
                .parent()
                .and_then(|b| bodies.get(b).map(|rb| (b, rb)));
            let (now, next, dynamic) = match parent {
                Some((b, rb)) => {
                    let local = collider.position_wrt_parent().copied().unwrap_or_default();
                    let next = predicted_pose(rb, h, g);
                    (
                        *rb.position() * local,
                        next * local,
                        rb.is_dynamic().then_some((b, rb)),
                    )
                }
                None => (*collider.position(), *collider.position(), None),
            };
            let (now, next) = (into_frame(now, origin), into_frame(next, origin));
            let shape = collider.shape();
            // A CCD-enabled parent sweeps its collider over the substep (module doc, the swept
            // test); a collider whose parent does not is tested at its predicted pose only.
            let swept = parent.is_some_and(|(_, rb)| rb.is_ccd_enabled());
            let (mut lo, mut hi) = aabb_bounds(shape.compute_aabb(&next));
            if swept {
                let (lo_now, hi_now) = aabb_bounds(shape.compute_aabb(&now));
                lo = lo.min(lo_now);
                hi = hi.max(hi_now);
            }
            lo -= Vec3::splat(reach);
            hi += Vec3::splat(reach);
            // Takes a point of the collider at its predicted pose back to where it is now.
            let back = now * next.inverse();
            let w_b = |point: Vec3, n: Vec3| {
                dynamic.map_or(0.0, |(_, rb)| generalized_inverse_mass(rb, point, n))
            };
            let mut contact = |i: usize, n: Vec3, surface: Vec3, point: Vec3, motion: Vec3| {
                table.push(
                    i as u32,
                    n,
                    n.dot(surface) + thickness,
                    w_b(point, n) * h * h,
                );
                scratch.sides.push(RigidSide {
                    body: dynamic.map(|(b, _)| b),
                    point,
                    motion,
                });
            };
            for (i, (x, to)) in particles.x.iter().zip(predicted).enumerate() {
                if x.w == 0.0 {
                    continue;
                }
                let predicted = to.xyz();
                let (seg_lo, seg_hi) = if swept {
                    (predicted.min(x.xyz()), predicted.max(x.xyz()))
                } else {
                    (predicted, predicted)
                };
                if seg_hi.cmplt(lo).any() || seg_lo.cmpgt(hi).any() {
                    continue;
                }
                if swept {
                    if let Some(hit) =
                        swept_contact(shape, &now, &next, x.xyz(), predicted, thickness, reach)
                    {
                        // Rapier's impulses and inertia are in world coordinates.
                        let point = (origin + hit.point.as_dvec3()).as_vec3();
                        contact(i, hit.normal, hit.surface, point, hit.surface - hit.point);
                        continue;
                    }
                }
                let projection = shape.project_point(&next, to_rapier(predicted), false);
                let surface = from_rapier(projection.point);
                let d = predicted - surface;
                let len = d.length();
                // On the surface exactly the normal is undefined (the next substep sees it); a NaN
                // (a bad particle, which the step refuses) gets no contact.
                if len.is_nan() || len <= 1e-9 {
                    continue;
                }
                let (distance, n) = if projection.is_inside {
                    (-len, -d / len)
                } else {
                    (len, d / len)
                };
                if distance > reach {
                    continue;
                }
                let local_point = from_rapier(back * projection.point);
                // Rapier's impulses and inertia are in world coordinates.
                let point = (origin + local_point.as_dvec3()).as_vec3();
                contact(i, n, surface, point, surface - local_point);
            }
        }
        table.len()
    }
}

/// Step 3 of a substep (module doc) for one soft body that has stepped: friction on its rigid
/// contacts (moving its particles) and the reactions they give the rigid bodies, into
/// `scratch.reactions`; returns the contact count. `kind` is its [`RigidContacts`] table.
pub(crate) fn reactions(
    body: &mut Body,
    kind: usize,
    sub: &StepParams,
    friction: f32,
    scratch: &mut RigidScratch,
) -> usize {
    let Body {
        particles: p,
        constraints,
        scratch: step_scratch,
        ..
    } = body;
    let table: &RigidContacts = constraints.extra[kind]
        .as_any()
        .downcast_ref()
        .expect("the world's rigid contact table");
    let offset = constraints.offsets()[kind + 1];
    let lambda = &step_scratch.lambda[offset..offset + table.len()];
    let k = sub.correction_scale();
    let inv_h = 1.0 / sub.dt;
    scratch.reactions.clear();
    for (c, (&l, side)) in lambda.iter().zip(&scratch.sides).enumerate() {
        let i = table.particle[c] as usize;
        let w = p.x[i].w;
        let pushed = -k * w * l;
        if !(pushed > 0.0 && w > 0.0) {
            continue;
        }
        let n = table.normal[c];
        // The particle's momentum change from the contact: m (pushed n) / h with m w = 1.
        let mut gained = n * (pushed / w) * inv_h;
        if friction > 0.0 {
            let dx = p.x[i].xyz() - p.x_prev[i].xyz() - side.motion;
            if let Some(removed) = friction_removal(dx, n, friction, pushed) {
                let (x, v) = (p.x[i].xyz(), p.v[i].xyz());
                p.x[i].set_xyz(x - removed);
                p.v[i].set_xyz(v - removed * inv_h);
                gained -= removed / w * inv_h;
            }
        }
        if let Some(body) = side.body {
            scratch.reactions.push(Reaction {
                body,
                impulse: -gained,
                point: side.point,
            });
        }
    }
    table.len()
}

/// Where the rigid contact table is in `body.constraints.extra`, or an error saying the world
/// gave it and it was removed.
pub(crate) fn contacts_kind(body: &Body) -> Result<usize> {
    body.constraints
        .position_of::<RigidContacts>()
        .ok_or(WobbleError::UnsuitableBody {
            what: "a world step with rapier bodies",
            needs: "the rigid contact table World::set_rapier gives a body (it was removed)",
        })
}

/// Gives `body` a rigid contact table if it has none.
pub(crate) fn give_table(body: &mut Body) {
    if body.constraints.position_of::<RigidContacts>().is_none() {
        body.constraints_mut()
            .push_kind(Box::new(RigidContacts::default()));
    }
}

/// Takes `body`'s rigid contact table away, if it has one.
pub(crate) fn take_table(body: &mut Body) {
    if let Some(k) = body.constraints.position_of::<RigidContacts>() {
        body.constraints_mut().extra.remove(k);
    }
}

/// The contact a swept test found: the surface point hit and its outward normal, both carried
/// with the rigid body to its predicted pose, and that material point where it is now.
struct SweptHit {
    surface: Vec3,
    normal: Vec3,
    point: Vec3,
}

/// The swept test of one particle against a collider moving from pose `now` to `next` over the
/// substep (module doc): in the collider's frame the particle goes from `a` (its position now)
/// to `b` (its prediction); `None` when that relative motion is within `reach` (the discrete
/// test at `next` is exact enough, as for a collider without CCD) or when a ball of radius
/// `thickness` moving from `a` to `b` never touches the shape (the discrete test decides
/// whether the prediction is near enough for a contact).
fn swept_contact(
    shape: &dyn Shape,
    now: &Pose,
    next: &Pose,
    x: Vec3,
    predicted: Vec3,
    thickness: f32,
    reach: f32,
) -> Option<SweptHit> {
    let a = now.inverse_transform_point(to_rapier(x));
    let b = next.inverse_transform_point(to_rapier(predicted));
    let motion = b - a;
    let travel = motion.length();
    if travel.is_nan() || travel <= reach {
        return None;
    }
    let start = shape.project_local_point(a, false);
    let depth = (start.point - a).length();
    let (local_point, local_normal) = if start.is_inside || depth <= thickness {
        // Touching already: the contact keeps the normal of where the particle touches now.
        let out = if start.is_inside {
            start.point - a
        } else {
            a - start.point
        };
        if depth.is_nan() || depth <= 1e-9 {
            return None;
        }
        (start.point, out / depth)
    } else {
        let ball = Ball::new(thickness);
        let options = ShapeCastOptions {
            max_time_of_impact: 1.0,
            target_distance: 0.0,
            stop_at_penetration: true,
            compute_impact_geometry_on_penetration: true,
        };
        let hit = cast_shapes(
            &Pose::IDENTITY,
            Vector::ZERO,
            shape,
            &Pose::from_translation(a),
            motion,
            &ball,
            options,
        )
        .ok()??;
        let n = hit.normal1;
        let n2 = n.length_squared();
        if n2.is_nan() || n2 <= 0.5 {
            return None;
        }
        (hit.witness1, n)
    };
    Some(SweptHit {
        surface: from_rapier(next.transform_point(local_point)),
        normal: from_rapier(next.rotation * local_normal),
        point: from_rapier(now.transform_point(local_point)),
    })
}

/// The corners of a parry AABB as wobble vectors.
fn aabb_bounds(aabb: rapier3d::parry::bounding_volume::Aabb) -> (Vec3, Vec3) {
    (from_rapier(aabb.mins), from_rapier(aabb.maxs))
}

/// A rapier pose (world coordinates) in the frame of a body whose origin is `origin`: the
/// translation less the origin, in `f64`, rounded once (unchanged for the world's origin).
fn into_frame(mut pose: Pose, origin: glam::DVec3) -> Pose {
    let t = from_rapier(pose.translation).as_dvec3() - origin;
    pose.translation = to_rapier(t.as_vec3());
    pose
}

/// Where rigid body `rb` will be after `h` with gravity `g`: a position-based kinematic body at
/// its target, a dynamic one as rapier integrates it (velocity plus `h g`, then the pose).
fn predicted_pose(rb: &RigidBody, h: f32, g: Vec3) -> Pose {
    match rb.body_type() {
        RigidBodyType::KinematicPositionBased => *rb.next_position(),
        RigidBodyType::Dynamic => {
            let mut pose = rb.predict_position_using_velocity(h);
            pose.translation += to_rapier(g * (rb.gravity_scale() * h * h));
            pose
        }
        _ => rb.predict_position_using_velocity(h),
    }
}

/// `w_b = n · (M⁻¹ n) + (r × n)ᵀ I⁻¹ (r × n)` of dynamic body `rb` at world point `point`
/// along unit `n` (locked axes count as infinite mass).
fn generalized_inverse_mass(rb: &RigidBody, point: Vec3, n: Vec3) -> f32 {
    let mp = rb.mass_properties();
    let linear = (n * n * from_rapier(mp.effective_inv_mass)).element_sum();
    let rn = (point - from_rapier(mp.world_com)).cross(n);
    let angular = rn.dot(from_rapier(mp.effective_world_inv_inertia * to_rapier(rn)));
    (linear + angular).max(0.0)
}

/// The error for a rapier handle the world does not hold.
pub(crate) fn unknown_handle(what: &'static str, handle: impl std::fmt::Debug) -> WobbleError {
    WobbleError::UnknownName {
        what,
        name: format!("{handle:?}"),
        expected: "a handle of the world's rapier world (inserted and not removed)".into(),
    }
}

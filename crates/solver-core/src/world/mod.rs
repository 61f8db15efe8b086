//! A world of several bodies and static colliders stepped together: contacts between bodies,
//! against triangle meshes and within a body (self-collision), found once per substep and
//! solved inside the iterations.
//!
//! Each substep of [`World::step`] does:
//!
//! 1. clamp the velocities of self-colliding bodies ([`SelfCollision`], bounded travel);
//! 2. predict every body's surface, `x̃ = x + h (d v + h (g + w f))` (the step loop's
//!    prediction, `f` the particle's force and wind), as a [`MeshCollider`] the other bodies
//!    collide with, and
//!    the box its particles sweep; give each body a level, one more than the last body
//!    before it whose box, grown by the contact reach, it overlaps (0 if none);
//! 3. level by level, for the bodies of the level at once: find each one's contacts into its
//!    [`WorldContacts`] table (each particle's path `x → x̃` against the static meshes and
//!    the other bodies' surfaces, [`MeshCollider::contact`]; particle pairs of its own for
//!    self-collision), step it one substep with its own solver ([`crate::step()`], which
//!    projects the table after every solver iteration since the kind is
//!    [`crate::ConstraintKind::projected_by_step_loop`], and sweeps its own shape colliders
//!    against tunnelling, [`crate::collide`]), apply the contacts' friction, and then move
//!    its surface to its solved positions.
//!
//! With a rapier world (`World::set_rapier`, feature `rapier`), step 2 is followed by each
//! body's contacts with the rapier colliders at their predicted poses (all bodies at once),
//! and step 3 by the rigid bodies receiving the contacts' reactions, in body order, and rapier
//! stepping the substep (module `world::rigid`).
//!
//! Theory. Inside a body the contacts are solved Gauss-Seidel style with its constraints
//! (after each solver iteration). Between bodies that may touch, the coupling is Gauss-Seidel
//! too, in index order: a body sees the bodies before it at their solved positions for the
//! substep, as rigid surfaces it takes the whole penetration from, both ways (its particles
//! against their triangles, and their vertices against its own triangles, so that a lower
//! block's edge under the middle of an upper block's face holds that face up), and the bodies
//! after it at their predictions, with the XPBD compliance `α = w_t h²` (`w_t` that surface's inverse
//! mass at the contact), so that `Δλ = (-C - α̃λ) / (w + α̃)` with `α̃ = w_t` moves the
//! particle by `w / (w + w_t)` of the penetration and leaves the rest to the later body, which
//! then meets the solved surface. A compliance rather than a fixed share keeps the contact in
//! balance with the body's own constraints over the iterations, so a block under a load holds
//! its shape instead of yielding a dent the load then sinks into. Every contact with another
//! body hands that body the opposite of the momentum it gave, so that the pair's linear
//! momentum is kept: each projection of contact `c` moves particle `j` by
//! `k w_j Δλ ∇_j C` (`k` the PBD scale, 1 in XPBD), so over the substep the body's momentum
//! changes by `p_c = k λ_c Σ_j ∇_j C / h` (`-k λ n / h` for a particle against a surface,
//! `k λ n Σ b_k / h` for its triangle against a vertex), plus its friction's `-m Δx_t / h`;
//! the other body's particles, the surface triangle's corners with the contact point's
//! barycentric weights `b_k` or the one vertex, get `-b_k p_c` as the velocity change
//! `Δv_k = -w_k b_k p_c`. A later body gets the reactions of an earlier one's compliant
//! contacts before it steps, so its prediction carries the push those contacts left to it
//! (the contact point moves by `Σ b_k² w_k |λ|`, at most the `w_t |λ|` the compliance
//! assumed; its solve against the solved surface takes the rest); an earlier body, already
//! solved, gets the reactions of the later body's rigid contacts as velocity, which moves it
//! from the next substep on. A body's own constraints change no momentum (`Σ_j ∇_j C = 0`),
//! so the contacts between bodies keep the bodies' total `Σ m v` up to rounding (without the
//! reactions the later body took the penetration left to it as its own velocity and the
//! earlier body felt nothing of it). Bodies of one level cannot touch each other this
//! substep, so they are stepped in parallel (rayon, with the `parallel` feature); the levels
//! depend on the boxes alone, and the reactions of a level's contacts are applied after it, in
//! body and contact order, so every result is the same bits for any thread count, or without
//! threads. The contact constraint and its XPBD update, and the friction, are in
//! [`crate::world::contacts`].
//!
//! Untangling (intersections present at load, [`World::find_tangles`]). Theory. Baraff, Witkin
//! and Kass (2003, "Untangling cloth") trace the curve along which two meshes intersect and
//! pull the vertices of the region it encloses back to the side they belong on, instead of
//! letting the ordinary contacts push each vertex through the nearest face. For a closed
//! surface `S_B` the region of body `A` on the wrong side is simply the set of `A`'s particles
//! with generalized winding number `w_B(x) = (1/4π) Σ_t Ω_t(x) > 1/2` (Jacobson et al. 2013:
//! 1 inside, 0 outside), so the contour need not be traced. Each such particle gets the
//! direction `d = (c_A - c_B) / |c_A - c_B|` from `B`'s centroid to `A`'s at load (one per
//! pair of bodies, the side `A` lies on). Every substep, while the ray `x + s d` (`s > 0`)
//! crosses `S_B` an odd number of times (the particle is still inside), its contacts with `B`
//! are replaced by the one unilateral contact
//! `d · x >= min(d · e + r, d · x₀ + v_max h)`, `e` the ray's first crossing, `r` the
//! world's thickness, `x₀` the substep's start and `v_max` [`World::depenetration_speed`]; `B`'s
//! vertices tangled in `A` likewise get no triangle contact with `A`'s faces. The nearest-face
//! contact is wrong for a particle past the middle of `B` (its nearest face is the far one,
//! and the contact carries it through `B`, spreading the intersection); along `d` every
//! tangled particle of `A` leaves by `A`'s side, so the overlap only shrinks, and the speed
//! bound turns a centimetre of overlap into a few substeps of motion instead of a velocity
//! spike. A particle found outside is released for good and gets the ordinary contacts.
//!
//! Depenetration. Position-based contacts turn a correction of `δ` in one substep into a
//! velocity `δ / h`, so an overlap present at a substep's start (a tangle, or a particle left
//! inside a surface's thickness by the last substep) would be undone as a launch. Such a
//! contact instead follows the other surface's motion over the substep and undoes at most
//! `v_max h` of the overlap beyond it: for a particle against a surface
//! `n · x >= min(n · p + r, n · x₀ + n · m + v_max h)`, `p` the surface point, `m` its motion
//! over the substep; for a solved vertex of another body against this body's own triangle the
//! same bound seen from the triangle, which follows that vertex's solved motion; for a tangled
//! particle the motion is that of the ray's exit point. A particle
//! arriving from outside gets the whole offset, so the sweep against tunnelling is unchanged.
//!
//! Remaining failures of the untangling: an open surface has no inside, so intersections with
//! it are not found (its contacts keep a particle on the side it starts on, which keeps the
//! tangle as it is); two triangles can cross with no vertex of either inside the other (an
//! edge through a thin part), which the winding number does not see; a body entirely inside
//! another, or two with the same centroid, gets no direction; the direction is fixed at load,
//! so a part that turns over while still tangled is pushed the old way; and the untangled
//! bodies are still subject to the world's other failures below.
//!
//! Remaining failures: a body is solved against the prediction of the bodies after it, so two
//! bodies closing faster than their thickness per substep may overlap by what they moved in
//! it (more substeps cure it); a particle already deep inside another body at the start
//! (bodies created intersecting) is pushed out through the nearest face, which may be the far
//! one; resting bodies keep a jitter of about 1 to 3 cm/s in their particles' mean speed (a
//! few hundredths of a millimetre per substep; the `stack` test bounds the motion over a
//! second instead); balls on balls roll off, as they should; a chain of bodies in contact is
//! solved one after the other, so a pile of many bodies loses the parallelism; two bodies
//! colliding keep their total momentum (a soft ball hitting a soft cube at rest:
//! `tests/world_rapier.rs`, `two_soft_bodies_colliding_keep_their_momentum`, which prints the
//! momenta with `--nocapture`), but
//! how they share it follows the solve order (the later body takes the penetration left to
//! it, the earlier one gets that reaction only as a velocity, from the next substep on), not
//! a restitution; tangled particles' contacts ([`World::find_tangles`]) give no reaction; see
//! also [`crate::world::mesh_collider`] and [`crate::world::self_collision`].

pub mod contacts;
pub mod mesh_collider;
#[cfg(feature = "rapier")]
pub mod rigid;
pub mod self_collision;
// Triangle contacts: world/triangle_contacts.rs.
pub mod triangle_contacts;

pub use contacts::WorldContacts;
pub use mesh_collider::{MeshCollider, PlaneHit};
#[cfg(feature = "rapier")]
pub use rigid::RigidContacts;
pub use self_collision::SelfCollision;
pub use triangle_contacts::{TriangleContactSettings, TriangleContactTable, TriangleContacts};

use crate::body::Body;
use crate::collide::Collider;
use crate::constraints::ConstraintKind;
use crate::error::{check_non_negative, Result, WobbleError};
use crate::geometry::packed::Packed4;
use crate::par::*;
use crate::shared_mut::SharedMut;
use crate::solver::{Executor, GaussSeidel, Solver};
use crate::step::{step_window, StepParams, StepReport, Window};
use glam::Vec3;
use std::sync::Arc;

pub use crate::handle::{BodyHandle, ColliderHandle};

/// A body of a [`World`] with its solver and its contact settings.
pub struct WorldBody {
    handle: BodyHandle,
    body: Body,
    solver: Box<dyn Solver>,
    self_collision: Option<SelfCollision>,
    /// The body's predicted surface (`None` for a body without triangles), the collider the
    /// other bodies meet it as.
    surface: Option<MeshCollider>,
    /// The body's topology id when `surface` and the self-collision links were made.
    tables_of: u64,
    /// Its particles inside another body's closed surface, still being pushed out
    /// ([`World::find_tangles`]).
    tangles: Vec<Tangle>,
    /// The residual after every iteration of every substep of the last [`World::step`], when
    /// recorded ([`WorldBody::record_residuals`]).
    residuals: Option<Vec<f32>>,
    /// What the body's last substep reported ([`WorldBody::last_report`]).
    report: StepReport,
    /// Why the body failed in the last [`World::step`] (`None`: it stepped).
    failure: Option<Arc<WobbleError>>,
    /// This substep's buffers: each particle's prediction and its motion to it.
    scratch: SubstepScratch,
}

/// Where [`WorldBody::move_surface`] puts a body's surface.
#[derive(Clone, Copy)]
enum Moved {
    /// At the substep's prediction (the settings of the world's contacts with it).
    Predicted { thickness: f32, friction: f32 },
    /// At the solved positions.
    Solved,
}

/// What a body's prediction pass leaves for the rest of its substep.
#[derive(Default)]
struct SubstepScratch {
    predicted: Vec<Packed4>,
    motion: Vec<Vec3>,
    /// The box of the particles' paths `x → x̃` (own frame, not grown).
    swept: (Vec3, Vec3),
    /// The wind force on each particle at the substep's start (empty without wind).
    wind: Vec<Packed4>,
    /// The rigid sides of its contacts with rapier bodies and the impulses they give.
    #[cfg(feature = "rapier")]
    rigid: rigid::RigidScratch,
    /// Its contacts with other bodies' surfaces and vertices, by contact: where the reaction
    /// goes.
    links: Vec<Link>,
    /// The reactions of its last substep's contacts with other bodies, for those bodies.
    reactions: Vec<Reaction>,
    /// The momentum each of `links`' contacts gave the body this substep.
    gained: Vec<Vec3>,
}

/// A contact of a body's table with another body: the other body's particles its reaction is
/// shared between (a triangle's corners with the contact point's barycentric weights, or one
/// vertex with weight 1 in its first slot).
#[derive(Clone, Copy, Debug)]
struct Link {
    /// The contact's index in the body's [`WorldContacts`] table.
    contact: u32,
    /// The other body's index.
    other: u32,
    /// The other body's particles.
    particles: [u32; 3],
    /// Their shares of the reaction (summing to 1).
    weights: Vec3,
}

/// An impulse (kg m/s) for particle `particle` of body `other`, the opposite of the momentum a
/// contact gave the body that holds it.
#[derive(Clone, Copy, Debug)]
struct Reaction {
    other: u32,
    particle: u32,
    impulse: Vec3,
}

/// A particle of one body found inside another body's closed surface when
/// [`World::find_tangles`] ran: until it is outside again it gets, against that body, only
/// the contact that pushes it out along `direction` (module doc, untangling).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tangle {
    /// The particle (of the body that holds the tangle).
    pub particle: u32,
    /// The body it is inside.
    pub other: BodyHandle,
    /// The unit direction it is pushed out along: from the other body's centroid toward its
    /// own body's, at the time of [`World::find_tangles`].
    pub direction: Vec3,
}

impl WorldBody {
    /// The body's handle.
    #[must_use]
    pub fn handle(&self) -> BodyHandle {
        self.handle
    }
    /// The body (its own shape colliders still apply).
    #[must_use]
    pub fn body(&self) -> &Body {
        &self.body
    }
    /// The body, to change: a change of its constraints or topology (which [`Body`] records)
    /// makes the world rebuild the body's surface and self-collision links before its next
    /// step.
    pub fn body_mut(&mut self) -> &mut Body {
        &mut self.body
    }
    /// The solver that steps it.
    #[must_use]
    pub fn solver(&self) -> &dyn Solver {
        self.solver.as_ref()
    }
    /// The solver that steps it, to change.
    pub fn solver_mut(&mut self) -> &mut dyn Solver {
        self.solver.as_mut()
    }
    /// Replaces the solver that steps it.
    pub fn set_solver(&mut self, solver: Box<dyn Solver>) {
        self.solver = solver;
    }
    /// Self-collision, for cloth and open surfaces (`None`: off; see
    /// [`World::enable_self_collision`]).
    #[must_use]
    pub fn self_collision(&self) -> Option<&SelfCollision> {
        self.self_collision.as_ref()
    }
    /// Self-collision's settings (thickness, travel bound), to change.
    pub fn self_collision_mut(&mut self) -> Option<&mut SelfCollision> {
        self.self_collision.as_mut()
    }
    /// Its particles still inside another body ([`World::find_tangles`]).
    #[must_use]
    pub fn tangles(&self) -> &[Tangle] {
        &self.tangles
    }

    /// Records, from the next [`World::step`] on, the residual (as [`crate::step()`] records
    /// it) after every iteration of every substep of each step, or stops recording. Recording
    /// leaves the body's bits as they are but costs a pass over its constraints per iteration.
    pub fn record_residuals(&mut self, on: bool) {
        self.residuals = on.then(Vec::new);
    }
    /// The residuals [`WorldBody::record_residuals`] asked for, of the last [`World::step`]
    /// (iteration by iteration, substep after substep; empty when not recorded).
    #[must_use]
    pub fn residuals(&self) -> &[f32] {
        self.residuals.as_deref().unwrap_or(&[])
    }

    /// What [`crate::step()`] reported for the body's last substep of the last
    /// [`World::step`]: its `stretch_mean` is the stretch at the end of the step, its warnings
    /// are that substep's (a body that failed keeps the report of its last good substep).
    #[must_use]
    pub fn last_report(&self) -> &StepReport {
        &self.report
    }

    /// Why the body failed in the last [`World::step`], if it did: it was restored to its
    /// state at the start of the substep that failed and held there for the rest of that step.
    #[must_use]
    pub fn failure(&self) -> Option<&WobbleError> {
        self.failure.as_deref()
    }

    /// Moves the body's surface (if it has one) to its prediction for the substep, with the
    /// world's contact settings, or to its solved positions.
    fn move_surface(&mut self, to: Moved) -> Result<()> {
        let WorldBody {
            body,
            surface,
            scratch,
            ..
        } = self;
        let Some(surface) = surface else {
            return Ok(());
        };
        match to {
            Moved::Predicted {
                thickness,
                friction,
            } => {
                surface.update(&scratch.predicted, &scratch.motion, false)?;
                surface.thickness = thickness;
                surface.friction = friction;
            }
            Moved::Solved => {
                let p = &body.particles;
                scratch.motion.clear();
                scratch
                    .motion
                    .extend(p.x.iter().zip(&p.x_prev).map(|(x, x0)| x.xyz() - x0.xyz()));
                surface.update(&p.x, &scratch.motion, true)?;
            }
        }
        // The step may have recentred the body.
        surface.origin = body.origin();
        Ok(())
    }

    /// Rebuilds the surface and the self-collision links if the body's constraints or topology
    /// changed since they were made.
    fn refresh(&mut self, thickness: f32, friction: f32) -> Result<()> {
        if self.tables_of == self.body.topology_id() {
            return Ok(());
        }
        self.body.validate_if_changed()?;
        self.surface = surface_of(&self.body, thickness, friction)?;
        if let Some(sc) = &mut self.self_collision {
            sc.refit(
                &self.body.particles.x,
                &self.body.constraints.distance.pairs,
            )?;
        }
        self.tables_of = self.body.topology_id();
        Ok(())
    }
}

/// The predicted-surface collider of `body` (`None` without triangles).
fn surface_of(body: &Body, thickness: f32, friction: f32) -> Result<Option<MeshCollider>> {
    if body.topology.triangles.is_empty() {
        return Ok(None);
    }
    let mut surface = MeshCollider::over(
        body.particles.x.clone(),
        &body.topology.triangles,
        body.topology.closed,
        thickness,
        friction,
    )?;
    surface.origin = body.origin();
    Ok(Some(surface))
}

/// Where the world's contact table is in `body.constraints.extra` (looked up every time, so
/// that kinds added or removed since the body joined the world never make it stale).
fn contacts_kind(body: &Body) -> Result<usize> {
    body.constraints
        .position_of::<WorldContacts>()
        .ok_or(WobbleError::UnsuitableBody {
            what: "a world step",
            needs: "the contact table World::add_body gives a body (it was removed)",
        })
}

/// What a [`World::step`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorldReport {
    /// Substeps run.
    pub substeps: usize,
    /// Contacts of the last substep over all bodies: plane contacts against meshes and other
    /// bodies, self-collision pairs, and contacts with the bodies' shape colliders.
    pub contacts: usize,
    /// The bodies that failed, in step order (each one's error is
    /// [`WorldBody::failure`]); empty for a healthy step.
    pub failed: Vec<BodyHandle>,
    /// Contacts of the last substep between the bodies and rapier colliders (also counted in
    /// `contacts`; 0 without rapier, `World::set_rapier`).
    pub rigid_contacts: usize,
    /// Total linear impulse the bodies gave the dynamic rapier bodies over the step (N s).
    pub rigid_impulse: Vec3,
}

/// Several bodies and static colliders stepped together. Bodies and mesh colliders are named
/// by handles; the tables the world keeps for a body (its contact table, predicted surface and
/// self-collision links) live beside it and are rebuilt when it changes, so they cannot fall
/// out of step with it.
pub struct World {
    bodies: Vec<WorldBody>,
    meshes: Vec<(ColliderHandle, MeshCollider)>,
    next_handle: u64,
    /// Distance kept between the surfaces of two bodies (m).
    pub thickness: f32,
    /// Coulomb friction between two bodies.
    pub friction: f32,
    /// How far beyond a mesh's or another body's thickness a particle's predicted position may
    /// be and still get a contact (m; the step's `contact_margin` if larger): the solve moves
    /// particles off the path the prediction estimates (a jelly's volume constraint pushes
    /// its surface out by centimetres after an impact), and a contact not found is not held.
    pub search_distance: f32,
    /// The most a contact pushes a particle out of a penetration it already had at the start
    /// of a substep, per second (m/s), beyond following the surface's own motion: a tangled
    /// particle ([`World::find_tangles`]) and one found within the thickness of a surface.
    /// Position-based contacts turn a correction of `δ` in one substep into a velocity
    /// `δ / h`: a centimetre of overlap undone in one of 8 substeps at 60 Hz would launch the
    /// body at 4.8 m/s. Contacts of a particle arriving from outside are not limited.
    pub depenetration_speed: f32,
    /// The threads the bodies are stepped on ([`World::set_executor`]).
    executor: Option<Arc<dyn Executor>>,
    /// What the last [`World::step`] did.
    last_report: WorldReport,
    /// Triangle contacts ([`World::set_triangle_contacts`]).
    triangle_contacts: Option<TriangleContacts>,
    /// The rapier rigid bodies stepped with the soft bodies ([`World::set_rapier`]).
    #[cfg(feature = "rapier")]
    rigid: Option<rigid::RigidBodies>,
}

impl Default for World {
    fn default() -> Self {
        World::new()
    }
}

impl World {
    /// An empty world; bodies keep 1 cm apart with friction 0.5.
    pub fn new() -> Self {
        World {
            bodies: Vec::new(),
            meshes: Vec::new(),
            next_handle: 0,
            thickness: 0.01,
            friction: 0.5,
            search_distance: 0.02,
            depenetration_speed: 0.5,
            executor: None,
            last_report: WorldReport::default(),
            triangle_contacts: None,
            #[cfg(feature = "rapier")]
            rigid: None,
        }
    }

    /// Steps the bodies on `executor`'s threads (a game's one pool for all its bodies, e.g.
    /// `sparse::Pool::executor`); `None`, the default, steps them on rayon's current pool with
    /// the `parallel` feature and in order without it. Bodies that may touch are solved one
    /// after the other, the others at once, one task per body; each body's result does not
    /// depend on which thread steps it, so every executor gives the same bits.
    pub fn set_executor(&mut self, executor: Option<Arc<dyn Executor>>) {
        self.executor = executor;
    }

    /// The executor set by [`World::set_executor`].
    #[must_use]
    pub fn executor(&self) -> Option<&Arc<dyn Executor>> {
        self.executor.as_ref()
    }

    /// Adds `body`, stepped by `solver` (`None`: [`GaussSeidel`]); returns its handle.
    pub fn add_body(
        &mut self,
        mut body: Body,
        solver: Option<Box<dyn Solver>>,
    ) -> Result<BodyHandle> {
        body.validate()?;
        body.constraints_mut()
            .push_kind(Box::new(WorldContacts::default()));
        #[cfg(feature = "rapier")]
        if self.rigid.is_some() {
            rigid::give_table(&mut body);
        }
        let surface = surface_of(&body, self.thickness, self.friction)?;
        let handle = BodyHandle(self.next_handle);
        self.next_handle += 1;
        self.bodies.push(WorldBody {
            handle,
            tables_of: body.topology_id(),
            body,
            solver: solver.unwrap_or_else(|| Box::new(GaussSeidel::default())),
            self_collision: None,
            surface,
            tangles: Vec::new(),
            residuals: None,
            report: StepReport::default(),
            failure: None,
            scratch: SubstepScratch::default(),
        });
        Ok(handle)
    }

    /// Removes body `handle` from the world and gives it back (without the world's contact
    /// table); the other bodies keep their handles.
    pub fn remove_body(&mut self, handle: BodyHandle) -> Result<Body> {
        let at = self.index_of(handle)?;
        let mut body = self.bodies.remove(at).body;
        if let Some(k) = body.constraints.position_of::<WorldContacts>() {
            body.constraints_mut().extra.remove(k);
        }
        #[cfg(feature = "rapier")]
        rigid::take_table(&mut body);
        Ok(body)
    }

    /// Where body `handle` is in the step order, or an error naming the handle.
    fn index_of(&self, handle: BodyHandle) -> Result<usize> {
        self.bodies
            .iter()
            .position(|b| b.handle == handle)
            .ok_or_else(|| WobbleError::InvalidStructure {
                what: "world body handle",
                detail: format!("{handle:?} names no body of this world (removed?)"),
            })
    }

    /// Body `handle`, if it is in the world.
    #[must_use]
    pub fn body(&self, handle: BodyHandle) -> Option<&WorldBody> {
        self.bodies.iter().find(|b| b.handle == handle)
    }

    /// Body `handle`, to change, if it is in the world.
    pub fn body_mut(&mut self, handle: BodyHandle) -> Option<&mut WorldBody> {
        self.bodies.iter_mut().find(|b| b.handle == handle)
    }

    /// The bodies, in the order they were added (the order contacts are solved in).
    pub fn bodies(&self) -> impl ExactSizeIterator<Item = &WorldBody> {
        self.bodies.iter()
    }

    /// The bodies, to change.
    pub fn bodies_mut(&mut self) -> impl ExactSizeIterator<Item = &mut WorldBody> {
        self.bodies.iter_mut()
    }

    /// Number of bodies.
    #[must_use]
    pub fn len(&self) -> usize {
        self.bodies.len()
    }

    /// True when the world has no body.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.bodies.is_empty()
    }

    /// Turns self-collision on for body `handle` at `thickness` (its rest positions are the
    /// current ones; particles joined by one of its distance constraints get no pair contact).
    pub fn enable_self_collision(&mut self, handle: BodyHandle, thickness: f32) -> Result<()> {
        let at = self.index_of(handle)?;
        let b = &mut self.bodies[at];
        let mut sc = SelfCollision::new(&b.body.particles.x, thickness)?;
        sc.skip_linked(&b.body.constraints.distance.pairs)?;
        b.self_collision = Some(sc);
        Ok(())
    }

    /// Finds, for every two bodies `A`, `B` of which `B` has a closed surface, the particles
    /// of `A` inside `B` (generalized winding number above 1/2) and records them as tangles
    /// pushed out along the direction from `B`'s centroid to `A`'s (module doc, untangling);
    /// replaces earlier tangles; returns how many it found. Bodies whose centroids coincide
    /// get none (no direction separates them). Costs one winding number (a pass over `B`'s
    /// triangles) per particle of `A` in `B`'s box: a call at load, not per step.
    pub fn find_tangles(&mut self) -> Result<usize> {
        let common = self
            .bodies
            .first()
            .map_or(glam::DVec3::ZERO, |b| b.body.origin());
        let centroids: Vec<Vec3> = self
            .bodies
            .iter()
            .map(|b| {
                let x = &b.body.particles.x;
                let sum = x
                    .iter()
                    .fold(glam::DVec3::ZERO, |s, p| s + p.xyz().as_dvec3());
                (sum / x.len().max(1) as f64 + b.body.origin() - common).as_vec3()
            })
            .collect();
        let mut found: Vec<Vec<Tangle>> = vec![Vec::new(); self.bodies.len()];
        for (a, tangles) in found.iter_mut().enumerate() {
            for (o, other) in self.bodies.iter().enumerate() {
                let ob = &other.body;
                if o == a || !ob.topology.closed || ob.topology.triangles.is_empty() {
                    continue;
                }
                let direction = (centroids[a] - centroids[o]).normalize_or_zero();
                if direction == Vec3::ZERO {
                    continue;
                }
                let x = &ob.particles.x;
                let (lo, hi) = x.iter().fold(
                    (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
                    |(lo, hi), p| (lo.min(p.xyz()), hi.max(p.xyz())),
                );
                let shift = (self.bodies[a].body.origin() - ob.origin()).as_vec3();
                for (i, p) in self.bodies[a].body.particles.x.iter().enumerate() {
                    let q = p.xyz() + shift;
                    if q.cmplt(lo).any() || q.cmpgt(hi).any() {
                        continue;
                    }
                    if crate::geometry::volume::winding_number(&ob.topology.triangles, x, q) > 0.5 {
                        tangles.push(Tangle {
                            particle: i as u32,
                            other: other.handle,
                            direction,
                        });
                    }
                }
            }
        }
        let mut total = 0;
        for (b, tangles) in self.bodies.iter_mut().zip(found) {
            total += tangles.len();
            b.tangles = tangles;
        }
        Ok(total)
    }

    /// Turns self-collision off for body `handle`.
    pub fn disable_self_collision(&mut self, handle: BodyHandle) -> Result<()> {
        let at = self.index_of(handle)?;
        self.bodies[at].self_collision = None;
        Ok(())
    }

    /// Adds a shape collider (plane, sphere, capsule, box) to every body added so far.
    pub fn add_collider(&mut self, collider: Collider) -> Result<()> {
        collider.validate(0)?;
        for b in &mut self.bodies {
            b.body.add_collider(collider)?;
        }
        Ok(())
    }

    /// Adds a static triangle-mesh collider every body collides with; returns its handle.
    pub fn add_mesh_collider(&mut self, mesh: MeshCollider) -> ColliderHandle {
        let handle = ColliderHandle(self.next_handle);
        self.next_handle += 1;
        self.meshes.push((handle, mesh));
        handle
    }

    /// Removes mesh collider `handle` and gives it back.
    pub fn remove_mesh_collider(&mut self, handle: ColliderHandle) -> Result<MeshCollider> {
        let at = self
            .meshes
            .iter()
            .position(|(h, _)| *h == handle)
            .ok_or_else(|| WobbleError::InvalidStructure {
                what: "world collider handle",
                detail: format!("{handle:?} names no mesh collider of this world (removed?)"),
            })?;
        Ok(self.meshes.remove(at).1)
    }

    /// Mesh collider `handle`, to move (`MeshCollider::set_origin`: it jumps there, with no
    /// motion across the substeps), if it is in the world.
    pub fn mesh_collider_mut(&mut self, handle: ColliderHandle) -> Option<&mut MeshCollider> {
        self.meshes
            .iter_mut()
            .find(|(h, _)| *h == handle)
            .map(|(_, m)| m)
    }

    /// The static triangle-mesh colliders with their handles.
    pub fn mesh_colliders(&self) -> impl ExactSizeIterator<Item = (ColliderHandle, &MeshCollider)> {
        self.meshes.iter().map(|(h, m)| (*h, m))
    }

    /// The contact table of body `handle`.
    #[must_use]
    pub fn contacts(&self, handle: BodyHandle) -> Option<&WorldContacts> {
        let b = self.body(handle)?;
        let k = contacts_kind(&b.body).ok()?;
        b.body.constraints.extra[k].as_any().downcast_ref()
    }

    /// What the last [`World::step`] did, whether it succeeded or a body failed in it.
    #[must_use]
    pub fn last_report(&self) -> &WorldReport {
        &self.last_report
    }

    /// Steps `physics`, a rapier world of rigid bodies, together with the soft bodies (feature
    /// `rapier`, [`crate::world::rigid`]): every body meets every rapier collider, both ways,
    /// and rapier steps once per substep, after the soft bodies, with the step's gravity and the
    /// substep's length. Returns the rapier world it replaces, if any.
    #[cfg(feature = "rapier")]
    pub fn set_rapier(
        &mut self,
        physics: rapier3d::prelude::PhysicsWorld,
    ) -> Option<rapier3d::prelude::PhysicsWorld> {
        for b in &mut self.bodies {
            rigid::give_table(&mut b.body);
        }
        self.rigid
            .replace(rigid::RigidBodies::new(physics))
            .map(|r| r.physics)
    }

    /// Takes the rapier world away from the soft bodies and gives it back.
    #[cfg(feature = "rapier")]
    pub fn take_rapier(&mut self) -> Option<rapier3d::prelude::PhysicsWorld> {
        for b in &mut self.bodies {
            rigid::take_table(&mut b.body);
        }
        self.rigid.take().map(|r| r.physics)
    }

    /// The rapier world stepped with the bodies ([`World::set_rapier`]).
    #[cfg(feature = "rapier")]
    #[must_use]
    pub fn rapier(&self) -> Option<&rapier3d::prelude::PhysicsWorld> {
        self.rigid.as_ref().map(|r| &r.physics)
    }

    /// The rapier world, to add, move or remove rigid bodies between steps (its gravity and
    /// `integration_parameters.dt` are set by every step).
    #[cfg(feature = "rapier")]
    pub fn rapier_mut(&mut self) -> Option<&mut rapier3d::prelude::PhysicsWorld> {
        self.rigid.as_mut().map(|r| &mut r.physics)
    }

    /// Stops (`coupled = false`) or resumes the contacts between the soft bodies and rapier
    /// collider `handle`; an error when the world has no rapier world or it no such collider.
    #[cfg(feature = "rapier")]
    pub fn set_rapier_coupled(
        &mut self,
        handle: rapier3d::prelude::ColliderHandle,
        coupled: bool,
    ) -> Result<()> {
        self.rigid
            .as_mut()
            .ok_or_else(|| {
                rigid::unknown_handle("rapier collider handle (no rapier world)", handle)
            })?
            .set_coupled(handle, coupled)
    }

    /// Linear momentum of the bodies, `Σ m_i v_i` over their free particles (kg m/s).
    #[must_use]
    pub fn soft_momentum(&self) -> Vec3 {
        let sum = self.bodies.iter().fold(glam::DVec3::ZERO, |s, b| {
            let p = &b.body.particles;
            p.x.iter()
                .zip(&p.v)
                .filter(|(x, _)| x.w > 0.0)
                .fold(s, |s, (x, v)| s + v.xyz().as_dvec3() / x.w as f64)
        });
        sum.as_vec3()
    }

    /// Linear momentum of the dynamic rapier bodies, `Σ M V` (kg m/s; zero without rapier).
    #[must_use]
    pub fn rigid_momentum(&self) -> Vec3 {
        #[cfg(feature = "rapier")]
        if let Some(r) = &self.rigid {
            return r.momentum();
        }
        Vec3::ZERO
    }

    /// Total linear momentum of the bodies and the dynamic rapier bodies (kg m/s).
    #[must_use]
    pub fn momentum(&self) -> Vec3 {
        self.soft_momentum() + self.rigid_momentum()
    }

    /// Advances every body by `params.dt` (split into substeps as [`crate::step()`] splits
    /// them), and the rapier world with them when there is one (`World::set_rapier`, feature `rapier`).
    ///
    /// A body that fails (a divergence, a bad value in its state) is restored to its state at
    /// the start of the substep that failed and held there, as a still surface the others
    /// collide with, for the rest of the step; the other bodies finish the step. The step then
    /// returns [`WobbleError::InBody`] naming the first body that failed, and
    /// [`World::last_report`] lists all of them (each one's error is
    /// [`WorldBody::failure`]). Errors that concern the whole world (bad parameters or contact
    /// settings) are returned before anything moves.
    pub fn step(&mut self, params: &StepParams) -> Result<WorldReport> {
        match self.executor.clone() {
            // The whole step on one of the executor's threads: each hand-off to the others is
            // then cheap (see [`Executor`]).
            Some(executor) => {
                let mut result = None;
                executor.run_home(&mut || result = Some(self.step_here(params)));
                result.expect("run_home runs its closure")
            }
            None => self.step_here(params),
        }
    }

    /// [`World::step`] on the calling thread.
    fn step_here(&mut self, params: &StepParams) -> Result<WorldReport> {
        let plan = params.planned()?;
        check_contact_settings(
            ["world thickness", "world friction", "world search_distance"],
            [self.thickness, self.friction, self.search_distance],
        )?;
        check_non_negative("world depenetration_speed", self.depenetration_speed)?;
        let sub = plan.one_substep();
        #[cfg(feature = "rapier")]
        if let Some(r) = &mut self.rigid {
            r.check_state()?;
            r.prepare(&sub);
        }
        for b in &mut self.bodies {
            b.refresh(self.thickness, self.friction)?;
            if let Some(r) = &mut b.residuals {
                r.clear();
            }
            b.failure = None;
        }
        let mut report = WorldReport {
            substeps: plan.substeps,
            ..WorldReport::default()
        };
        for k in 0..plan.substeps {
            let counts = self.substep(&sub, Window::substep(k, plan.substeps))?;
            report.contacts = counts.contacts;
            report.rigid_contacts = counts.rigid_contacts;
            report.rigid_impulse += counts.rigid_impulse;
        }
        report.failed = self
            .bodies
            .iter()
            .filter(|b| b.failure.is_some())
            .map(|b| b.handle)
            .collect();
        self.last_report = report.clone();
        match self.bodies.iter().find(|b| b.failure.is_some()) {
            None => Ok(report),
            Some(b) => Err(WobbleError::InBody {
                body: b.handle,
                source: b.failure.clone().expect("found by its failure"),
            }),
        }
    }

    /// One substep of `sub` (one substep of h = `sub.dt`), the fraction `window` of the
    /// frame; returns its contact counts.
    fn substep(&mut self, sub: &StepParams, window: Window) -> Result<SubstepCounts> {
        let h = sub.dt;
        let damp = (1.0 - sub.damping * h).max(0.0);
        let g = sub.gravity;
        for b in &mut self.bodies {
            if let (Some(sc), None) = (&b.self_collision, &b.failure) {
                sc.clamp_velocities(&mut b.body.particles.v, h);
            }
        }
        // The step loop's prediction (`step::passes::predict`), with the external force `f`
        // (the body's forces and wind) the step integrates: the contacts are searched along
        // the path the step will take.
        let predict = |x: Packed4, v: Packed4, f: Vec3| -> Vec3 {
            if x.w == 0.0 {
                x.xyz()
            } else {
                x.xyz() + h * (v.xyz() * damp + h * (g + f * x.w))
            }
        };
        let reach = self.thickness + sub.contact_margin.max(self.search_distance);
        let (thickness, friction) = (self.thickness, self.friction);
        let common = self
            .bodies
            .first()
            .map_or(glam::DVec3::ZERO, |b| b.body.origin());
        // Each body's prediction and its swept box, in parallel (each body touches only its
        // own).
        let executor = self.executor.as_deref();
        let all: Vec<usize> = (0..self.bodies.len()).collect();
        for_each_body(executor, &mut self.bodies, &all, |_, b| {
            let WorldBody {
                body,
                scratch,
                failure,
                ..
            } = b;
            // A body that failed earlier in this step is held where it was restored.
            let held = failure.is_some();
            let p = &body.particles;
            scratch.reactions.clear();
            scratch.predicted.clear();
            scratch.motion.clear();
            scratch.wind.clear();
            if let (Some(w), false) = (&body.wind, held) {
                scratch.wind.resize(p.x.len(), Packed4::default());
                w.accumulate(&body.topology.triangles, &p.x, &p.v, &mut scratch.wind);
            }
            let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
            for (i, (x, v)) in p.x.iter().zip(&p.v).enumerate() {
                let to = if held {
                    x.xyz()
                } else {
                    predict(*x, *v, external_force(&p.force, &scratch.wind, i))
                };
                lo = lo.min(to.min(x.xyz()));
                hi = hi.max(to.max(x.xyz()));
                scratch.predicted.push(Packed4::new(to, x.w));
                scratch.motion.push(to - x.xyz());
            }
            scratch.swept = (lo, hi);
        });
        // Boxes in the frame of the first body's origin (bodies' frames differ by their
        // origins; the same origin adds an exact zero).
        let boxes: Vec<(Vec3, Vec3)> = self
            .bodies
            .iter()
            .map(|b| {
                let to_common = (b.body.origin() - common).as_vec3();
                let (lo, hi) = b.scratch.swept;
                (
                    lo - Vec3::splat(reach) + to_common,
                    hi + Vec3::splat(reach) + to_common,
                )
            })
            .collect();
        let levels = solve_levels(&boxes);
        let mut counts = SubstepCounts::default();
        // Each body's contacts with the rapier colliders, from its prediction, in parallel
        // (each reads the rapier world and writes only its own table).
        #[cfg(feature = "rapier")]
        if let Some(rigid) = self.rigid.as_ref().map(|r| r.view()) {
            let found: Vec<Result<usize>> =
                for_each_body(executor, &mut self.bodies, &all, |_, b| {
                    let kind = rigid::contacts_kind(&b.body)?;
                    let WorldBody {
                        body,
                        scratch,
                        failure,
                        ..
                    } = b;
                    Ok(rigid.find_contacts(
                        body,
                        kind,
                        &scratch.predicted,
                        failure.is_some(),
                        sub,
                        thickness,
                        reach,
                        &mut scratch.rigid,
                    ))
                });
            for n in found {
                counts.rigid_contacts += n?;
            }
        }
        #[cfg(feature = "rapier")]
        let rigid_friction = self.rigid.as_ref().map(|_| friction);
        #[cfg(not(feature = "rapier"))]
        let rigid_friction = None;
        // A body whose box meets no other body's box has no contact with another body this
        // substep (every path of one stays more than twice the reach from the other's), so
        // its surface is neither moved nor lent to the others; the others' surfaces move to
        // their predictions, in parallel.
        let near = near_another(&boxes);
        let near_ones: Vec<usize> = (0..near.len()).filter(|&i| near[i]).collect();
        let predicted: Vec<Result<()>> =
            for_each_body(executor, &mut self.bodies, &near_ones, |_, b| {
                // A held body is a solved surface already: it does not move this substep.
                b.move_surface(if b.failure.is_some() {
                    Moved::Solved
                } else {
                    Moved::Predicted {
                        thickness,
                        friction,
                    }
                })
            });
        predicted.into_iter().collect::<Result<()>>()?;
        // The triangle contacts' pairs and displacement bounds, from
        // the positions at the substep's start, before any body moves.
        triangle_contacts::begin(&mut self.triangle_contacts, &mut self.bodies, window);
        let triangles = self.triangle_contacts.as_ref();
        let tangles = TangleView::of(&self.bodies);
        let depenetrate = self.depenetration_speed * h;
        let margin = sub.contact_margin.max(self.search_distance);
        let k = sub.correction_scale();
        let mut total = 0;
        for level in 0..=levels.iter().copied().max().unwrap_or(0) {
            // The surfaces are lent out while the bodies of this level step (each reads the
            // others'), and put back after.
            let mut surfaces: Vec<Option<MeshCollider>> = self
                .bodies
                .iter_mut()
                .zip(&near)
                .map(|(b, &near)| if near { b.surface.take() } else { None })
                .collect();
            let meshes: Vec<&MeshCollider> = self.meshes.iter().map(|(_, m)| m).collect();
            let of_level: Vec<usize> = (0..levels.len())
                .filter(|&i| levels[i] == level && self.bodies[i].failure.is_none())
                .collect();
            let results: Vec<(usize, Result<usize>)> =
                for_each_body(executor, &mut self.bodies, &of_level, |index, b| {
                    let r = step_one(
                        b,
                        index,
                        &meshes,
                        &surfaces,
                        &tangles,
                        triangles,
                        depenetrate,
                        sub,
                        margin,
                        k,
                        &predict,
                        window,
                        rigid_friction,
                    );
                    (index, r)
                });
            for ((b, s), &near) in self.bodies.iter_mut().zip(surfaces.iter_mut()).zip(&near) {
                if near {
                    b.surface = s.take();
                }
            }
            for (index, r) in results {
                match r {
                    Ok(n) => total += n,
                    // `step` restored the body to the start of the substep; it is held there
                    // for the rest of the world's step.
                    Err(e) => {
                        self.bodies[index].failure = Some(Arc::new(e));
                        self.bodies[index].scratch.reactions.clear();
                    }
                }
            }
            // The reactions of the level's contacts with other bodies, in body order and
            // contact order (the same sums whatever the thread count): the earlier bodies,
            // solved, get them as velocity; the later ones before they step.
            for &index in &of_level {
                let reactions = std::mem::take(&mut self.bodies[index].scratch.reactions);
                for r in &reactions {
                    let other = &mut self.bodies[r.other as usize];
                    if other.failure.is_some() {
                        continue;
                    }
                    let p = &mut other.body.particles;
                    let w = p.x[r.particle as usize].w;
                    if w > 0.0 {
                        let v = &mut p.v[r.particle as usize];
                        v.set_xyz(v.xyz() + r.impulse * w);
                    }
                }
                self.bodies[index].scratch.reactions = reactions;
            }
            // The level's surfaces moved to their solved positions, in parallel.
            let near_of_level: Vec<usize> = of_level.iter().copied().filter(|&i| near[i]).collect();
            let solved: Vec<Result<()>> =
                for_each_body(executor, &mut self.bodies, &near_of_level, |_, b| {
                    b.move_surface(Moved::Solved)
                });
            solved.into_iter().collect::<Result<()>>()?;
        }
        counts.contacts = total;
        // The reactions of every body's rigid contacts, in body order, then rapier's substep.
        #[cfg(feature = "rapier")]
        if let Some(rigid) = &mut self.rigid {
            counts.rigid_impulse =
                rigid.apply(self.bodies.iter().map(|b| &b.scratch.rigid.reactions[..]));
            rigid.physics.step();
            rigid.check_state()?;
        }
        Ok(counts)
    }
}

/// The external force on particle `i` the step integrates: its force, plus its wind force
/// when the body has wind (`wind` empty otherwise), summed as the step's prediction sums them.
#[inline]
fn external_force(force: &[Packed4], wind: &[Packed4], i: usize) -> Vec3 {
    let f = force[i].xyz();
    match wind.get(i) {
        Some(w) => f + w.xyz(),
        None => f,
    }
}

/// The contact counts of one substep.
#[derive(Default)]
struct SubstepCounts {
    /// Every contact of every body.
    contacts: usize,
    /// Those with rapier colliders.
    rigid_contacts: usize,
    /// The impulse given to the dynamic rapier bodies.
    rigid_impulse: Vec3,
}

/// `f(index, body)` for each body of `selected` (increasing, distinct indices into `bodies`),
/// one task per body: on `executor` when there is one, else on rayon's current pool (the
/// `parallel` feature) or in order; the results in `selected`'s order.
fn for_each_body<R: Send>(
    executor: Option<&dyn Executor>,
    bodies: &mut [WorldBody],
    selected: &[usize],
    f: impl Fn(usize, &mut WorldBody) -> R + Sync + Send,
) -> Vec<R> {
    debug_assert!(selected.windows(2).all(|w| w[0] < w[1]));
    debug_assert!(selected.last().is_none_or(|&i| i < bodies.len()));
    let Some(executor) = executor else {
        return bodies
            .par_iter_mut()
            .enumerate()
            .filter(|(index, _)| selected.binary_search(index).is_ok())
            .map(|(index, b)| f(index, b))
            .collect();
    };
    let mut out: Vec<Option<R>> = selected.iter().map(|_| None).collect();
    let (each, slots) = (SharedMut::new(bodies), SharedMut::new(&mut out));
    executor.run_blocks(selected.len(), &|k| {
        let index = selected[k];
        // SAFETY: the indices of `selected` are distinct and within `bodies`, and block `k`
        // alone writes slot `k`, so no element is touched by two blocks; both slices outlive
        // `run_blocks`, which returns only when every block has run.
        let (body, slot) = unsafe {
            (
                &mut each.range(index..index + 1)[0],
                &mut slots.range(k..k + 1)[0],
            )
        };
        *slot = Some(f(index, body));
    });
    out.into_iter()
        .map(|r| r.expect("run_blocks runs every block"))
        .collect()
}

/// Checks the contact settings a world or a coupling steps with (thickness, friction, search
/// distance, under the names given): each finite and >= 0.
fn check_contact_settings(names: [&'static str; 3], values: [f32; 3]) -> Result<()> {
    names
        .into_iter()
        .zip(values)
        .try_for_each(|(name, value)| check_non_negative(name, value))
}

/// The level at which each body is solved within a substep, from the boxes its particles
/// sweep (grown by the contact reach): a body comes one level after the last body before it
/// whose box it overlaps, so that bodies that may touch are solved one after the other in
/// index order and the others together.
fn solve_levels(boxes: &[(Vec3, Vec3)]) -> Vec<usize> {
    let mut levels: Vec<usize> = Vec::with_capacity(boxes.len());
    for (i, (lo, hi)) in boxes.iter().enumerate() {
        let level = boxes[..i]
            .iter()
            .zip(&levels)
            .filter(|(other, _)| overlap((*lo, *hi), **other))
            .map(|(_, &level)| level + 1)
            .max()
            .unwrap_or(0);
        levels.push(level);
    }
    levels
}

/// Whether the boxes `(lo, hi)` `a` and `b` overlap (touching counts).
fn overlap(a: (Vec3, Vec3), b: (Vec3, Vec3)) -> bool {
    a.0.cmple(b.1).all() && a.1.cmpge(b.0).all()
}

/// Whether each box overlaps another of `boxes`.
fn near_another(boxes: &[(Vec3, Vec3)]) -> Vec<bool> {
    let mut near = vec![false; boxes.len()];
    for (i, &a) in boxes.iter().enumerate() {
        for (j, &b) in boxes.iter().enumerate().skip(i + 1) {
            if overlap(a, b) {
                near[i] = true;
                near[j] = true;
            }
        }
    }
    near
}

/// The tangles of every body at the start of a substep, by body index: what
/// [`step_one`] reads of the other bodies' tangles.
struct TangleView {
    /// Each body's tangles as (particle, index of the body it is inside), sorted.
    by_body: Vec<Vec<(u32, usize)>>,
    /// Each body's handle, by index.
    handles: Vec<BodyHandle>,
}

impl TangleView {
    fn of(bodies: &[WorldBody]) -> Self {
        let handles: Vec<BodyHandle> = bodies.iter().map(|b| b.handle).collect();
        let by_body = bodies
            .iter()
            .map(|b| {
                let mut v: Vec<(u32, usize)> = b
                    .tangles
                    .iter()
                    .filter_map(|t| {
                        let o = handles.iter().position(|&h| h == t.other)?;
                        Some((t.particle, o))
                    })
                    .collect();
                v.sort_unstable();
                v
            })
            .collect();
        TangleView { by_body, handles }
    }

    /// Whether particle `i` of body `b` is tangled with body `o`.
    fn tangled(&self, b: usize, i: u32, o: usize) -> bool {
        self.by_body[b].binary_search(&(i, o)).is_ok()
    }
}

/// Where the ray `from + s direction` (s > 0) leaves the closed surface `c`: the nearest
/// crossing, with the surface's inverse mass and motion over the substep there, when it
/// crosses `c` an odd number of times (`from` is inside); `None` when it crosses an even
/// number (outside). Crossings at the same parameter (the ray through an edge or a vertex,
/// which every triangle around it reports) count once.
fn exit_along(c: &MeshCollider, from: Vec3, direction: Vec3) -> Option<(Vec3, f32, Vec3)> {
    let (lo, hi) = c.bounds();
    let far = from + direction * (2.0 * (hi - lo).length() + (from - lo).length());
    let x = c.vertices();
    let mut hits: Vec<(f32, f32, Vec3)> = Vec::new();
    c.bvh_overlapping(from.min(far), from.max(far), |tri| {
        let [a, b, cc] = tri.map(|v| x[v as usize].xyz());
        if let Some((t, bary)) = crate::geometry::queries::segment_triangle(from, far, a, b, cc) {
            let w = bary.x * x[tri[0] as usize].w
                + bary.y * x[tri[1] as usize].w
                + bary.z * x[tri[2] as usize].w;
            hits.push((t, w, c.motion_at(tri, bary)));
        }
    });
    hits.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    // Relative to the ray's length: well below any feature of a mesh it crosses.
    hits.dedup_by(|b, a| b.0 - a.0 <= 1e-6);
    if hits.len().is_multiple_of(2) {
        return None;
    }
    let (t, w, motion) = hits[0];
    Some((from + (far - from) * t, w, motion))
}

/// Step 3 of a substep (module doc) for body `index`; returns its contact count.
#[allow(clippy::too_many_arguments)]
fn step_one(
    b: &mut WorldBody,
    index: usize,
    meshes: &[&MeshCollider],
    surfaces: &[Option<MeshCollider>],
    tangles: &TangleView,
    triangles: Option<&TriangleContacts>,
    depenetrate: f32,
    sub: &StepParams,
    margin: f32,
    k: f32,
    predict: &(dyn Fn(Packed4, Packed4, Vec3) -> Vec3 + Sync),
    window: Window,
    rigid_friction: Option<f32>,
) -> Result<usize> {
    let WorldBody {
        body,
        solver,
        self_collision,
        tangles: own_tangles,
        scratch,
        residuals,
        report,
        ..
    } = b;
    let kind = contacts_kind(body)?;
    // A body in the triangle contacts meets the other bodies with
    // triangles through them alone.
    let by_triangles = triangle_contacts::takes_part(triangles, body);
    let scale = body.constraints.distance.mean_rest();
    let table: &mut WorldContacts = body.constraints.extra[kind]
        .as_any_mut()
        .downcast_mut()
        .expect("the world's contact table");
    table.clear(scale);
    scratch.links.clear();
    scratch.reactions.clear();
    let p = &body.particles;
    let h2 = sub.dt * sub.dt;
    let others = surfaces
        .iter()
        .enumerate()
        .filter(|(o, _)| *o != index && !by_triangles)
        .filter_map(|(o, s)| Some((s.as_ref()?, Some(o))));
    let origin = body.origin;
    // Each collider with the shift that takes a point of this body's frame into its own
    // (`origin - collider origin`; zero, and exact, for colliders in the same frame) and the
    // index of the body it is the surface of (`None` for a static mesh). Only the colliders
    // within reach of the box of this body's paths: the test each particle's path gets below
    // passes only for those, so this leaves the contacts as they are and saves the test of
    // every particle against every far body.
    let (swept_lo, swept_hi) = scratch.swept;
    let colliders: Vec<(&MeshCollider, Vec3, Option<usize>)> = meshes
        .iter()
        .map(|&c| (c, None))
        .chain(others)
        .map(|(c, o)| (c, (origin - c.origin).as_vec3(), o))
        .filter(|&(c, d, _)| {
            let (lo, hi) = c.bounds();
            let reach = Vec3::splat(c.thickness + margin);
            overlap((swept_lo + d, swept_hi + d), (lo - reach, hi + reach))
        })
        .collect();
    // Tangled particles: pushed out of the body they are inside along their direction, at
    // most `depenetrate` per substep beyond the motion of the surface they leave by (so that
    // two parts falling together still come apart); released once found outside.
    if !own_tangles.is_empty() {
        let mut released = Vec::new();
        for (t, tangle) in own_tangles.iter().enumerate() {
            let i = tangle.particle as usize;
            let Some(o) = tangles.handles.iter().position(|&h| h == tangle.other) else {
                released.push(t);
                continue;
            };
            let (Some(c), Some(x)) = (surfaces[o].as_ref(), p.x.get(i)) else {
                released.push(t);
                continue;
            };
            if x.w == 0.0 {
                continue;
            }
            let d = (origin - c.origin).as_vec3();
            let n = tangle.direction;
            match exit_along(c, x.xyz() + d, n) {
                None => released.push(t),
                Some((exit, surface_w, motion)) => {
                    let offset =
                        (n.dot(exit - d) + c.thickness).min(n.dot(x.xyz() + motion) + depenetrate);
                    let alpha = if c.solved { 0.0 } else { surface_w * h2 };
                    table.push_plane(i as u32, n, offset, 0.0, Vec3::ZERO, alpha);
                }
            }
        }
        for t in released.into_iter().rev() {
            own_tangles.swap_remove(t);
        }
    }
    if !colliders.is_empty() {
        for (i, (x, v)) in p.x.iter().zip(&p.v).enumerate() {
            if x.w == 0.0 {
                continue;
            }
            let f = external_force(&p.force, &scratch.wind, i);
            let (from, to) = (x.xyz(), predict(*x, *v, f));
            for &(c, d, o) in &colliders {
                if o.is_some_and(|o| tangles.tangled(index, i as u32, o)) {
                    continue;
                }
                let (from, to) = (from + d, to + d);
                let (lo, hi) = c.bounds();
                let reach = Vec3::splat(c.thickness + margin);
                if from.min(to).cmpgt(hi + reach).any() || from.max(to).cmplt(lo - reach).any() {
                    continue;
                }
                if let Some(hit) = c.contact(from, to, margin) {
                    let alpha = if c.solved { 0.0 } else { hit.surface_w * h2 };
                    // `n · (x + d) >= offset` in the collider's frame is
                    // `n · x >= offset - n · d` in this body's. A particle that starts the
                    // substep inside the thickness follows the surface's motion and leaves
                    // at most `depenetrate` further (`World::depenetration_speed`); one
                    // arriving from outside gets the whole offset.
                    let n = hit.normal;
                    let offset = (hit.offset - n.dot(d))
                        .min(n.dot(x.xyz()) + n.dot(hit.motion) + depenetrate);
                    if let Some(o) = o {
                        scratch.links.push(Link {
                            contact: table.len() as u32,
                            other: o as u32,
                            particles: hit.triangle,
                            weights: hit.bary,
                        });
                    }
                    table.push_plane(i as u32, hit.normal, offset, c.friction, hit.motion, alpha);
                }
            }
        }
    }
    // The solved bodies' vertices against this body's own (predicted) surface: without these,
    // a lower block's edge could pass through the face of the block resting on it between
    // that face's particles.
    if let Some(own) = surfaces[index].as_ref().filter(|_| !by_triangles) {
        let (lo, hi) = own.bounds();
        let reach = Vec3::splat(own.thickness + margin);
        for (o, solved) in surfaces.iter().enumerate() {
            let Some(solved) = solved.as_ref().filter(|s| s.solved && o != index) else {
                continue;
            };
            // The solved surface's vertices moved into this body's frame.
            let d = (solved.origin - origin).as_vec3();
            let (slo, shi) = solved.bounds();
            let (slo, shi) = (slo + d, shi + d);
            if slo.cmpgt(hi + reach).any() || shi.cmplt(lo - reach).any() {
                continue;
            }
            for (v, q) in solved.vertices().iter().enumerate() {
                if tangles.tangled(o, v as u32, index) {
                    continue;
                }
                let point = q.xyz() + d;
                if point.cmpgt(hi + reach).any() || point.cmplt(lo - reach).any() {
                    continue;
                }
                if let Some(hit) = own.contact(point, point, margin) {
                    // `n · t <= n · q - thickness` for the triangle's point `t` and the
                    // vertex `q`. A triangle already closer than the thickness at the start
                    // of the substep follows the vertex's motion and leaves at most
                    // `depenetrate` further (`World::depenetration_speed`); `hit.offset -
                    // thickness` is `n · t` on the predicted surface, `hit.motion` what `t`
                    // moved to get there.
                    let n = hit.normal;
                    let start = hit.offset - own.thickness - n.dot(hit.motion);
                    let offset = (n.dot(point) - own.thickness)
                        .max(start + n.dot(solved.vertex_motion(v)) - depenetrate);
                    scratch.links.push(Link {
                        contact: table.len() as u32,
                        other: o as u32,
                        particles: [v as u32; 3],
                        weights: Vec3::X,
                    });
                    table.push_triangle(hit.triangle, hit.bary, hit.normal, offset);
                }
            }
        }
    }
    if let Some(sc) = self_collision {
        sc.find_pairs(&p.x, table)?;
    }
    let count = table.len();
    // The body's triangle contacts around its step, then friction and the displacement bound.
    let lent = |o: usize| {
        surfaces[o]
            .as_ref()
            .map(|c| (c.vertices(), c.origin, c.solved))
    };
    let (stepped, triangle_count) = triangle_contacts::around_step(
        triangles,
        body,
        index,
        &lent,
        sub.dt,
        depenetrate,
        k,
        |body| step_window(body, sub, solver.as_mut(), residuals.as_mut(), window),
    )?;
    *report = stepped;
    let offset = body.constraints.offsets()[kind + 1];
    let table: &WorldContacts = body.constraints.extra[kind]
        .as_any()
        .downcast_ref()
        .expect("the world's contact table");
    let lambda = &body.scratch.lambda[offset..offset + count];
    let p = &mut body.particles;
    // The momentum each contact with another body gave this one, `k λ Σ ∇C / h`, plus its
    // friction's; the other body gets the opposite, shared by the link's weights.
    let inv_h = 1.0 / sub.dt;
    let SubstepScratch {
        links,
        gained,
        reactions,
        ..
    } = &mut *scratch;
    gained.clear();
    gained.extend(
        links.iter().map(|l| {
            table.pushed_momentum(l.contact as usize, lambda[l.contact as usize], k) * inv_h
        }),
    );
    table.apply_friction(lambda, k, inv_h, &mut p.x, &p.x_prev, &mut p.v, |c, dp| {
        if let Ok(at) = links.binary_search_by_key(&(c as u32), |l| l.contact) {
            gained[at] += dp;
        }
    });
    for (l, g) in links.iter().zip(gained.iter()) {
        for (particle, weight) in l.particles.into_iter().zip(l.weights.to_array()) {
            if weight != 0.0 {
                reactions.push(Reaction {
                    other: l.other,
                    particle,
                    impulse: -*g * weight,
                });
            }
        }
    }
    // Friction on the contacts with rapier colliders and the impulses they give back.
    let rigid_count = match rigid_friction {
        #[cfg(feature = "rapier")]
        Some(mu) => {
            let kind = rigid::contacts_kind(body)?;
            rigid::reactions(body, kind, sub, mu, &mut scratch.rigid)
        }
        _ => 0,
    };
    Ok(count + triangle_count + rigid_count + body.scratch.contacts.len())
}

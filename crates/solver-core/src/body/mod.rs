//! A body: particles, constraints, the surface/volume topology, colliders and attachments,
//! and the body's origin in the world.
//!
//! # Large worlds: particles relative to a body origin
//!
//! A particle's position is stored in `f32` *relative to the body's origin*
//! ([`Body::origin`], a world position in `f64`): world = origin + x. An `f32` coordinate of
//! magnitude `|x|` is a multiple of its unit in the last place, `ulp(x) = 2^(⌊log2 |x|⌋ - 23)`,
//! so a body whose particles were stored in world coordinates at 10 km would live on a grid of
//! 1 mm (at 100 km, 8 mm): the solver's corrections, and a substep's motion `h v`, would be
//! rounded to that grid, and a cloth far out is another cloth (issue 34: its mean stretch
//! 17% to 27% above the same cloth at the origin). The solve only ever meets differences of
//! positions (constraint gradients, `v = (x* - x₀) / h`, contact distances), which are
//! translation invariant; what it needs is coordinates no larger than the body, which the
//! origin gives it wherever the body is.
//!
//! The origin follows the body (Jolt does the same for its soft bodies, whose vertices are
//! kept relative to the body's position and recentred every step). After every successful
//! [`crate::step()`] the body looks at a sample of its particles (the first, the middle and
//! the last: three loads, so a body that stays put pays nothing measurable); when one of them
//! has a coordinate beyond [`Body::recentre_distance`] the body is *recentred*: the mean of
//! its positions `c` (in `f64`) becomes the new origin, `origin += c`, and every stored
//! position (current and previous), attachment target and grab target becomes
//! `fl32(x - c)`, computed in `f64` and rounded once. A body placed away from the world's
//! origin ([`Body::translate`], [`Body::set_origin`], a builder's `origin`) and one built at
//! the world's origin alike follow themselves so by default, at twice the largest sampled
//! coordinate at construction, at least 1 m, which keeps their coordinates within a few body
//! sizes: within one or two bits of the precision the same body has at the origin, however far
//! it travels (Jolt's force test, a cube pushed 200 m, keeps its velocity to 1e-4 relative:
//! `tests/force_response.rs`). [`Body::keep_origin`] turns it off, for a body that stays near
//! the world's origin and code that reads its particles as world positions; world positions
//! are [`Body::world_position`], [`Body::positions_into`] and [`Body::positions_f64_into`].
//!
//! The shift is *rounding-aware, not exact*: `x - c` is exact when its result lies in the
//! binade of `x` or a lower one, but a particle that the shift carries further from the
//! origin (the far side of the body) is rounded, by at most half an ulp of its new
//! coordinate (for a body of 2 m, at most 1.2e-7 m). No exact shift exists for every
//! particle at once: a shift by a power-of-two multiple keeps a value on its grid only when
//! the result does not grow. The rounding touches positions, never velocities (stored apart;
//! the next prediction sets `x₀ = x`, so a shifted position never becomes a velocity), so a
//! recentre changes no momentum; it is a perturbation of the size of the solver's own f32
//! rounding, once per recentre. The mean `c` is snapped to a grid of 2^-16 m, so that the
//! origin's own update `origin + c` is exact in `f64` (for an origin on that grid within
//! 2^36 m, as every origin a recentre or an integer translation makes is): the body recentred
//! far out gets the bits of the same body recentred at the world's origin.
//!
//! What meets world coordinates converts at the edge: shape colliders ([`Body::colliders`])
//! are given in world coordinates and the step moves them into the body frame each step
//! (nothing is done for a body at the world's origin); attachment and grab targets are
//! stored in the body frame and given in world coordinates ([`Body::move_attachment`],
//! [`Body::move_attachment_world`]); read-back is [`Body::positions_into`] (world, `f32`) and
//! [`Body::positions_f64_into`] (world, `f64`), while [`Particles`] and its accessors are in
//! the body frame. A body placed far out is built near the origin and moved there exactly
//! with [`Body::translate`] (or a builder's `origin`), which changes only the origin.

pub mod particles;
pub mod state;

use crate::body::particles::Particles;
use crate::collide::{Collider, Contact};
use crate::constraints::{ConstraintKind, Constraints, Drag};
use crate::error::{check_finite, Result, WobbleError};
use crate::error::{check_index, check_indices};
use crate::geometry::packed::Packed4;
use crate::wind::Wind;
use glam::{DVec3, Vec3};
use std::sync::atomic::{AtomicU64, Ordering};

/// The smallest default [`Body::recentre_distance`] (m).
const MIN_RECENTRE_DISTANCE: f32 = 1.0;

static NEXT_TOPOLOGY_ID: AtomicU64 = AtomicU64::new(1);

/// A fresh, process-unique topology id.
pub fn fresh_topology_id() -> u64 {
    NEXT_TOPOLOGY_ID.fetch_add(1, Ordering::Relaxed)
}

/// Mesh connectivity kept beside the constraints (for figures, rendering and physics).
#[derive(Clone, Debug, Default)]
pub struct Topology {
    /// Surface triangles (counter-clockwise seen from outside for closed surfaces).
    pub triangles: Vec<[u32; 3]>,
    /// Tetrahedra (positive signed volume in the rest pose).
    pub tets: Vec<[u32; 4]>,
    /// Number of leading distance constraints that are structural (stretch figures use them).
    pub structural: usize,
    /// True when `triangles` is a closed, consistently oriented surface.
    pub closed: bool,
    /// Enclosed volume in the rest pose (closed surfaces and tet meshes; 0 otherwise).
    pub rest_volume: f32,
}

/// A particle driven to a target every substep (a moving pin); its targets are in the body
/// frame (relative to [`Body::origin`]).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Attachment {
    /// The attached particle (pinned while attached).
    pub particle: u32,
    /// Where the particle is at the start of the next step.
    pub from: Vec3,
    /// Where it must be at the end of the next step; substeps interpolate linearly.
    pub to: Vec3,
}

/// Buffers the step loop reuses, so that stepping does not allocate.
#[derive(Clone, Debug, Default)]
pub struct StepScratch {
    /// Positions at the start of the step (the last good state, for rollback) when the step
    /// has several substeps; empty with one substep, whose `Particles::x_prev` keeps them.
    pub backup_x: Vec<Packed4>,
    /// Velocities at the start of the step.
    pub backup_v: Vec<Packed4>,
    /// Contacts found for the current substep.
    pub contacts: Vec<Contact>,
    /// One XPBD multiplier per constraint (global numbering).
    pub lambda: Vec<f32>,
    /// Wind force per particle for the current substep (sized on first use).
    pub wind_force: Vec<Packed4>,
    /// Per-block sums of the stretch figure of [`crate::step::StepReport`].
    pub stretch_partials: Vec<f64>,
    /// The shape colliders moved into the body frame, for a body whose origin is not the
    /// world's (refreshed every step).
    pub local_colliders: Vec<Collider>,
    /// Moving colliders at the current substep's end and start (filled when some collider
    /// moves).
    pub substep_colliders: Vec<Collider>,
    /// See `substep_colliders`.
    pub substep_start_colliders: Vec<Collider>,
}

/// A simulated body.
///
/// What a solver prepares from (the constraint tables and the topology) is private: it is read
/// through [`Body::constraints`] and [`Body::topology`] and changed only through
/// [`Body::constraints_mut`] and [`Body::topology_mut`], which record the change (a new
/// [`Body::topology_id`]), so that a solver prepared for the old tables is prepared again before
/// it runs. Positions, velocities and masses are the game's to set ([`Body::particles`]); the
/// step checks that the particle count is still the one the solver was prepared for.
#[derive(Clone, Debug, Default)]
pub struct Body {
    /// The particles.
    pub(crate) particles: Particles,
    /// The constraints.
    pub(crate) constraints: Constraints,
    /// Triangles, tetrahedra and what the figures need to know of them.
    pub(crate) topology: Topology,
    /// Static or kinematic colliders, in world coordinates (the step moves them into the body
    /// frame).
    pub(crate) colliders: Vec<Collider>,
    /// Moving attachments (targets in the body frame).
    pub(crate) attachments: Vec<Attachment>,
    /// Wind on the body's triangles, evaluated every substep (`None`: still air).
    pub(crate) wind: Option<Wind>,
    /// Reused buffers of the step loop.
    pub(crate) scratch: StepScratch,
    topology_id: u64,
    /// The topology id [`Body::validate`] last passed for (0: none): a step validates the body
    /// again when its tables have changed since.
    validated_topology: u64,
    /// Where the body frame's zero is in the world (see the [module](self) doc).
    pub(crate) origin: DVec3,
    /// A sampled coordinate beyond this (m) recentres the body after a step.
    recentre_distance: f32,
}

impl Body {
    /// Assembles a body and checks it: indices in range, finite positions, valid masses.
    pub fn new(particles: Particles, constraints: Constraints, topology: Topology) -> Result<Self> {
        let body = Body {
            particles,
            constraints,
            topology,
            colliders: Vec::new(),
            attachments: Vec::new(),
            wind: None,
            scratch: StepScratch::default(),
            topology_id: fresh_topology_id(),
            validated_topology: 0,
            origin: DVec3::ZERO,
            recentre_distance: 0.0,
        };
        body.validate()?;
        // Every body follows itself by default (module doc): the safe behaviour for one that
        // travels, whatever its start.
        let mut body = body;
        body.recentre_distance = body.default_recentre_distance();
        Ok(body)
    }

    /// The world position of the body frame's zero: a particle's world position is
    /// `origin + x` (see the [module](self) doc).
    #[must_use]
    pub fn origin(&self) -> DVec3 {
        self.origin
    }

    /// Moves the body by `offset` in the world, exactly: only the origin changes (in `f64`),
    /// every stored coordinate, velocity and target stays as it is. The way to place a body
    /// far from the world's origin: build it near the origin, then translate it. The shape
    /// colliders stay where they are in the world.
    pub fn translate(&mut self, offset: DVec3) -> Result<()> {
        check_finite("origin offset", 0, (offset.x + offset.y + offset.z) as f32)?;
        let origin = self.origin + offset;
        check_finite("origin", 0, (origin.x + origin.y + origin.z) as f32)?;
        self.origin = origin;
        Ok(())
    }

    /// Twice the largest sampled coordinate, at least 1 m.
    fn default_recentre_distance(&self) -> f32 {
        (2.0 * self.sampled_extent()).max(MIN_RECENTRE_DISTANCE)
    }

    /// Makes `origin` the body frame's zero without moving the body: every stored position,
    /// previous position, attachment target and constraint target (grabs, skinned vertices) is
    /// re-expressed relative to it,
    /// each computed in `f64` and rounded once to `f32` (the rounding the module doc bounds).
    pub fn set_origin(&mut self, origin: DVec3) -> Result<()> {
        check_finite("origin", 0, (origin.x + origin.y + origin.z) as f32)?;
        let shift = origin - self.origin;
        let moved = |v: Vec3| (v.as_dvec3() - shift).as_vec3();
        let p = &mut self.particles;
        for x in p.x.iter_mut().chain(p.x_prev.iter_mut()) {
            x.set_xyz(moved(x.xyz()));
        }
        for a in self.attachments.iter_mut() {
            a.from = moved(a.from);
            a.to = moved(a.to);
        }
        for kind in self.constraints.extra.iter_mut() {
            kind.move_frame(shift);
        }
        self.origin = origin;
        Ok(())
    }

    /// Moves the origin to the mean of the body's positions (see the [module](self) doc); the
    /// step does this when a sampled particle is beyond [`Body::recentre_distance`].
    pub fn recentre(&mut self) -> Result<()> {
        let n = self.particles.len().max(1) as f64;
        let sum = self
            .particles
            .x
            .iter()
            .fold(DVec3::ZERO, |s, x| s + x.xyz().as_dvec3());
        // The shift is snapped to a grid of 2^-16 m (15 µm), on which `origin + c` and the
        // shift `(origin + c) - origin` are exact in f64 for any origin on that grid within
        // 2^36 m: a body recentred at 100 km then gets the same shift, and so the same bits in
        // its body frame, as the same body recentred at the origin.
        const GRID: f64 = 65536.0;
        let c = (sum / n * GRID).round() / GRID;
        self.set_origin(self.origin + c)
    }

    /// A sampled coordinate (first, middle and last particle) beyond this distance from the
    /// origin recentres the body after a step.
    #[must_use]
    pub fn recentre_distance(&self) -> f32 {
        self.recentre_distance
    }

    /// Sets [`Body::recentre_distance`] (m, > 0; smaller keeps coordinates smaller, at the cost
    /// of a pass over the particles at each recentre). A body that travels far from where it
    /// was built (a thrown or pushed body) calls this, or [`Body::follow`].
    pub fn set_recentre_distance(&mut self, distance: f32) -> Result<()> {
        crate::error::check_positive("recentre distance", distance)?;
        self.recentre_distance = distance;
        Ok(())
    }

    /// Turns recentring on at the default distance (twice the largest coordinate of the
    /// sampled particles now, at least 1 m): what every body does from its construction, so
    /// this is for one that [`Body::keep_origin`] turned off.
    pub fn follow(&mut self) {
        self.recentre_distance = self.default_recentre_distance();
    }

    /// Turns recentring off: the origin stays where it is until [`Body::translate`],
    /// [`Body::set_origin`] or [`Body::recentre`] moves it, so the particles' coordinates stay
    /// world positions minus a fixed origin (for a body that never travels far, read by code
    /// that takes [`Body::particles`] as world positions). A body that travels then loses
    /// precision as its coordinates grow (module doc).
    pub fn keep_origin(&mut self) {
        self.recentre_distance = f32::INFINITY;
    }

    /// True when the body recentres as it travels (the default; [`Body::keep_origin`] turns
    /// it off).
    #[must_use]
    pub fn follows(&self) -> bool {
        self.recentre_distance.is_finite()
    }

    /// The largest coordinate (in absolute value) of the sampled particles.
    fn sampled_extent(&self) -> f32 {
        let x = &self.particles.x;
        if x.is_empty() {
            return 0.0;
        }
        [0, x.len() / 2, x.len() - 1]
            .into_iter()
            .map(|i| x[i].xyz().abs().max_element())
            .fold(0.0, f32::max)
    }

    /// Recentres the body when a sampled particle has gone beyond the recentre distance (the
    /// step's last act; a NaN never compares above, and a diverged step has restored the body).
    pub(crate) fn recentre_if_far(&mut self) {
        if self.sampled_extent() > self.recentre_distance {
            // Finite by the step's check, so the new origin is finite.
            let _ = self.recentre();
        }
    }

    /// A world position in the body frame (`p - origin`, in `f64`, rounded once).
    #[must_use]
    pub fn to_local(&self, p: DVec3) -> Vec3 {
        (p - self.origin).as_vec3()
    }

    /// A body-frame position in the world (`origin + p`, in `f64`).
    #[must_use]
    pub fn to_world(&self, p: Vec3) -> DVec3 {
        self.origin + p.as_dvec3()
    }

    /// The world position of particle `i`, in `f64`.
    #[must_use]
    pub fn world_position(&self, i: usize) -> DVec3 {
        self.to_world(self.particles.position(i))
    }

    /// Writes every particle's world position into `out` (one entry per particle, as
    /// `[f32; 3]`, `Vec3` or `Vec3A`), rounded to `f32`: the read-back a renderer does every
    /// frame ([`Particles::positions_into`] writes the body-frame positions; a renderer far
    /// from the world's origin draws relative to its camera with
    /// [`Body::positions_f64_into`]).
    pub fn positions_into<P: crate::geometry::packed::Xyz>(&self, out: &mut [P]) -> Result<()> {
        if self.origin == DVec3::ZERO {
            return self.particles.positions_into(out);
        }
        crate::geometry::packed::check_buffer(
            "position read-back buffer",
            out.len(),
            self.particles.len(),
        )?;
        for (o, x) in out.iter_mut().zip(self.world_positions_f64()) {
            o.set(x.as_vec3());
        }
        Ok(())
    }

    /// Writes every particle's world position into `out` in `f64`.
    pub fn positions_f64_into(&self, out: &mut [DVec3]) -> Result<()> {
        crate::geometry::packed::check_buffer(
            "position read-back buffer",
            out.len(),
            self.particles.len(),
        )?;
        for (o, x) in out.iter_mut().zip(self.world_positions_f64()) {
            *o = x;
        }
        Ok(())
    }

    /// Every particle's world position in `f64`, in particle order.
    fn world_positions_f64(&self) -> impl Iterator<Item = DVec3> + '_ {
        self.particles
            .x
            .iter()
            .map(|x| self.origin + x.xyz().as_dvec3())
    }

    /// Checks every invariant the solvers rely on.
    pub fn validate(&self) -> Result<()> {
        let n = self.particles.len();
        if n == 0 {
            return Err(WobbleError::EmptyMesh("body".into()));
        }
        for (k, p) in self.particles.x.iter().enumerate() {
            check_finite("position x", k, p.x)?;
            check_finite("position y", k, p.y)?;
            check_finite("position z", k, p.z)?;
            if !(p.w.is_finite() && p.w >= 0.0) {
                return Err(WobbleError::BadMass {
                    what: "particle (inverse)",
                    index: k,
                    value: p.w,
                });
            }
        }
        self.validate_tables()
    }

    /// The part of [`Body::validate`] that concerns the tables (constraints, triangles,
    /// tetrahedra), not the particles' values, which the step's input check names and puts
    /// back itself.
    fn validate_tables(&self) -> Result<()> {
        let n = self.particles.len();
        let d = &self.constraints.distance;
        if d.rest.len() != d.pairs.len() || d.compliance.len() != d.pairs.len() {
            return Err(WobbleError::InvalidStructure {
                what: "distance constraints",
                detail: format!(
                    "{} pairs, {} rest lengths and {} compliances: there must be one of each per constraint",
                    d.pairs.len(),
                    d.rest.len(),
                    d.compliance.len()
                ),
            });
        }
        for kind in self.constraints.kinds() {
            for c in 0..kind.len() {
                let ids = kind.particles(c);
                for (a, &p) in ids.iter().enumerate() {
                    check_index(kind.name(), c, p as usize, n)?;
                    // Global kinds check their (long) particle lists when they are built.
                    if !kind.is_global() && ids[..a].contains(&p) {
                        return Err(WobbleError::RepeatedParticle {
                            kind: kind.name(),
                            index: c,
                            particle: p,
                        });
                    }
                }
            }
        }
        for (t, tri) in self.topology.triangles.iter().enumerate() {
            check_indices("triangle", t, tri, n)?;
        }
        for (t, tet) in self.topology.tets.iter().enumerate() {
            check_indices("tetrahedron", t, tet, n)?;
        }
        Ok(())
    }

    /// Process-unique id of the current topology; solvers rebuild their structures when it changes.
    pub fn topology_id(&self) -> u64 {
        self.topology_id
    }

    /// [`Body::validate`] when the body's tables changed since it last passed (a game may
    /// have changed them through [`Body::constraints_mut`] or [`Body::topology_mut`]): what a
    /// step does before it prepares its solver, so that a table left inconsistent is an error,
    /// not a panic inside the solve.
    pub(crate) fn validate_if_changed(&mut self) -> Result<()> {
        if self.validated_topology != self.topology_id {
            self.validate_tables()?;
            self.validated_topology = self.topology_id;
        }
        Ok(())
    }

    /// Declares that particles were added, removed or renumbered (changes made through
    /// [`Body::constraints_mut`] and [`Body::topology_mut`] are recorded by those).
    pub fn topology_changed(&mut self) {
        self.topology_id = fresh_topology_id();
    }

    /// The constraint tables.
    #[must_use]
    pub fn constraints(&self) -> &Constraints {
        &self.constraints
    }

    /// The constraint tables, to change: records the change, so the body's solver prepares
    /// again before its next step.
    pub fn constraints_mut(&mut self) -> &mut Constraints {
        self.topology_changed();
        &mut self.constraints
    }

    /// Triangles, tetrahedra and what the figures need to know of them.
    #[must_use]
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// The topology, to change: records the change (a world rebuilds the body's surface).
    pub fn topology_mut(&mut self) -> &mut Topology {
        self.topology_changed();
        &mut self.topology
    }

    /// Number of particles.
    pub fn len(&self) -> usize {
        self.particles.len()
    }

    /// True when the body has no particle.
    pub fn is_empty(&self) -> bool {
        self.particles.is_empty()
    }

    /// The particles: positions, velocities, masses, forces.
    #[inline]
    #[must_use]
    pub fn particles(&self) -> &Particles {
        &self.particles
    }

    /// The particles, to change: their arrays as slices whose length cannot change, and
    /// methods for pins, masses, velocities and teleports ([`Particles`]).
    #[inline]
    pub fn particles_mut(&mut self) -> &mut Particles {
        &mut self.particles
    }

    /// The shape colliders (plane, sphere, capsule, box), in world coordinates.
    #[must_use]
    pub fn colliders(&self) -> &[Collider] {
        &self.colliders
    }

    /// The shape colliders, to change in place (the step checks them before it moves
    /// anything; to move one across the next step, use [`Body::move_collider`]).
    pub fn colliders_mut(&mut self) -> &mut [Collider] {
        &mut self.colliders
    }

    /// Adds a shape collider; an error for a bad one (a non-finite place, a negative radius or
    /// friction), which is not added.
    pub fn add_collider(&mut self, collider: Collider) -> Result<usize> {
        collider.validate(self.colliders.len())?;
        self.colliders.push(collider);
        Ok(self.colliders.len() - 1)
    }

    /// Removes shape collider `k` and gives it back (the later ones move down one index).
    pub fn remove_collider(&mut self, k: usize) -> Result<Collider> {
        check_index("collider", k, k, self.colliders.len())?;
        Ok(self.colliders.remove(k))
    }

    /// Removes every shape collider.
    pub fn clear_colliders(&mut self) {
        self.colliders.clear();
    }

    /// The moving attachments, in the order [`Body::attach`] made them.
    #[must_use]
    pub fn attachments(&self) -> &[Attachment] {
        &self.attachments
    }

    /// Puts every attachment's start at its target, as the end of a step does (for an
    /// integrator of a game's own that steps the body without [`crate::step()`]).
    pub fn complete_attachments(&mut self) {
        for a in &mut self.attachments {
            a.from = a.to;
        }
    }

    /// The wind on the body's triangles (`None`: still air).
    #[must_use]
    pub fn wind(&self) -> Option<&Wind> {
        self.wind.as_ref()
    }

    /// Sets the wind on the body's triangles (`None`: still air); an error for a bad one,
    /// which leaves the wind as it was.
    pub fn set_wind(&mut self, wind: Option<Wind>) -> Result<()> {
        if let Some(w) = &wind {
            w.validate()?;
        }
        self.wind = wind;
        Ok(())
    }

    /// The wind, to change its speed or direction between steps (the step checks it).
    pub fn wind_mut(&mut self) -> Option<&mut Wind> {
        self.wind.as_mut()
    }

    /// Sets the shape collider `k` has at the end of the next step ([`Collider::move_to`]):
    /// the step moves it there across its substeps, friction and restitution relative to its
    /// surface's motion (a character's body proxy following its skeleton).
    pub fn move_collider(&mut self, k: usize, shape: crate::collide::Shape) -> Result<()> {
        check_index("collider", k, k, self.colliders.len())?;
        self.colliders[k].move_to(shape)
    }

    /// Attaches particle `i` where it is now, pinning it; move it with [`Body::move_attachment`].
    pub fn attach(&mut self, i: u32) -> Result<usize> {
        check_index("attachment", self.attachments.len(), i as usize, self.len())?;
        self.particles.pin(i as usize)?;
        let p = self.particles.position(i as usize);
        self.attachments.push(Attachment {
            particle: i,
            from: p,
            to: p,
        });
        Ok(self.attachments.len() - 1)
    }

    /// Sets where attachment `a` must be at the end of the next step, in world coordinates
    /// (rounded to `f32` first: far from the world's origin use
    /// [`Body::move_attachment_world`]).
    pub fn move_attachment(&mut self, a: usize, target: Vec3) -> Result<()> {
        check_finite("attachment target", a, target.x + target.y + target.z)?;
        self.move_attachment_world(a, target.as_dvec3())
    }

    /// Sets where attachment `a` must be at the end of the next step, in world coordinates in
    /// `f64`.
    pub fn move_attachment_world(&mut self, a: usize, target: DVec3) -> Result<()> {
        let local = self.to_local(target);
        check_finite("attachment target", a, local.x + local.y + local.z)?;
        check_index("attachment", a, a, self.attachments.len())?;
        self.attachments[a].to = local;
        Ok(())
    }

    /// Releases attachment `a`, giving its particle `mass` back.
    pub fn release_attachment(&mut self, a: usize, mass: f32) -> Result<()> {
        check_index("attachment", a, a, self.attachments.len())?;
        let at = self.attachments.remove(a);
        self.particles.set_mass(at.particle as usize, mass)
    }

    /// The grab (drag) table, if a grab made one: its position among the kinds of
    /// `constraints.extra`, and the table.
    pub(crate) fn drag_table_mut(&mut self) -> Option<(usize, &mut Drag)> {
        self.constraints
            .extra
            .iter_mut()
            .enumerate()
            .find_map(|(k, kind)| kind.as_any_mut().downcast_mut::<Drag>().map(|d| (k, d)))
    }

    /// The grab (drag) table, if a grab made one.
    pub(crate) fn drag_table(&self) -> Option<&Drag> {
        self.constraints
            .extra
            .iter()
            .find_map(|kind| kind.as_any().downcast_ref::<Drag>())
    }

    /// Renumbers the particles: particle `old` becomes `new_index[old]` in the particles, the
    /// constraints, the topology and the attachments (a cache-friendlier order); records the
    /// change.
    pub fn renumber_particles(&mut self, new_index: &[u32]) -> Result<()> {
        check_permutation(new_index, self.len())?;
        let p = &mut self.particles;
        permute(&mut p.x, new_index);
        permute(&mut p.x_prev, new_index);
        permute(&mut p.v, new_index);
        permute(&mut p.force, new_index);
        permute(&mut p.mass, new_index);
        self.constraints.distance.remap_particles(new_index);
        for kind in &mut self.constraints.extra {
            kind.remap_particles(new_index);
        }
        let map = |q: &mut u32| *q = new_index[*q as usize];
        self.topology.triangles.iter_mut().flatten().for_each(map);
        self.topology.tets.iter_mut().flatten().for_each(map);
        self.attachments
            .iter_mut()
            .for_each(|a| a.particle = new_index[a.particle as usize]);
        self.scratch.contacts.clear();
        self.topology_changed();
        self.validate()
    }

    /// The shape-collider contacts of the last substep.
    #[must_use]
    pub fn contacts(&self) -> &[Contact] {
        &self.scratch.contacts
    }

    /// The XPBD multipliers of the last step's last substep, one per constraint (global
    /// numbering, [`Constraints::offsets`]); empty before the first step.
    #[must_use]
    pub fn multipliers(&self) -> &[f32] {
        &self.scratch.lambda
    }
}

/// `v[new_index[old]] = v[old]` for every entry.
fn permute<T: Copy + Default>(v: &mut Vec<T>, new_index: &[u32]) {
    let mut out = vec![T::default(); v.len()];
    for (old, &new) in new_index.iter().enumerate() {
        out[new as usize] = v[old];
    }
    *v = out;
}

/// Checks that `new_index` is a permutation of `0..n`.
pub fn check_permutation(new_index: &[u32], n: usize) -> Result<(), WobbleError> {
    if new_index.len() != n {
        return Err(WobbleError::BadCount {
            name: "permutation length",
            value: new_index.len() as u64,
            max: n as u64,
        });
    }
    let mut seen = vec![false; n];
    for (old, &new) in new_index.iter().enumerate() {
        if new as usize >= n || seen[new as usize] {
            return Err(WobbleError::IndexOutOfRange {
                what: "permutation (not a bijection)",
                index: old,
                value: new as u64,
                len: n,
            });
        }
        seen[new as usize] = true;
    }
    Ok(())
}

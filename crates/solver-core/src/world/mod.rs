//! A world of several bodies and static colliders stepped together: contacts between bodies,
//! against triangle meshes and within a body (self-collision), found once per substep and
//! solved inside the iterations.
//!
//! Each substep of [`World::step`] does:
//!
//! 1. clamp the velocities of self-colliding bodies ([`SelfCollision`], bounded travel);
//! 2. predict every body's surface, `x̃ = x + h (d v + h g)` (the step loop's prediction
//!    without the external forces), as a [`MeshCollider`] the other bodies collide with, and
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
//! its shape instead of yielding a dent the load then sinks into. Bodies of one level cannot
//! touch each other this substep, so they are stepped in parallel (rayon, with the `parallel`
//! feature); the levels depend on the boxes alone, so every result is the same bits for any
//! thread count, or without threads. The contact constraint and its XPBD update, and the
//! friction, are in [`crate::world::contacts`].
//!
//! Remaining failures: a body is solved against the prediction of the bodies after it, so two
//! bodies closing faster than their thickness per substep may overlap by what they moved in
//! it (more substeps cure it); a particle already deep inside another body at the start
//! (bodies created intersecting) is pushed out through the nearest face, which may be the far
//! one; resting bodies keep a jitter of about 1 to 3 cm/s in their particles' mean speed (a
//! few hundredths of a millimetre per substep; the `stack` test bounds the motion over a
//! second instead); balls on balls roll off, as they should; a chain of bodies in contact is
//! solved one after the other, so a pile of many bodies loses the parallelism; see also [`crate::world::mesh_collider`] and
//! [`crate::world::self_collision`].

pub mod contacts;
pub mod mesh_collider;
pub mod self_collision;

pub use contacts::WorldContacts;
pub use mesh_collider::{MeshCollider, PlaneHit};
pub use self_collision::SelfCollision;

use crate::body::Body;
use crate::collide::Collider;
use crate::constraints::ConstraintKind;
use crate::error::{check_index, check_non_negative, Result, WobbleError};
use crate::geometry::packed::Packed4;
use crate::par::*;
use crate::solver::{GaussSeidel, Solver};
use crate::step::{step, StepParams};
use glam::Vec3;

/// A body of a [`World`] with its solver and its contact settings.
pub struct WorldBody {
    /// The body (its own shape colliders in `body.colliders` still apply).
    pub body: Body,
    /// The solver that steps it.
    pub solver: Box<dyn Solver>,
    /// Self-collision, for cloth and open surfaces (`None`: off).
    pub self_collision: Option<SelfCollision>,
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
}

/// Several bodies and static colliders stepped together.
pub struct World {
    /// The bodies.
    pub bodies: Vec<WorldBody>,
    /// Static triangle-mesh colliders every body collides with.
    pub meshes: Vec<MeshCollider>,
    /// Distance kept between the surfaces of two bodies (m).
    pub thickness: f32,
    /// Coulomb friction between two bodies.
    pub friction: f32,
    /// How far beyond a mesh's or another body's thickness a particle's predicted position may
    /// be and still get a contact (m; the step's `contact_margin` if larger): the solve moves
    /// particles off the path the prediction estimates (a jelly's volume constraint pushes
    /// its surface out by centimetres after an impact), and a contact not found is not held.
    pub search_distance: f32,
    /// The predicted surface of each body (`None` for a body without triangles).
    surfaces: Vec<Option<MeshCollider>>,
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
            thickness: 0.01,
            friction: 0.5,
            search_distance: 0.02,
            surfaces: Vec::new(),
        }
    }

    /// Adds `body`, stepped by `solver` (`None`: [`GaussSeidel`]); returns its index.
    pub fn add_body(&mut self, mut body: Body, solver: Option<Box<dyn Solver>>) -> Result<usize> {
        body.validate()?;
        body.constraints
            .push_kind(Box::new(WorldContacts::default()));
        body.topology_changed();
        let surface = if body.topology.triangles.is_empty() {
            None
        } else {
            Some(MeshCollider::over(
                body.particles.x.clone(),
                &body.topology.triangles,
                body.topology.closed,
                self.thickness,
                self.friction,
            )?)
        };
        self.surfaces.push(surface);
        self.bodies.push(WorldBody {
            body,
            solver: solver.unwrap_or_else(|| Box::new(GaussSeidel::default())),
            self_collision: None,
        });
        Ok(self.bodies.len() - 1)
    }

    /// Turns self-collision on for body `index` at `thickness` (its rest positions are the
    /// current ones; particles joined by one of its distance constraints get no pair contact).
    pub fn enable_self_collision(&mut self, index: usize, thickness: f32) -> Result<()> {
        check_index("world body", 0, index, self.bodies.len())?;
        let b = &mut self.bodies[index];
        let mut sc = SelfCollision::new(&b.body.particles.x, thickness)?;
        sc.skip_linked(&b.body.constraints.distance.pairs)?;
        b.self_collision = Some(sc);
        Ok(())
    }

    /// Adds a shape collider (plane, sphere, capsule, box) to every body added so far.
    pub fn add_collider(&mut self, collider: Collider) -> Result<()> {
        collider.validate(0)?;
        for b in &mut self.bodies {
            b.body.add_collider(collider);
        }
        Ok(())
    }

    /// The contact table of body `index`.
    pub fn contacts(&self, index: usize) -> Option<&WorldContacts> {
        let b = self.bodies.get(index)?;
        let k = contacts_kind(&b.body).ok()?;
        b.body.constraints.extra[k].as_any().downcast_ref()
    }

    /// Advances every body by `params.dt` (split into substeps as [`crate::step()`] splits
    /// them). A body that fails is restored to its state at the start of that substep and
    /// the error names it ([`WobbleError::InBody`]); the others are stepped.
    pub fn step(&mut self, params: &StepParams) -> Result<WorldReport> {
        let plan = params.planned()?;
        check_contact_settings(
            ["world thickness", "world friction", "world search_distance"],
            [self.thickness, self.friction, self.search_distance],
        )?;
        let sub = plan.one_substep();
        let mut report = WorldReport {
            substeps: plan.substeps,
            contacts: 0,
        };
        for _ in 0..plan.substeps {
            report.contacts = self.substep(&sub)?;
        }
        Ok(report)
    }

    /// One substep of `sub` (one substep of h = `sub.dt`); returns the contact count.
    fn substep(&mut self, sub: &StepParams) -> Result<usize> {
        let h = sub.dt;
        let damp = (1.0 - sub.damping * h).max(0.0);
        let g = sub.gravity;
        for b in &mut self.bodies {
            if let Some(sc) = &b.self_collision {
                sc.clamp_velocities(&mut b.body.particles.v, h);
            }
        }
        let predict = |x: Packed4, v: Packed4| -> Vec3 {
            if x.w == 0.0 {
                x.xyz()
            } else {
                x.xyz() + h * (v.xyz() * damp + h * g)
            }
        };
        let reach = self.thickness + sub.contact_margin.max(self.search_distance);
        let mut motion = Vec::new();
        let mut predicted = Vec::new();
        let mut boxes = Vec::with_capacity(self.bodies.len());
        for (b, surface) in self.bodies.iter().zip(self.surfaces.iter_mut()) {
            let p = &b.body.particles;
            predicted.clear();
            motion.clear();
            let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
            for (x, v) in p.x.iter().zip(&p.v) {
                let to = predict(*x, *v);
                lo = lo.min(to.min(x.xyz()));
                hi = hi.max(to.max(x.xyz()));
                predicted.push(Packed4::new(to, x.w));
                motion.push(to - x.xyz());
            }
            boxes.push((lo - Vec3::splat(reach), hi + Vec3::splat(reach)));
            if let Some(surface) = surface {
                surface.update(&predicted, &motion, false)?;
                surface.thickness = self.thickness;
                surface.friction = self.friction;
            }
        }
        let levels = solve_levels(&boxes);
        let margin = sub.contact_margin.max(self.search_distance);
        let k = sub.correction_scale();
        let mut total = 0;
        for level in 0..=levels.iter().copied().max().unwrap_or(0) {
            let (meshes, surfaces) = (&self.meshes, &self.surfaces);
            let results: Vec<(usize, Result<usize>)> = self
                .bodies
                .par_iter_mut()
                .enumerate()
                .filter(|(index, _)| levels[*index] == level)
                .map(|(index, b)| {
                    let r = step_one(b, index, meshes, surfaces, sub, margin, k, &predict);
                    (index, r)
                })
                .collect();
            for (index, r) in results {
                match r {
                    Ok(n) => total += n,
                    Err(e) => {
                        return Err(WobbleError::InBody {
                            index,
                            source: Box::new(e),
                        })
                    }
                }
                if let Some(surface) = &mut self.surfaces[index] {
                    let p = &self.bodies[index].body.particles;
                    motion.clear();
                    motion.extend(p.x.iter().zip(&p.x_prev).map(|(x, x0)| x.xyz() - x0.xyz()));
                    surface.update(&p.x, &motion, true)?;
                }
            }
        }
        Ok(total)
    }
}

/// Checks the contact settings a world or a coupling steps with (thickness, friction, search
/// distance, under the names given): each finite and >= 0.
pub(crate) fn check_contact_settings(names: [&'static str; 3], values: [f32; 3]) -> Result<()> {
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
            .filter(|((l, h), _)| lo.cmple(*h).all() && hi.cmpge(*l).all())
            .map(|(_, &level)| level + 1)
            .max()
            .unwrap_or(0);
        levels.push(level);
    }
    levels
}

/// Step 3 of a substep (module doc) for body `index`; returns its contact count.
#[allow(clippy::too_many_arguments)]
fn step_one(
    b: &mut WorldBody,
    index: usize,
    meshes: &[MeshCollider],
    surfaces: &[Option<MeshCollider>],
    sub: &StepParams,
    margin: f32,
    k: f32,
    predict: &(dyn Fn(Packed4, Packed4) -> Vec3 + Sync),
) -> Result<usize> {
    let WorldBody {
        body,
        solver,
        self_collision,
    } = b;
    let kind = contacts_kind(body)?;
    let scale = body.constraints.distance.mean_rest();
    let table: &mut WorldContacts = body.constraints.extra[kind]
        .as_any_mut()
        .downcast_mut()
        .expect("the world's contact table");
    table.clear(scale);
    let p = &body.particles;
    let h2 = sub.dt * sub.dt;
    let others = surfaces
        .iter()
        .enumerate()
        .filter(|(o, _)| *o != index)
        .filter_map(|(_, s)| s.as_ref());
    let colliders: Vec<&MeshCollider> = meshes.iter().chain(others).collect();
    if !colliders.is_empty() {
        for (i, (x, v)) in p.x.iter().zip(&p.v).enumerate() {
            if x.w == 0.0 {
                continue;
            }
            let (from, to) = (x.xyz(), predict(*x, *v));
            for c in &colliders {
                let (lo, hi) = c.bounds();
                let reach = Vec3::splat(c.thickness + margin);
                if from.min(to).cmpgt(hi + reach).any() || from.max(to).cmplt(lo - reach).any() {
                    continue;
                }
                if let Some(hit) = c.contact(from, to, margin) {
                    let alpha = if c.solved { 0.0 } else { hit.surface_w * h2 };
                    table.push_plane(
                        i as u32, hit.normal, hit.offset, c.friction, hit.motion, alpha,
                    );
                }
            }
        }
    }
    // The solved bodies' vertices against this body's own (predicted) surface: without these,
    // a lower block's edge could pass through the face of the block resting on it between
    // that face's particles.
    if let Some(own) = &surfaces[index] {
        let (lo, hi) = own.bounds();
        let reach = Vec3::splat(own.thickness + margin);
        for (o, solved) in surfaces.iter().enumerate() {
            let Some(solved) = solved.as_ref().filter(|s| s.solved && o != index) else {
                continue;
            };
            let (slo, shi) = solved.bounds();
            if slo.cmpgt(hi + reach).any() || shi.cmplt(lo - reach).any() {
                continue;
            }
            for q in solved.vertices() {
                let point = q.xyz();
                if point.cmpgt(hi + reach).any() || point.cmplt(lo - reach).any() {
                    continue;
                }
                if let Some(hit) = own.contact(point, point, margin) {
                    let offset = hit.normal.dot(point) - own.thickness;
                    table.push_triangle(hit.triangle, hit.bary, hit.normal, offset);
                }
            }
        }
    }
    if let Some(sc) = self_collision {
        sc.find_pairs(&p.x, table)?;
    }
    let count = table.len();
    step(body, sub, solver.as_mut(), None)?;
    let offset = body.constraints.offsets()[kind + 1];
    let table: &WorldContacts = body.constraints.extra[kind]
        .as_any()
        .downcast_ref()
        .expect("the world's contact table");
    let lambda = &body.scratch.lambda[offset..offset + count];
    let p = &mut body.particles;
    table.apply_friction(lambda, k, 1.0 / sub.dt, &mut p.x, &p.x_prev, &mut p.v);
    Ok(count + body.scratch.contacts.len())
}

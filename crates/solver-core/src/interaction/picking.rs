//! Interaction: ray picking through a refitted bounding volume hierarchy (BVH), grabs
//! that pull a picked surface point toward a moving target (the [`Drag`] constraint kind), and
//! impulses at points.
//!
//! Picking rays go through [`TriangleBvh`] (see [`crate::geometry::bvh`]).
//!
//! The drag constraint on a surface point `p = Σ b_k x_k` of a triangle is
//! `C = |Σ b_k x_k - target|` with `∇_k C = b_k n`, `n = (p - target)/|p - target|`, and a
//! compliance, like a mouse spring (Müller et al. 2007 grab the nearest vertex instead; a
//! barycentric point makes grabbing independent of the mesh resolution). An impulse `J` at a
//! surface point goes to the corners as `b_k J`, which conserves momentum.

use crate::body::Body;
use crate::constraints::check_compliance;
pub use crate::constraints::drag::{Drag, GrabId};
use crate::error::{check_finite, Result, WobbleError};
pub use crate::geometry::bvh::{raycast_brute_force, Hit, TriangleBvh, LEAF_SIZE};
use glam::Vec3;
use std::sync::atomic::{AtomicU64, Ordering};

static NEXT_GRAB: AtomicU64 = AtomicU64::new(1);

/// The drag table (its position among the body's kinds) and the constraint of grab `id`.
fn active_grab(body: &mut Body, id: GrabId) -> Result<(usize, &mut Drag, usize)> {
    let (k, d) = body.drag_table_mut().ok_or_else(|| no_grab_table(id))?;
    let c = grab_index(d, id)?;
    Ok((k, d, c))
}

/// The error for grab `id` on a body that has no drag table.
fn no_grab_table(id: GrabId) -> WobbleError {
    WobbleError::NoSuchGrab(format!("{}: the body has no grab", id.0))
}

/// The constraint of grab `id` in the drag table `d`.
fn grab_index(d: &Drag, id: GrabId) -> Result<usize> {
    d.ids
        .iter()
        .position(|&g| g == id)
        .ok_or_else(|| WobbleError::NoSuchGrab(format!("{}", id.0)))
}

/// Grabs the picked point: adds a drag constraint with `compliance` whose target starts at
/// the point itself. The step loop projects drags itself, outside the solvers' colorings, so
/// while the drag table is the body's last kind (it is put there when the first grab makes it)
/// no solver needs to rebuild; otherwise the topology id is renewed.
pub fn grab(body: &mut Body, hit: &Hit, compliance: f32) -> Result<GrabId> {
    check_compliance(compliance)?;
    crate::error::check_particles("drag", 0, &hit.corners, body.len())?;
    for (k, &b) in hit.barycentric.iter().enumerate() {
        check_finite("barycentric weight", k, b)?;
    }
    check_finite("grab point", 0, hit.point.x + hit.point.y + hit.point.z)?;
    let id = GrabId(NEXT_GRAB.fetch_add(1, Ordering::Relaxed));
    let x = &body.particles.x;
    let b = hit.barycentric;
    let target = x[hit.corners[0] as usize].xyz() * b[0]
        + x[hit.corners[1] as usize].xyz() * b[1]
        + x[hit.corners[2] as usize].xyz() * b[2];
    if body.drag_table_mut().is_none() {
        body.constraints.push_kind(Box::new(Drag::default()));
    }
    let kinds = body.constraints.extra.len();
    let (k, d) = body.drag_table_mut().expect("just added");
    d.ids.push(id);
    d.corners.push(hit.corners);
    d.weights.push(b);
    d.targets.push(target);
    d.compliance.push(compliance);
    if k + 1 != kinds {
        body.topology_changed();
    }
    Ok(id)
}

/// Moves a grab's target, given in world coordinates (no topology change: solvers keep their
/// structures); far from the world's origin, [`move_grab_world`] takes it in `f64`.
pub fn move_grab(body: &mut Body, id: GrabId, target: Vec3) -> Result<()> {
    check_finite("drag target", 0, target.x + target.y + target.z)?;
    move_grab_world(body, id, target.as_dvec3())
}

/// Moves a grab's target, given in world coordinates in `f64` (stored in the body frame).
pub fn move_grab_world(body: &mut Body, id: GrabId, target: glam::DVec3) -> Result<()> {
    let local = body.to_local(target);
    check_finite("drag target", 0, local.x + local.y + local.z)?;
    let (_, d, c) = active_grab(body, id)?;
    d.targets[c] = local;
    Ok(())
}

/// Releases a grab (the drag constraint goes; as for [`grab`], the topology id is renewed only
/// when the drag table is not the body's last kind).
pub fn release(body: &mut Body, id: GrabId) -> Result<()> {
    let kinds = body.constraints.extra.len();
    let (k, d, c) = active_grab(body, id)?;
    d.ids.remove(c);
    d.corners.remove(c);
    d.weights.remove(c);
    d.targets.remove(c);
    d.compliance.remove(c);
    if d.ids.is_empty() {
        body.constraints.extra.remove(k);
    }
    if k + 1 != kinds {
        body.topology_changed();
    }
    Ok(())
}

/// Where an active grab is: its surface point now and the target it is pulled toward, both in
/// the body frame (relative to [`Body::origin`]; [`Body::to_world`] gives them in the world).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GrabState {
    /// The grabbed surface point at the body's current positions.
    pub point: Vec3,
    /// Where it is pulled (set by [`grab`] to the point itself, then by [`move_grab`]).
    pub target: Vec3,
    /// The corner particles of the grabbed triangle.
    pub corners: [u32; 3],
    /// The point's barycentric weights in that triangle.
    pub weights: [f32; 3],
    /// The drag's compliance (m/N).
    pub compliance: f32,
}

impl GrabState {
    /// How far the point is from its target (m).
    pub fn gap(&self) -> f32 {
        (self.point - self.target).length()
    }
}

/// Where grab `id` is now and where it is pulled; an error if it is not active.
pub fn grab_state(body: &Body, id: GrabId) -> Result<GrabState> {
    let d = body.drag_table().ok_or_else(|| no_grab_table(id))?;
    let c = grab_index(d, id)?;
    let (corners, weights) = (d.corners[c], d.weights[c]);
    Ok(GrabState {
        point: blend(body, corners, weights),
        target: d.targets[c],
        corners,
        weights,
        compliance: d.compliance[c],
    })
}

/// The body's active grabs, oldest first.
pub fn active_grabs(body: &Body) -> Vec<GrabId> {
    body.drag_table().map_or_else(Vec::new, |d| d.ids.clone())
}

/// Where the surface point a ray hit is now, at the body's current positions (it moves with
/// the surface, grabbed or not), in world coordinates.
pub fn surface_point(body: &Body, hit: &Hit) -> Result<Vec3> {
    crate::error::check_particles("surface point", 0, &hit.corners, body.len())?;
    for (k, &b) in hit.barycentric.iter().enumerate() {
        check_finite("barycentric weight", k, b)?;
    }
    Ok(body
        .to_world(blend(body, hit.corners, hit.barycentric))
        .as_vec3())
}

/// `Σ b_k x_k` over a triangle's corners (indices checked by the caller).
fn blend(body: &Body, corners: [u32; 3], weights: [f32; 3]) -> Vec3 {
    (0..3)
        .map(|k| body.particles.position(corners[k] as usize) * weights[k])
        .sum()
}

/// Ray picking on one body: a [`TriangleBvh`] over its surface triangles, refitted to its
/// current positions at every pick, so a pick never sees a stale surface.
#[derive(Clone, Debug)]
pub struct Picker {
    bvh: TriangleBvh,
    triangles: usize,
}

impl Picker {
    /// A picker over `body`'s surface triangles (`body.topology().triangles`).
    pub fn new(body: &Body) -> Result<Self> {
        Ok(Picker {
            bvh: TriangleBvh::build(&body.topology.triangles, &body.particles.x)?,
            triangles: body.topology.triangles.len(),
        })
    }

    /// The nearest surface point of `body` that the ray `origin + s dir` (s in
    /// 0..=max_distance, `origin` and the hit's point in world coordinates) hits, both faces
    /// counting. `body` must be the body the picker was
    /// made for (or one with the same triangles).
    pub fn pick(
        &mut self,
        body: &Body,
        origin: Vec3,
        dir: Vec3,
        max_distance: f32,
    ) -> Result<Option<Hit>> {
        if body.topology.triangles.len() != self.triangles {
            return Err(WobbleError::InvalidStructure {
                what: "picker",
                detail: format!(
                    "it was made for {} triangles and the body has {}: make a new Picker for it",
                    self.triangles,
                    body.topology.triangles.len()
                ),
            });
        }
        self.bvh.refit(&body.particles.x)?;
        // The ray in the body frame, the hit point back in the world.
        let local = body.to_local(origin.as_dvec3());
        let hit = self
            .bvh
            .raycast(&body.particles.x, local, dir, max_distance)?;
        Ok(hit.map(|mut h| {
            h.point = body.to_world(h.point).as_vec3();
            h
        }))
    }
}

/// Applies an impulse (N·s) at a picked surface point: corner k gets `b_k impulse`.
pub fn impulse_at(body: &mut Body, hit: &Hit, impulse: Vec3) -> Result<()> {
    crate::error::check_particles("impulse point", 0, &hit.corners, body.len())?;
    for (k, &c) in hit.corners.iter().enumerate() {
        check_finite("barycentric weight", k, hit.barycentric[k])?;
        body.particles
            .add_impulse(c as usize, impulse * hit.barycentric[k])?;
    }
    Ok(())
}

/// Moves the whole body by `offset` without changing its velocities (a teleport).
pub fn teleport_body(body: &mut Body, offset: Vec3) -> Result<()> {
    check_finite("teleport offset", 0, offset.x + offset.y + offset.z)?;
    for (x, x0) in body
        .particles
        .x
        .iter_mut()
        .zip(body.particles.x_prev.iter_mut())
    {
        x.set_xyz(x.xyz() + offset);
        x0.set_xyz(x0.xyz() + offset);
    }
    for a in body.attachments.iter_mut() {
        a.from += offset;
        a.to += offset;
    }
    Ok(())
}

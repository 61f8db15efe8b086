//! The step's check of its input: what a game can write into a body between two steps.
//!
//! A game writes positions, velocities, inverse masses (lane w of a position, 0 = pinned) and
//! external forces straight into the particle arrays, attachment (moving pin) targets into
//! [`Body::attachments`], and drag targets into the public [`Drag`] table. [`crate::step()`]
//! refuses to start from any such value that is not finite (or an inverse mass that is
//! negative) with [`WobbleError::BadState`], naming the first one (particles first, in index
//! order, each field in the order position, inverse mass, velocity, external force; then
//! attachments, then drag constraints), and puts every bad value back to a finite one, so that
//! the body is finite after the error and the next step runs:
//!
//! | value | put back to |
//! | --- | --- |
//! | a position component | the particle's previous one (`x_prev`, where the last substep started it), or 0 if that is not finite either |
//! | an inverse mass | the previous one, or the one the particle's mass implies |
//! | a velocity component | 0 |
//! | an external force | 0, with every pending force (as any step clears them) |
//! | an attachment's `from` or `to` | the attached particle's position |
//! | a drag target | the grabbed point's current position (the grab holds still) |
//! | drag weights | a third each (the triangle's centroid) |
//! | a drag compliance (not finite or negative) | 0 |
//!
//! The particles are checked in the prediction's pass of the first substep
//! (`step::passes::predict`), which reads every input value anyway; the attachments
//! and drag constraints (a handful in a game) in `check_tables` before it. Nothing is
//! stepped when a value is bad. An index out of range (an attachment's particle, a drag
//! constraint's corner) is refused with [`WobbleError::IndexOutOfRange`].

use crate::body::Body;
use crate::constraints::Drag;
use crate::error::check_index;
use crate::error::{Result, WobbleError};
use crate::geometry::packed::Packed4;
use glam::Vec3;

/// A bad value found: what holds it, which one, the field, the value, why and what replaced it.
type Bad = (
    &'static str,
    usize,
    &'static str,
    f32,
    &'static str,
    &'static str,
);

fn error((what, index, field, value, reason, restored): Bad) -> WobbleError {
    WobbleError::BadState {
        what,
        index,
        field,
        value,
        reason,
        restored,
    }
}

const NOT_FINITE: &str = "is not finite";

/// The first bad input value of one particle: field, value, reason, what it becomes.
fn particle_field(
    x: Packed4,
    v: Packed4,
    f: Packed4,
) -> Option<(&'static str, f32, &'static str, &'static str)> {
    const POSITION: [&str; 3] = ["position x", "position y", "position z"];
    const VELOCITY: [&str; 3] = ["velocity x", "velocity y", "velocity z"];
    const FORCE: [&str; 4] = [
        "external force x",
        "external force y",
        "external force z",
        "external force w",
    ];
    let restored_x = "the particle's previous position (x_prev)";
    for (k, c) in [x.x, x.y, x.z].into_iter().enumerate() {
        if !c.is_finite() {
            return Some((POSITION[k], c, NOT_FINITE, restored_x));
        }
    }
    let restored_w = "the particle's previous inverse mass";
    let w = "inverse mass (position w)";
    if !x.w.is_finite() {
        return Some((w, x.w, NOT_FINITE, restored_w));
    }
    if x.w < 0.0 {
        return Some((w, x.w, "is negative", restored_w));
    }
    for (k, c) in [v.x, v.y, v.z, v.w].into_iter().enumerate().take(3) {
        if !c.is_finite() {
            return Some((VELOCITY[k], c, NOT_FINITE, "0 in that component"));
        }
    }
    // Lane w of a velocity is never read, but the prediction's check covers all four lanes.
    if !v.w.is_finite() {
        return Some(("velocity w (unused lane)", v.w, NOT_FINITE, "0"));
    }
    for (k, c) in [f.x, f.y, f.z, f.w].into_iter().enumerate() {
        if !c.is_finite() {
            return Some((
                FORCE[k],
                c,
                NOT_FINITE,
                "0, with every pending external force (as a step clears them)",
            ));
        }
    }
    None
}

/// The repaired position of a bad particle: every component that is still not finite (its
/// previous one was not either) becomes 0, an inverse mass that is still bad the one `mass`
/// implies.
fn finish_position(mut x: Packed4, mass: f32) -> Packed4 {
    for c in [&mut x.x, &mut x.y, &mut x.z] {
        if !c.is_finite() {
            *c = 0.0;
        }
    }
    if !(x.w.is_finite() && x.w >= 0.0) {
        x.w = if mass > 0.0 && mass.is_finite() {
            1.0 / mass
        } else {
            0.0
        };
    }
    x
}

fn finite_lanes(mut v: Packed4) -> Packed4 {
    for c in [&mut v.x, &mut v.y, &mut v.z, &mut v.w] {
        if !c.is_finite() {
            *c = 0.0;
        }
    }
    v
}

/// After the prediction of the first substep found a bad input: every particle's input is in
/// `x_prev`, the velocity backup and `force`, the bad ones' repaired values in `x` and `v`
/// ([`crate::step::passes::predict`]). Puts every particle back to its input (or its
/// repair), clears the forces and returns the error naming the first bad value.
// `i` walks six parallel particle arrays and names the bad particle; a zip would read worse.
#[allow(clippy::needless_range_loop)]
pub(crate) fn refuse_particles(body: &mut Body) -> WobbleError {
    let p = &mut body.particles;
    let backup_v = &body.scratch.backup_v;
    let mut first = None;
    for i in 0..p.x.len() {
        let (x, v, f) = (p.x_prev[i], backup_v[i], p.force[i]);
        match particle_field(x, v, f) {
            None => {
                p.x[i] = x;
                p.v[i] = v;
            }
            Some((field, value, reason, restored)) => {
                first.get_or_insert(("particle", i, field, value, reason, restored));
                p.x[i] = finish_position(p.x[i], p.mass[i]);
                p.v[i] = finite_lanes(p.v[i]);
            }
        }
        p.x_prev[i] = p.x[i];
    }
    p.force.fill(Packed4::default());
    // The prediction reports a bad input only when it found one.
    error(first.unwrap_or(("particle", 0, "state", f32::NAN, NOT_FINITE, "itself")))
}

/// Repairs every bad particle in place (nothing was predicted yet: `x_prev` still holds the
/// previous positions) and returns the first bad value.
fn repair_particles_in_place(body: &mut Body) -> Option<Bad> {
    let p = &mut body.particles;
    let mut first = None;
    for i in 0..p.x.len() {
        let (x, v, f) = (p.x[i], p.v[i], p.force[i]);
        if let Some((field, value, reason, restored)) = particle_field(x, v, f) {
            first.get_or_insert(("particle", i, field, value, reason, restored));
            let old = p.x_prev[i];
            let w_ok = x.w.is_finite() && x.w >= 0.0;
            let pick = |c: f32, o: f32| if c.is_finite() { c } else { o };
            let x = Packed4 {
                x: pick(x.x, old.x),
                y: pick(x.y, old.y),
                z: pick(x.z, old.z),
                w: if w_ok { x.w } else { old.w },
            };
            p.x[i] = finish_position(x, p.mass[i]);
            p.v[i] = finite_lanes(v);
        }
    }
    if first.is_some() {
        p.force.fill(Packed4::default());
    }
    first
}

fn bad_vec3(v: Vec3) -> Option<(usize, f32)> {
    v.to_array()
        .into_iter()
        .enumerate()
        .find(|(_, c)| !c.is_finite())
}

/// The first bad entry of the attachments and drag tables, or an index out of range; changes
/// nothing.
fn first_bad_entry(body: &mut Body) -> Result<Option<Bad>> {
    let n = body.len();
    const TO: [&str; 3] = ["target (to) x", "target (to) y", "target (to) z"];
    const FROM: [&str; 3] = ["start (from) x", "start (from) y", "start (from) z"];
    let pin = "the attached particle's position";
    for (k, a) in body.attachments.iter().enumerate() {
        check_index("attachment", k, a.particle as usize, n)?;
        if let Some((c, value)) = bad_vec3(a.to) {
            return Ok(Some(("attachment", k, TO[c], value, NOT_FINITE, pin)));
        }
        if let Some((c, value)) = bad_vec3(a.from) {
            return Ok(Some(("attachment", k, FROM[c], value, NOT_FINITE, pin)));
        }
    }
    const TARGET: [&str; 3] = ["target x", "target y", "target z"];
    const WEIGHT: [&str; 3] = ["weight 0", "weight 1", "weight 2"];
    for d in drag_tables(body) {
        for c in 0..d.corners.len() {
            if let Some(&p) = d.corners[c].iter().find(|&&p| p as usize >= n) {
                return Err(WobbleError::IndexOutOfRange {
                    what: "drag constraint",
                    index: c,
                    value: p as u64,
                    len: n,
                });
            }
            let what = "drag constraint";
            if let Some((k, value)) = bad_vec3(d.targets[c]) {
                let restored = "the grabbed point's current position";
                return Ok(Some((what, c, TARGET[k], value, NOT_FINITE, restored)));
            }
            if let Some((k, &value)) = d.weights[c].iter().enumerate().find(|w| !w.1.is_finite()) {
                let restored = "a third each (the triangle's centroid)";
                return Ok(Some((what, c, WEIGHT[k], value, NOT_FINITE, restored)));
            }
            let alpha = d.compliance[c];
            if !(alpha.is_finite() && alpha >= 0.0) {
                let reason = if alpha.is_finite() {
                    "is negative"
                } else {
                    NOT_FINITE
                };
                return Ok(Some((what, c, "compliance", alpha, reason, "0")));
            }
        }
    }
    Ok(None)
}

/// The drag tables among the body's constraint kinds.
fn drag_tables(body: &mut Body) -> impl Iterator<Item = &mut Drag> {
    body.constraints
        .extra
        .iter_mut()
        .filter_map(|k| k.as_any_mut().downcast_mut::<Drag>())
}

/// Checks the attachments and drag constraints (see the [module](self) doc); when one is bad,
/// also checks and repairs the particles (the step then stops before its prediction), repairs
/// every bad entry and returns the error naming the first bad value.
pub(crate) fn check_tables(body: &mut Body) -> Result<()> {
    let Some(table_bad) = first_bad_entry(body)? else {
        return Ok(());
    };
    let first = repair_particles_in_place(body).unwrap_or(table_bad);
    let p = &body.particles;
    for a in body.attachments.iter_mut() {
        if bad_vec3(a.to).is_some() || bad_vec3(a.from).is_some() {
            let here = p.position(a.particle as usize);
            (a.from, a.to) = (here, here);
        }
    }
    let x = body.particles.x.clone();
    for d in drag_tables(body) {
        for c in 0..d.corners.len() {
            if d.weights[c].iter().any(|w| !w.is_finite()) {
                d.weights[c] = [1.0 / 3.0; 3];
            }
            if !(d.compliance[c].is_finite() && d.compliance[c] >= 0.0) {
                d.compliance[c] = 0.0;
            }
            if bad_vec3(d.targets[c]).is_some() {
                let (k, b) = (d.corners[c], d.weights[c]);
                d.targets[c] = (0..3).map(|s| x[k[s] as usize].xyz() * b[s]).sum();
            }
        }
    }
    Err(error(first))
}

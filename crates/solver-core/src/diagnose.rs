//! Why a step diverged: the NaN guard's diagnosis, run only on the failure path.
//!
//! [`crate::step()`] checks the state once, at the end of the step, so a healthy step pays
//! nothing for diagnosis. When that check finds a non-finite value, [`diverged`] restores the
//! state at the start of the step and replays it ([`replay_checked`]) with a check after every
//! stage: external forces, prediction, attachments, the solver's `begin` and each iteration,
//! contacts, friction, the velocity update and restitution. When an iteration goes bad, the
//! constraints are projected one at a time, in Gauss-Seidel storage order, from the state before
//! that iteration, to name the constraint kind and the constraint that produce the first
//! non-finite value (for the reference Gauss-Seidel this is exactly what the iteration did).
//!
//! The replay mirrors the stages of `step()`; a test checks that replaying a healthy step lands
//! on the bit-identical state, so a stage added to one and not the other is caught.

use crate::body::Body;
use crate::collide::{apply_friction, apply_restitution, find_contacts, project_contacts};
use crate::constraints::{project_distance_scalar, project_generic, Constraints};
use crate::error::WobbleError;
use crate::particles::Packed4;
use crate::solver::{SolveState, Solver};
use crate::step::{StepParams, Stiffness};

/// Where a replay first met a non-finite value.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// The first particle (lowest index) that is non-finite after the stage.
    pub particle: usize,
    /// The stage, and for constraint projections the kind and constraint.
    pub stage: String,
}

/// The error for a step that produced a non-finite value (first found at `first_bad`): replays
/// the step from its start to name the particle and stage, then leaves the body at its last
/// good state (positions and velocities from the start of the step; the external forces of the
/// failed step are cleared, as any step clears them).
pub fn diverged(
    body: &mut Body,
    params: &StepParams,
    solver: &mut dyn Solver,
    first_bad: usize,
) -> WobbleError {
    restore(body);
    let finding = replay_checked(body, params, solver).unwrap_or(Finding {
        particle: first_bad,
        stage: "step; a checked replay of the step did not reproduce it".into(),
    });
    restore(body);
    body.particles
        .force
        .iter_mut()
        .for_each(|f| *f = Packed4::default());
    WobbleError::Diverged {
        particle: finding.particle,
        stage: finding.stage,
    }
}

/// Puts back the positions and velocities saved at the start of the step.
fn restore(body: &mut Body) {
    let p = &mut body.particles;
    let s = &body.scratch;
    p.x.copy_from_slice(&s.backup_x);
    p.x_prev.copy_from_slice(&s.backup_x);
    p.v.copy_from_slice(&s.backup_v);
}

/// The first particle whose position or velocity is non-finite.
fn first_bad(x: &[Packed4], v: &[Packed4]) -> Option<usize> {
    x.iter()
        .zip(v)
        .position(|(x, v)| !(x.is_finite() && v.is_finite()))
}

/// Replays one step of `body` from its current state exactly as [`crate::step()`] runs it, with
/// a check after every stage; returns where a value first became non-finite, or `None` when
/// the whole step stays finite (the body is then where `step` would have left it, except that
/// external forces and attachments are not consumed).
pub fn replay_checked(
    body: &mut Body,
    params: &StepParams,
    solver: &mut dyn Solver,
) -> Option<Finding> {
    if params.validate().is_err() {
        return None;
    }
    if solver.prepared_for() != Some(body.topology_id())
        && solver
            .prepare(&body.constraints, body.particles.len(), body.topology_id())
            .is_err()
    {
        return None;
    }
    let n = body.particles.len();
    let nc = body.constraints.len();
    let name = solver.name();
    let Body {
        particles: p,
        constraints,
        colliders,
        attachments,
        scratch,
        ..
    } = body;
    scratch.lambda.resize(nc, 0.0);
    let h = params.substep_dt();
    let inv_h = 1.0 / h;
    let inv_dt2 = match params.stiffness {
        Stiffness::Xpbd => inv_h * inv_h,
        Stiffness::Pbd { .. } => 0.0,
    };
    let k = params.correction_scale();
    let damp = (1.0 - params.damping * h).max(0.0);
    let g = params.gravity;
    let found = |particle: usize, stage: String| Some(Finding { particle, stage });

    for s in 0..params.substeps {
        if let Some(i) = p
            .force
            .iter()
            .zip(&p.x)
            .position(|(f, x)| x.w != 0.0 && !f.is_finite())
        {
            let f = p.force[i];
            return found(
                i,
                format!(
                    "external force ({}, {}, {}) on particle {i} is non-finite, substep {s}",
                    f.x, f.y, f.z
                ),
            );
        }
        for i in 0..n {
            let xi = p.x[i];
            p.x_prev[i] = xi;
            if xi.w == 0.0 {
                continue;
            }
            let f = p.force[i];
            let v = &mut p.v[i];
            v.x = (v.x + h * (g.x + f.x * xi.w)) * damp;
            v.y = (v.y + h * (g.y + f.y * xi.w)) * damp;
            v.z = (v.z + h * (g.z + f.z * xi.w)) * damp;
            let x = &mut p.x[i];
            x.x += h * v.x;
            x.y += h * v.y;
            x.z += h * v.z;
        }
        if let Some(i) = first_bad(&p.x, &p.v) {
            return found(
                i,
                format!("prediction (gravity, forces and inverse mass integrated), substep {s}"),
            );
        }
        let t = (s + 1) as f32 / params.substeps as f32;
        for (a, at) in attachments.iter().enumerate() {
            let target = at.from.lerp(at.to, t);
            p.x[at.particle as usize].set_xyz(target);
            if !p.x[at.particle as usize].is_finite() {
                return found(
                    at.particle as usize,
                    format!("attachment {a} target, substep {s}"),
                );
            }
        }
        find_contacts(
            colliders,
            &p.x,
            &p.v,
            params.contact_margin,
            &mut scratch.contacts,
        );
        scratch.lambda.iter_mut().for_each(|l| *l = 0.0);
        let mut state = SolveState {
            x: &mut p.x,
            x_prev: &p.x_prev,
            constraints,
            lambda: &mut scratch.lambda,
            inv_dt2,
            stiffness: k,
            iterations: params.iterations,
        };
        solver.begin(&mut state);
        if let Some(i) = first_bad(state.x, &p.v) {
            return found(i, format!("solver '{name}' begin, substep {s}"));
        }
        for it in 0..params.iterations {
            let x_before = state.x.to_vec();
            let lambda_before = state.lambda.to_vec();
            solver.iterate(&mut state, it);
            if let Some(i) = first_bad(state.x, &p.v) {
                let place = format!("solver '{name}' iteration {it}, substep {s}");
                return Some(attribute(
                    constraints,
                    x_before,
                    lambda_before,
                    inv_dt2,
                    k,
                    i,
                    &place,
                ));
            }
            project_contacts(colliders, &mut scratch.contacts, state.x);
            if let Some(i) = first_bad(state.x, &p.v) {
                return found(i, format!("contacts, iteration {it}, substep {s}"));
            }
        }
        apply_friction(colliders, &scratch.contacts, &mut p.x, &p.x_prev);
        if let Some(i) = first_bad(&p.x, &p.v) {
            return found(i, format!("friction, substep {s}"));
        }
        for i in 0..n {
            let (x, x0) = (p.x[i], p.x_prev[i]);
            p.v[i].x = (x.x - x0.x) * inv_h;
            p.v[i].y = (x.y - x0.y) * inv_h;
            p.v[i].z = (x.z - x0.z) * inv_h;
        }
        if let Some(i) = first_bad(&p.x, &p.v) {
            return found(i, format!("velocity update, substep {s}"));
        }
        apply_restitution(
            colliders,
            &scratch.contacts,
            &p.x,
            &mut p.v,
            2.0 * g.length() * h,
        );
        if let Some(i) = first_bad(&p.x, &p.v) {
            return found(i, format!("restitution, substep {s}"));
        }
    }
    None
}

/// Names the constraint whose projection first produces a non-finite value, projecting one
/// constraint at a time in Gauss-Seidel storage order from the state before the iteration.
fn attribute(
    constraints: &Constraints,
    mut x: Vec<Packed4>,
    mut lambda: Vec<f32>,
    inv_dt2: f32,
    k: f32,
    bad_after_iteration: usize,
    place: &str,
) -> Finding {
    let d = &constraints.distance;
    let mut g = 0usize;
    for c in 0..d.len() {
        project_distance_scalar(&mut x, d, c..c + 1, &mut lambda, inv_dt2, k);
        if let Some(&p) = d.pairs[c].iter().find(|&&p| !x[p as usize].is_finite()) {
            return Finding {
                particle: p as usize,
                stage: format!(
                    "constraint kind 'distance', constraint {c} (particles {:?}), in {place}",
                    d.pairs[c]
                ),
            };
        }
        g += 1;
    }
    for kind in &constraints.extra {
        for c in 0..kind.len() {
            let alpha = kind.compliance(c) * inv_dt2;
            project_generic(kind.as_ref(), c, &mut x, &mut lambda[g], alpha, k);
            let ids = kind.particles(c);
            if let Some(&p) = ids.iter().find(|&&p| !x[p as usize].is_finite()) {
                return Finding {
                    particle: p as usize,
                    stage: format!(
                        "constraint kind '{}', constraint {c} (particles {ids:?}), in {place}",
                        kind.name()
                    ),
                };
            }
            g += 1;
        }
    }
    Finding {
        particle: bad_after_iteration,
        stage: format!(
            "{place}; no single constraint projected in storage order from the same state \
             produces it, so the solver's own update does"
        ),
    }
}

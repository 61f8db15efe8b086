//! Why a step diverged: the NaN guard's diagnosis, run only on the failure path.
//!
//! [`crate::step()`] checks the state once, at the end of the step, so a healthy step pays
//! nothing for diagnosis. When that check finds a non-finite value or a particle faster than
//! [`crate::step::MAX_SPEED`], `diverged` restores the state at the start of the step and
//! replays it ([`replay_checked`]) with a check after every stage: external forces, prediction,
//! attachments, the solver's `begin` and each iteration (whose speed is the one its positions
//! imply, `|x - x_prev| / h`), contacts, friction, the velocity update and restitution. When an
//! iteration produces a non-finite value, the constraints are projected one at a time, in
//! Gauss-Seidel storage order, from the state before that iteration, to name the constraint kind
//! and the constraint that produce the first non-finite value (for the reference Gauss-Seidel
//! this is exactly what the iteration did); an iteration that is merely too fast is named as it
//! is (a solver diverges as a whole, not one constraint at a time).
//!
//! The replay runs the very stage code of `step()` (`step::advance`, generic over a stage
//! checker that the plain step instantiates with a no-op), so the two cannot drift apart; a test
//! checks that replaying a healthy step lands on the bit-identical state.

use crate::body::Body;
use crate::constraints::{project_distance_scalar, project_generic, Constraints};
use crate::error::WobbleError;
use crate::geometry::packed::Packed4;
use crate::solver::{SolveState, Solver};
use crate::step::{advance, diverged_at, prepare_step, StageCheck, StepParams, Window, MAX_SPEED};

/// Where a replay first met a non-finite value.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// The first particle (lowest index) that is non-finite after the stage.
    pub particle: usize,
    /// The stage, and for constraint projections the kind and constraint.
    pub stage: String,
    /// The particle's speed when it was too fast (`None`: it became non-finite).
    pub speed: Option<f32>,
}

/// The error for a step that produced a non-finite value or a speed above the bound (first
/// found at `first_bad`): replays
/// the step from its start to name the particle and stage, then leaves the body at its last
/// good state (positions and velocities from the start of the step; the external forces of the
/// failed step are cleared, as any step clears them).
pub(crate) fn diverged(
    body: &mut Body,
    params: &StepParams,
    solver: &mut dyn Solver,
    window: Window,
    first_bad: usize,
) -> WobbleError {
    restore(body);
    let finding = replay_window(body, params, solver, window).unwrap_or(Finding {
        particle: first_bad,
        stage: "step; a checked replay of the step did not reproduce it".into(),
        speed: None,
    });
    restore(body);
    body.particles
        .force
        .iter_mut()
        .for_each(|f| *f = Packed4::default());
    WobbleError::Diverged {
        particle: finding.particle,
        stage: finding.stage,
        speed: finding.speed,
    }
}

/// Puts back the positions and velocities saved at the start of the step (the positions are in
/// `x_prev` when the step had one substep, and in the backup when it had more).
fn restore(body: &mut Body) {
    let p = &mut body.particles;
    let s = &body.scratch;
    if s.backup_x.len() == p.x.len() {
        p.x_prev.copy_from_slice(&s.backup_x);
    }
    p.x.copy_from_slice(&p.x_prev);
    p.v.copy_from_slice(&s.backup_v);
}

/// The first particle whose position or velocity is non-finite or whose speed is above the
/// bound, and its speed in the second case.
fn first_bad(x: &[Packed4], v: &[Packed4]) -> Option<(usize, Option<f32>)> {
    x.iter()
        .zip(v)
        .enumerate()
        .find_map(|(i, (x, v))| diverged_at(*x, *v).map(|speed| (i, speed)))
}

/// Replays one step of `body` from its current state exactly as [`crate::step()`] runs it (the
/// same stage code, with a check after every stage); returns where a value first became
/// non-finite or too fast, or `None` when the whole step stays finite and within the bound (the body is then where `step` would
/// have left it, except that external forces and attachments are not consumed).
pub fn replay_checked(
    body: &mut Body,
    params: &StepParams,
    solver: &mut dyn Solver,
) -> Option<Finding> {
    replay_window(body, params, solver, Window::WHOLE)
}

/// [`replay_checked`] over the fraction `window` of the frame.
fn replay_window(
    body: &mut Body,
    params: &StepParams,
    solver: &mut dyn Solver,
    window: Window,
) -> Option<Finding> {
    // The substeps `step` runs, split as it splits them (planning planned parameters again
    // changes nothing).
    let params = &params.planned().ok()?;
    prepare_step(body, params, solver).ok()?;
    advance(body, params, solver, None, window, &mut Checker::default()).err()
}

/// The stage checker of the replay.
#[derive(Default)]
struct Checker {
    x_before: Vec<Packed4>,
    lambda_before: Vec<f32>,
}

impl StageCheck for Checker {
    fn stage(
        &mut self,
        x: &[Packed4],
        v: &[Packed4],
        label: &dyn Fn() -> String,
    ) -> Result<(), Finding> {
        found(first_bad(x, v), label)
    }

    fn forces(
        &mut self,
        x: &[Packed4],
        force: &[Packed4],
        wind: Option<&[Packed4]>,
        s: usize,
    ) -> Result<(), Finding> {
        let bad = |f: &[Packed4]| {
            f.iter()
                .zip(x)
                .position(|(f, x)| x.w != 0.0 && !f.is_finite())
        };
        if let Some(i) = bad(force) {
            let f = force[i];
            return Err(Finding {
                particle: i,
                stage: format!(
                    "external force ({}, {}, {}) on particle {i} is non-finite, substep {s}",
                    f.x, f.y, f.z
                ),
                speed: None,
            });
        }
        if let Some(i) = wind.and_then(bad) {
            return Err(Finding {
                particle: i,
                stage: format!("wind force on particle {i} is non-finite, substep {s}"),
                speed: None,
            });
        }
        Ok(())
    }

    fn before_iteration(&mut self, x: &[Packed4], lambda: &[f32]) {
        self.x_before.clear();
        self.x_before.extend_from_slice(x);
        self.lambda_before.clear();
        self.lambda_before.extend_from_slice(lambda);
    }

    fn iteration(
        &mut self,
        state: &SolveState,
        v: &[Packed4],
        inv_h: f32,
        label: &dyn Fn() -> String,
    ) -> Result<(), Finding> {
        let x: &[Packed4] = state.x;
        // The velocities are those of the substep's start until the velocity update; what an
        // iterate implies is its move over h.
        let implied = x
            .iter()
            .zip(state.x_prev)
            .enumerate()
            .find_map(|(i, (x, x0))| {
                let speed = (x.xyz() - x0.xyz()).length() * inv_h;
                (speed > MAX_SPEED).then_some((i, speed))
            });
        if let Some((particle, speed)) = implied {
            return Err(Finding {
                particle,
                stage: label(),
                speed: Some(speed),
            });
        }
        match first_bad(x, v) {
            Some((i, None)) => Err(attribute(
                state.constraints,
                std::mem::take(&mut self.x_before),
                std::mem::take(&mut self.lambda_before),
                state.inv_dt2,
                state.stiffness,
                i,
                &label(),
            )),
            bad => found(bad, label),
        }
    }
}

/// The finding, at the stage `label` names, of the particle [`first_bad`] found, if any.
fn found(bad: Option<(usize, Option<f32>)>, label: &dyn Fn() -> String) -> Result<(), Finding> {
    match bad {
        Some((particle, speed)) => Err(Finding {
            particle,
            stage: label(),
            speed,
        }),
        None => Ok(()),
    }
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
                speed: None,
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
                    speed: None,
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
        speed: None,
    }
}

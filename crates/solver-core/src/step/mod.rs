//! The step loop: forces, prediction, the solve, contacts, velocities.
//!
//! Theory (Müller et al. 2007, "Position Based Dynamics"; Macklin et al. 2016, "XPBD"; Macklin
//! et al. 2019, "Small Steps"). With the substep `h = dt / substeps`, each substep does
//!
//! ```text
//! v   ← d v + h (g + w f_ext)         (d = max(0, 1 - damping h); pinned particles, w = 0,
//!                                      keep v = 0; f_ext includes the body's wind, evaluated
//!                                      at the substep's start)
//! x₀  ← x;   x* ← x + h v              (pinned and attached particles do not predict)
//! λ   ← 0
//! repeat `iterations` times:  solver iteration on C(x*) = 0, then contacts sdf(x*) >= 0
//! friction on the contacts;  v ← (x* - x₀) / h;  restitution;  x ← x*
//! ```
//!
//! Stiffness comes in two flavours. PBD scales every correction by a stiffness `k ∈ [0, 1]`;
//! with `iteration_corrected`, `k' = 1 - (1 - k)^(1/iterations)` so that the effective
//! stiffness after all iterations no longer depends on their count (Müller 2007, §3.3). XPBD
//! gives each constraint a compliance α (inverse stiffness) and uses `α̃ = α / h²` in
//! `Δλ = (-C - α̃ λ) / (Σ w |∇C|² + α̃)`, which makes stiffness independent of iterations and dt.
//!
//! The state at the start of the step is kept; if the step produces a non-finite value, or a
//! particle faster than [`MAX_SPEED`], the body is restored to it and the step returns
//! [`WobbleError::Diverged`], naming the particle and the stage found by replaying the step with
//! checks ([`crate::step::diagnose`], failure path only). Both are found in the velocity update's pass
//! over the particles, which the step makes anyway.

pub mod diagnose;
pub mod passes;

use crate::body::particles::Packed4;
use crate::body::Body;
use crate::collide::{apply_friction, apply_restitution, find_contacts, project_contacts};
use crate::constraints::Constraints;
use crate::error::{check_count, check_dt, Result, WobbleError};
use crate::figures::residual;
use crate::solver::{project_step_loop_kinds, Executor, Serial, SolveState, Solver};
use crate::step::diagnose::Finding;
use glam::Vec3;
use passes::Motion;
use std::sync::Arc;

/// Largest accepted iteration or substep count.
pub const MAX_COUNT: usize = 100_000;

/// A step that leaves any particle faster than this (m/s) has diverged, as surely as one that
/// produced a NaN: [`step`] restores the body and returns [`WobbleError::Diverged`].
///
/// Why 1e6 m/s: wobble's scenes are in SI units, where soft bodies and cloth move at metres per
/// second; 1e6 m/s is 150 times the speed of sound in steel, and at it a particle crosses 17 km
/// in one step of 1/60 s. The fastest legitimate runs in the tests stay below 1e3 m/s (the 3 m
/// box of README's extreme parameters, 300 steps of dt = 1/10 s of gravity), so no legitimate
/// scene comes near; a solver that diverges grows its error geometrically, iteration after
/// iteration (plain Jacobi on the cloth reached 1e14 m/s), so it crosses the bound within a
/// step or two of leaving the physical range, well before f32 overflows.
pub const MAX_SPEED: f32 = 1e6;

/// How constraint stiffness is expressed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stiffness {
    /// XPBD: each constraint's compliance α is used, α̃ = α / h².
    Xpbd,
    /// PBD: compliance is ignored and every correction is scaled by `k`.
    Pbd {
        /// Stiffness in [0, 1].
        k: f32,
        /// Use Müller's `k' = 1 - (1 - k)^(1/iterations)`.
        iteration_corrected: bool,
    },
}

/// Parameters of one call to [`step`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepParams {
    /// Frame time step in seconds (> 0).
    pub dt: f32,
    /// Substeps per step (>= 1).
    pub substeps: usize,
    /// Solver iterations per substep (>= 1).
    pub iterations: usize,
    /// Gravity acceleration.
    pub gravity: Vec3,
    /// Linear velocity damping per second (0 = none): the prediction damps the velocity carried
    /// into each substep, v ← v · max(0, 1 - damping h) + h (g + w f), and not the increment
    /// gravity and forces add, so a damped body at rest sags exactly as an undamped one.
    pub damping: f32,
    /// PBD or XPBD stiffness.
    pub stiffness: Stiffness,
    /// Particles within this distance of a collider become contacts for the substep.
    pub contact_margin: f32,
}

impl Default for StepParams {
    /// The docs/SCENES.md defaults: dt = 1/60, 1 substep, 8 iterations, no damping, XPBD (with every
    /// compliance 0 this equals PBD with stiffness 1).
    fn default() -> Self {
        StepParams {
            dt: 1.0 / 60.0,
            substeps: 1,
            iterations: 8,
            gravity: Vec3::new(0.0, -9.81, 0.0),
            damping: 0.0,
            stiffness: Stiffness::Xpbd,
            contact_margin: 0.005,
        }
    }
}

impl StepParams {
    /// Checks every parameter; called by [`step`].
    pub fn validate(&self) -> Result<()> {
        check_dt(self.dt)?;
        check_count("substeps", self.substeps, MAX_COUNT)?;
        check_count("iterations", self.iterations, MAX_COUNT)?;
        let inv_h = 1.0 / self.substep_dt();
        if !(inv_h * inv_h).is_finite() {
            return Err(WobbleError::BadParameter {
                name: "dt",
                value: self.dt as f64,
                reason: "the substep h = dt / substeps is so small that 1/h² overflows f32 (h must be above about 5e-20 s)",
            });
        }
        if !self.gravity.is_finite() {
            return Err(WobbleError::BadParameter {
                name: "gravity",
                value: f64::NAN,
                reason: "must be finite",
            });
        }
        if !(self.damping.is_finite() && self.damping >= 0.0) {
            return Err(WobbleError::BadParameter {
                name: "damping",
                value: self.damping as f64,
                reason: "must be finite and >= 0",
            });
        }
        if !(self.contact_margin.is_finite() && self.contact_margin >= 0.0) {
            return Err(WobbleError::BadParameter {
                name: "contact_margin",
                value: self.contact_margin as f64,
                reason: "must be finite and >= 0",
            });
        }
        if let Stiffness::Pbd { k, .. } = self.stiffness {
            if !(0.0..=1.0).contains(&k) {
                return Err(WobbleError::BadParameter {
                    name: "stiffness",
                    value: k as f64,
                    reason: "PBD stiffness must be in [0, 1]",
                });
            }
        }
        Ok(())
    }

    /// The substep h = dt / substeps.
    pub fn substep_dt(&self) -> f32 {
        self.dt / self.substeps as f32
    }

    /// The correction scale the solver applies: k, k' or 1 (XPBD).
    pub fn correction_scale(&self) -> f32 {
        match self.stiffness {
            Stiffness::Xpbd => 1.0,
            Stiffness::Pbd {
                k,
                iteration_corrected: false,
            } => k,
            Stiffness::Pbd {
                k,
                iteration_corrected: true,
            } => 1.0 - (1.0 - k).powf(1.0 / self.iterations as f32),
        }
    }
}

/// Advances `body` by one step of `params.dt` with `solver`.
///
/// When `residuals` is given, the residual (docs/SCENES.md: RMS of C over the mean rest length) after
/// every iteration of every substep is appended to it.
pub fn step(
    body: &mut Body,
    params: &StepParams,
    solver: &mut dyn Solver,
    residuals: Option<&mut Vec<f32>>,
) -> Result<()> {
    prepare_step(body, params, solver)?;
    let mut residuals = residuals;
    let mut outcome = None;
    let executor = solver.executor();
    let mut run = || {
        // Unchecked, the stages cannot fail: `NoCheck` compiles to nothing. `advance` saves
        // the state at the start of the step into the scratch backup as it predicts.
        outcome = advance(body, params, solver, residuals.take(), &mut NoCheck).ok();
    };
    // On one of the solver's own threads, if it has any, so that its parallel sections do not
    // each pay for waking a pool from outside.
    match &executor {
        Some(executor) => executor.run_home(&mut run),
        None => run(),
    }
    let p = &mut body.particles;
    // Unchecked, `advance` cannot fail; `None` would only mean it did.
    let outcome = outcome.unwrap_or(Outcome {
        finite: false,
        max_speed2: f32::INFINITY,
        forces: true,
    });
    // The position of the first bad value is searched only on failure.
    if !(outcome.finite && outcome.max_speed2 <= MAX_SPEED * MAX_SPEED) {
        let bad =
            p.x.iter()
                .zip(&p.v)
                .position(|(x, v)| diverged_at(*x, *v).is_some())
                .unwrap_or(0);
        return Err(crate::step::diagnose::diverged(body, params, solver, bad));
    }
    for a in body.attachments.iter_mut() {
        a.from = a.to;
    }
    if outcome.forces {
        passes::clear(executor_or_serial(&executor), &mut p.force);
    }
    Ok(())
}

/// The executor a step's passes run on: the solver's, or the caller's thread.
fn executor_or_serial(executor: &Option<Arc<dyn Executor>>) -> &dyn Executor {
    match executor {
        Some(e) => e.as_ref(),
        None => &Serial,
    }
}

/// Why a particle with position `x` and velocity `v` has diverged: `Some(None)` when a value is
/// non-finite, `Some(Some(speed))` when it moves faster than [`MAX_SPEED`], `None` when neither.
#[inline]
pub(crate) fn diverged_at(x: Packed4, v: Packed4) -> Option<Option<f32>> {
    if !(x.is_finite() && v.is_finite()) {
        return Some(None);
    }
    let speed = v.xyz().length();
    (speed > MAX_SPEED).then_some(Some(speed))
}

/// Zeroes the multipliers of the kinds the step loop projects: a solver's `begin` need not know
/// them (a drag table may have grown since it prepared).
fn zero_step_loop_multipliers(state: &mut SolveState) {
    let offsets = state.constraints.offsets();
    for (t, kind) in state.constraints.extra.iter().enumerate() {
        if kind.projected_by_step_loop() {
            state.lambda[offsets[t + 1]..offsets[t + 2]].fill(0.0);
        }
    }
}

/// Validates the parameters, colliders and wind, and prepares the solver for the body's topology.
pub(crate) fn prepare_step(
    body: &mut Body,
    params: &StepParams,
    solver: &mut dyn Solver,
) -> Result<()> {
    params.validate()?;
    if solver.prepared_for() != Some(body.topology_id()) {
        solver.prepare(&body.constraints, body.particles.len(), body.topology_id())?;
    }
    for (k, c) in body.colliders.iter().enumerate() {
        c.validate(k)?;
    }
    if let Some(w) = &body.wind {
        w.validate()?;
    }
    Ok(())
}

/// Checks the state between the stages of a step. The plain step uses [`NoCheck`]; the NaN
/// guard's diagnosis replays the same stages with a checker that stops at the first non-finite
/// value, so the replay can never drift from the step it explains.
pub(crate) trait StageCheck {
    /// True for the plain step's checker, which looks at nothing between stages.
    const PLAIN: bool = false;
    /// After a stage: `Err` stops the step there.
    fn stage(
        &mut self,
        x: &[Packed4],
        v: &[Packed4],
        label: &dyn Fn() -> String,
    ) -> std::result::Result<(), Finding>;
    /// External forces (user and wind) before they are integrated.
    fn forces(
        &mut self,
        x: &[Packed4],
        force: &[Packed4],
        wind: Option<&[Packed4]>,
        substep: usize,
    ) -> std::result::Result<(), Finding>;
    /// Before a solver iteration (the checker keeps the state to attribute a failure).
    fn before_iteration(&mut self, x: &[Packed4], lambda: &[f32]);
    /// After a solver iteration (`x_prev` the substep's start and `inv_h` = 1/h, for the speed
    /// the iterate implies).
    #[allow(clippy::too_many_arguments)]
    fn iteration(
        &mut self,
        constraints: &Constraints,
        x: &[Packed4],
        x_prev: &[Packed4],
        v: &[Packed4],
        inv_h: f32,
        inv_dt2: f32,
        k: f32,
        label: &dyn Fn() -> String,
    ) -> std::result::Result<(), Finding>;
}

/// The checker of the plain step: checks nothing, costs nothing.
pub(crate) struct NoCheck;

impl StageCheck for NoCheck {
    const PLAIN: bool = true;
    #[inline(always)]
    fn stage(
        &mut self,
        _: &[Packed4],
        _: &[Packed4],
        _: &dyn Fn() -> String,
    ) -> std::result::Result<(), Finding> {
        Ok(())
    }
    #[inline(always)]
    fn forces(
        &mut self,
        _: &[Packed4],
        _: &[Packed4],
        _: Option<&[Packed4]>,
        _: usize,
    ) -> std::result::Result<(), Finding> {
        Ok(())
    }
    #[inline(always)]
    fn before_iteration(&mut self, _: &[Packed4], _: &[f32]) {}
    #[inline(always)]
    fn iteration(
        &mut self,
        _: &Constraints,
        _: &[Packed4],
        _: &[Packed4],
        _: &[Packed4],
        _: f32,
        _: f32,
        _: f32,
        _: &dyn Fn() -> String,
    ) -> std::result::Result<(), Finding> {
        Ok(())
    }
}

/// What a completed [`advance`] found.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Outcome {
    /// Every position and velocity is finite at the end.
    pub finite: bool,
    /// The largest squared speed met at the end of any substep.
    pub max_speed2: f32,
    /// Some external force was non-zero (so the forces must be cleared).
    pub forces: bool,
}

/// The stages of one step (every substep: forces, prediction, attachments, contacts, the
/// solve, friction, velocities, restitution), checked by `check` between stages.
pub(crate) fn advance<C: StageCheck>(
    body: &mut Body,
    params: &StepParams,
    solver: &mut dyn Solver,
    mut residuals: Option<&mut Vec<f32>>,
    check: &mut C,
) -> std::result::Result<Outcome, Finding> {
    let n = body.particles.len();
    let nc = body.constraints.len();
    let Body {
        particles: p,
        constraints,
        colliders,
        attachments,
        scratch,
        wind,
        topology,
        ..
    } = body;
    scratch.lambda.resize(nc, 0.0);
    // With one substep `x_prev` keeps the starting positions; only more substeps need a copy.
    let backup_x_len = if params.substeps > 1 { n } else { 0 };
    scratch.backup_x.resize(backup_x_len, Packed4::default());
    scratch.backup_v.resize(n, Packed4::default());

    let h = params.substep_dt();
    let inv_h = 1.0 / h;
    let inv_dt2 = match params.stiffness {
        Stiffness::Xpbd => inv_h * inv_h,
        Stiffness::Pbd { .. } => 0.0,
    };
    let k = params.correction_scale();
    let damp = (1.0 - params.damping * h).max(0.0);
    let g = params.gravity;
    // Whether every position and velocity is finite after the last substep, and the largest
    // squared speed at the end of any substep.
    let mut finite = true;
    let mut max_speed2 = 0.0f32;
    let mut forces = false;
    let executor = solver.executor();
    let executor = executor_or_serial(&executor);
    let step_loop_kinds = constraints.has_step_loop_kinds();

    for s in 0..params.substeps {
        if let Some(w) = wind {
            scratch.wind_force.clear();
            scratch.wind_force.resize(n, Default::default());
            w.accumulate(&topology.triangles, &p.x, &p.v, &mut scratch.wind_force);
        }
        check.forces(
            &p.x,
            &p.force,
            wind.as_ref().map(|_| &scratch.wind_force[..]),
            s,
        )?;
        // The first substep also saves the step's starting state (for the NaN guard's
        // rollback) in the same pass over the particles.
        let backup = (s == 0).then_some((&mut scratch.backup_x[..], &mut scratch.backup_v[..]));
        let wind_force = wind.as_ref().map(|_| &scratch.wind_force[..]);
        forces |= passes::predict(executor, p, wind_force, backup, Motion { h, g, damp });
        check.stage(&p.x, &p.v, &|| {
            format!("prediction (gravity, forces and inverse mass integrated), substep {s}")
        })?;
        let t = (s + 1) as f32 / params.substeps as f32;
        for a in attachments.iter() {
            let target = a.from.lerp(a.to, t);
            p.x[a.particle as usize].set_xyz(target);
        }
        check.stage(&p.x, &p.v, &|| format!("attachment targets, substep {s}"))?;
        find_contacts(
            colliders,
            &p.x,
            &p.v,
            params.contact_margin,
            &mut scratch.contacts,
        );
        // `begin` zeroes the multipliers it reads; the checked replay clears them all anyway,
        // since its checker reads every one between iterations.
        if !C::PLAIN {
            passes::clear(executor, &mut scratch.lambda);
        }

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
        if step_loop_kinds {
            zero_step_loop_multipliers(&mut state);
        }
        check.stage(state.x, &p.v, &|| {
            // The name is asked for only when a checker reports (it allocates).
            format!("solver '{}' begin, substep {s}", solver.name())
        })?;
        // Nothing to do between iterations: the solver may run them all in one go (the NaN
        // guard's replay, which checks between iterations, takes the loop: same bits).
        let quiet =
            C::PLAIN && residuals.is_none() && scratch.contacts.is_empty() && !step_loop_kinds;
        let looped = if quiet {
            solver.iterate_all(&mut state);
            0
        } else {
            params.iterations
        };
        for it in 0..looped {
            check.before_iteration(state.x, state.lambda);
            solver.iterate(&mut state, it);
            if step_loop_kinds {
                project_step_loop_kinds(&mut state);
            }
            check.iteration(
                constraints,
                state.x,
                state.x_prev,
                &p.v,
                inv_h,
                inv_dt2,
                k,
                &|| format!("solver '{}' iteration {it}, substep {s}", solver.name()),
            )?;
            project_contacts(colliders, &mut scratch.contacts, state.x);
            check.stage(state.x, &p.v, &|| {
                format!("contacts, iteration {it}, substep {s}")
            })?;
            if let Some(r) = residuals.as_deref_mut() {
                r.push(residual(constraints, state.x));
            }
        }
        apply_friction(colliders, &scratch.contacts, &mut p.x, &p.x_prev);
        check.stage(&p.x, &p.v, &|| format!("friction, substep {s}"))?;
        let (ok, speed2) = passes::update_velocities(executor, &mut p.v, &p.x, &p.x_prev, inv_h);
        finite = ok;
        max_speed2 = max_speed2.max(speed2);
        check.stage(&p.x, &p.v, &|| format!("velocity update, substep {s}"))?;
        apply_restitution(
            colliders,
            &scratch.contacts,
            &p.x,
            &mut p.v,
            2.0 * g.length() * h,
        );
        // Restitution changed only the contacts' velocities since the velocity pass checked.
        for c in &scratch.contacts {
            let v = p.v[c.particle as usize];
            finite &= v.is_finite();
            max_speed2 = max_speed2.max(v.xyz().length_squared());
        }
        check.stage(&p.x, &p.v, &|| format!("restitution, substep {s}"))?;
    }
    Ok(Outcome {
        finite,
        max_speed2,
        forces,
    })
}

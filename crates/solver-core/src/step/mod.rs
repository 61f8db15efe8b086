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
//! The velocity update divides by `h` rather than multiplying by a rounded `1/h`:
//! `h · fl(1/h)` misses 1 by up to 6e-8, the same way every substep, a relative bias of the
//! velocity that a body pushed for seconds accumulates (a 216 kg cube pushed by 10 kN for 3 s at
//! 5 substeps ended 0.095 m/s slow of 138.9 m/s); the division is correctly rounded, so what is
//! left is unbiased rounding (`tests/force_response.rs`). After a successful step the body
//! recentres its origin when it has drifted ([`crate::body`]).
//!
//! Stiffness comes in two flavours. PBD scales every correction by a stiffness `k ∈ [0, 1]`;
//! with `iteration_corrected`, `k' = 1 - (1 - k)^(1/iterations)` so that the effective
//! stiffness after all iterations no longer depends on their count (Müller 2007, §3.3). XPBD
//! gives each constraint a compliance α (inverse stiffness) and uses `α̃ = α / h²` in
//! `Δλ = (-C - α̃ λ) / (Σ w |∇C|² + α̃)`, which makes stiffness independent of iterations and dt.
//!
//! A frame time whose substep `dt / substeps` exceeds [`StepParams::max_substep`] is split
//! into as many substeps as keep each at most that long, up to [`StepParams::max_substeps`];
//! a longer frame time is refused ([`WobbleError::StepTooLarge`]) before anything moves. The
//! [`StepReport`] that [`step`] returns says how many substeps ran, whether the step split
//! them, and the body's mean stretch at the end with a warning when it exceeds
//! [`StepParams::stretch_warning`].
//!
//! The step checks its input before it moves anything ([`crate::step::input`]): a position,
//! inverse mass, velocity or external force that is not finite (checked in the prediction's
//! pass over the particles), or a drag or attachment target that is not, is refused with
//! [`WobbleError::BadState`] naming it, and put back to a finite value. The state at the start
//! of the step, finite therefore, is kept; if the step produces a non-finite value, or a
//! particle faster than [`MAX_SPEED`], the body is restored to it and the step returns
//! [`WobbleError::Diverged`], naming the particle and the stage found by replaying the step with
//! checks ([`crate::step::diagnose`], failure path only). Both are found in the velocity update's pass
//! over the particles, which the step makes anyway.

pub mod diagnose;
pub mod input;
pub(crate) mod passes;

pub use passes::PARTICLE_BLOCK;

use crate::body::Body;
use crate::collide::{apply_friction, apply_restitution, find_contacts, project_contacts};
use crate::error::{
    check_count, check_dt, check_non_negative, check_positive, Result, WobbleError,
};
use crate::figures::residual;
use crate::geometry::packed::Packed4;
use crate::solver::{project_step_loop_kinds, Executor, Serial, SolveState, Solver};
use crate::step::diagnose::Finding;
use glam::Vec3;
use passes::Motion;
use std::sync::Arc;

/// Largest accepted iteration or substep count.
pub const MAX_COUNT: usize = 100_000;

pub use crate::error::MAX_SPEED;

/// The fraction `t0..t1` of a frame one call of the step covers: the frame's moving targets
/// (attachments, moving colliders, skinned targets) are set for the whole frame, and a world
/// steps its bodies one substep at a time, each call a window of it. Passed as an argument, so
/// that no call leaves it behind in the body for the next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Window {
    /// Where the call starts, as a fraction of the frame.
    pub t0: f32,
    /// Where it ends.
    pub t1: f32,
}

impl Window {
    /// The whole frame: a plain [`step`].
    pub(crate) const WHOLE: Window = Window { t0: 0.0, t1: 1.0 };

    /// Substep `k` of `n` of the frame.
    pub(crate) fn substep(k: usize, n: usize) -> Window {
        let n = n as f32;
        Window {
            t0: k as f32 / n,
            t1: (k + 1) as f32 / n,
        }
    }

    /// The fraction of the frame reached after substep `s` of the `substeps` this call runs
    /// (`s + 1 = substeps`: the window's end).
    fn at(self, s: usize, substeps: usize) -> f32 {
        self.t0 + (self.t1 - self.t0) * s as f32 / substeps as f32
    }

    /// True when the call ends the frame, where the moving targets are reached.
    fn ends_frame(self) -> bool {
        self.t1 >= 1.0
    }
}

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
    /// The longest substep (s) [`step`] runs: a `dt / substeps` longer than this (by more than
    /// 0.1%, so that f32 rounding of a frame time never doubles the work) is split into
    /// `ceil(dt / max_substep)` substeps ([`StepReport::split`]). Default 1/30 s: a game at 30
    /// frames per second or more never splits, while README's extreme-parameter table (checked
    /// by `tests/bad_input.rs`) shows the 8 x 8 cloth at dt = 1/10 s, split into three such
    /// substeps, keeping its largest stretch under 50% over 300 steps, and
    /// `tests/large_steps.rs` a quarter-second frame in one substep stretching its mean past
    /// the warning bound where eight keep it within. Must be finite and > 0.
    pub max_substep: f32,
    /// The most substeps a split may reach (>= 1; a `substeps` above it is run as asked, and
    /// then bounds the split instead). A `dt` that needs more is refused with
    /// [`WobbleError::StepTooLarge`]. Default 16, which accepts frame times up to 16/30 s
    /// (0.53 s): longer than Unity's default clamp of a frame time (`maximumDeltaTime`, 1/3 s);
    /// a longer frame is a stall (loading, a breakpoint) that a game clamps, not one to
    /// simulate at 16 times the cost of a frame.
    pub max_substeps: usize,
    /// The mean stretch (`|l - l0| / l0` over the structural distance constraints, as
    /// [`crate::figures::stretch`] measures it) above which the [`StepReport`] of a successful
    /// step carries [`StepWarning::Stretch`]. Default 0.25: 25% is the README's bound on the
    /// largest stretch of a stable cloth, so a mean above it is no cloth a game wants to show
    /// (a rubber-like material with compliance may raise it). Must be finite and > 0.
    pub stretch_warning: f32,
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
            max_substep: 1.0 / 30.0,
            max_substeps: 16,
            stretch_warning: 0.25,
        }
    }
}

/// A substep at most this much (relative) above [`StepParams::max_substep`] is not split.
const SPLIT_TOLERANCE: f64 = 1e-3;

/// What a successful [`step`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepReport {
    /// Substeps run: [`StepParams::substeps`], or more when the step split them.
    pub substeps: usize,
    /// True when the step ran more substeps than [`StepParams::substeps`], because
    /// `dt / substeps` was longer than [`StepParams::max_substep`].
    pub split: bool,
    /// The substep run, in s.
    pub substep_dt: f32,
    /// Mean stretch `|l - l0| / l0` of the structural distance constraints at the end of the
    /// step (all distance constraints when the body names no structural subset; 0 without
    /// any), as [`crate::figures::stretch`] measures it.
    pub stretch_mean: f32,
    /// What the caller should know: empty for a healthy step.
    pub warnings: Vec<StepWarning>,
}

impl StepReport {
    /// True when the step raised no warning.
    pub fn is_clean(&self) -> bool {
        self.warnings.is_empty()
    }
}

/// Something a successful step reports because the body may not look as a game wants (more
/// kinds may come).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum StepWarning {
    /// The mean stretch exceeded [`StepParams::stretch_warning`] (or was not finite): the
    /// constraints are far from satisfied, so more substeps or iterations are needed (or the
    /// material is that soft, and the bound should be raised).
    Stretch {
        /// The mean stretch at the end of the step.
        mean: f32,
        /// The bound it exceeded.
        bound: f32,
    },
}

impl std::fmt::Display for StepWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StepWarning::Stretch { mean, bound } => write!(
                f,
                "mean stretch {mean} is above the warning bound {bound}: the constraints are far from satisfied; use more substeps (a smaller max_substep) or iterations"
            ),
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
        check_non_negative("damping", self.damping)?;
        check_non_negative("contact_margin", self.contact_margin)?;
        check_positive("max_substep", self.max_substep)?;
        check_count("max_substeps", self.max_substeps, MAX_COUNT)?;
        check_positive("stretch_warning", self.stretch_warning)?;
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

    /// The substep h = dt / substeps (before any split: see [`StepParams::planned`]).
    pub fn substep_dt(&self) -> f32 {
        self.dt / self.substeps as f32
    }

    /// One substep of these parameters as parameters of its own: `dt` = h, one substep, and
    /// a `max_substep` that lets it run unsplit (a world or a coupling steps its bodies one
    /// substep at a time with it, after [`StepParams::planned`]).
    pub fn one_substep(&self) -> StepParams {
        let h = self.substep_dt();
        StepParams {
            dt: h,
            substeps: 1,
            max_substeps: 1,
            max_substep: h.max(self.max_substep),
            ..*self
        }
    }

    /// The parameters [`step`] runs: these, validated, with `substeps` raised to
    /// `ceil(dt / max_substep)` when `dt / substeps` exceeds [`StepParams::max_substep`]; an
    /// error when that count exceeds [`StepParams::max_substeps`] (or `substeps`, if larger).
    pub fn planned(&self) -> Result<StepParams> {
        self.validate()?;
        let (dt, max) = (self.dt as f64, self.max_substep as f64);
        if dt / self.substeps as f64 <= max * (1.0 + SPLIT_TOLERANCE) {
            return Ok(*self);
        }
        let needed = (dt / max - SPLIT_TOLERANCE).ceil();
        let cap = self.max_substeps.max(self.substeps);
        if needed > cap as f64 {
            return Err(WobbleError::StepTooLarge {
                dt: self.dt,
                max_substep: self.max_substep,
                max_substeps: cap,
                needed,
            });
        }
        let planned = StepParams {
            substeps: needed as usize,
            ..*self
        };
        planned.validate()?;
        Ok(planned)
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

/// Advances `body` by one step of `params.dt` with `solver`, split into more substeps when
/// `dt / substeps` exceeds [`StepParams::max_substep`], and says what it did.
///
/// Refuses, before moving anything, a `dt` that needs more than [`StepParams::max_substeps`]
/// ([`WobbleError::StepTooLarge`]) and a body holding a non-finite value
/// ([`WobbleError::BadState`], the value put back to a finite one); restores the body to the
/// step's start and returns [`WobbleError::Diverged`] when the step produces a non-finite value
/// or a speed above [`MAX_SPEED`]. When `residuals` is given, the residual (docs/SCENES.md: RMS
/// of C over the mean rest length) after every iteration of every substep is appended to it.
pub fn step(
    body: &mut Body,
    params: &StepParams,
    solver: &mut dyn Solver,
    residuals: Option<&mut Vec<f32>>,
) -> Result<StepReport> {
    run_step::<NoCheck, true>(body, params, solver, residuals, Window::WHOLE)
}

/// [`step`] over the fraction `window` of the frame (a world's substep).
pub(crate) fn step_window(
    body: &mut Body,
    params: &StepParams,
    solver: &mut dyn Solver,
    residuals: Option<&mut Vec<f32>>,
    window: Window,
) -> Result<StepReport> {
    run_step::<NoCheck, true>(body, params, solver, residuals, window)
}

/// [`step`] with its input check (`input`) and its stretch figure (`stretch`; without it
/// `stretch_mean` is 0 and never warned of) each left out when false: only for the bench that
/// measures what they cost (`benches/step_checks.rs`). A game calls [`step`].
#[doc(hidden)]
pub fn step_variant_for_bench(
    body: &mut Body,
    params: &StepParams,
    solver: &mut dyn Solver,
    input: bool,
    stretch: bool,
) -> Result<StepReport> {
    match (input, stretch) {
        (true, true) => run_step::<NoCheck, true>(body, params, solver, None, Window::WHOLE),
        (true, false) => run_step::<NoCheck, false>(body, params, solver, None, Window::WHOLE),
        (false, true) => run_step::<NoInputCheck, true>(body, params, solver, None, Window::WHOLE),
        (false, false) => {
            run_step::<NoInputCheck, false>(body, params, solver, None, Window::WHOLE)
        }
    }
}

/// The step, with the plain step's checker `C` ([`NoCheck`], or [`NoInputCheck`] for the
/// bench) and the stretch figure when `STRETCH`.
fn run_step<C: StageCheck + Default, const STRETCH: bool>(
    body: &mut Body,
    params: &StepParams,
    solver: &mut dyn Solver,
    residuals: Option<&mut Vec<f32>>,
    window: Window,
) -> Result<StepReport> {
    let params_in_substeps = params.substeps;
    let planned = params.planned()?;
    let params = &planned;
    prepare_step(body, params, solver)?;
    if C::INPUT {
        input::check_tables(body)?;
    }
    let mut residuals = residuals;
    let mut outcome = None;
    let executor = solver.executor();
    let mut run = || {
        // Unchecked, the stages cannot fail: `NoCheck` compiles to nothing. `advance` saves
        // the state at the start of the step into the scratch backup as it predicts.
        outcome = advance(
            body,
            params,
            solver,
            residuals.take(),
            window,
            &mut C::default(),
        )
        .ok();
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
        bad_input: false,
    });
    if outcome.bad_input {
        return Err(input::refuse_particles(body));
    }
    // The position of the first bad value is searched only on failure.
    if !(outcome.finite && outcome.max_speed2 <= MAX_SPEED * MAX_SPEED) {
        let bad =
            p.x.iter()
                .zip(&p.v)
                .position(|(x, v)| diverged_at(*x, *v).is_some())
                .unwrap_or(0);
        return Err(crate::step::diagnose::diverged(
            body, params, solver, window, bad,
        ));
    }
    // The frame's moving targets are reached at its end (a world's last substep).
    if window.ends_frame() {
        for a in body.attachments.iter_mut() {
            a.from = a.to;
        }
        for c in body.colliders.iter_mut() {
            if let Some(m) = c.motion.take() {
                c.shape = m;
            }
        }
    }
    // The forces act over the whole frame: a world steps a frame one substep window at a
    // time, so they are cleared after the window that ends it.
    if outcome.forces && window.ends_frame() {
        passes::clear(executor_or_serial(&executor), &mut p.force);
    }
    let mut report = StepReport {
        substeps: params.substeps,
        split: params.substeps != params_in_substeps,
        substep_dt: params.substep_dt(),
        stretch_mean: 0.0,
        warnings: Vec::new(),
    };
    if STRETCH {
        let d = &body.constraints.distance;
        let structural = body.topology.structural;
        let count = if structural > 0 {
            structural.min(d.len())
        } else {
            d.len()
        };
        report.stretch_mean = passes::mean_stretch(
            executor_or_serial(&executor),
            d,
            count,
            &body.particles.x,
            &mut body.scratch.stretch_partials,
        );
        // Written so that a NaN mean warns too.
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        if !(report.stretch_mean <= params.stretch_warning) {
            report.warnings.push(StepWarning::Stretch {
                mean: report.stretch_mean,
                bound: params.stretch_warning,
            });
        }
    }
    // After the stretch figure, which is translation invariant anyway.
    body.recentre_if_far();
    Ok(report)
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
    let mut g = state.constraints.distance.len();
    for kind in &state.constraints.extra {
        if kind.projected_by_step_loop() {
            state.lambda[g..g + kind.len()].fill(0.0);
        }
        g += kind.len();
    }
}

/// Validates the parameters, colliders and wind, and prepares the solver for the body's topology.
pub(crate) fn prepare_step(
    body: &mut Body,
    params: &StepParams,
    solver: &mut dyn Solver,
) -> Result<()> {
    params.validate()?;
    body.validate_if_changed()?;
    crate::solver::prepare_solver(
        solver,
        &body.constraints,
        body.particles.len(),
        body.topology_id(),
    )?;
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
    /// True when the prediction of the first substep checks the input state (the plain step;
    /// the replay starts from a state that passed, and checks it as a stage).
    const INPUT: bool = false;
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
    /// After a solver iteration (`state.x_prev` the substep's start and `inv_h` = 1/h, for the
    /// speed the iterate implies).
    fn iteration(
        &mut self,
        state: &SolveState,
        v: &[Packed4],
        inv_h: f32,
        label: &dyn Fn() -> String,
    ) -> std::result::Result<(), Finding>;
}

/// The checker of the plain step: checks nothing between stages, costs nothing (the input
/// check, when `INPUT`, is folded into the prediction's pass).
#[derive(Default)]
pub(crate) struct PlainCheck<const INPUT: bool>;

/// The plain step's checker.
pub(crate) type NoCheck = PlainCheck<true>;

/// [`NoCheck`] without the input check (the step of a body whose input the caller has
/// checked).
pub(crate) type NoInputCheck = PlainCheck<false>;

impl<const INPUT_CHECK: bool> StageCheck for PlainCheck<INPUT_CHECK> {
    const PLAIN: bool = true;
    const INPUT: bool = INPUT_CHECK;
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
        _: &SolveState,
        _: &[Packed4],
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
    /// The input check of the first substep's prediction found a bad value (the step stopped
    /// there; [`input::refuse_particles`] names it and puts the state back).
    pub bad_input: bool,
}

/// The stages of one step (every substep: forces, prediction, attachments, contacts, the
/// solve, friction, velocities, restitution), checked by `check` between stages.
pub(crate) fn advance<C: StageCheck>(
    body: &mut Body,
    params: &StepParams,
    solver: &mut dyn Solver,
    mut residuals: Option<&mut Vec<f32>>,
    window: Window,
    check: &mut C,
) -> std::result::Result<Outcome, Finding> {
    let n = body.particles.len();
    let nc = body.constraints.len();
    let origin = body.origin();
    // The shape colliders in the body frame: a body at the world's origin uses them as they
    // are; another uses copies moved by -origin (kept in the scratch, so no allocation).
    let mut local_colliders = std::mem::take(&mut body.scratch.local_colliders);
    local_colliders.clear();
    if origin != glam::DVec3::ZERO {
        local_colliders.extend(body.colliders.iter().map(|c| c.moved_into_frame(origin)));
    }
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
    let colliders: &[crate::collide::Collider] = if origin == glam::DVec3::ZERO {
        colliders
    } else {
        &local_colliders
    };
    let moving = colliders.iter().any(|c| c.motion.is_some());
    let mut substep_colliders = std::mem::take(&mut scratch.substep_colliders);
    let mut substep_start = std::mem::take(&mut scratch.substep_start_colliders);
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
    check.stage(&p.x, &p.v, &|| {
        "the body's state at the start of the step".into()
    })?;

    // Whether the previous substep's last pass already made this substep's prediction.
    let mut predicted_ahead = false;
    for s in 0..params.substeps {
        // After a fused pass (below) this substep's prediction is made already.
        if !predicted_ahead {
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
            let predicted = passes::predict(
                executor,
                p,
                wind_force,
                backup,
                Motion { h, g, damp },
                C::INPUT && s == 0,
            );
            forces |= predicted.forces;
            if predicted.bad_input {
                return Ok(Outcome {
                    finite: false,
                    max_speed2: 0.0,
                    forces: true,
                    bad_input: true,
                });
            }
        }
        check.stage(&p.x, &p.v, &|| {
            format!("prediction (gravity, forces and inverse mass integrated), substep {s}")
        })?;
        let t = window.at(s + 1, params.substeps);
        if moving {
            let t0 = window.at(s, params.substeps);
            substep_colliders.clear();
            substep_colliders.extend(colliders.iter().map(|c| c.at(t)));
            substep_start.clear();
            substep_start.extend(colliders.iter().map(|c| c.at(t0)));
        }
        let (colliders, start) = if moving {
            (&substep_colliders[..], Some(&substep_start[..]))
        } else {
            (colliders, None)
        };
        for a in attachments.iter() {
            let target = a.from.lerp(a.to, t);
            p.x[a.particle as usize].set_xyz(target);
        }
        check.stage(&p.x, &p.v, &|| format!("attachment targets, substep {s}"))?;
        if step_loop_kinds {
            for kind in constraints.extra.iter_mut() {
                kind.begin_substep(t);
            }
        }
        find_contacts(
            colliders,
            start,
            &p.x,
            &p.x_prev,
            &p.v,
            params.contact_margin,
            inv_h,
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
            keep_multipliers: !C::PLAIN || s + 1 == params.substeps,
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
            check.iteration(&state, &p.v, inv_h, &|| {
                format!("solver '{}' iteration {it}, substep {s}", solver.name())
            })?;
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
        // With nothing to do between this substep's velocity update and the next one's
        // prediction (no contact to give restitution, no wind to evaluate, no checker to run
        // between them), both are one pass over the particles.
        predicted_ahead =
            C::PLAIN && s + 1 < params.substeps && wind.is_none() && scratch.contacts.is_empty();
        if predicted_ahead {
            let (ok, speed2, forced) =
                passes::update_velocities_and_predict(executor, p, h, Motion { h, g, damp });
            finite = ok;
            max_speed2 = max_speed2.max(speed2);
            forces |= forced;
            continue;
        }
        let (ok, speed2) = passes::update_velocities(executor, &mut p.v, &p.x, &p.x_prev, h);
        finite = ok;
        max_speed2 = max_speed2.max(speed2);
        check.stage(&p.x, &p.v, &|| format!("velocity update, substep {s}"))?;
        apply_restitution(
            colliders,
            &scratch.contacts,
            &p.x,
            &mut p.v,
            2.0 * g.length() * h,
            inv_h,
        );
        // Restitution changed only the contacts' velocities since the velocity pass checked.
        for c in &scratch.contacts {
            let v = p.v[c.particle as usize];
            finite &= v.is_finite();
            max_speed2 = max_speed2.max(v.xyz().length_squared());
        }
        check.stage(&p.x, &p.v, &|| format!("restitution, substep {s}"))?;
    }
    scratch.local_colliders = local_colliders;
    scratch.substep_colliders = substep_colliders;
    scratch.substep_start_colliders = substep_start;
    Ok(Outcome {
        finite,
        max_speed2,
        forces,
        bad_input: false,
    })
}

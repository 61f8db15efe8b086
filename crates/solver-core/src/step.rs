//! The step loop: forces, prediction, the solve, contacts, velocities.
//!
//! Theory (Müller et al. 2007, "Position Based Dynamics"; Macklin et al. 2016, "XPBD"; Macklin
//! et al. 2019, "Small Steps"). With the substep `h = dt / substeps`, each substep does
//!
//! ```text
//! v   ← v + h (g + w f_ext)           (pinned particles, w = 0, keep v = 0; f_ext includes
//!                                      the body's wind, evaluated at the substep's start)
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
//! The state at the start of the step is kept; if the step produces a non-finite value the body
//! is restored to it and the step returns [`WobbleError::Diverged`].

use crate::body::Body;
use crate::collide::{apply_friction, apply_restitution, find_contacts, project_contacts};
use crate::error::{check_count, check_dt, Result, WobbleError};
use crate::figures::residual;
use crate::solver::{SolveState, Solver};
use glam::Vec3;

/// Largest accepted iteration or substep count.
pub const MAX_COUNT: usize = 100_000;

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
    /// Linear velocity damping per second (0 = none); v ← v · max(0, 1 - damping h).
    pub damping: f32,
    /// PBD or XPBD stiffness.
    pub stiffness: Stiffness,
    /// Particles within this distance of a collider become contacts for the substep.
    pub contact_margin: f32,
}

impl Default for StepParams {
    /// The SCENES.md defaults: dt = 1/60, 1 substep, 8 iterations, no damping, XPBD (with every
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
/// When `residuals` is given, the residual (SCENES.md: RMS of C over the mean rest length) after
/// every iteration of every substep is appended to it.
pub fn step(
    body: &mut Body,
    params: &StepParams,
    solver: &mut dyn Solver,
    mut residuals: Option<&mut Vec<f32>>,
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
    scratch.backup_x.clear();
    scratch.backup_x.extend_from_slice(&p.x);
    scratch.backup_v.clear();
    scratch.backup_v.extend_from_slice(&p.v);

    let h = params.substep_dt();
    let inv_h = 1.0 / h;
    let inv_dt2 = match params.stiffness {
        Stiffness::Xpbd => inv_h * inv_h,
        Stiffness::Pbd { .. } => 0.0,
    };
    let k = params.correction_scale();
    let damp = (1.0 - params.damping * h).max(0.0);
    let g = params.gravity;

    for s in 0..params.substeps {
        if let Some(w) = wind {
            scratch.wind_force.clear();
            scratch.wind_force.resize(n, Default::default());
            w.accumulate(&topology.triangles, &p.x, &p.v, &mut scratch.wind_force);
        }
        for i in 0..n {
            let xi = p.x[i];
            p.x_prev[i] = xi;
            if xi.w == 0.0 {
                continue;
            }
            let mut f = p.force[i];
            if wind.is_some() {
                let fw = scratch.wind_force[i];
                f.x += fw.x;
                f.y += fw.y;
                f.z += fw.z;
            }
            let v = &mut p.v[i];
            v.x = (v.x + h * (g.x + f.x * xi.w)) * damp;
            v.y = (v.y + h * (g.y + f.y * xi.w)) * damp;
            v.z = (v.z + h * (g.z + f.z * xi.w)) * damp;
            let x = &mut p.x[i];
            x.x += h * v.x;
            x.y += h * v.y;
            x.z += h * v.z;
        }
        let t = (s + 1) as f32 / params.substeps as f32;
        for a in attachments.iter() {
            let target = a.from.lerp(a.to, t);
            p.x[a.particle as usize].set_xyz(target);
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
        for it in 0..params.iterations {
            solver.iterate(&mut state, it);
            project_contacts(colliders, &mut scratch.contacts, state.x);
            if let Some(r) = residuals.as_deref_mut() {
                r.push(residual(constraints, state.x));
            }
        }
        apply_friction(colliders, &scratch.contacts, &mut p.x, &p.x_prev);
        for i in 0..n {
            let (x, x0) = (p.x[i], p.x_prev[i]);
            p.v[i].x = (x.x - x0.x) * inv_h;
            p.v[i].y = (x.y - x0.y) * inv_h;
            p.v[i].z = (x.z - x0.z) * inv_h;
        }
        apply_restitution(
            colliders,
            &scratch.contacts,
            &p.x,
            &mut p.v,
            2.0 * g.length() * h,
        );
    }
    for a in attachments.iter_mut() {
        a.from = a.to;
    }
    p.force.iter_mut().for_each(|f| *f = Default::default());

    if let Some(bad) =
        p.x.iter()
            .zip(&p.v)
            .position(|(x, v)| !(x.is_finite() && v.is_finite()))
    {
        p.x.copy_from_slice(&scratch.backup_x);
        p.x_prev.copy_from_slice(&scratch.backup_x);
        p.v.copy_from_slice(&scratch.backup_v);
        return Err(WobbleError::Diverged {
            particle: bad,
            stage: "step".into(),
        });
    }
    Ok(())
}

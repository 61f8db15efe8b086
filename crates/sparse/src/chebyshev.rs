//! Jacobi with Chebyshev semi-iterative acceleration.
//!
//! Theory (Wang 2015, "A Chebyshev semi-iterative approach for accelerating projective and
//! position-based dynamics", §4 and §6): with `x̂⁽ᵏ⁺¹⁾` the Jacobi iterate computed from `x⁽ᵏ⁾`
//! (see [`crate::jacobi`]; it already carries the relaxation ω, Wang's under-relaxation γ),
//!
//! ```text
//! x⁽ᵏ⁺¹⁾ = ω_{k+1} (x̂⁽ᵏ⁺¹⁾ - x⁽ᵏ⁻¹⁾) + x⁽ᵏ⁻¹⁾
//! ω_{k+1} = 1                   for k < S
//!         = 2 / (2 - ρ²)         for k = S
//!         = 4 / (4 - ρ² ω_k)     for k > S
//! ```
//!
//! with ρ the spectral radius of the Jacobi iteration and S the delayed start: the first S
//! iterations are plain Jacobi, because the nonlinear iteration only behaves like a linear one
//! (whose error Chebyshev polynomials minimise) once close to the solution.
//!
//! ρ is given ([`ChebyshevOptions::rho`]) or estimated once per prepare: substeps after prepare run
//! plain Jacobi for all their iterations (probes) and measure the Jacobi step length
//! `d_k = ‖x̂⁽ᵏ⁺¹⁾ - x⁽ᵏ⁾‖`; once the slowest error mode dominates it shrinks by about ρ per
//! iteration, so `ρ ≈ d_{K-1} / d_{K-2}` over a probe's last two iterations, clamped to
//! `[0, 0.999]` (ρ = 1 would drive ω to 2, the edge of stability). A probe counts only when both
//! steps stand clear of rounding, longer than [`PROBE_SIGNAL`] `· ε_f32 · ‖x‖`: positions of size
//! `|x|` carry rounding of about `ε_f32 |x|` that no iteration removes, so steps at that level do
//! not shrink and their ratio reads about 1 whatever ρ is. A body in free fall or at rest in its
//! first substep (the jelly, the cube: every constraint already holds) gives such a probe; the
//! estimate used to take it, clamp it to 0.999 and over-extrapolate every later substep (the
//! stability matrix caught the jelly gaining energy once it rested on the ground). Probing goes
//! on, substep after substep, until one counts; every later substep uses that ρ. The ratio approaches ρ from below as K grows (on the 16 x 16 cloth it reads 0.81 after 4
//! iterations, 0.96 after 10, 0.98 after 16), so a short probe under-accelerates rather than
//! risking divergence; Wang estimates ρ offline, once per scene, in the same spirit. The norms
//! are summed in fixed blocks and then in block order, so the estimate, and the result, are the
//! same bit for bit for any thread count.
//!
//! The multipliers are extrapolated with the positions, `λ⁽ᵏ⁺¹⁾ = ω_{k+1} (λ̂⁽ᵏ⁺¹⁾ - λ⁽ᵏ⁻¹⁾) +
//! λ⁽ᵏ⁻¹⁾`: XPBD converges to the true equilibrium only while `x - x̃ = M⁻¹ ∇Cᵀ λ` holds (see
//! [`crate::jacobi`]), and extrapolating both sides of it by the same affine combination keeps
//! it (to first order in the change of the gradients between iterations). Extrapolating the
//! positions alone broke it, and the hanging rope settled far too long (tests/
//! chain_static_stretch.rs). Pinned particles are not moved; their term of the invariant is
//! zero.
//!
//! Safeguard (adaptive restart, in the spirit of O'Donoghue and Candès 2015): whenever the
//! Jacobi step length grows from one iteration to the next, the Chebyshev sequence restarts
//! (ω = 1, then the delayed start again). Without it, a ρ estimated on the first substep of a
//! slack cloth (close to 1 at dt = 1/240) over-extrapolated later substeps and pumped energy in:
//! the stability matrix caught the 8 x 8 cloth gaining over 200 J in 2000 steps.
//!
//! The tables the step loop projects (contacts, a drag, global kinds such as a closed
//! surface's volume, skinned constraints) are projected after the extrapolation, on `x⁽ᵏ⁺¹⁾`:
//! their displacement is part of `x⁽ᵏ⁺¹⁾` and so of the next extrapolated difference. The
//! multipliers of those after the solver's own tables (every contact and drag, and a global
//! kind stored last) are extrapolated with the positions as this solver's own are, so that
//! the invariant holds for them too: a contact's reaction on another body, `k λ ∇C / h`, is
//! read from its multiplier, and without this a contact in chebyshev gave another body a
//! different momentum than its particles gained (`tests/world_rapier.rs`). A step-loop table
//! stored between the solver's own keeps its multipliers as the step loop leaves them.
//! Projecting the volume inside `x̂` before extrapolating, or taking its displacement out of
//! the next difference, made no measurable difference to the jelly's energy or stretch once ρ was estimated from a real
//! signal, and did not cure the bogus ρ = 0.999 either; the simpler order stays.

use crate::jacobi::JacobiCore;
use crate::{ChebyshevOptions, SolverOptions};
use solver_core::{Constraints, Packed4, Preparation, SolveState, Solver, WobbleError};

/// Default delayed start S. Wang uses S = 10 with tens of iterations; with wobble's default of
/// 8 iterations that would never start, so the default is 4.
pub const DEFAULT_DELAY: usize = 4;

/// Largest ρ the estimate may return.
pub const MAX_ESTIMATED_RHO: f32 = 0.999;

/// A probe counts only when its last two Jacobi steps are longer than this many times
/// `f32::EPSILON · ‖x‖` (the size of the rounding in the positions).
pub const PROBE_SIGNAL: f64 = 10.0;

/// The Chebyshev-accelerated Jacobi solver (`chebyshev`).
#[derive(Debug)]
pub struct Chebyshev {
    core: JacobiCore,
    prepared: Preparation,
    rho_given: Option<f32>,
    delay: usize,
    /// x⁽ᵏ⁻¹⁾.
    prev: Vec<Packed4>,
    /// λ⁽ᵏ⁻¹⁾.
    prev_lambda: Vec<f32>,
    /// λ⁽ᵏ⁾ during an iteration.
    lambda_k: Vec<f32>,
    /// Global-id ranges of the kinds this solver projects, whose multipliers are extrapolated
    /// with the positions (module doc); the step-loop tables after them (contacts, a drag) are
    /// extrapolated too, from `solver_len` to the end of the substep's multipliers.
    owned: Vec<std::ops::Range<usize>>,
    /// Where the step-loop tables after the solver's begin in the multipliers.
    solver_len: usize,
    /// Block partial sums of the squared Jacobi step.
    partials: Vec<f64>,
    /// The last two Jacobi step lengths of the probe substep.
    step_norms: [f64; 2],
    /// True while the current substep is the probe (plain Jacobi, measuring ρ).
    probing: bool,
    /// ρ once given or estimated.
    rho: Option<f32>,
    omega: f32,
    /// Iteration at which the current Chebyshev sequence started (moved by restarts).
    start: usize,
    /// Jacobi step length of the previous iteration (for the restart test).
    last_norm: f64,
    /// Number of adaptive restarts since prepare.
    restarts: usize,
}

impl Chebyshev {
    /// A Chebyshev solver on `opts`' threads, with `chebyshev`'s Jacobi step, ρ and delay.
    pub fn new(opts: &SolverOptions, chebyshev: ChebyshevOptions) -> Result<Self, WobbleError> {
        chebyshev.validate()?;
        Ok(Chebyshev {
            core: JacobiCore::new(opts, &chebyshev.jacobi)?,
            prepared: Preparation::default(),
            rho_given: chebyshev.rho,
            delay: chebyshev.delay,
            prev: Vec::new(),
            prev_lambda: Vec::new(),
            lambda_k: Vec::new(),
            owned: Vec::new(),
            solver_len: 0,
            partials: Vec::new(),
            step_norms: [0.0; 2],
            probing: false,
            rho: chebyshev.rho,
            omega: 1.0,
            start: 0,
            last_norm: f64::INFINITY,
            restarts: 0,
        })
    }

    /// The spectral radius in use: given, or estimated by the probe substep (`None` before).
    pub fn rho(&self) -> Option<f32> {
        self.rho
    }

    /// Number of adaptive restarts since the last prepare.
    pub fn restarts(&self) -> usize {
        self.restarts
    }

    /// `‖x‖` over all particles (the scale of the probe's rounding noise).
    fn position_norm(&mut self, x: &[Packed4]) -> f64 {
        self.norm_by_blocks(|_, p| [x[p].x, x[p].y, x[p].z])
    }

    /// `‖x̂ - x‖` of the Jacobi step just computed.
    fn step_norm(&mut self) -> f64 {
        self.norm_by_blocks(|core, p| {
            let d = core.step_of(p);
            [d[0], d[1], d[2]]
        })
    }

    /// `‖v‖` of one 3-vector per particle, `v(core, p)`, summed in f64 block by block (the same
    /// blocks whatever the thread count, so the same sum).
    fn norm_by_blocks(&mut self, v: impl Fn(&JacobiCore, usize) -> [f32; 3] + Sync) -> f64 {
        let core = &self.core;
        let (chunk, n) = (core.chunk, core.particles);
        core.pool.map_blocks(
            n.div_ceil(chunk),
            core.parallel(),
            &mut self.partials,
            |b| {
                (b * chunk..((b + 1) * chunk).min(n))
                    .map(|p| v(core, p).iter().map(|&c| (c as f64).powi(2)).sum::<f64>())
                    .sum()
            },
        );
        self.partials.iter().sum::<f64>().sqrt()
    }
}

impl Solver for Chebyshev {
    fn name(&self) -> &'static str {
        "chebyshev"
    }

    fn prepare(&mut self, constraints: &Constraints, particles: usize) -> Result<(), WobbleError> {
        self.core.prepare(constraints, particles)?;
        self.prev = vec![Packed4::default(); particles];
        // The multipliers of the tables a solver sees; the step-loop tables after them
        // (contacts, a drag) change size without a prepare.
        self.solver_len = constraints.solver_len();
        self.prev_lambda = vec![0.0; self.solver_len];
        self.lambda_k = vec![0.0; self.solver_len];
        let offsets = constraints.solver_offsets();
        self.owned = constraints
            .kinds()
            .take(constraints.solver_tables())
            .enumerate()
            .filter(|(_, k)| !k.projected_by_step_loop())
            .map(|(t, _)| offsets[t]..offsets[t + 1])
            .collect();
        self.partials = Vec::with_capacity(particles.div_ceil(self.core.chunk));
        self.rho = self.rho_given;
        Ok(())
    }

    fn preparation(&mut self) -> Option<&mut Preparation> {
        Some(&mut self.prepared)
    }

    fn begin(&mut self, s: &mut SolveState) {
        s.lambda.fill(0.0);
        self.prev.copy_from_slice(s.x);
        // The step-loop tables after the solver's (contacts, a drag) change size from substep
        // to substep without a prepare, but not within one: the histories take this substep's.
        let m = s.lambda.len().max(self.solver_len);
        self.prev_lambda.resize(m, 0.0);
        self.lambda_k.resize(m, 0.0);
        self.prev_lambda[..s.lambda.len()].copy_from_slice(s.lambda);
        self.omega = 1.0;
        self.step_norms = [0.0; 2];
        self.probing = self.rho.is_none();
        self.start = 0;
        self.last_norm = f64::INFINITY;
    }

    fn iterate(&mut self, s: &mut SolveState, k: usize) {
        // Keep λ⁽ᵏ⁾ before phase 1 turns the multipliers into λ̂⁽ᵏ⁺¹⁾; a probe (ω = 1 all
        // substep long) needs no history.
        let extrapolating = !self.probing && self.rho.is_some();
        if extrapolating {
            let m = self.lambda_k.len().min(s.lambda.len());
            self.lambda_k[..m].copy_from_slice(&s.lambda[..m]);
        }
        self.core.corrections(s);
        if self.probing {
            self.step_norms = [self.step_norms[1], self.step_norm()];
            if k + 1 == s.iterations && k >= 1 {
                let [a, b] = self.step_norms;
                // Steps at the level of f32 rounding do not shrink, whatever ρ is: their ratio
                // reads about 1 (a body in free fall, at rest, or moving rigidly). Such a probe
                // says nothing; the next substep probes again.
                let floor = PROBE_SIGNAL * f32::EPSILON as f64 * self.position_norm(s.x);
                if a.min(b) > floor {
                    self.rho = Some(((b / a) as f32).clamp(0.0, MAX_ESTIMATED_RHO));
                }
            }
        }
        let rho = if self.probing { None } else { self.rho };
        if rho.is_some() {
            // Adaptive restart: a growing Jacobi step means the extrapolation overshoots (ρ
            // over-estimated for the current state, or the nonlinearity), which pumps energy
            // into the body; start the sequence afresh from here.
            let norm = self.step_norm();
            if norm > self.last_norm {
                self.start = k;
                self.restarts += 1;
            }
            self.last_norm = norm;
        }
        let j = k - self.start;
        self.omega = match rho {
            Some(rho) if j == self.delay => 2.0 / (2.0 - rho * rho),
            Some(rho) if j > self.delay => 4.0 / (4.0 - rho * rho * self.omega),
            _ => 1.0,
        };
        let omega = self.omega;
        let core = &self.core;
        let chunk = core.chunk;
        core.pool.for_each_chunk_mut2(
            s.x,
            &mut self.prev,
            chunk,
            core.parallel(),
            |block, xs, prevs| {
                for (q, (xp, pp)) in xs.iter_mut().zip(prevs.iter_mut()).enumerate() {
                    let d = core.step_of(block * chunk + q);
                    let xk = *xp;
                    let hat = [xk.x + d[0], xk.y + d[1], xk.z + d[2]];
                    if omega != 1.0 && xk.w != 0.0 {
                        xp.x = omega * (hat[0] - pp.x) + pp.x;
                        xp.y = omega * (hat[1] - pp.y) + pp.y;
                        xp.z = omega * (hat[2] - pp.z) + pp.z;
                    } else {
                        xp.x = hat[0];
                        xp.y = hat[1];
                        xp.z = hat[2];
                    }
                    *pp = xk;
                }
            },
        );
        if extrapolating {
            if omega != 1.0 {
                // The step-loop tables' multipliers too: their projections' displacements are
                // in the positions' difference, so their multipliers must follow for
                // `x - x̃ = M⁻¹ ∇Cᵀ λ` to hold (a contact's reaction on another body is read
                // from its multiplier).
                let tail = self.solver_len..s.lambda.len().min(self.prev_lambda.len());
                for r in self.owned.iter().chain(std::iter::once(&tail)) {
                    let prev = &self.prev_lambda[r.clone()];
                    for (l, &p) in s.lambda[r.clone()].iter_mut().zip(prev) {
                        *l = omega * (*l - p) + p;
                    }
                }
            }
            std::mem::swap(&mut self.prev_lambda, &mut self.lambda_k);
        }
    }

    fn executor(&self) -> Option<std::sync::Arc<dyn solver_core::Executor>> {
        self.core.executor()
    }

    fn report(&self) -> solver_core::SolverReport {
        self.core.report()
    }
}

//! Jacobi iteration over all constraints, gathered per particle (deterministic in parallel).
//!
//! Theory: every constraint `g` computes its XPBD update from the same positions `x`,
//!
//! ```text
//! Δλ_g = (-C_g - α̃ λ_g) / (Σ_k w_k |∇_k C_g|² + α̃)
//! ```
//!
//! and each particle moves by the sum of the corrections of the constraints acting on it. XPBD
//! converges to the true equilibrium only if the positions and the multipliers move together,
//! `x - x̃ = M⁻¹ ∇Cᵀ λ` (then, at the fixed point `Δλ = 0`, `C = -α̃ λ`: each constraint's force
//! `∇Cᵀ λ / h²` is what its compliance says). So whatever relaxes or averages a constraint's
//! update does it to the multiplier update itself, and the positions follow that multiplier
//! ([`Averaging`]):
//!
//! ```text
//! Constraint (default):  Δλ_g = ω (-C_g - α̃ λ_g) / (α̃ + Σ_{p ∈ g} n_p w_p |∇_p C_g|²)
//! Off:                   Δλ_g = ω (-C_g - α̃ λ_g) / (α̃ + Σ_{p ∈ g}     w_p |∇_p C_g|²)
//! λ_g += Δλ_g,           x_p += Σ_{g ∋ p} s w_p ∇_p C_g Δλ_g
//! ```
//!
//! (s the PBD stiffness scale, 1 in XPBD; `n_p` the number of constraints on particle p, from
//! the incidence, fixed at prepare: a unilateral constraint counts even while inactive, which
//! only under-relaxes). A constraint's corrections all come from one `Δλ_g`, so its impulses
//! `m_p δ_p = s ∇_p C_g Δλ_g` sum to zero (equal and opposite for a distance constraint) and
//! internal constraints conserve momentum. Weighting each particle's term by its count is the
//! consistent form of the constraint averaging of Macklin, Müller, Chentanez, Kim 2014 ("Unified
//! particle physics for real-time applications", §4.2), which keeps the summed corrections from
//! overshooting: linearized, the iteration is `Δλ = ω S⁻¹ (b - A λ)` on `A = J W Jᵀ + α̃`, with
//! `S_g = α̃ + Σ_p n_p w_p |∇_p C_g|²`. For distance constraints (unit gradients) row g of A has
//! at most `Σ_{p ∈ g} w_p (n_p - 1)` off its diagonal, so `S_g` is at least its absolute row sum
//! and, by Gershgorin, the eigenvalues of `S⁻¹ A` (A is positive semi-definite) lie in
//! [0, 1]: the iteration converges for every ω < 2 (a zero eigenvalue, a redundant constraint
//! without compliance, neither grows nor shrinks). A stiff constraint with a large α̃ is barely damped (`S_g ≈ A_gg`), a rigid one
//! (α̃ = 0) between particles of n constraints each is scaled by about 1/n. Plain Jacobi (`Off`)
//! converges only where A is diagonally dominant enough: on the cloth it diverges, which the
//! step's guard reports as `WobbleError::Diverged`.
//!
//! `Averaging::Particle` is the literature's form, kept to measure it (`wobble claims` C13,
//! C14): each particle's summed correction is divided by its count `n_p` of active constraints
//! and relaxed by ω, `x_p += ω / n_p Σ_{g ∋ p} s w_p ∇_p C_g Δλ_g`, while the multipliers take the
//! whole `Δλ_g`. The two ends of a constraint then get different factors: its impulses no longer
//! cancel (a free body's momentum drifts) and `x - x̃ ≠ M⁻¹ ∇Cᵀ λ`, so the iteration converges
//! to a different, softer equilibrium (the hanging rope far too long at its top: C13 gives the
//! figure), whatever the iteration count. Unilateral constraints with `C <= 0` are inactive (no correction, and under
//! `Particle` not counted).
//!
//! Two phases, both parallel with no atomics and no locks: phase 1 writes each constraint's
//! per-slot corrections into its own entries of the incidence `B` (rows of constraints),
//! phase 2 walks `Bᵀ` (rows of particles) and sums each particle's entries in ascending
//! constraint order. Every number is computed the same way whatever the thread count, so the
//! result is bitwise identical for 1, 2 or N threads.

use crate::incidence::Incidence;
use crate::parallel::{Pool, SharedMut};
use crate::{Averaging, JacobiOptions, SolverOptions};
use solver_core::constraints::{xpbd_delta_lambda, MAX_ARITY};
use solver_core::glam::Vec3;
use solver_core::{
    ConstraintKind, Constraints, Packed4, Preparation, SolveState, Solver, WobbleError,
};

/// Table `t` of the constraints (0 = distance, then the extras) without allocating.
#[inline]
pub(crate) fn kind_at(constraints: &Constraints, t: usize) -> &dyn ConstraintKind {
    if t == 0 {
        &constraints.distance
    } else {
        constraints.extra[t - 1].as_ref()
    }
}

/// How a Jacobi sweep updates each constraint: the stiffness `k` on every position change, the
/// relaxation `omega` of Δλ, and when `counts` is given each particle's term of the
/// denominator weighted by its constraint count.
#[derive(Clone, Copy)]
pub(crate) struct JacobiUpdate<'a> {
    pub k: f32,
    pub omega: f32,
    pub counts: Option<&'a [f32]>,
}

/// The Jacobi update of one constraint (see [`JacobiUpdate`]): adds Δλ to its multiplier and
/// writes one correction `[δx, δy, δz, 1]` per slot into `out` (`[0; 4]` everywhere when
/// inactive). Mirrors `solver_core::constraints::project_generic` without moving anything.
/// Generic over the kind, so that the distance table's call needs no dynamic dispatch.
#[inline(always)]
pub(crate) fn constraint_correction<K: ConstraintKind + ?Sized>(
    kind: &K,
    c: usize,
    x: &[Packed4],
    lambda: &mut f32,
    alpha_tilde: f32,
    JacobiUpdate { k, omega, counts }: JacobiUpdate,
    out: &mut [[f32; 4]],
) {
    let mut grad = [Vec3::ZERO; MAX_ARITY];
    let value = kind.evaluate(c, x, &mut grad);
    if kind.unilateral() && value <= 0.0 {
        out.fill([0.0; 4]);
        return;
    }
    let ids = kind.particles(c);
    let mut denom = alpha_tilde;
    for (slot, &p) in ids.iter().enumerate() {
        let n = counts.map_or(1.0, |c| c[p as usize]);
        denom += n * x[p as usize].w * grad[slot].length_squared();
    }
    let Some(dl) = xpbd_delta_lambda(value, *lambda, alpha_tilde, denom) else {
        out.fill([0.0; 4]);
        return;
    };
    let dl = omega * dl;
    *lambda += dl;
    for (slot, &p) in ids.iter().enumerate() {
        let s = k * x[p as usize].w * dl;
        out[slot] = [s * grad[slot].x, s * grad[slot].y, s * grad[slot].z, 1.0];
    }
}

/// What the Jacobi family shares: the incidence, the per-entry corrections, the pool.
#[derive(Debug)]
pub(crate) struct JacobiCore {
    pub pool: Pool,
    pub chunk: usize,
    pub threshold: usize,
    pub omega: f32,
    pub average: Averaging,
    pub inc: Incidence,
    /// Constraints on each particle (`n_p`, from the incidence), for `Averaging::Constraint`.
    pub counts: Vec<f32>,
    /// One `[δx, δy, δz, active]` per entry of `B`.
    pub corr: Vec<[f32; 4]>,
    /// Global id of the first constraint of each table a solver sees, and their total
    /// (`Constraints::solver_offsets`).
    pub offsets: Vec<usize>,
    pub particles: usize,
}

impl JacobiCore {
    pub fn new(opts: &SolverOptions, jacobi: &JacobiOptions) -> Result<Self, WobbleError> {
        opts.validate()?;
        jacobi.validate()?;
        Ok(JacobiCore {
            pool: opts.make_pool()?,
            chunk: opts.chunk,
            threshold: opts.parallel_threshold,
            omega: jacobi.omega,
            average: jacobi.average,
            inc: Incidence::default(),
            counts: Vec::new(),
            corr: Vec::new(),
            offsets: Vec::new(),
            particles: 0,
        })
    }

    pub fn prepare(
        &mut self,
        constraints: &Constraints,
        particles: usize,
    ) -> Result<(), WobbleError> {
        self.inc = Incidence::of_solver_tables(constraints, particles)?;
        let bt = &self.inc.particle_constraints;
        self.counts = (0..particles)
            .map(|p| bt.row_range(p).len() as f32)
            .collect();
        self.corr = vec![[0.0; 4]; self.inc.constraint_particles.nnz()];
        self.offsets = constraints.solver_offsets();
        self.particles = particles;
        Ok(())
    }

    /// Whether the work is large enough to split across threads.
    #[inline]
    pub fn parallel(&self) -> bool {
        self.inc.constraints() >= self.threshold
    }

    /// Where the step runs (`Solver::executor`): the pool, once the body is large enough to
    /// split (a small one gains nothing from the hand-off).
    pub fn executor(&self) -> Option<std::sync::Arc<dyn solver_core::Executor>> {
        self.parallel().then(|| self.pool.executor()).flatten()
    }

    /// The solver's report: its thread count.
    pub fn report(&self) -> solver_core::SolverReport {
        solver_core::SolverReport {
            threads: self.pool.threads(),
            colors: None,
            kernel: None,
        }
    }

    /// Phase 1: every constraint's multiplier update and per-slot corrections, from `s.x`.
    pub fn corrections(&mut self, s: &mut SolveState) {
        assert_eq!(
            s.x.len(),
            self.particles,
            "Jacobi solver prepared for another body"
        );
        // More or fewer multipliers than at prepare: the step-loop tables after the solver's
        // (contacts, a drag) change size; the solver's own ids come first.
        assert!(
            s.lambda.len() >= self.inc.constraints(),
            "one multiplier per constraint"
        );
        let x: &[Packed4] = s.x;
        let constraints = s.constraints;
        let (inv_dt2, k) = (s.inv_dt2, s.stiffness);
        // The relaxation and counts of the multiplier update (the literature's averaging
        // leaves the multipliers whole and scales the positions in phase 2 instead).
        let (omega, counts) = match self.average {
            Averaging::Off => (self.omega, None),
            Averaging::Constraint => (self.omega, Some(&self.counts[..])),
            Averaging::Particle => (1.0, None),
        };
        let update = JacobiUpdate { k, omega, counts };
        let m = self.inc.constraints();
        let chunk = self.chunk;
        let offsets = &self.offsets;
        let rows = self.inc.constraint_particles.offsets();
        let corr = SharedMut::new(&mut self.corr);
        let lambda = SharedMut::new(s.lambda);
        self.pool
            .for_each_block(m.div_ceil(chunk), m >= self.threshold, |block| {
                let (g0, g1) = (block * chunk, ((block + 1) * chunk).min(m));
                for t in 0..offsets.len() - 1 {
                    let (lo, hi) = (offsets[t].max(g0), offsets[t + 1].min(g1));
                    if lo >= hi {
                        continue;
                    }
                    let kind = kind_at(constraints, t);
                    if kind.projected_by_step_loop() {
                        continue;
                    }
                    let distance = &constraints.distance;
                    for g in lo..hi {
                        let (e0, e1) = (rows[g] as usize, rows[g + 1] as usize);
                        let c = g - offsets[t];
                        // SAFETY: blocks are disjoint ranges of constraints; constraint g owns
                        // multiplier g and entries rows[g]..rows[g + 1] of `corr`, which no other
                        // block touches; both buffers outlive the call and are in range (one
                        // multiplier per constraint, asserted; `corr` has one slot per entry).
                        // Positions are only read in this phase.
                        let (lam, out) = unsafe {
                            (
                                &mut *lambda.get().add(g),
                                std::slice::from_raw_parts_mut(corr.get().add(e0), e1 - e0),
                            )
                        };
                        if t == 0 {
                            let alpha = distance.compliance[c] * inv_dt2;
                            constraint_correction(distance, c, x, lam, alpha, update, out);
                        } else {
                            let alpha = kind.compliance(c) * inv_dt2;
                            constraint_correction(kind, c, x, lam, alpha, update, out);
                        }
                    }
                }
            });
    }

    /// The summed correction `[Σδx, Σδy, Σδz, n]` of particle `p`, in ascending constraint order.
    #[inline(always)]
    pub fn gather(&self, p: usize) -> [f32; 4] {
        let bt = &self.inc.particle_constraints;
        let mut acc = [0.0f32; 4];
        for e in bt.row_range(p) {
            let d = self.corr[self.inc.particle_entries[e] as usize];
            acc[0] += d[0];
            acc[1] += d[1];
            acc[2] += d[2];
            acc[3] += d[3];
        }
        acc
    }

    /// The move of particle `p`: its summed corrections (relaxed and averaged in phase 1), or
    /// under `Averaging::Particle` their relaxed average.
    #[inline(always)]
    pub fn step_of(&self, p: usize) -> [f32; 3] {
        let acc = self.gather(p);
        let scale = match self.average {
            Averaging::Particle if acc[3] > 1.0 => self.omega / acc[3],
            Averaging::Particle => self.omega,
            Averaging::Constraint | Averaging::Off => 1.0,
        };
        [scale * acc[0], scale * acc[1], scale * acc[2]]
    }
}

/// The Jacobi solver (`jacobi`).
#[derive(Debug)]
pub struct Jacobi {
    core: JacobiCore,
    prepared: Preparation,
}

impl Jacobi {
    /// A Jacobi solver on `opts`' threads, relaxed and averaged as `jacobi` says.
    pub fn new(opts: &SolverOptions, jacobi: JacobiOptions) -> Result<Self, WobbleError> {
        Ok(Jacobi {
            core: JacobiCore::new(opts, &jacobi)?,
            prepared: Preparation::default(),
        })
    }
}

impl Solver for Jacobi {
    fn name(&self) -> &'static str {
        "jacobi"
    }

    fn prepare(&mut self, constraints: &Constraints, particles: usize) -> Result<(), WobbleError> {
        self.core.prepare(constraints, particles)?;
        Ok(())
    }

    fn preparation(&mut self) -> Option<&mut Preparation> {
        Some(&mut self.prepared)
    }

    fn iterate(&mut self, s: &mut SolveState, _iteration: usize) {
        self.core.corrections(s);
        let core = &self.core;
        let chunk = core.chunk;
        core.pool
            .for_each_chunk_mut(s.x, chunk, core.parallel(), |block, xs| {
                for (q, xp) in xs.iter_mut().enumerate() {
                    let d = core.step_of(block * chunk + q);
                    xp.x += d[0];
                    xp.y += d[1];
                    xp.z += d[2];
                }
            });
    }

    fn executor(&self) -> Option<std::sync::Arc<dyn solver_core::Executor>> {
        self.core.executor()
    }

    fn report(&self) -> solver_core::SolverReport {
        self.core.report()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use solver_core::DistanceConstraints;

    #[test]
    fn distance_fast_path_equals_the_generic_update_bit_for_bit() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(9);
        let mut x = Vec::new();
        let mut table = DistanceConstraints::default();
        for _ in 0..64 {
            let w = if rng.random_range(0..4) == 0 {
                0.0
            } else {
                rng.random_range(0.1f32..10.0)
            };
            let v = Vec3::new(
                rng.random_range(-1.0f32..1.0),
                rng.random_range(-1.0f32..1.0),
                rng.random_range(-1.0f32..1.0),
            );
            x.push(Packed4::new(v, w));
        }
        for c in 0..200u32 {
            let i = c % 64;
            let j = (c * 7 + 1 + c / 64) % 64;
            if i != j {
                let alpha = if c % 3 == 0 { 0.0 } else { 1e-4 };
                table
                    .push(i, j, rng.random_range(0.05f32..1.5), alpha)
                    .unwrap();
            }
        }
        let counts: Vec<f32> = (0..64).map(|p| (1 + p % 5) as f32).collect();
        for c in 0..table.len() {
            let (mut la, mut lb) = (0.3f32, 0.3f32);
            let (mut a, mut b) = ([[9.0f32; 4]; 2], [[9.0f32; 4]; 2]);
            let alpha = table.compliance[c] * 3600.0;
            let update = JacobiUpdate {
                k: 0.7,
                omega: 0.8,
                counts: Some(&counts[..]),
            };
            constraint_correction(&table, c, &x, &mut la, alpha, update, &mut a);
            let dynamic: &dyn ConstraintKind = &table;
            constraint_correction(dynamic, c, &x, &mut lb, alpha, update, &mut b);
            assert_eq!(la.to_bits(), lb.to_bits());
            assert_eq!(
                a.map(|s| s.map(f32::to_bits)),
                b.map(|s| s.map(f32::to_bits))
            );
        }
    }
}

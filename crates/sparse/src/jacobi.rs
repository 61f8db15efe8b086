//! Jacobi iteration over all constraints, gathered per particle (deterministic in parallel).
//!
//! Theory: every constraint `g` computes its XPBD update from the same positions `x`,
//!
//! ```text
//! Δλ_g = (-C_g - α̃ λ_g) / (Σ_k w_k |∇_k C_g|² + α̃),   λ_g += Δλ_g,   δ_{g,k} = s w_k ∇_k C_g Δλ_g
//! ```
//!
//! (s the PBD stiffness scale, 1 in XPBD), and each particle then moves by the sum of the
//! corrections of the constraints acting on it, relaxed:
//!
//! ```text
//! x_p += ω / n_p · Σ_{g ∋ p} δ_{g,p}       (n_p = number of active constraints on p, or 1)
//! ```
//!
//! Dividing by `n_p` is the constraint averaging of Macklin, Müller, Chentanez, Kim 2014
//! ("Unified particle physics for real-time applications", §4.2), which keeps the summed
//! corrections from overshooting; ω ∈ (0, 2] (they suggest 1 to 2) then speeds it up again.
//! Unilateral constraints with `C <= 0` are inactive (no correction, not counted).
//!
//! Two phases, both parallel with no atomics and no locks: phase 1 writes each constraint's
//! per-slot corrections into its own entries of the incidence `B` (rows of constraints),
//! phase 2 walks `Bᵀ` (rows of particles) and sums each particle's entries in ascending
//! constraint order. Every number is computed the same way whatever the thread count, so the
//! result is bitwise identical for 1, 2 or N threads.

use crate::incidence::Incidence;
use crate::parallel::{Pool, SharedMut};
use crate::SolverOptions;
use solver_core::constraints::MAX_ARITY;
use solver_core::glam::Vec3;
use solver_core::{
    ConstraintKind, Constraints, DistanceConstraints, Packed4, SolveState, Solver, WobbleError,
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

/// The Jacobi update of one constraint: updates its multiplier and writes one correction
/// `[δx, δy, δz, 1]` per slot into `out` (`[0; 4]` everywhere when inactive). Mirrors
/// `solver_core::constraints::project_generic` without moving anything.
#[inline]
pub(crate) fn constraint_correction(
    kind: &dyn ConstraintKind,
    c: usize,
    x: &[Packed4],
    lambda: &mut f32,
    alpha_tilde: f32,
    k: f32,
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
        denom += x[p as usize].w * grad[slot].length_squared();
    }
    if denom <= f32::EPSILON * 1e-6 || !denom.is_finite() {
        out.fill([0.0; 4]);
        return;
    }
    let dl = (-value - alpha_tilde * *lambda) / denom;
    *lambda += dl;
    for (slot, &p) in ids.iter().enumerate() {
        let s = k * x[p as usize].w * dl;
        out[slot] = [s * grad[slot].x, s * grad[slot].y, s * grad[slot].z, 1.0];
    }
}

/// [`constraint_correction`] for distance constraint `c`, without dynamic dispatch (the same
/// arithmetic as `DistanceConstraints::evaluate` followed by the generic update).
#[inline(always)]
pub(crate) fn distance_correction(
    table: &DistanceConstraints,
    c: usize,
    x: &[Packed4],
    lambda: &mut f32,
    alpha_tilde: f32,
    k: f32,
    out: &mut [[f32; 4]],
) {
    let [i, j] = table.pairs[c];
    let (pi, pj) = (x[i as usize], x[j as usize]);
    let d = pi.xyz() - pj.xyz();
    let len = d.length();
    let n = if len > 0.0 { d / len } else { Vec3::ZERO };
    let value = len - table.rest[c];
    let denom = alpha_tilde + pi.w * n.length_squared() + pj.w * n.length_squared();
    if denom <= f32::EPSILON * 1e-6 || !denom.is_finite() {
        out.fill([0.0; 4]);
        return;
    }
    let dl = (-value - alpha_tilde * *lambda) / denom;
    *lambda += dl;
    let (si, sj) = (k * pi.w * dl, k * pj.w * dl);
    out[0] = [si * n.x, si * n.y, si * n.z, 1.0];
    out[1] = [-sj * n.x, -sj * n.y, -sj * n.z, 1.0];
}

/// What the Jacobi family shares: the incidence, the per-entry corrections, the pool.
#[derive(Debug)]
pub(crate) struct JacobiCore {
    pub pool: Pool,
    pub chunk: usize,
    pub threshold: usize,
    pub omega: f32,
    pub average: bool,
    pub inc: Incidence,
    /// One `[δx, δy, δz, active]` per entry of `B`.
    pub corr: Vec<[f32; 4]>,
    /// Global id of the first constraint of each table, and the total.
    pub offsets: Vec<usize>,
    pub particles: usize,
}

impl JacobiCore {
    pub fn new(opts: &SolverOptions) -> Result<Self, WobbleError> {
        opts.validate()?;
        Ok(JacobiCore {
            pool: Pool::new(opts.threads)?,
            chunk: opts.chunk,
            threshold: opts.parallel_threshold,
            omega: opts.omega,
            average: opts.average,
            inc: Incidence::default(),
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
        self.inc = Incidence::new(constraints, particles)?;
        self.corr = vec![[0.0; 4]; self.inc.constraint_particles.nnz()];
        self.offsets = constraints.offsets();
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
        }
    }

    /// Phase 1: every constraint's multiplier update and per-slot corrections, from `s.x`.
    pub fn corrections(&mut self, s: &mut SolveState) {
        assert_eq!(
            s.x.len(),
            self.particles,
            "Jacobi solver prepared for another body"
        );
        assert_eq!(
            s.lambda.len(),
            self.inc.constraints(),
            "one multiplier per constraint"
        );
        let x: &[Packed4] = s.x;
        let constraints = s.constraints;
        let (inv_dt2, k) = (s.inv_dt2, s.stiffness);
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
                    if kind.is_global() {
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
                            distance_correction(distance, c, x, lam, alpha, k, out);
                        } else {
                            let alpha = kind.compliance(c) * inv_dt2;
                            constraint_correction(kind, c, x, lam, alpha, k, out);
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

    /// The relaxed, optionally averaged move of particle `p`.
    #[inline(always)]
    pub fn step_of(&self, p: usize) -> [f32; 3] {
        let acc = self.gather(p);
        let scale = if self.average && acc[3] > 1.0 {
            self.omega / acc[3]
        } else {
            self.omega
        };
        [scale * acc[0], scale * acc[1], scale * acc[2]]
    }
}

/// The Jacobi solver (`jacobi`).
#[derive(Debug)]
pub struct Jacobi {
    core: JacobiCore,
    prepared: Option<u64>,
}

impl Jacobi {
    /// A Jacobi solver with `opts.threads` threads, relaxation `opts.omega` and averaging
    /// `opts.average`.
    pub fn new(opts: &SolverOptions) -> Result<Self, WobbleError> {
        Ok(Jacobi {
            core: JacobiCore::new(opts)?,
            prepared: None,
        })
    }
}

impl Solver for Jacobi {
    fn name(&self) -> String {
        "jacobi".into()
    }

    fn prepare(
        &mut self,
        constraints: &Constraints,
        particles: usize,
        topology_id: u64,
    ) -> Result<(), WobbleError> {
        self.prepared = None;
        self.core.prepare(constraints, particles)?;
        self.prepared = Some(topology_id);
        Ok(())
    }

    fn prepared_for(&self) -> Option<u64> {
        self.prepared
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
        for c in 0..table.len() {
            let (mut la, mut lb) = (0.3f32, 0.3f32);
            let (mut a, mut b) = ([[9.0f32; 4]; 2], [[9.0f32; 4]; 2]);
            let alpha = table.compliance[c] * 3600.0;
            distance_correction(&table, c, &x, &mut la, alpha, 0.7, &mut a);
            constraint_correction(&table, c, &x, &mut lb, alpha, 0.7, &mut b);
            assert_eq!(la.to_bits(), lb.to_bits());
            assert_eq!(
                a.map(|s| s.map(f32::to_bits)),
                b.map(|s| s.map(f32::to_bits))
            );
        }
    }
}

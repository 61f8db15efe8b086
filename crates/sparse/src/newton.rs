//! The global CSR solve: every outer iteration linearizes all constraints and solves one
//! sparse system for all multipliers at once (`newton-gs`, `newton-jacobi`, `newton-direct`).
//!
//! Theory: XPBD's implicit step (Macklin, Müller, Chentanez 2016, eq. 8-12) linearized at the
//! current positions, with `J = ∂C/∂x`, `M⁻¹ = W` the inverse masses and `α̃ = α / h²`:
//!
//! ```text
//! (J W Jᵀ + α̃) Δλ = -C - α̃ λ,      Δx = s W Jᵀ Δλ,      λ += Δλ
//! ```
//!
//! (s the PBD stiffness scale, 1 in XPBD). Projecting one constraint at a time (Gauss-Seidel
//! on positions) solves each row alone and relinearizes after each; this solver keeps the
//! coupling between rows. `A = J W Jᵀ + α̃` has an entry wherever two constraints share a
//! particle: its pattern (`B Bᵀ`, `B` the incidence) is built once at prepare with
//! nalgebra-sparse, and its values are refilled every outer iteration through a precomputed map
//! (for each particle, the entries of the pairs of constraints acting on it). Three inner solves:
//! - `newton-gs`: `inner` Gauss-Seidel sweeps on the linear system, from Δλ = 0;
//! - `newton-jacobi`: `inner` Jacobi sweeps, `Δλ += ω D⁻¹ (b - A Δλ)`, with `D` the absolute
//!   row sums `Σ_c |A_rc|` when [`SolverOptions::average`] is set (the default) and the diagonal
//!   otherwise. Plain Jacobi diverges on the cloth (`A` is far from diagonally dominant: a row
//!   has about ten off-diagonal entries of half the diagonal); with row sums, `2D/ω - A` is
//!   positive definite for ω <= 1 (Gershgorin), so the sweeps converge — the same idea as
//!   averaging the position corrections by constraint count;
//! - `newton-direct`: sparse Cholesky in f64 (nalgebra-sparse's `CscCholesky`, symbolic
//!   factorization once at prepare, numeric refactorization each iteration). The rows are
//!   numbered in reverse Cuthill-McKee order of the constraint graph to limit fill-in, and
//!   `ε · mean(diag A)` (ε = [`SolverOptions::regularization`]) is added to the diagonal so that
//!   redundant constraints do not make `A` singular. With α = 0 this is the Gauss-Newton
//!   (minimum-norm Newton) iteration for `C(x) = 0`, which converges quadratically.
//!
//! Unilateral kinds are inactive where `C <= 0` (their row becomes `Δλ = 0`), and rows with no
//! movable particle and no compliance (e.g. between two pinned particles) are `Δλ = 0` too.

use crate::incidence::Incidence;
use crate::jacobi::kind_at;
use crate::ordering::{invert, reverse_cuthill_mckee};
use crate::SolverOptions;
use nalgebra::DVector;
use nalgebra_sparse::factorization::{CscCholesky, CscSymbolicCholesky};
use nalgebra_sparse::ops::serial::spmm_csr_pattern;
use nalgebra_sparse::pattern::SparsityPattern;
use nalgebra_sparse::CsrMatrix;
use solver_core::constraints::MAX_ARITY;
use solver_core::glam::Vec3;
use solver_core::{Constraints, SolveState, Solver, WobbleError};

/// How the linear system of each outer iteration is solved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InnerSolve {
    /// `inner` Gauss-Seidel sweeps.
    GaussSeidel,
    /// `inner` relaxed Jacobi sweeps.
    Jacobi,
    /// Sparse Cholesky (exact up to rounding).
    Direct,
}

/// Diagonal entries at or below this are treated as empty rows.
const EMPTY_ROW: f64 = 1e-30;

/// The global CSR solver.
pub struct Newton {
    method: InnerSolve,
    sweeps: usize,
    omega: f64,
    row_sum_scaling: bool,
    /// The Jacobi sweeps' `ω / D_r` per row.
    jacobi_scale: Vec<f64>,
    regularization: f64,
    prepared: Option<u64>,
    particles: usize,
    inc: Incidence,
    offsets: Vec<usize>,
    /// Row of A of each constraint (global id).
    row_of: Vec<u32>,
    a: CsrMatrix<f64>,
    /// Entry index of each diagonal `A[r, r]`.
    diag: Vec<u32>,
    /// For particle p, `fill[fill_start[p]..]` holds the entry of `A[row(g_a), row(g_b)]` for every
    /// pair (a, b) of the constraints acting on p, row-major.
    fill: Vec<u32>,
    fill_start: Vec<u32>,
    /// ∇C per entry of the incidence `B`.
    grad: Vec<Vec3>,
    /// C per constraint, 0 where inactive.
    value: Vec<f32>,
    active: Vec<bool>,
    b: Vec<f64>,
    dl: Vec<f64>,
    dl_next: Vec<f64>,
    rhs: DVector<f64>,
    cholesky: Option<CscCholesky<f64>>,
    factor_failures: usize,
}

impl std::fmt::Debug for Newton {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Newton")
            .field("method", &self.method)
            .field("sweeps", &self.sweeps)
            .field("rows", &self.row_of.len())
            .field("nnz", &self.a.nnz())
            .field("factor_failures", &self.factor_failures)
            .finish()
    }
}

impl Newton {
    /// A global solver with the given inner solve (`opts.inner` sweeps, `opts.omega` for the
    /// Jacobi sweeps, `opts.regularization` for Cholesky).
    pub fn new(method: InnerSolve, opts: &SolverOptions) -> Result<Self, WobbleError> {
        opts.validate()?;
        Ok(Newton {
            method,
            sweeps: opts.inner,
            omega: opts.omega as f64,
            row_sum_scaling: opts.average,
            jacobi_scale: Vec::new(),
            regularization: opts.regularization,
            prepared: None,
            particles: 0,
            inc: Incidence::default(),
            offsets: Vec::new(),
            row_of: Vec::new(),
            a: CsrMatrix::zeros(0, 0),
            diag: Vec::new(),
            fill: Vec::new(),
            fill_start: Vec::new(),
            grad: Vec::new(),
            value: Vec::new(),
            active: Vec::new(),
            b: Vec::new(),
            dl: Vec::new(),
            dl_next: Vec::new(),
            rhs: DVector::zeros(0),
            cholesky: None,
            factor_failures: 0,
        })
    }

    /// Number of outer iterations whose Cholesky factorization failed (they fell back to
    /// Gauss-Seidel sweeps); always 0 for the iterative inner solves.
    pub fn factor_failures(&self) -> usize {
        self.factor_failures
    }

    /// Stored entries of `A`.
    pub fn nnz(&self) -> usize {
        self.a.nnz()
    }

    /// Entries of the Cholesky factor `L`, once prepared (`newton-direct` only).
    pub fn factor_nnz(&self) -> Option<usize> {
        self.cholesky.as_ref().map(|c| c.l().nnz())
    }

    /// Linearizes every constraint at `s.x`: C, ∇C, activity.
    fn linearize(&mut self, s: &SolveState) {
        let rows = self.inc.constraint_particles.offsets();
        let mut g = 0;
        for t in 0..self.offsets.len() - 1 {
            let kind = kind_at(s.constraints, t);
            let unilateral = kind.unilateral();
            if kind.is_global() {
                // Empty rows (see `Incidence`): Δλ = 0 here, projected after the solve.
                for _ in 0..kind.len() {
                    self.value[g] = 0.0;
                    self.active[g] = false;
                    g += 1;
                }
                continue;
            }
            for c in 0..kind.len() {
                let mut grad = [Vec3::ZERO; MAX_ARITY];
                let v = kind.evaluate(c, s.x, &mut grad);
                let active = !(unilateral && v <= 0.0);
                let e0 = rows[g] as usize;
                for (slot, out) in self.grad[e0..rows[g + 1] as usize].iter_mut().enumerate() {
                    *out = if active { grad[slot] } else { Vec3::ZERO };
                }
                self.value[g] = if active { v } else { 0.0 };
                self.active[g] = active;
                g += 1;
            }
        }
    }

    /// Fills `A = J W Jᵀ + α̃` and `b = -C - α̃ λ` (row numbering).
    fn assemble(&mut self, s: &SolveState) {
        let values = self.a.values_mut();
        values.iter_mut().for_each(|v| *v = 0.0);
        let bt = &self.inc.particle_constraints;
        for p in 0..self.particles {
            let w = s.x[p].w as f64;
            if w == 0.0 {
                continue;
            }
            let entries = &self.inc.particle_entries[bt.row_range(p)];
            let deg = entries.len();
            let fill = &self.fill[self.fill_start[p] as usize..];
            for (ia, &ea) in entries.iter().enumerate() {
                let ga = self.grad[ea as usize].as_dvec3();
                for (ib, &eb) in entries.iter().enumerate() {
                    let gb = self.grad[eb as usize].as_dvec3();
                    values[fill[ia * deg + ib] as usize] += w * ga.dot(gb);
                }
            }
        }
        let mut g = 0;
        for t in 0..self.offsets.len() - 1 {
            let kind = kind_at(s.constraints, t);
            for c in 0..kind.len() {
                let r = self.row_of[g] as usize;
                let alpha = (kind.compliance(c) * s.inv_dt2) as f64;
                let d = &mut values[self.diag[r] as usize];
                if self.active[g] {
                    *d += alpha;
                }
                if !self.active[g] || *d <= EMPTY_ROW {
                    *d = 1.0;
                    self.b[r] = 0.0;
                } else {
                    self.b[r] = -(self.value[g] as f64) - alpha * s.lambda[g] as f64;
                }
                g += 1;
            }
        }
    }

    /// Gauss-Seidel sweeps on `A Δλ = b` from Δλ = 0.
    fn gauss_seidel(&mut self) {
        self.dl.iter_mut().for_each(|v| *v = 0.0);
        let (offsets, cols, values) = self.a.csr_data();
        for _ in 0..self.sweeps {
            for r in 0..self.dl.len() {
                let mut sum = self.b[r];
                for e in offsets[r]..offsets[r + 1] {
                    if cols[e] != r {
                        sum -= values[e] * self.dl[cols[e]];
                    }
                }
                self.dl[r] = sum / values[self.diag[r] as usize];
            }
        }
    }

    /// Relaxed Jacobi sweeps on `A Δλ = b` from Δλ = 0.
    fn jacobi(&mut self) {
        self.dl.iter_mut().for_each(|v| *v = 0.0);
        let (offsets, cols, values) = self.a.csr_data();
        for r in 0..self.dl.len() {
            let d = if self.row_sum_scaling {
                values[offsets[r]..offsets[r + 1]]
                    .iter()
                    .map(|v| v.abs())
                    .sum()
            } else {
                values[self.diag[r] as usize]
            };
            self.jacobi_scale[r] = self.omega / d;
        }
        for _ in 0..self.sweeps {
            for r in 0..self.dl.len() {
                let mut res = self.b[r];
                for e in offsets[r]..offsets[r + 1] {
                    res -= values[e] * self.dl[cols[e]];
                }
                self.dl_next[r] = self.dl[r] + self.jacobi_scale[r] * res;
            }
            std::mem::swap(&mut self.dl, &mut self.dl_next);
        }
    }

    /// Cholesky of `A + ε mean(diag) I`; false when the factorization fails.
    fn direct(&mut self) -> bool {
        let Some(chol) = self.cholesky.as_mut() else {
            return false;
        };
        let m = self.dl.len();
        let values = self.a.values_mut();
        let mean = self.diag.iter().map(|&d| values[d as usize]).sum::<f64>() / m.max(1) as f64;
        let eps = self.regularization * mean;
        for &d in &self.diag {
            values[d as usize] += eps;
        }
        if chol.refactor(self.a.values()).is_err() {
            return false;
        }
        self.rhs.as_mut_slice().copy_from_slice(&self.b);
        chol.solve_mut(&mut self.rhs);
        self.dl.copy_from_slice(self.rhs.as_slice());
        true
    }
}

/// For each row r of `a` (sorted columns), the entry index of column `col`.
fn entry_of(a: &SparsityPattern, r: usize, col: usize) -> usize {
    let lane = a.lane(r);
    a.major_offsets()[r]
        + lane
            .binary_search(&col)
            .expect("pattern holds every shared pair")
}

impl Solver for Newton {
    fn name(&self) -> String {
        match self.method {
            InnerSolve::GaussSeidel => "newton-gs",
            InnerSolve::Jacobi => "newton-jacobi",
            InnerSolve::Direct => "newton-direct",
        }
        .into()
    }

    fn prepare(
        &mut self,
        constraints: &Constraints,
        particles: usize,
        topology_id: u64,
    ) -> Result<(), WobbleError> {
        self.prepared = None;
        self.inc = Incidence::new(constraints, particles)?;
        self.offsets = constraints.offsets();
        let m = self.inc.constraints();
        // Pattern of B Bᵀ: constraints sharing a particle (nalgebra-sparse's symbolic product).
        let b = self.inc.constraint_particles.to_sparsity_pattern()?;
        let bbt = spmm_csr_pattern(&b, &b.transpose());
        let order: Vec<u32> = if self.method == InnerSolve::Direct {
            let offsets: Vec<u32> = bbt.major_offsets().iter().map(|&o| o as u32).collect();
            let cols: Vec<u32> = bbt.minor_indices().iter().map(|&c| c as u32).collect();
            reverse_cuthill_mckee(&offsets, &cols)
        } else {
            (0..m as u32).collect()
        };
        self.row_of = invert(&order);
        let mut offsets = Vec::with_capacity(m + 1);
        offsets.push(0usize);
        let mut cols = Vec::with_capacity(bbt.nnz());
        for &g in &order {
            let start = cols.len();
            cols.extend(
                bbt.lane(g as usize)
                    .iter()
                    .map(|&h| self.row_of[h] as usize),
            );
            cols[start..].sort_unstable();
            offsets.push(cols.len());
        }
        let pattern = SparsityPattern::try_from_offsets_and_indices(m, m, offsets, cols)
            .map_err(|e| WobbleError::Unsupported(format!("invalid system pattern: {e}")))?;
        self.diag = (0..m).map(|r| entry_of(&pattern, r, r) as u32).collect();
        let bt = &self.inc.particle_constraints;
        self.fill.clear();
        self.fill_start = Vec::with_capacity(particles + 1);
        for p in 0..particles {
            self.fill_start.push(self.fill.len() as u32);
            let list = bt.row(p);
            for &ga in list {
                for &gb in list {
                    let (ra, rb) = (self.row_of[ga as usize], self.row_of[gb as usize]);
                    self.fill
                        .push(entry_of(&pattern, ra as usize, rb as usize) as u32);
                }
            }
        }
        if self.fill.len() > u32::MAX as usize || pattern.nnz() > u32::MAX as usize {
            return Err(WobbleError::BadCount {
                name: "system entries",
                value: self.fill.len().max(pattern.nnz()) as u64,
                max: u32::MAX as u64,
            });
        }
        self.fill_start.push(self.fill.len() as u32);
        self.cholesky = None;
        if self.method == InnerSolve::Direct {
            // Numeric storage for L, sized by the symbolic factorization, made with the identity.
            let mut ones = vec![0.0; pattern.nnz()];
            self.diag.iter().for_each(|&d| ones[d as usize] = 1.0);
            let symbolic = CscSymbolicCholesky::factor(pattern.clone());
            self.cholesky = Some(CscCholesky::factor_numerical(symbolic, &ones).map_err(|e| {
                WobbleError::Unsupported(format!("cannot set up the Cholesky factor: {e:?}"))
            })?);
        }
        let nnz = pattern.nnz();
        self.a = CsrMatrix::try_from_pattern_and_values(pattern, vec![0.0; nnz])
            .map_err(|e| WobbleError::Unsupported(format!("invalid system matrix: {e}")))?;
        self.grad = vec![Vec3::ZERO; self.inc.constraint_particles.nnz()];
        self.value = vec![0.0; m];
        self.active = vec![false; m];
        self.b = vec![0.0; m];
        self.dl = vec![0.0; m];
        self.dl_next = vec![0.0; m];
        self.jacobi_scale = vec![0.0; m];
        self.rhs = DVector::zeros(m);
        self.particles = particles;
        self.prepared = Some(topology_id);
        Ok(())
    }

    fn prepared_for(&self) -> Option<u64> {
        self.prepared
    }

    fn iterate(&mut self, s: &mut SolveState, _iteration: usize) {
        assert_eq!(
            s.x.len(),
            self.particles,
            "Newton solver prepared for another body"
        );
        self.linearize(s);
        self.assemble(s);
        match self.method {
            InnerSolve::GaussSeidel => self.gauss_seidel(),
            InnerSolve::Jacobi => self.jacobi(),
            InnerSolve::Direct => {
                if !self.direct() {
                    self.factor_failures += 1;
                    self.assemble(s);
                    self.gauss_seidel();
                }
            }
        }
        let bt = &self.inc.particle_constraints;
        let rows = bt.indices();
        for p in 0..self.particles {
            let w = s.x[p].w;
            if w == 0.0 {
                continue;
            }
            let mut d = solver_core::glam::DVec3::ZERO;
            for e in bt.row_range(p) {
                let g = rows[e] as usize;
                let dl = self.dl[self.row_of[g] as usize];
                d += self.grad[self.inc.particle_entries[e] as usize].as_dvec3() * dl;
            }
            let scale = (s.stiffness * w) as f64;
            let q = &mut s.x[p];
            q.x += (scale * d.x) as f32;
            q.y += (scale * d.y) as f32;
            q.z += (scale * d.z) as f32;
        }
        for (g, l) in s.lambda.iter_mut().enumerate() {
            *l += self.dl[self.row_of[g] as usize] as f32;
        }
        crate::project_global_kinds(s);
    }
}

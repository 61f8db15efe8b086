//! Newton's method on XPBD's implicit step, in `f64`: the converged reference that the
//! convergence claims measure the other solvers against (`newton`).
//!
//! # Theory
//!
//! One XPBD substep (Macklin, Müller, Chentanez 2016, eq. 8-9) solves, for the positions `x`
//! and the multipliers `λ`, with `x̃` the prediction, `M` the masses, `α̃ = α / h²`:
//!
//! ```text
//! g(x, λ) = M (x - x̃) - Σ_c ∇C_c(x) λ_c = 0,        h_c(x, λ) = C_c(x) + α̃_c λ_c = 0.
//! ```
//!
//! With `λ_c = -C_c / α̃_c` these are the stationarity conditions of the step's energy
//!
//! ```text
//! Φ(x) = ½ (x - x̃)ᵀ M (x - x̃) + Σ_c C_c(x)² / (2 D_c),     D_c = α̃_c,
//! ```
//!
//! whose Hessian `M + Σ_c (∇C_c ∇C_cᵀ + C_c ∇²C_c) / D_c` holds the geometric stiffness
//! `C ∇²C / D = -λ ∇²C` that [`crate::gauss_newton`] leaves out. The solve has two phases.
//! The energy phase is Newton's method on `Φ`: each iteration solves `H Δx = -∇Φ` by sparse
//! Cholesky (nalgebra-sparse, symbolic factorization once at prepare over the particles in
//! reverse Cuthill-McKee order, 3 x 3 blocks) and backtracks (`t = 1, 1/2, ...`, at most
//! [`MAX_HALVINGS`]) until Armijo's condition `Φ(x + t Δx) <= Φ(x) + 10⁻⁴ t ∇Φ·Δx` holds (or,
//! for the full step, the residual below halves). Where a cloth is not convex (a compressed
//! edge has negative curvature across it, a tetrahedron's volume is indefinite in itself) the
//! exact `H` may not factor or its step may not descend; then each constraint's term is
//! replaced by its positive semidefinite part (its negative eigenvalues set to zero; Teran,
//! Sifakis, Irving and Fedkiw 2005), which makes `Δx` a descent direction of `Φ`.
//!
//! A rigid row (`α̃ = 0`) has no energy; in this phase it gets `D_c = ε Σ_k w_k |∇_k C_c|²`
//! (the sum at the prediction), ε = [`RIGID_COMPLIANCE`].
//!
//! The energy phase has a floor: `λ = -C / D` turns the rounding of `C` into force errors
//! `1 / D` times larger. So once a step cuts the residual tenfold to below [`POLISH_FROM`] of the start, or the
//! energy phase stalls,
//! the solve polishes: Newton on positions and multipliers together (the system above,
//! `λ` free, starting from `-C / D`), each row's `Δλ` eliminated with `D_c = α̃_c` where
//! compliant and `D_c = σ Σ_k w_k |∇_k C_c|²`, `σ = 10⁻² clamp(r / r₀, 10⁻¹⁴, 10⁻²)`, where
//! rigid (a regularization that vanishes with the residual, as in stabilized SQP; Wright
//! 1998), backtracking on `r²` (the Newton direction of the system is a descent direction of
//! `r²`), with the `-λ ∇²C` terms made positive semidefinite only where the exact matrix
//! cannot be factored. This is where the quadratic convergence shows.
//!
//! The residual is the XPBD system's, `r² = Σ_p |w_p g_p|² + Σ_c h_c²` over the active rows
//! (both parts are lengths for distance rows: `w_p g_p` is the move that would balance
//! particle `p`), `r₀ = |C(x̃)|` the residual where every solver starts (`x̃`, `λ = 0`). The
//! solve stops when `r <= tolerance · r₀` ([`NewtonOptions::tolerance`]), or when the polish
//! finds no step that lowers `r` by a tenth ([`STAGNATION`]), which [`NewtonReport::at_floor`]
//! reports: the floor of `f64` (a body that barely moves starts so close to its solution that
//! `tolerance · r₀` is below `f64`'s resolution of its positions) or a problem the solve does
//! not converge on. [`Newton::report`]
//! gives the residual after each iteration of the last substep. Unilateral rows (tethers) act
//! while `C > 0`.
//!
//! Measured where it converges (`crates/sparse/tests/newton.rs`): the rigid rope and the
//! compliant cloth, to 1e-10 of the start, quadratically at the end. A rigid cloth is a
//! degenerate problem: its rows are redundant (more edges than in-plane degrees of freedom,
//! and a flat sheet is infinitesimally flexible out of plane), its multipliers are not
//! determined, and neither phase converges on it; a rigid tetrahedral cube is in the same
//! case (each tetrahedron's volume row is a combination of its edge rows). The report says so
//! (`at_floor`, the residual reached), and `wobble claims` C1 takes its reference on a
//! compliant cloth.
//!
//! The positions live in `f64` inside the solver and are written to the body rounded to
//! `f32` after each iteration. A particle whose `f32` position something else changed
//! between two iterations (contacts, a closed surface's volume projected by the step loop) is
//! read back, the others keep their `f64` value, so the solve is not capped at `f32`'s
//! precision. The PBD stiffness scale is not applied (it scales an iteration, and this is an
//! exact solve); in PBD mode (`α̃ = 0` throughout) every row is rigid. Kinds without second
//! derivatives ([`solver_core::ConstraintKind::has_second_order`]: the bending kinds,
//! Neo-Hookean tetrahedra) are refused at prepare.

// Particle, block and row indices run side by side over several arrays, as in the matrix.
#![allow(clippy::needless_range_loop)]

use crate::cholesky::factor_for;
use crate::jacobi::kind_at;
use crate::ordering::{invert, reverse_cuthill_mckee};
use nalgebra::DVector;
use nalgebra_sparse::factorization::CscCholesky;
use nalgebra_sparse::pattern::SparsityPattern;
use solver_core::constraints::{Hessian, MAX_ARITY};
use solver_core::glam::{DMat3, DVec3};
use solver_core::{
    ConstraintKind, Constraints, Packed4, Preparation, SolveState, Solver, WobbleError,
};

/// The energy phase hands over to the polish once a step cut the residual tenfold to below
/// this fraction of the start (or it stalls).
pub const POLISH_FROM: f64 = 1e-2;

/// A polish step that leaves the residual above this fraction of its value ends the solve
/// ([`NewtonReport::at_floor`]).
pub const STAGNATION: f64 = 0.9;

/// Most halvings of a step before the solve ends at the floor.
pub const MAX_HALVINGS: usize = 40;

/// ε: the compliance of rigid rows in the energy phase, in units of `Σ w |∇C|²` (see the
/// module doc).
pub const RIGID_COMPLIANCE: f64 = 1e-4;

/// Options of the `newton` solver.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NewtonOptions {
    /// The solve stops once the residual is at most this fraction of its value at the
    /// prediction, in (0, 1).
    pub tolerance: f64,
}

impl NewtonOptions {
    /// The defaults: a tolerance of 1e-10.
    pub const DEFAULT: NewtonOptions = NewtonOptions { tolerance: 1e-10 };

    /// Checks the options.
    pub fn validate(&self) -> Result<(), WobbleError> {
        if !(self.tolerance.is_finite() && self.tolerance > 0.0 && self.tolerance < 1.0) {
            return Err(WobbleError::BadParameter {
                name: "tolerance",
                value: self.tolerance,
                reason: "must be in (0, 1)",
            });
        }
        Ok(())
    }
}

impl Default for NewtonOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What the last substep's solve did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NewtonReport {
    /// The residual `r` after 0, 1, ... iterations (index 0: at the prediction), in `f64`.
    pub residuals: Vec<f64>,
    /// True when `r <= tolerance · r₀`.
    pub converged: bool,
    /// True when the solve stopped at the floor of `f64` before the tolerance.
    pub at_floor: bool,
    /// Halvings of steps in the substep.
    pub halvings: usize,
    /// Whether any row is rigid (solved with [`RIGID_COMPLIANCE`]).
    pub rigid_rows: bool,
    /// Iterations that took the projected Hessian's step (Newton's was not a descent).
    pub projected: usize,
    /// The iteration from which the polish phase ran, if it did.
    pub polish_from: Option<usize>,
}

impl NewtonReport {
    /// The residual at the end over the one at the prediction (NaN before any iteration).
    #[must_use]
    pub fn reduction(&self) -> f64 {
        match (self.residuals.first(), self.residuals.last()) {
            (Some(&r0), Some(&r)) if r0 > 0.0 => r / r0,
            (Some(_), Some(_)) => 0.0,
            _ => f64::NAN,
        }
    }

    /// Contraction factors `r(k+1) / r(k)`.
    #[must_use]
    pub fn contractions(&self) -> Vec<f64> {
        self.residuals.windows(2).map(|w| w[1] / w[0]).collect()
    }
}

/// One row of the system: a constraint of a kind the solver sees.
#[derive(Clone, Copy, Debug)]
struct Row {
    /// Table index (`kind_at`) and index in the table.
    table: u32,
    local: u32,
    /// Global id (multiplier index).
    global: u32,
}

/// What one evaluation of the rows gives.
#[derive(Clone, Copy, Debug)]
struct Evaluation {
    /// The energy Φ.
    energy: f64,
    /// The XPBD residual r² at `(x, λ = -C / D)`: `Σ |w g|²` (h is zero there).
    residual2: f64,
    /// `Σ C²` over the active rows: r² at `(x, λ = 0)`, where every solver starts.
    constraints2: f64,
}

/// Newton's method on the XPBD step (see the module doc).
pub struct Newton {
    tolerance: f64,
    prepared: Preparation,
    particles: usize,
    rows: Vec<Row>,
    /// Block row of each particle (reverse Cuthill-McKee order).
    block_of: Vec<u32>,
    /// For block row `b`: its neighbour blocks `nbr[nbr_start[b]..nbr_start[b + 1]]`, sorted,
    /// itself included.
    nbr_start: Vec<u32>,
    nbr: Vec<u32>,
    /// First entry of block row `b` in the scalar CSR values.
    entry_start: Vec<usize>,
    values: Vec<f64>,
    cholesky: Option<CscCholesky<f64>>,
    rhs: DVector<f64>,
    /// The prediction, the current positions, a trial, the last positions written (`f32`).
    x_pred: Vec<DVec3>,
    x: Vec<DVec3>,
    x_trial: Vec<DVec3>,
    written: Vec<Packed4>,
    /// `λ = -C / D` at `x` (global numbering).
    lambda: Vec<f64>,
    /// Per row at the linearization point: C, ∇C, ∇²C, activity.
    value: Vec<f64>,
    grad: Vec<[DVec3; MAX_ARITY]>,
    hess: Vec<Hessian>,
    active: Vec<bool>,
    /// Per row: α̃, `Σ w |∇C|²` at the prediction, and D.
    alpha: Vec<f64>,
    reach: Vec<f64>,
    denom: Vec<f64>,
    dx: Vec<DVec3>,
    /// The polish phase (see the module doc): its multipliers per row, free of `x`, their
    /// trial values and step.
    polish: bool,
    mult: Vec<f64>,
    mult_trial: Vec<f64>,
    dmult: Vec<f64>,
    /// `Σ_c λ_c ∇C_c` per particle at `x`, and the buffer a trial's sum is formed in.
    force: Vec<DVec3>,
    force_trial: Vec<DVec3>,
    /// `-∇Φ` per particle, as assembled (zero for pinned particles).
    descent: Vec<DVec3>,
    done: bool,
    report: NewtonReport,
}

impl std::fmt::Debug for Newton {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Newton")
            .field("tolerance", &self.tolerance)
            .field("rows", &self.rows.len())
            .field("entries", &self.values.len())
            .field("report", &self.report)
            .finish()
    }
}

impl Newton {
    /// A Newton solver with the given options.
    pub fn new(opts: NewtonOptions) -> Result<Self, WobbleError> {
        opts.validate()?;
        Ok(Newton {
            tolerance: opts.tolerance,
            prepared: Preparation::default(),
            particles: 0,
            rows: Vec::new(),
            block_of: Vec::new(),
            nbr_start: Vec::new(),
            nbr: Vec::new(),
            entry_start: Vec::new(),
            values: Vec::new(),
            cholesky: None,
            rhs: DVector::zeros(0),
            x_pred: Vec::new(),
            x: Vec::new(),
            x_trial: Vec::new(),
            written: Vec::new(),
            lambda: Vec::new(),
            value: Vec::new(),
            grad: Vec::new(),
            hess: Vec::new(),
            active: Vec::new(),
            alpha: Vec::new(),
            reach: Vec::new(),
            denom: Vec::new(),
            dx: Vec::new(),
            polish: false,
            mult: Vec::new(),
            mult_trial: Vec::new(),
            dmult: Vec::new(),
            force: Vec::new(),
            force_trial: Vec::new(),
            descent: Vec::new(),
            done: false,
            report: NewtonReport::default(),
        })
    }

    /// What the last substep's solve did.
    #[must_use]
    pub fn report(&self) -> &NewtonReport {
        &self.report
    }

    /// The positions of the last iterate in `f64` (the body holds them rounded to `f32`).
    #[must_use]
    pub fn positions_f64(&self) -> &[DVec3] {
        &self.x
    }

    /// The multipliers `λ = -C / D` of the last iterate in `f64` (global numbering).
    #[must_use]
    pub fn multipliers_f64(&self) -> &[f64] {
        &self.lambda
    }

    /// Entry of `(block row b, block column c, i, j)` in the scalar values.
    fn entry(&self, b: usize, c: u32, i: usize, j: usize) -> usize {
        let nbrs = &self.nbr[self.nbr_start[b] as usize..self.nbr_start[b + 1] as usize];
        let rank = nbrs
            .binary_search(&c)
            .expect("pattern holds every coupled pair");
        self.entry_start[b] + i * 3 * nbrs.len() + 3 * rank + j
    }

    fn add_block(&mut self, b: usize, c: u32, m: &DMat3) {
        for i in 0..3 {
            for j in 0..3 {
                let e = self.entry(b, c, i, j);
                self.values[e] += m.col(j)[i];
            }
        }
    }

    /// Evaluates every row at `x_trial` (`trial`) or `x`; at `x` it also keeps C, ∇C, ∇²C,
    /// activity and `λ = -C / D` per row, and the forces.
    fn evaluate(&mut self, s: &SolveState, trial: bool) -> Evaluation {
        let mut force = std::mem::take(&mut self.force_trial);
        force.iter_mut().for_each(|f| *f = DVec3::ZERO);
        let x = if trial { &self.x_trial } else { &self.x };
        let (mut energy, mut sum_h) = (0.0, 0.0);
        let mut grad = [DVec3::ZERO; MAX_ARITY];
        let mut hess: Hessian = [[DMat3::ZERO; MAX_ARITY]; MAX_ARITY];
        for (r, row) in self.rows.iter().enumerate() {
            let kind = kind_at(s.constraints, row.table as usize);
            let c = row.local as usize;
            let d = self.denom[r];
            let (v, active) = row_at(kind, c, x, d, &mut grad, &mut hess);
            let lambda = if active { -v / d } else { 0.0 };
            if active {
                energy += v * v / (2.0 * d);
                sum_h += v * v;
                for (k, &p) in kind.particles(c).iter().enumerate() {
                    force[p as usize] += grad[k] * lambda;
                }
            }
            if !trial {
                self.value[r] = v;
                self.active[r] = active;
                self.grad[r] = grad;
                self.hess[r] = hess;
                self.lambda[row.global as usize] = lambda;
            }
        }
        let mut sum_g = 0.0;
        for p in 0..self.particles {
            let w = s.x[p].w as f64;
            if w > 0.0 {
                let d = x[p] - self.x_pred[p];
                energy += 0.5 * d.length_squared() / w;
                sum_g += (d - force[p] * w).length_squared();
            }
        }
        if !trial {
            std::mem::swap(&mut self.force, &mut force);
        }
        self.force_trial = force;
        Evaluation {
            energy,
            residual2: sum_g,
            constraints2: sum_h,
        }
    }

    /// Zeroes `H` and puts the mass blocks `I / w` on its diagonal (the identity for pinned
    /// particles); `descent` becomes `-(M (x - x̃) - Σ λ ∇C)` with the forces as evaluated.
    fn assemble_mass(&mut self, s: &SolveState) {
        self.values.iter_mut().for_each(|v| *v = 0.0);
        for p in 0..self.particles {
            let w = s.x[p].w as f64;
            let b = self.block_of[p] as usize;
            if w > 0.0 {
                self.add_block(b, b as u32, &(DMat3::IDENTITY / w));
                self.descent[p] = -((self.x[p] - self.x_pred[p]) / w - self.force[p]);
            } else {
                self.add_block(b, b as u32, &DMat3::IDENTITY);
                self.descent[p] = DVec3::ZERO;
            }
        }
    }

    /// Adds one row's blocks `term[a][b]` between its particles `ps` that can move.
    fn add_row(&mut self, s: &SolveState, ps: &[u32], term: &Hessian) {
        for (a, &pa) in ps.iter().enumerate() {
            if s.x[pa as usize].w == 0.0 {
                continue;
            }
            let ba = self.block_of[pa as usize] as usize;
            for (b, &pb) in ps.iter().enumerate() {
                if s.x[pb as usize].w != 0.0 {
                    self.add_block(ba, self.block_of[pb as usize], &term[a][b]);
                }
            }
        }
    }

    /// Copies `descent` into the right-hand side in block order.
    fn store_rhs(&mut self) {
        for p in 0..self.particles {
            let b = self.block_of[p] as usize;
            for i in 0..3 {
                self.rhs[3 * b + i] = self.descent[p][i];
            }
        }
    }

    /// Fills `H` (each row's term made positive semidefinite) and `-∇Φ` at `x`, after
    /// `evaluate(s, false)`.
    fn assemble(&mut self, s: &SolveState, project: bool) {
        self.assemble_mass(s);
        for r in 0..self.rows.len() {
            if !self.active[r] {
                continue;
            }
            let row = self.rows[r];
            let kind = kind_at(s.constraints, row.table as usize);
            let ps = kind.particles(row.local as usize);
            let d = self.denom[r];
            let (v, grad) = (self.value[r], self.grad[r]);
            let mut term: Hessian = [[DMat3::ZERO; MAX_ARITY]; MAX_ARITY];
            for a in 0..ps.len() {
                for b in 0..ps.len() {
                    term[a][b] = (outer(grad[a], grad[b]) + self.hess[r][a][b] * v) / d;
                }
            }
            if project {
                term = psd_part(&term, ps.len());
            }
            self.add_row(s, ps, &term);
        }
        self.store_rhs();
    }

    /// `Σ_k w_k |∇_k C_c|²` of every row at the prediction, and α̃.
    fn set_reach(&mut self, s: &SolveState) {
        let mut grad = [DVec3::ZERO; MAX_ARITY];
        let mut hess: Hessian = [[DMat3::ZERO; MAX_ARITY]; MAX_ARITY];
        for (r, row) in self.rows.iter().enumerate() {
            let kind = kind_at(s.constraints, row.table as usize);
            let c = row.local as usize;
            kind.second_order(c, &self.x, &mut grad, &mut hess);
            self.reach[r] = kind
                .particles(c)
                .iter()
                .enumerate()
                .map(|(k, &p)| s.x[p as usize].w as f64 * grad[k].length_squared())
                .sum();
            self.alpha[r] = (kind.compliance(c) * s.inv_dt2) as f64;
        }
        self.report.rigid_rows = self
            .alpha
            .iter()
            .zip(&self.reach)
            .any(|(&a, &w)| a == 0.0 && w > 0.0);
    }

    /// `D_c`: α̃ where compliant, ε times the reach where rigid (0 for a rigid row nothing can
    /// move).
    fn set_compliances(&mut self) {
        let eps = RIGID_COMPLIANCE;
        for r in 0..self.rows.len() {
            self.denom[r] = if self.alpha[r] > 0.0 {
                self.alpha[r]
            } else {
                eps * self.reach[r]
            };
        }
    }

    /// Factors and solves `H Δx = -∇Φ`; false when the factorization fails.
    fn solve(&mut self) -> bool {
        let Some(chol) = self.cholesky.as_mut() else {
            return false;
        };
        if chol.refactor(&self.values).is_err() {
            return false;
        }
        chol.solve_mut(&mut self.rhs);
        for p in 0..self.particles {
            let b = self.block_of[p] as usize;
            self.dx[p] = DVec3::new(self.rhs[3 * b], self.rhs[3 * b + 1], self.rhs[3 * b + 2]);
        }
        true
    }

    /// Writes the positions and multipliers into the body (`f32`).
    fn write(&mut self, s: &mut SolveState) {
        for p in 0..self.particles {
            if s.x[p].w > 0.0 {
                let q = self.x[p].as_vec3();
                s.x[p].x = q.x;
                s.x[p].y = q.y;
                s.x[p].z = q.z;
            }
        }
        self.written.copy_from_slice(s.x);
        for row in &self.rows {
            let g = row.global as usize;
            s.lambda[g] = self.lambda[g] as f32;
        }
    }

    /// `∇Φ · Δx`.
    fn slope(&self) -> f64 {
        (0..self.particles)
            .map(|p| -self.descent[p].dot(self.dx[p]))
            .sum()
    }

    /// The polish phase's residual r² at `x` (or `x_trial`) with its own multipliers; at `x`
    /// it also keeps C, ∇C, ∇²C, activity and the forces.
    fn evaluate_polish(&mut self, s: &SolveState, trial: bool) -> f64 {
        let (x, mult) = if trial {
            (&self.x_trial, &mut self.mult_trial)
        } else {
            (&self.x, &mut self.mult)
        };
        let mut force = std::mem::take(&mut self.force_trial);
        force.iter_mut().for_each(|f| *f = DVec3::ZERO);
        let mut sum_h = 0.0;
        let mut grad = [DVec3::ZERO; MAX_ARITY];
        let mut hess: Hessian = [[DMat3::ZERO; MAX_ARITY]; MAX_ARITY];
        for (r, row) in self.rows.iter().enumerate() {
            let kind = kind_at(s.constraints, row.table as usize);
            let c = row.local as usize;
            let (v, active) = row_at(kind, c, x, self.denom[r], &mut grad, &mut hess);
            if !active {
                mult[r] = 0.0;
            } else {
                sum_h += (v + self.alpha[r] * mult[r]).powi(2);
                for (k, &p) in kind.particles(c).iter().enumerate() {
                    force[p as usize] += grad[k] * mult[r];
                }
            }
            if !trial {
                self.value[r] = v;
                self.active[r] = active;
                self.grad[r] = grad;
                self.hess[r] = hess;
                self.lambda[row.global as usize] = mult[r];
            }
        }
        let mut sum_g = 0.0;
        for p in 0..self.particles {
            let w = s.x[p].w as f64;
            if w > 0.0 {
                sum_g += ((x[p] - self.x_pred[p]) - force[p] * w).length_squared();
            }
        }
        if !trial {
            std::mem::swap(&mut self.force, &mut force);
        }
        self.force_trial = force;
        sum_g + sum_h
    }

    /// The polish phase's system at `x`: `(M - Σ λ ∇²C + Jᵀ D⁻¹ J) Δx = -g - Jᵀ D⁻¹ h`, the
    /// `-λ ∇²C` terms made positive semidefinite when `project`; rigid rows get `D = σ Σ w
    /// |∇C|²`.
    fn assemble_polish(&mut self, s: &SolveState, sigma: f64, project: bool) {
        self.assemble_mass(s);
        for r in 0..self.rows.len() {
            self.dmult[r] = 0.0;
            if !self.active[r] {
                continue;
            }
            let row = self.rows[r];
            let kind = kind_at(s.constraints, row.table as usize);
            let ps = kind.particles(row.local as usize);
            let d = if self.alpha[r] > 0.0 {
                self.alpha[r]
            } else {
                sigma * self.reach[r]
            };
            let h = self.value[r] + self.alpha[r] * self.mult[r];
            let grad = self.grad[r];
            let mut term: Hessian = [[DMat3::ZERO; MAX_ARITY]; MAX_ARITY];
            for a in 0..ps.len() {
                for b in 0..ps.len() {
                    term[a][b] = self.hess[r][a][b] * -self.mult[r];
                }
            }
            if project {
                term = psd_part(&term, ps.len());
            }
            for a in 0..ps.len() {
                if s.x[ps[a] as usize].w != 0.0 {
                    self.descent[ps[a] as usize] -= grad[a] * (h / d);
                }
                for b in 0..ps.len() {
                    term[a][b] += outer(grad[a], grad[b]) / d;
                }
            }
            self.add_row(s, ps, &term);
            // D kept for Δλ = -(h + J Δx) / D.
            self.dmult[r] = d;
        }
        self.store_rhs();
    }

    /// One polish iteration from `x` (after `evaluate_polish(s, false)` gave `r2`); returns
    /// the new r², or `None` when no step lowers it.
    fn polish_step(&mut self, s: &SolveState, r2: f64, r0: f64) -> Option<f64> {
        let sigma = (r2.sqrt() / r0).clamp(1e-14, 1e-2) * 1e-2;
        let mut solved = false;
        for project in [false, true] {
            self.assemble_polish(s, sigma, project);
            if self.solve() {
                solved = true;
                break;
            }
            self.report.projected += 1;
        }
        if !solved {
            return None;
        }
        // Δλ from Δx (dmult holds D on entry).
        for r in 0..self.rows.len() {
            let d = self.dmult[r];
            if d == 0.0 {
                continue;
            }
            let row = self.rows[r];
            let kind = kind_at(s.constraints, row.table as usize);
            let mut jdx = 0.0;
            for (k, &p) in kind.particles(row.local as usize).iter().enumerate() {
                jdx += self.grad[r][k].dot(self.dx[p as usize]);
            }
            let h = self.value[r] + self.alpha[r] * self.mult[r];
            self.dmult[r] = -(h + jdx) / d;
        }
        let mut t = 1.0;
        for halving in 0..=MAX_HALVINGS {
            for p in 0..self.particles {
                self.x_trial[p] = self.x[p] + self.dx[p] * t;
            }
            for r in 0..self.rows.len() {
                self.mult_trial[r] = self.mult[r] + t * self.dmult[r];
            }
            let trial = self.evaluate_polish(s, true);
            if trial <= (1.0 - 1e-4 * t) * r2 {
                std::mem::swap(&mut self.x, &mut self.x_trial);
                std::mem::swap(&mut self.mult, &mut self.mult_trial);
                self.report.halvings += halving;
                return Some(trial);
            }
            t *= 0.5;
        }
        self.report.halvings += MAX_HALVINGS;
        None
    }
}

/// C, ∇C and ∇²C of constraint `c` of `kind` at `x`, and whether the row is active: it has a
/// compliance `d` and is not a unilateral constraint already satisfied.
fn row_at(
    kind: &dyn ConstraintKind,
    c: usize,
    x: &[DVec3],
    d: f64,
    grad: &mut [DVec3; MAX_ARITY],
    hess: &mut Hessian,
) -> (f64, bool) {
    let v = kind
        .second_order(c, x, grad, hess)
        .expect("prepare refused kinds without second derivatives");
    (v, d > 0.0 && !(kind.unilateral() && v <= 0.0))
}

/// The outer product `a bᵀ`.
fn outer(a: DVec3, b: DVec3) -> DMat3 {
    DMat3::from_cols(a * b.x, a * b.y, a * b.z)
}

/// The positive semidefinite part of a constraint's term over `k` particles: its eigenvalues
/// below zero set to zero (Teran, Sifakis, Irving and Fedkiw 2005's projection).
fn psd_part(term: &Hessian, k: usize) -> Hessian {
    let n = 3 * k;
    let mut m = nalgebra::DMatrix::<f64>::zeros(n, n);
    for a in 0..k {
        for b in 0..k {
            for i in 0..3 {
                for j in 0..3 {
                    m[(3 * a + i, 3 * b + j)] = term[a][b].col(j)[i];
                }
            }
        }
    }
    let eig = nalgebra::SymmetricEigen::new(m);
    if eig.eigenvalues.iter().all(|&v| v >= 0.0) {
        return *term;
    }
    let clamped = nalgebra::DMatrix::from_diagonal(&eig.eigenvalues.map(|v| v.max(0.0)));
    let m = &eig.eigenvectors * clamped * eig.eigenvectors.transpose();
    let mut out: Hessian = [[DMat3::ZERO; MAX_ARITY]; MAX_ARITY];
    for a in 0..k {
        for b in 0..k {
            let col = |j: usize| {
                DVec3::new(
                    m[(3 * a, 3 * b + j)],
                    m[(3 * a + 1, 3 * b + j)],
                    m[(3 * a + 2, 3 * b + j)],
                )
            };
            // Symmetrized: the eigen-reconstruction is symmetric only up to rounding, and the
            // Cholesky factor reads both triangles as one.
            out[a][b] = DMat3::from_cols(col(0), col(1), col(2));
        }
    }
    for a in 0..k {
        for b in 0..a {
            let avg = (out[a][b] + out[b][a].transpose()) * 0.5;
            out[a][b] = avg;
            out[b][a] = avg.transpose();
        }
        out[a][a] = (out[a][a] + out[a][a].transpose()) * 0.5;
    }
    out
}

/// True when both hold the same position bits.
fn same(a: &Packed4, b: &Packed4) -> bool {
    a.x.to_bits() == b.x.to_bits()
        && a.y.to_bits() == b.y.to_bits()
        && a.z.to_bits() == b.z.to_bits()
}

impl Solver for Newton {
    fn name(&self) -> &'static str {
        "newton"
    }

    fn prepare(&mut self, constraints: &Constraints, particles: usize) -> Result<(), WobbleError> {
        let offsets = constraints.solver_offsets();
        self.rows.clear();
        let mut adjacency: Vec<Vec<u32>> = vec![Vec::new(); particles];
        for t in 0..offsets.len() - 1 {
            let kind = kind_at(constraints, t);
            if kind.projected_by_step_loop() || kind.is_empty() {
                continue;
            }
            if !kind.has_second_order() {
                return Err(WobbleError::Unsupported(format!(
                    "newton needs the second derivatives of every constraint and {} constraints have none here (newton solves distance, tether and tetrahedron-volume constraints); use gauss-newton-direct, gs or colored",
                    kind.name()
                )));
            }
            for c in 0..kind.len() {
                let ps = kind.particles(c);
                for &a in ps {
                    for &b in ps {
                        if a != b {
                            adjacency[a as usize].push(b);
                        }
                    }
                }
                self.rows.push(Row {
                    table: t as u32,
                    local: c as u32,
                    global: (offsets[t] + c) as u32,
                });
            }
        }
        let mut graph_offsets = vec![0u32];
        let mut graph = Vec::new();
        for list in adjacency.iter_mut() {
            list.sort_unstable();
            list.dedup();
            graph.extend_from_slice(list);
            graph_offsets.push(graph.len() as u32);
        }
        let order = reverse_cuthill_mckee(&graph_offsets, &graph);
        self.block_of = invert(&order);
        self.nbr_start = vec![0];
        self.nbr.clear();
        self.entry_start = vec![0];
        let (mut scalar_offsets, mut cols) = (vec![0usize], Vec::new());
        for &p in &order {
            let start = self.nbr.len();
            self.nbr.push(self.block_of[p as usize]);
            self.nbr.extend(
                adjacency[p as usize]
                    .iter()
                    .map(|&q| self.block_of[q as usize]),
            );
            self.nbr[start..].sort_unstable();
            let blocks = &self.nbr[start..];
            for _ in 0..3 {
                for &q in blocks {
                    cols.extend([3 * q as usize, 3 * q as usize + 1, 3 * q as usize + 2]);
                }
                scalar_offsets.push(cols.len());
            }
            self.nbr_start.push(self.nbr.len() as u32);
            self.entry_start.push(cols.len());
        }
        let n = 3 * particles;
        let nnz = cols.len();
        let pattern = SparsityPattern::try_from_offsets_and_indices(n, n, scalar_offsets, cols)
            .map_err(|e| WobbleError::InvalidStructure {
                what: "newton system pattern",
                detail: e.to_string(),
            })?;
        let diagonal: Vec<usize> = (0..particles)
            .flat_map(|b| (0..3).map(move |i| (b, i)))
            .map(|(b, i)| self.entry(b, b as u32, i, i))
            .collect();
        self.cholesky = Some(factor_for(
            pattern,
            diagonal,
            "setting up the Newton system's Cholesky factor",
        )?);
        let m = self.rows.len();
        self.values = vec![0.0; nnz];
        self.rhs = DVector::zeros(n);
        self.x_pred = vec![DVec3::ZERO; particles];
        self.x = vec![DVec3::ZERO; particles];
        self.x_trial = vec![DVec3::ZERO; particles];
        self.written = vec![Packed4::default(); particles];
        self.lambda = vec![0.0; constraints.solver_len()];
        self.value = vec![0.0; m];
        self.grad = vec![[DVec3::ZERO; MAX_ARITY]; m];
        self.hess = vec![[[DMat3::ZERO; MAX_ARITY]; MAX_ARITY]; m];
        self.alpha = vec![0.0; m];
        self.reach = vec![0.0; m];
        self.denom = vec![0.0; m];
        self.active = vec![false; m];
        self.dx = vec![DVec3::ZERO; particles];
        self.mult = vec![0.0; m];
        self.mult_trial = vec![0.0; m];
        self.dmult = vec![0.0; m];
        self.force = vec![DVec3::ZERO; particles];
        self.force_trial = vec![DVec3::ZERO; particles];
        self.descent = vec![DVec3::ZERO; particles];
        self.particles = particles;
        Ok(())
    }

    fn preparation(&mut self) -> Option<&mut Preparation> {
        Some(&mut self.prepared)
    }

    fn iterate(&mut self, s: &mut SolveState, iteration: usize) {
        assert_eq!(
            s.x.len(),
            self.particles,
            "Newton solver prepared for another body"
        );
        if iteration == 0 {
            for (p, q) in s.x.iter().enumerate() {
                self.x_pred[p] = q.xyz().as_dvec3();
                self.x[p] = self.x_pred[p];
            }
            self.report = NewtonReport::default();
            self.set_reach(s);
            self.set_compliances();
            self.polish = false;
            self.done = false;
        } else {
            // Particles something else moved since the last iteration are read back.
            let mut moved = false;
            for p in 0..self.particles {
                if !same(&s.x[p], &self.written[p]) {
                    self.x[p] = s.x[p].xyz().as_dvec3();
                    moved = true;
                }
            }
            if moved {
                self.done = false;
            }
        }
        if self.polish {
            let r2 = self.evaluate_polish(s, false);
            let r0 = self.report.residuals[0];
            if let Some(last) = self.report.residuals.last_mut() {
                *last = r2.sqrt();
            }
            if r2.sqrt() <= self.tolerance * r0 {
                self.report.converged = true;
                self.done = true;
            }
            if !self.done {
                match self.polish_step(s, r2, r0) {
                    Some(next) => {
                        let r_new = next.sqrt();
                        self.report.residuals.push(r_new);
                        if r_new <= self.tolerance * r0 {
                            self.report.converged = true;
                            self.done = true;
                        } else if r_new > STAGNATION * r2.sqrt() {
                            // Newton near a solution cuts the residual by far more: this is
                            // the floor of f64, or a problem it does not converge on.
                            self.report.at_floor = true;
                            self.done = true;
                        }
                        self.evaluate_polish(s, false);
                    }
                    None => {
                        self.report.residuals.push(r2.sqrt());
                        self.report.at_floor = true;
                        self.done = true;
                    }
                }
            }
            self.write(s);
            return;
        }
        let at = self.evaluate(s, false);
        let r = at.residual2.sqrt();
        if iteration == 0 {
            self.report.residuals.push(at.constraints2.sqrt());
        } else if let Some(last) = self.report.residuals.last_mut() {
            *last = r;
        }
        let r0 = self.report.residuals[0];
        if r == 0.0 || r <= self.tolerance * r0 {
            self.report.converged = true;
            self.done = true;
        }
        if self.done {
            self.write(s);
            return;
        }
        // Newton's own step where H is positive definite and the step descends; the
        // projected H otherwise.
        self.assemble(s, false);
        let mut slope = f64::NAN;
        if self.solve() {
            slope = self.slope();
        }
        let descends = |slope: f64| slope < 0.0;
        if !descends(slope) {
            self.assemble(s, true);
            self.report.projected += 1;
            if self.solve() {
                slope = self.slope();
            }
        }
        let mut stalled = !descends(slope);
        if !stalled {
            let mut t = 1.0;
            stalled = true;
            for halving in 0..=MAX_HALVINGS {
                for p in 0..self.particles {
                    self.x_trial[p] = self.x[p] + self.dx[p] * t;
                }
                let trial = self.evaluate(s, true);
                // Armijo on Φ; or, for the full step, a halved residual: near the solution
                // Φ's changes fall below its rounding before the residual's do.
                let armijo = trial.energy <= at.energy + 1e-4 * t * slope;
                let halved = halving == 0 && trial.residual2 <= 0.25 * at.residual2;
                if (armijo || halved) && trial.energy.is_finite() {
                    std::mem::swap(&mut self.x, &mut self.x_trial);
                    self.report.halvings += halving;
                    stalled = false;
                    break;
                }
                t *= 0.5;
            }
        }
        if stalled {
            self.report.halvings += MAX_HALVINGS;
        }
        let r_new = self.evaluate(s, false).residual2.sqrt();
        self.report.residuals.push(r_new);
        if r_new <= self.tolerance * r0 {
            self.report.converged = true;
            self.done = true;
        } else if stalled || (r_new <= 0.1 * r && r_new <= POLISH_FROM * r0) {
            // Close (a step cut the residual tenfold, to below POLISH_FROM of the start) or
            // stalled: Newton on the multipliers
            // and positions together from here, `λ = -C / D` to start.
            self.polish = true;
            self.report.polish_from = Some(self.report.residuals.len() - 1);
            for (r, row) in self.rows.iter().enumerate() {
                self.mult[r] = self.lambda[row.global as usize];
            }
            let r2 = self.evaluate_polish(s, false);
            if let Some(last) = self.report.residuals.last_mut() {
                *last = r2.sqrt();
            }
        }
        self.write(s);
    }
}

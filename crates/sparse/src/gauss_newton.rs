//! Gauss-Newton on the global CSR system: every outer iteration linearizes all constraints and
//! solves one sparse system for all multipliers at once (`gauss-newton-gs`, `gauss-newton-jacobi`, `gauss-newton-direct`).
//!
//! It leaves out the geometric stiffness `Σ_c λ_c ∇²C_c` of the system's Hessian (and the
//! inertia residual `M(x - x̃) - Jᵀλ`, taken as zero), so it converges linearly where that term
//! matters (a tensioned cloth). The names `newton-gs`,
//! `newton-jacobi` and `newton-direct` this solver had before still parse to it.
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
//! - `gauss-newton-gs`: `inner` Gauss-Seidel sweeps on the linear system, from Δλ = 0;
//! - `gauss-newton-jacobi`: `inner` Jacobi sweeps, `Δλ += ω D⁻¹ (b - A Δλ)`, with `D` the absolute
//!   row sums `Σ_c |A_rc|` unless [`GaussNewtonOptions::average`] is `Averaging::Off` (the default is
//!   on) and the diagonal otherwise. Plain Jacobi diverges on the cloth (`A` is far from diagonally dominant: a row
//!   has about ten off-diagonal entries of half the diagonal); with row sums, `2D/ω - A` is
//!   positive definite for ω <= 1 (Gershgorin), so the sweeps converge — the same idea as
//!   averaging the position corrections by constraint count;
//! - `gauss-newton-direct`: sparse Cholesky in f64 (nalgebra-sparse's `CscCholesky`, symbolic
//!   factorization once at prepare, numeric refactorization each iteration). The rows are
//!   numbered in reverse Cuthill-McKee order of the constraint graph to limit fill-in, and
//!   `A + μ diag(A)` is factored: Levenberg-Marquardt with Marquardt's scaling, the damping μ
//!   adapted as below and never below ε = [`GaussNewtonOptions::regularization`]. With α = 0 and
//!   μ → 0 this is the Gauss-Newton (minimum-norm Newton) iteration for `C(x) = 0`, which
//!   converges quadratically; at μ = ε the error of a well-conditioned row shrinks by a further
//!   factor of about ε per iteration.
//!
//! Why ε is not tiny: redundant constraints make `A` singular (on a tetrahedral mesh each
//! volume row is a combination of the tetrahedron's six edge rows; a flat cloth has more edges
//! than in-plane degrees of freedom), and a nonlinear state puts part of `b` outside the range
//! of `A`. That part comes back as `Δλ ≈ b / (ε A_rr)` along the null space of `Jᵀ`, which
//! `Jᵀ` would cancel exactly; but the gradients are f32, so the rows cancel only to about
//! `ε_f32 ≈ 6e-8` and `Δx` picks up a spurious move of about `(ε_f32 / ε)` times the
//! inconsistency. With ε = 1e-10 those moves reached a metre: the cube blew up at dt = 1/30,
//! and so did the 32 x 32 cloth at dt = 1/60. The default ε = 1e-6 keeps them below a tenth of
//! the inconsistency.
//!
//! Globalization. Every trial step is judged by the merit
//!
//! ```text
//! φ(x, λ) = Σ_c (C_c(x) + α̃_c λ_c)² / (Σ_k w_k |∇_k C_c|² + α̃_c)
//! ```
//!
//! over the local constraints (unilateral ones only where `C > 0`), weights from the
//! linearization point. Each term is the squared length, in the mass metric, of the correction
//! that would satisfy that constraint alone (the XPBD update), so kinds in different units
//! weigh alike with no scale to choose; the weights are also the inverse diagonal of `A`, the
//! metric in which a diagonally scaled Jacobi step lowers the linearized φ.
//!
//! Whether the solver is alone decides how much is trusted. If nothing but this solver moved
//! the particles since its last accepted step (the prediction before the first iteration does
//! not count), the Gauss-Newton model covers the whole problem: a step is accepted when φ after it
//! is at most the largest φ at the start of the last [`MERIT_WINDOW`] such iterations (a
//! non-monotone rule, Grippo, Lampariello and Lucidi 1986), since Gauss-Newton steps on a slack
//! cloth or a long rope raise φ for an iteration or two and still converge faster than damped
//! ones. If
//! something else moved them (contacts, a global kind's projection, or a rejected step), part
//! of the problem is outside the model and undoes part of each step: a step must then lower φ
//! below its value at the start of this iteration, and under `gauss-newton-direct` move no particle
//! farther than [`TRUST_RADIUS`] mean rest lengths of the distance table (no limit without
//! distance constraints). When no trial is accepted, positions and multipliers stay as they
//! were. The trials:
//! - `gauss-newton-gs`, `gauss-newton-jacobi`: backtracking, `t = 1, 1/2, ...` (at most [`MAX_HALVINGS`]
//!   halvings; Nocedal and Wright 2006, §3.1, with simple decrease). Their few sweeps from
//!   Δλ = 0 already keep the step short, so scaling it is enough.
//! - `gauss-newton-direct`: Levenberg-Marquardt (Nocedal and Wright 2006, §10.3): a rejected step
//!   raises μ tenfold and is solved again (at most [`MAX_DAMPING_RAISES`] times), an accepted
//!   one lowers μ tenfold for the next iteration. Scaling a Gauss-Newton step does not help
//!   where `A` is nearly singular: on a closed surface flattened against the ground its
//!   direction is dominated by the nearly singular modes (flexes that keep edge lengths), and
//!   a halved step of half a metre is still a fold. Raising μ turns the direction toward the
//!   diagonally scaled (Jacobi) step; the trust radius catches the steps that fold the surface
//!   into another shape with the same edge lengths, which lower φ and would pass.
//!
//! What this was measured against: with the non-monotone rule everywhere, the jelly (s = 3)
//! folded and blew up under `gauss-newton-direct` at dt = 1/30 and 1/60; with the strict rule and the
//! trust radius everywhere, the 32 x 32 cloth under `gauss-newton-direct` ended tens of times more
//! stretched; with the window restarted at every substep, the 16 x 16 cloth under
//! `gauss-newton-direct` gained energy at dt = 1/30. Full steps are taken whenever they pass, so near the solution the iteration
//! is unchanged (quadratic for `gauss-newton-direct`). The searches are serial and evaluate each
//! constraint once per trial, so they are deterministic.
//!
//! Unilateral kinds are inactive where `C <= 0` (their row becomes `Δλ = 0`), and rows with no
//! movable particle and no compliance (e.g. between two pinned particles) are `Δλ = 0` too.
//! Global kinds (a closed surface's volume, see [`crate::incidence::Incidence`]) have empty rows
//! in `B`; their row of `A` holds only its diagonal, is `Δλ = 0`, and they are projected whole
//! after the step, as in every solver.

use crate::cholesky::factor_for;
use crate::incidence::Incidence;
use crate::jacobi::kind_at;
use crate::ordering::{invert, reverse_cuthill_mckee};
use crate::GaussNewtonOptions;
use nalgebra::DVector;
use nalgebra_sparse::factorization::CscCholesky;
use nalgebra_sparse::ops::serial::spmm_csr_pattern;
use nalgebra_sparse::pattern::SparsityPattern;
use nalgebra_sparse::CsrMatrix;
use solver_core::constraints::{IsometricBending, MAX_ARITY};
use solver_core::glam::{DVec3, Vec3};
use solver_core::{
    ConstraintKind, Constraints, Packed4, Preparation, SolveState, Solver, WobbleError,
};

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

/// Most halvings of a step the line search tries before it rejects the step.
pub const MAX_HALVINGS: usize = 4;

/// The non-monotone rule's window: a step may raise the merit up to the largest of the last
/// this many iterations' (while the solver is alone).
pub const MERIT_WINDOW: usize = 8;

/// `gauss-newton-direct`: the factor by which a rejected step raises the damping μ, and an accepted
/// one lowers it.
pub const DAMPING_FACTOR: f64 = 10.0;

/// `gauss-newton-direct`: most raises of μ in one iteration before the step is rejected.
pub const MAX_DAMPING_RAISES: usize = 4;

/// `gauss-newton-direct`: the largest damping μ (the step is then about `1 / μ` of a Jacobi step).
pub const MAX_DAMPING: f64 = 1e8;

/// `gauss-newton-direct`: the trust radius, in mean rest lengths of the distance table: no particle
/// may move farther in one iteration.
pub const TRUST_RADIUS: f64 = 1.0;

/// The global CSR solver.
pub struct GaussNewton {
    method: InnerSolve,
    sweeps: usize,
    omega: f64,
    row_sum_scaling: bool,
    /// The Jacobi sweeps' `ω / D_r` per row.
    jacobi_scale: Vec<f64>,
    regularization: f64,
    prepared: Preparation,
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
    /// The merit's weight of each constraint (global id), `1 / (Σ w |∇C|² + α̃)` at the
    /// linearization point; 0 for global kinds and rows that nothing can move.
    merit_weight: Vec<f64>,
    /// The merit at the linearization point.
    merit_start: f64,
    /// The reference merit of the current iteration's acceptance test.
    merit_cap: f64,
    /// The merits at the start of the last iterations in which this solver was alone (a ring).
    window: [f64; MERIT_WINDOW],
    /// Next slot of `window`.
    window_next: usize,
    /// Filled slots of `window`.
    window_len: usize,
    /// True when the last iteration's step was accepted.
    accepted: bool,
    /// True when something other than this solver moved the particles between its last
    /// accepted step and this iteration.
    moved_by_others: bool,
    /// The positions right after the last accepted step.
    x_accepted: Vec<Packed4>,
    /// Positions at the start of the iteration (the line search's base point).
    x_start: Vec<Packed4>,
    /// The full step `s W Jᵀ Δλ` of each particle.
    step: Vec<DVec3>,
    /// Halvings of the step since prepare.
    halvings: usize,
    /// `gauss-newton-direct`: the Levenberg-Marquardt damping μ (at least `regularization`).
    damping: f64,
    /// `gauss-newton-direct`: the diagonal of `A` before damping.
    undamped_diag: Vec<f64>,
    /// `gauss-newton-direct`: raises of μ since prepare.
    damping_raises: usize,
    /// Iterations whose step was rejected outright (positions restored) since prepare.
    rejected: usize,
}

impl std::fmt::Debug for GaussNewton {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GaussNewton")
            .field("method", &self.method)
            .field("sweeps", &self.sweeps)
            .field("rows", &self.row_of.len())
            .field("nnz", &self.a.nnz())
            .field("factor_failures", &self.factor_failures)
            .field("halvings", &self.halvings)
            .field("damping_raises", &self.damping_raises)
            .field("rejected", &self.rejected)
            .finish()
    }
}

impl GaussNewton {
    /// A global solver with the given inner solve (`opts.sweeps` sweeps, `opts.omega` and
    /// `opts.average` for the Jacobi sweeps, `opts.regularization` for Cholesky).
    pub fn new(method: InnerSolve, opts: GaussNewtonOptions) -> Result<Self, WobbleError> {
        opts.validate()?;
        Ok(GaussNewton {
            method,
            sweeps: opts.sweeps,
            omega: opts.omega as f64,
            row_sum_scaling: opts.average != crate::Averaging::Off,
            jacobi_scale: Vec::new(),
            regularization: opts.regularization,
            prepared: Preparation::default(),
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
            merit_weight: Vec::new(),
            merit_start: 0.0,
            merit_cap: 0.0,
            window: [0.0; MERIT_WINDOW],
            window_next: 0,
            window_len: 0,
            accepted: false,
            moved_by_others: false,
            x_accepted: Vec::new(),
            x_start: Vec::new(),
            step: Vec::new(),
            halvings: 0,
            damping: opts.regularization,
            undamped_diag: Vec::new(),
            damping_raises: 0,
            rejected: 0,
        })
    }

    /// Number of step halvings of the line search (`gauss-newton-gs`, `gauss-newton-jacobi`) since the last
    /// prepare.
    pub fn halvings(&self) -> usize {
        self.halvings
    }

    /// Number of raises of the Levenberg-Marquardt damping (`gauss-newton-direct`) since the last
    /// prepare.
    pub fn damping_raises(&self) -> usize {
        self.damping_raises
    }

    /// The current Levenberg-Marquardt damping μ of `gauss-newton-direct` (`A + μ diag(A)` is
    /// factored); at least [`GaussNewtonOptions::regularization`].
    pub fn damping(&self) -> f64 {
        self.damping
    }

    /// Number of iterations since the last prepare whose step raised the merit above the
    /// substep's reference after every halving or damping raise, and so was rejected
    /// (positions and multipliers kept).
    pub fn rejected_steps(&self) -> usize {
        self.rejected
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

    /// Entries of the Cholesky factor `L`, once prepared (`gauss-newton-direct` only).
    pub fn factor_nnz(&self) -> Option<usize> {
        self.cholesky.as_ref().map(|c| c.l().nnz())
    }

    /// The merit `Σ_c weight_c (C_c + α̃_c λ_c)²` over the local constraints active at `s.x`
    /// (unilateral kinds count only where `C > 0`), with the multipliers `λ + t Δλ` and the
    /// weights of the linearization point.
    fn merit(&self, s: &SolveState, t: f64) -> f64 {
        let mut grad = [Vec3::ZERO; MAX_ARITY];
        let mut sum = 0.0;
        let mut g = 0;
        for k in 0..self.offsets.len() - 1 {
            let kind = kind_at(s.constraints, k);
            if kind.projected_by_step_loop() {
                g += kind.len();
                continue;
            }
            let unilateral = kind.unilateral();
            for c in 0..kind.len() {
                let weight = self.merit_weight[g];
                if weight != 0.0 {
                    let v = kind.evaluate(c, s.x, &mut grad) as f64;
                    if !(unilateral && v <= 0.0) {
                        let alpha = (kind.compliance(c) * s.inv_dt2) as f64;
                        let lambda = s.lambda[g] as f64 + t * self.dl[self.row_of[g] as usize];
                        sum += weight * (v + alpha * lambda).powi(2);
                    }
                }
                g += 1;
            }
        }
        sum
    }

    /// Moves the free particles to `x_start + t · step`.
    fn place(&self, x: &mut [Packed4], t: f64) {
        for ((q, q0), d) in x.iter_mut().zip(&self.x_start).zip(&self.step) {
            if q0.w == 0.0 {
                continue;
            }
            q.x = q0.x + (t * d.x) as f32;
            q.y = q0.y + (t * d.y) as f32;
            q.z = q0.z + (t * d.z) as f32;
        }
    }

    /// `step = s W Jᵀ Δλ` for every particle, from `dl`.
    fn compute_step(&mut self, s: &SolveState) {
        let bt = &self.inc.particle_constraints;
        let rows = bt.indices();
        for p in 0..self.particles {
            let w = s.x[p].w;
            let mut d = DVec3::ZERO;
            if w != 0.0 {
                for e in bt.row_range(p) {
                    let g = rows[e] as usize;
                    let dl = self.dl[self.row_of[g] as usize];
                    d += self.grad[self.inc.particle_entries[e] as usize].as_dvec3() * dl;
                }
            }
            self.step[p] = (s.stiffness * w) as f64 * d;
        }
    }

    /// Non-monotone backtracking on the merit (`gauss-newton-gs`, `gauss-newton-jacobi`): places the
    /// particles at `x_start + t · step` for the first `t` in 1, 1/2, ... (at most
    /// [`MAX_HALVINGS`] halvings) whose merit is at most `merit_cap`, and returns it; restores
    /// `x_start` and returns 0 when none is.
    fn line_search(&mut self, s: &mut SolveState) -> f64 {
        self.compute_step(s);
        let mut t = 1.0;
        for halving in 0..=MAX_HALVINGS {
            self.place(s.x, t);
            if self.merit(s, t) <= self.merit_cap {
                self.halvings += halving;
                return t;
            }
            t *= 0.5;
        }
        self.halvings += MAX_HALVINGS;
        self.rejected += 1;
        s.x.copy_from_slice(&self.x_start);
        0.0
    }

    /// Levenberg-Marquardt (`gauss-newton-direct`): solves with the current damping μ and takes the
    /// whole step if its merit is at most `merit_cap` and, when others moved the particles,
    /// no particle moves farther than the trust radius; then lowers μ tenfold (not below ε).
    /// Otherwise raises μ tenfold and solves again, at most [`MAX_DAMPING_RAISES`] times, after
    /// which it restores `x_start` and returns 0 (μ stays raised). Returns 1 on success.
    fn damped_direct(&mut self, s: &mut SolveState) -> f64 {
        let values = self.a.values();
        for (u, &d) in self.undamped_diag.iter_mut().zip(&self.diag) {
            *u = values[d as usize];
        }
        let distance = &s.constraints.distance;
        let radius2 = if distance.is_empty() || !self.moved_by_others {
            f64::INFINITY
        } else {
            (TRUST_RADIUS * ConstraintKind::scale(distance) as f64).powi(2)
        };
        for _ in 0..=MAX_DAMPING_RAISES {
            if !self.direct() {
                // Not positive definite in f64: Gauss-Seidel sweeps on the undamped system.
                self.factor_failures += 1;
                self.assemble(s);
                self.gauss_seidel();
                return self.line_search(s);
            }
            self.compute_step(s);
            self.place(s.x, 1.0);
            let within = self.step.iter().all(|d| d.length_squared() <= radius2);
            if within && self.merit(s, 1.0) <= self.merit_cap {
                self.damping = (self.damping / DAMPING_FACTOR).max(self.regularization);
                return 1.0;
            }
            self.damping = (self.damping * DAMPING_FACTOR).min(MAX_DAMPING);
            self.damping_raises += 1;
        }
        self.rejected += 1;
        s.x.copy_from_slice(&self.x_start);
        0.0
    }

    /// Linearizes every constraint at `s.x`: C, ∇C, activity; and the merit there
    /// (`merit_start`, the same sum as [`GaussNewton::merit`] at `t = 0`).
    fn linearize(&mut self, s: &SolveState) {
        let rows = self.inc.constraint_particles.offsets();
        let mut g = 0;
        self.merit_start = 0.0;
        for t in 0..self.offsets.len() - 1 {
            let kind = kind_at(s.constraints, t);
            let unilateral = kind.unilateral();
            if kind.projected_by_step_loop() {
                // Empty rows (see `Incidence`): Δλ = 0 here, projected after the solve.
                for _ in 0..kind.len() {
                    self.value[g] = 0.0;
                    self.active[g] = false;
                    self.merit_weight[g] = 0.0;
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
                // The weight from the gradient even where inactive: the row may become active
                // during the line search.
                let alpha = (kind.compliance(c) * s.inv_dt2) as f64;
                let mut diag = alpha;
                for (slot, &p) in kind.particles(c).iter().enumerate() {
                    diag += s.x[p as usize].w as f64 * grad[slot].as_dvec3().length_squared();
                }
                let weight = if diag > EMPTY_ROW { 1.0 / diag } else { 0.0 };
                self.merit_weight[g] = weight;
                if active {
                    self.merit_start += weight * (v as f64 + alpha * s.lambda[g] as f64).powi(2);
                }
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

    /// Cholesky of `A + μ diag(A)` (μ = `self.damping`; `diag(A)` from `undamped_diag`);
    /// false when the factorization fails.
    fn direct(&mut self) -> bool {
        let Some(chol) = self.cholesky.as_mut() else {
            return false;
        };
        let values = self.a.values_mut();
        let grow = 1.0 + self.damping;
        for (&d, &v) in self.diag.iter().zip(&self.undamped_diag) {
            values[d as usize] = v * grow;
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

/// True when both position arrays hold the same bits (inverse masses included).
fn same_bits(a: &[Packed4], b: &[Packed4]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(p, q)| {
            p.x.to_bits() == q.x.to_bits()
                && p.y.to_bits() == q.y.to_bits()
                && p.z.to_bits() == q.z.to_bits()
                && p.w.to_bits() == q.w.to_bits()
        })
}

/// The square pattern `a` with every diagonal entry present (each row's columns stay sorted).
fn with_diagonal(a: &SparsityPattern) -> Result<SparsityPattern, WobbleError> {
    let m = a.major_dim();
    let mut offsets = Vec::with_capacity(m + 1);
    offsets.push(0usize);
    let mut cols = Vec::with_capacity(a.nnz() + m);
    for r in 0..m {
        let lane = a.lane(r);
        let at = lane.partition_point(|&c| c < r);
        cols.extend_from_slice(&lane[..at]);
        if lane.get(at) != Some(&r) {
            cols.push(r);
        }
        cols.extend_from_slice(&lane[at..]);
        offsets.push(cols.len());
    }
    SparsityPattern::try_from_offsets_and_indices(m, m, offsets, cols).map_err(|e| {
        WobbleError::InvalidStructure {
            what: "system pattern",
            detail: e.to_string(),
        }
    })
}

/// For each row r of `a` (sorted columns), the entry index of column `col`.
fn entry_of(a: &SparsityPattern, r: usize, col: usize) -> usize {
    let lane = a.lane(r);
    a.major_offsets()[r]
        + lane
            .binary_search(&col)
            .expect("pattern holds every shared pair")
}

impl Solver for GaussNewton {
    fn name(&self) -> &'static str {
        match self.method {
            InnerSolve::GaussSeidel => "gauss-newton-gs",
            InnerSolve::Jacobi => "gauss-newton-jacobi",
            InnerSolve::Direct => "gauss-newton-direct",
        }
    }

    fn prepare(&mut self, constraints: &Constraints, particles: usize) -> Result<(), WobbleError> {
        // `C = |Σ k_i x_i|` has no gradient at its flat rest state and a kink there: the
        // iterative inner solves give steps the line search rejects every time, and the body
        // would fall as if unconstrained. The direct solve copes; the others refuse.
        if self.method != InnerSolve::Direct {
            if let Some(t) = constraints.position_of::<IsometricBending>() {
                return Err(WobbleError::Unsupported(format!(
                    "{} cannot solve {} constraints (the line search rejects the inner solve's steps at their flat rest state); use gauss-newton-direct, gs or colored",
                    self.name(),
                    constraints.extra[t].name()
                )));
            }
        }
        // Only the tables a solver sees: the step-loop tables after them (contacts, a drag)
        // change size from substep to substep and get no row.
        self.inc = Incidence::of_solver_tables(constraints, particles)?;
        self.offsets = constraints.solver_offsets();
        let m = self.inc.constraints();
        // Pattern of B Bᵀ: constraints sharing a particle (nalgebra-sparse's symbolic product),
        // plus the whole diagonal: a row of B may be empty (a global kind, see `Incidence`), and
        // its row of A still needs the diagonal entry that makes it `Δλ = 0`.
        let b = self.inc.constraint_particles.to_sparsity_pattern()?;
        let bbt = with_diagonal(&spmm_csr_pattern(&b, &b.transpose()))?;
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
        let pattern =
            SparsityPattern::try_from_offsets_and_indices(m, m, offsets, cols).map_err(|e| {
                WobbleError::InvalidStructure {
                    what: "system pattern",
                    detail: e.to_string(),
                }
            })?;
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
            self.cholesky = Some(factor_for(
                pattern.clone(),
                self.diag.iter().map(|&d| d as usize),
                "setting up the Cholesky factor",
            )?);
        }
        let nnz = pattern.nnz();
        self.a = CsrMatrix::try_from_pattern_and_values(pattern, vec![0.0; nnz]).map_err(|e| {
            WobbleError::InvalidStructure {
                what: "system matrix",
                detail: e.to_string(),
            }
        })?;
        self.grad = vec![Vec3::ZERO; self.inc.constraint_particles.nnz()];
        self.value = vec![0.0; m];
        self.active = vec![false; m];
        self.b = vec![0.0; m];
        self.dl = vec![0.0; m];
        self.dl_next = vec![0.0; m];
        self.jacobi_scale = vec![0.0; m];
        self.rhs = DVector::zeros(m);
        self.merit_weight = vec![0.0; m];
        self.x_start = vec![Packed4::default(); particles];
        self.x_accepted = vec![Packed4::default(); particles];
        self.accepted = false;
        self.window_len = 0;
        self.step = vec![DVec3::ZERO; particles];
        self.halvings = 0;
        self.damping = self.regularization;
        self.undamped_diag = vec![0.0; m];
        self.damping_raises = 0;
        self.rejected = 0;
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
            "Gauss-Newton solver prepared for another body"
        );
        self.x_start.copy_from_slice(s.x);
        self.linearize(s);
        self.assemble(s);
        // Did anything but this solver (contacts, a global kind) move the particles since its
        // last accepted step? The prediction before iteration 0 does not count.
        self.moved_by_others =
            iteration > 0 && !(self.accepted && same_bits(s.x, &self.x_accepted));
        // The acceptance reference: the largest merit of this substep's iterations while the
        // solver is alone, the merit here otherwise (see the module doc).
        if self.moved_by_others {
            self.window_len = 0;
        }
        self.window[self.window_next] = self.merit_start;
        self.window_next = (self.window_next + 1) % MERIT_WINDOW;
        self.window_len = (self.window_len + 1).min(MERIT_WINDOW);
        self.merit_cap = (0..self.window_len)
            .map(|k| self.window[(self.window_next + MERIT_WINDOW - 1 - k) % MERIT_WINDOW])
            .fold(self.merit_start, f64::max);
        let t = match self.method {
            InnerSolve::GaussSeidel => {
                self.gauss_seidel();
                self.line_search(s)
            }
            InnerSolve::Jacobi => {
                self.jacobi();
                self.line_search(s)
            }
            InnerSolve::Direct => self.damped_direct(s),
        };
        self.accepted = t > 0.0;
        if t > 0.0 {
            self.x_accepted.copy_from_slice(s.x);
            for (g, l) in s.lambda.iter_mut().enumerate().take(self.row_of.len()) {
                *l += (t * self.dl[self.row_of[g] as usize]) as f32;
            }
        }
    }
}

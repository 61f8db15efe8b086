//! Classic results added as claims of their own: C15, Young's rho(GS) = rho(J)^2 for
//! consistently ordered systems, measured on the rope and on a compliant cloth (whose system,
//! unlike the rigid cloth's, is well posed) against the spectral radii of the linearized
//! iterations; C16, plain PBD stiffness depends on iterations and dt; C17,
//! Gauss-Seidel's ordering matters little; C18, Jacobi needs averaging or under-relaxation.

use super::behaviour::{fmt, late_cells, late_stretch, spread, LATE_COLUMNS};
use super::claim::{Claim, Ctx};
use crate::measure::residuals::residual_curve;
use crate::output::csv::RowWriter;
use crate::output::plot::{Plot, Series};
use crate::setup::{build_body, or_note, Error};
use nalgebra::DMatrix;
use solver_core::{
    step, Body, Constraints, Preparation, SolveState, Solver, StepParams, Stiffness,
};
use sparse::{Averaging, JacobiOptions, SolverKind};

/// The per-iteration contraction factor of the tail of a residual curve: the geometric mean
/// of r(k+1)/r(k) over the second half of the iterations above the float floor (1e-5 of r(0)).
pub fn asymptotic_rate(curve: &[f64]) -> f64 {
    let r0 = curve.first().copied().unwrap_or(f64::NAN);
    let end = curve
        .iter()
        .rposition(|&r| r.is_finite() && r > 1e-5 * r0)
        .unwrap_or(0);
    if end < 4 {
        return f64::NAN;
    }
    let start = end / 2;
    (curve[end] / curve[start]).powf(1.0 / (end - start) as f64)
}

/// The linearized system of one XPBD substep at the body's positions, over the distance
/// constraints with a movable particle: `A = J W Jᵀ + α̃` (α̃ = compliance / h², the diagonal
/// the XPBD update divides by), the spectral radii of its Jacobi iteration `I - D⁻¹A` and
/// Gauss-Seidel iteration `I - (D + L)⁻¹A` (constraint order), and the extreme eigenvalues of
/// the symmetric A, whose smallest says whether the system is well posed.
#[derive(Debug, Clone, Copy)]
pub struct Linearized {
    /// Spectral radius of plain Jacobi's iteration matrix.
    pub rho_j: f64,
    /// Spectral radius of Gauss-Seidel's iteration matrix.
    pub rho_gs: f64,
    /// Smallest eigenvalue of A.
    pub lambda_min: f64,
    /// Largest eigenvalue of A.
    pub lambda_max: f64,
}

/// [`Linearized`] of `body` for the substep `h`.
pub fn linearized(body: &Body, h: f64) -> Linearized {
    let d = &body.constraints().distance;
    let x = &body.particles().x();
    let rows: Vec<usize> = (0..d.len())
        .filter(|&c| {
            let [i, j] = d.pairs[c];
            x[i as usize].w + x[j as usize].w > 0.0
        })
        .collect();
    let m = rows.len();
    let grad = |c: usize| {
        let [i, j] = d.pairs[c];
        let (a, b) = (x[i as usize].xyz(), x[j as usize].xyz());
        ((a - b).normalize_or_zero(), i, j)
    };
    let mut a = DMatrix::<f64>::zeros(m, m);
    for (r, &c) in rows.iter().enumerate() {
        let (nc, ci, cj) = grad(c);
        for (s, &e) in rows.iter().enumerate() {
            let (ne, ei, ej) = grad(e);
            let mut v = 0.0f64;
            // ∇_p C_c is +n_c at i, -n_c at j.
            for (p, sc) in [(ci, 1.0f64), (cj, -1.0)] {
                for (q, se) in [(ei, 1.0f64), (ej, -1.0)] {
                    if p == q {
                        v += sc * se * x[p as usize].w as f64 * nc.dot(ne) as f64;
                    }
                }
            }
            a[(r, s)] = v;
        }
        a[(r, r)] += d.compliance[c] as f64 / (h * h);
    }
    let diag = DMatrix::from_diagonal(&a.diagonal());
    let lower = DMatrix::from_fn(m, m, |r, s| if r > s { a[(r, s)] } else { 0.0 });
    let id = DMatrix::<f64>::identity(m, m);
    let radius = |t: DMatrix<f64>| {
        t.complex_eigenvalues()
            .iter()
            .map(|z| z.norm())
            .fold(0.0f64, f64::max)
    };
    let dinv = DMatrix::from_diagonal(&a.diagonal().map(|v| if v > 0.0 { 1.0 / v } else { 0.0 }));
    let rho_j = radius(&id - &dinv * &a);
    let rho_gs = match (&diag + &lower).try_inverse() {
        Some(inv) => radius(&id - inv * &a),
        None => f64::NAN,
    };
    let eig = a.symmetric_eigenvalues();
    Linearized {
        rho_j,
        rho_gs,
        lambda_min: eig.iter().copied().fold(f64::INFINITY, f64::min),
        lambda_max: eig.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    }
}

/// A solver that runs `inner` and records, before the first iteration and after each, the
/// residual of the system XPBD iterates: the RMS over the distance constraints of
/// `C + α̃ λ` (what the update `Δλ = (-C - α̃ λ) / (w |∇C|² + α̃)` drives to zero) over the mean
/// rest length. With compliance 0 it is the step loop's residual; with compliance C alone
/// settles at `-α̃ λ`, not at 0, so its decay would not show the iteration's rate.
struct XpbdResidual<'a> {
    inner: &'a mut dyn Solver,
    curve: Vec<f64>,
}

impl XpbdResidual<'_> {
    fn record(&mut self, s: &SolveState) {
        let d = &s.constraints.distance;
        let scale = 1.0 / d.mean_rest() as f64;
        let mut sum = 0.0f64;
        for (c, &[i, j]) in d.pairs.iter().enumerate() {
            let l = (s.x[i as usize].xyz() - s.x[j as usize].xyz()).length();
            let v = (l - d.rest[c]) as f64
                + d.compliance[c] as f64 * s.inv_dt2 as f64 * s.lambda[c] as f64;
            sum += (v * scale).powi(2);
        }
        self.curve.push((sum / d.len().max(1) as f64).sqrt());
    }
}

impl Solver for XpbdResidual<'_> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn prepare(&mut self, constraints: &Constraints, particles: usize) -> solver_core::Result<()> {
        self.inner.prepare(constraints, particles)
    }
    fn preparation(&mut self) -> Option<&mut Preparation> {
        self.inner.preparation()
    }
    fn begin(&mut self, state: &mut SolveState) {
        self.inner.begin(state);
        self.record(state);
    }
    fn iterate(&mut self, state: &mut SolveState, iteration: usize) {
        self.inner.iterate(state, iteration);
        self.record(state);
    }
}

/// [`XpbdResidual`]'s curve of one step from `base` with `iters` iterations of `solver`
/// (index 0 before any iteration), after an untimed step that leaves the solver prepared.
fn xpbd_curve(base: &Body, solver: &mut dyn Solver, iters: usize) -> Result<Vec<f64>, Error> {
    let params = StepParams {
        iterations: iters,
        ..Default::default()
    };
    step(&mut base.clone(), &params, solver, None)?;
    let mut rec = XpbdResidual {
        inner: solver,
        curve: Vec::with_capacity(iters + 1),
    };
    step(&mut base.clone(), &params, &mut rec, None)?;
    Ok(rec.curve)
}

/// One system of C15: measured rates and linearized radii.
struct System {
    name: String,
    measured: (f64, f64),
    linearized: Linearized,
    curves: (Vec<f64>, Vec<f64>),
}

/// The edge compliance of C15's cloth (m/N). The rigid cloth's rows are dependent, so its A is
/// singular (the claim reports its smallest eigenvalue) and its iteration matrices have an
/// eigenvalue 1 whose mode moves no particle, so no residual of positions shows it; this
/// compliance adds α̃ = compliance / h² to A's diagonal, a few percent of its w_i + w_j at the
/// claim's sizes, which makes A positive definite with its slowest mode within reach of the
/// claim's iterations.
pub const C15_CLOTH_COMPLIANCE: f32 = 1e-3;

/// C15's state of `scene`: the body with every distance constraint at `compliance`, warmed by
/// 10 steps of gs (docs/SCENES.md defaults) at that compliance.
fn c15_state(scene: &str, n: usize, compliance: f32) -> Result<Body, Error> {
    let (mut body, _) = build_body(scene, n, None, "natural")?;
    body.constraints_mut().distance.set_compliance(compliance);
    let mut gs = solver_core::GaussSeidel::new();
    for _ in 0..10 {
        step(&mut body, &StepParams::default(), &mut gs, None)?;
    }
    Ok(body)
}

fn system(
    ctx: &Ctx,
    scene: &str,
    n: usize,
    compliance: f32,
    iters: usize,
) -> Result<Result<System, String>, Error> {
    let base = match or_note(c15_state(scene, n, compliance))? {
        Ok(b) => b,
        Err(note) => return Ok(Err(note)),
    };
    let plain = SolverKind::Jacobi(JacobiOptions {
        average: Averaging::Off,
        omega: 1.0,
    });
    let mut gs = SolverKind::Gs.build(&ctx.tuning.options(1))?;
    let mut jac = plain.build(&ctx.tuning.options(1))?;
    let cg = xpbd_curve(&base, gs.as_mut(), iters)?;
    // Plain Jacobi may diverge (its radius above 1, as on the cloth): that is a measurement,
    // recorded as an infinite rate, not a failure of the claim.
    let (cj, diverged) = match or_note(xpbd_curve(&base, jac.as_mut(), iters))? {
        Ok(c) => (c, None),
        Err(note) => (Vec::new(), Some(note)),
    };
    // The iteration converges to the end of a fully converged step: linearize there.
    let mut converged = base.clone();
    let params = StepParams {
        iterations: 4 * iters,
        ..Default::default()
    };
    step(&mut converged, &params, gs.as_mut(), None)?;
    let lin = linearized(&converged, params.substep_dt() as f64);
    // A residual that ends at or above its start did not converge, whatever its tail does
    // (a diverging linear mode saturates in the nonlinear constraints and wanders).
    let grew = match (cj.first(), cj.last()) {
        (Some(&r0), Some(&r1)) => (r1 >= r0).then_some(r1 / r0),
        _ => None,
    };
    let rate_j = if diverged.is_some() || grew.is_some() {
        f64::INFINITY
    } else {
        asymptotic_rate(&cj)
    };
    let name = format!("{scene} n={n}, compliance {compliance} m/N");
    Ok(Ok(System {
        name: match (&diverged, grew) {
            (Some(note), _) => format!("{name} (plain Jacobi diverged: {note})"),
            (None, Some(g)) => format!(
                "{name} (plain Jacobi did not converge: its residual after {iters} iterations is {g:.1} times its start)"
            ),
            (None, None) => name,
        },
        measured: (asymptotic_rate(&cg), rate_j),
        linearized: lin,
        curves: (cg, cj),
    }))
}

/// The linearization of `scene` at the end of a fully converged step (`iters` gs iterations)
/// from [`c15_state`] at `compliance`.
fn converged_linearization(
    scene: &str,
    n: usize,
    compliance: f32,
    iters: usize,
) -> Result<Linearized, Error> {
    let mut body = c15_state(scene, n, compliance)?;
    let params = StepParams {
        iterations: iters,
        ..Default::default()
    };
    step(
        &mut body,
        &params,
        &mut solver_core::GaussSeidel::new(),
        None,
    )?;
    Ok(linearized(&body, params.substep_dt() as f64))
}

/// C15: rho(GS) = rho(J)^2 on a consistently ordered system (the rope: its constraint graph is
/// a path, so A is tridiagonal), and how far it holds on the cloth (which is not).
pub fn c15(ctx: &Ctx) -> Result<Claim, Error> {
    let text = "rho(GS) = rho(J)^2 for plain (unaveraged, omega 1) Jacobi and Gauss-Seidel on a consistently ordered system: tested on the rope (constraint graph a path, A tridiagonal), with the cloth (not consistently ordered) reported beside it";
    let iters = if ctx.quick { 200 } else { 400 };
    let rope = match system(ctx, "rope", 16, 0.0, iters)? {
        Ok(s) => s,
        Err(note) => return Ok(Claim::untestable("C15", "Young 1954", text, note)),
    };
    let cloth_n = if ctx.quick { 5 } else { 7 };
    let cloth = system(ctx, "cloth", cloth_n, C15_CLOTH_COMPLIANCE, iters)?;
    // The rigid cloth, linearized the same way, shows why the cloth is run with compliance.
    let rigid = or_note(converged_linearization("cloth", cloth_n, 0.0, 4 * iters))?;
    let path = ctx.path("c15.csv");
    let mut w = RowWriter::create(
        &path,
        &[
            "system",
            "rate_gs_measured",
            "rate_jacobi_measured",
            "rho_gs_linearized",
            "rho_jacobi_linearized",
            "lambda_min",
            "lambda_max",
        ],
    )?;
    let mut rows: Vec<(String, (f64, f64), Linearized)> =
        vec![(rope.name.clone(), rope.measured, rope.linearized)];
    if let Ok(c) = &cloth {
        rows.push((c.name.clone(), c.measured, c.linearized));
    }
    if let Ok(l) = &rigid {
        rows.push((
            format!("cloth n={cloth_n}, compliance 0 (linearized only)"),
            (f64::NAN, f64::NAN),
            *l,
        ));
    }
    for (name, m, l) in &rows {
        w.record(&[
            name.clone(),
            m.0.to_string(),
            m.1.to_string(),
            l.rho_gs.to_string(),
            l.rho_j.to_string(),
            l.lambda_min.to_string(),
            l.lambda_max.to_string(),
        ])?;
    }
    // Every iteration of every measured curve, for the tails the rates are taken over.
    let curves_path = ctx.path("c15_curves.csv");
    let mut cw = RowWriter::create(&curves_path, &["system", "solver", "iteration", "residual"])?;
    let mut measured = vec![&rope];
    if let Ok(c) = &cloth {
        measured.push(c);
    }
    for s in measured {
        for (solver, c) in [("gs", &s.curves.0), ("plain jacobi", &s.curves.1)] {
            for (k, v) in c.iter().enumerate() {
                cw.record(&[s.name.clone(), solver.into(), k.to_string(), v.to_string()])?;
            }
        }
    }
    let radii = |l: &Linearized| (l.rho_gs, l.rho_j);
    let plot = Plot::new(
        "C15: plain Jacobi and Gauss-Seidel inside one step, rope n=16",
        "iterations in the step",
        "constraint residual (RMS C / mean rest length)",
        vec![
            Series::curve("gs", &rope.curves.0, usize::MAX),
            Series::curve("plain jacobi", &rope.curves.1, usize::MAX),
        ],
    )
    .log_y();
    let mut files = ctx.files(path, &[(&plot, "c15")])?;
    files.push(curves_path);
    let ratio = |(gs, j): (f64, f64)| gs.ln() / (2.0 * j.ln());
    let posed = |l: &Linearized| {
        format!(
            "A's eigenvalues {:.3e} to {:.3e} (condition number {:.3e})",
            l.lambda_min,
            l.lambda_max,
            l.lambda_max / l.lambda_min
        )
    };
    let show = |s: &System| {
        let l = &s.linearized;
        format!(
            "{}: {}; measured rate gs {:.5}, plain jacobi {:.5} (jacobi² {:.5}; log ratio {:.3}); linearized radii gs {:.5}, jacobi {:.5} (jacobi² {:.5}; log ratio {:.3})",
            s.name,
            posed(l),
            s.measured.0,
            s.measured.1,
            s.measured.1 * s.measured.1,
            ratio(s.measured),
            l.rho_gs,
            l.rho_j,
            l.rho_j * l.rho_j,
            ratio(radii(l))
        )
    };
    let rigid_text = match &rigid {
        Ok(l) => {
            let kept = l.rho_gs.powi(iters as i32);
            format!(
                "the rigid cloth (compliance 0), linearized the same way: {}, Gauss-Seidel radius {:.5}, whose mode keeps {kept:.3} of itself over {iters} iterations{}",
                posed(l),
                l.rho_gs,
                if kept > 0.5 {
                    ", so no tail over them measures that radius: which is why the cloth is run with compliance"
                } else {
                    ""
                }
            )
        }
        Err(note) => format!("the rigid cloth not linearized: {note}"),
    };
    Ok(Claim {
        id: "C15",
        source: "Young 1954",
        text,
        measured: format!(
            "one step (h = dt = 1/60 s, one substep) from a state warmed by 10 gs steps at the system's compliance, {iters} iterations; the system is the one XPBD iterates, A = J W Jᵀ + α̃ (α̃ = compliance / h²) over the distance constraints; rates are the geometric-mean contraction per iteration over the tail of the curve of RMS(C + α̃ λ) (what the update drives to 0; C itself with compliance 0); radii are the largest |eigenvalue| of the iteration matrices of that A linearized at the converged step (nalgebra, dense), and A's smallest eigenvalue above 0 shows the system well posed. {}. {}; {rigid_text}",
            show(&rope),
            match &cloth {
                Ok(c) if c.linearized.rho_j > 1.0 => format!(
                    "{} (plain Jacobi's radius above 1: it does not converge there)",
                    show(c)
                ),
                Ok(c) => show(c),
                Err(note) => format!("cloth not run: {note}"),
            }
        ),
        files,
        ..Claim::measured()
    })
}

/// C16: plain PBD (stiffness factor k per projection, no k' correction) has a stiffness that
/// depends on the iteration count and on dt.
pub fn c16(ctx: &Ctx) -> Result<Claim, Error> {
    let text = "plain PBD (k = 0.5 per projection, no k' correction) on the 16 x 16 cloth: the late mean stretch at 2-16 iterations (dt 1/60) and at dt 1/30-1/120 (8 iterations)";
    const K: f32 = 0.5;
    let n = 16;
    let sim_s = if ctx.quick { 1.0 } else { 2.0 };
    let its = [2usize, 4, 8, 16];
    let dts = [1.0f32 / 30.0, 1.0 / 60.0, 1.0 / 120.0];
    let path = ctx.path("c16.csv");
    let mut w = RowWriter::create(&path, &[&["sweep"][..], &LATE_COLUMNS].concat())?;
    let mut run = |sweep: &str, it: usize, dt: f32| -> Result<Result<f64, String>, Error> {
        let pbd = Stiffness::Pbd {
            k: K,
            iteration_corrected: false,
        };
        let (t, s) = match late_stretch(ctx, n, pbd, None, (it, dt), sim_s)? {
            Ok(r) => r,
            Err(note) => return Ok(Err(note)),
        };
        w.record(&[&[sweep.to_string()][..], &late_cells((it, dt), &t, s)].concat())?;
        Ok(Ok(s))
    };
    let mut by_it = Vec::new();
    for &it in &its {
        match run("iterations", it, 1.0 / 60.0)? {
            Ok(s) => by_it.push(s),
            Err(note) => return Ok(Claim::untestable("C16", "Müller 2007", text, note)),
        }
    }
    let mut by_dt = Vec::new();
    for &dt in &dts {
        by_dt.push(run("dt", 8, dt)?.unwrap_or(f64::NAN));
    }
    let (si, sd) = (spread(&by_it), spread(&by_dt));
    let plot = Plot::new(
        format!("C16: plain PBD (k={K}) late mean stretch, cloth n={n}"),
        "iterations per step (dt 1/60)",
        "mean stretch over the second half of the run",
        vec![Series::xy(
            format!("PBD k={K}"),
            its.iter().map(|&i| i as f64),
            &by_it,
        )],
    )
    .log_x()
    .log_y();
    let files = ctx.files(path, &[(&plot, "c16")])?;
    Ok(Claim {
        id: "C16",
        source: "Müller 2007",
        text,
        measured: format!(
            "{sim_s} simulated seconds from rest, stretch averaged over the second half: at iterations {its:?}: {} (spread {si:.2}); at dt 1/30, 1/60, 1/120: {} (spread {sd:.2})",
            fmt(&by_it),
            fmt(&by_dt)
        ),
        files,
        ..Claim::measured()
    })
}

/// The residual after `k` iterations (or the last one measured).
fn at(curve: &[f64], k: usize) -> f64 {
    curve
        .get(k.min(curve.len().saturating_sub(1)))
        .copied()
        .unwrap_or(f64::NAN)
}

/// C17: the order of the Gauss-Seidel sweep (natural, shuffled, graph-colored) changes its
/// convergence little at equal iterations.
pub fn c17(ctx: &Ctx) -> Result<Claim, Error> {
    let text = "Gauss-Seidel in natural, shuffled and graph-colored order on the cloth, one step from the common state: the iterations each order needs to reach natural order's residual after 20 (the whole curves plotted); the residual after 20, the rise and the asymptotic rate are reported";
    const K: usize = 20;
    let mut curves = Vec::new();
    for name in ["gs", "gs-shuffled", "colored"] {
        match ctx.curve(name)? {
            Ok(c) => curves.push((name.to_string(), c)),
            Err(note) => {
                return Ok(Claim::untestable(
                    "C17",
                    "Vivace 2016",
                    text,
                    format!("{name}: {note}"),
                ))
            }
        }
    }
    let path = ctx.path("c17.csv");
    let mut w = RowWriter::create(
        &path,
        &[
            "order",
            "residual_at_20",
            "residual_at_end",
            "asymptotic_rate",
            "peak_over_start",
            "first_below_start",
        ],
    )?;
    // The whole curve against iterations from the start: an order may first raise the
    // residual above its start, which the residual at 20 alone hides.
    let curves_path = ctx.path("c17_curves.csv");
    let mut cw = RowWriter::create(
        &curves_path,
        &["order", "iteration", "residual", "residual_over_start"],
    )?;
    let peak = |c: &[f64]| c.iter().skip(1).copied().fold(0.0f64, f64::max) / c[0];
    let below = |c: &[f64]| c.iter().skip(1).position(|&r| r < c[0]).map(|p| p + 1);
    let base_res = at(&curves[0].1, K);
    let base_rate = asymptotic_rate(&curves[0].1).ln();
    let mut figs = Vec::new();
    for (name, c) in &curves {
        let r = asymptotic_rate(c);
        let (p, first) = (peak(c), below(c));
        w.record(&[
            name.clone(),
            at(c, K).to_string(),
            c.last().copied().unwrap_or(f64::NAN).to_string(),
            r.to_string(),
            p.to_string(),
            first.map_or("never".into(), |k| k.to_string()),
        ])?;
        for (k, v) in c.iter().enumerate() {
            cw.record(&[
                name.clone(),
                k.to_string(),
                v.to_string(),
                (v / c[0]).to_string(),
            ])?;
        }
        let res_ratio = at(c, K) / base_res;
        let rate_ratio = r.ln() / base_rate;
        figs.push(format!(
            "{name}: peak {p:.2}x its start, first below the start at iteration {}, residual after {K} {:.3e} ({res_ratio:.2}x natural's), rate {r:.5} (log-rate {rate_ratio:.2}x natural's)",
            first.map_or("never".into(), |k| k.to_string()),
            at(c, K)
        ));
    }
    let mut series = Series::curves(&curves, usize::MAX);
    let iters = curves.iter().map(|c| c.1.len()).max().unwrap_or(1) as f64;
    series.push(crate::output::plot::level(
        "residual before the step",
        (0.0, iters),
        curves[0].1[0],
        curves.len(),
    ));
    if let Some(&l) = curves[0].1.get(K) {
        series.push(crate::output::plot::level(
            &format!("level: natural order's residual after {K}"),
            (0.0, iters),
            l,
            curves.len() + 1,
        ));
    }
    let plot = Plot {
        title: format!("C17: Gauss-Seidel orderings, cloth n={}", ctx.scale.conv_n),
        x_label: "iterations in the step".into(),
        y_label: "constraint residual (RMS C / mean rest length)".into(),
        y_log: true,
        series,
        markers: vec![crate::output::plot::Marker {
            x: K as f64,
            label: format!("{K} iterations (compared)"),
        }],
        ..Default::default()
    };
    let mut files = ctx.files(path, &[(&plot, "c17")])?;
    files.push(curves_path);
    Ok(Claim {
        id: "C17",
        source: "Vivace 2016",
        text,
        measured: format!("{}, one step from the common state, {} iterations (c17_curves.csv has every iteration): {}", ctx.conv_cloth(), ctx.scale.conv_iters, figs.join("; ")),
        files,
        ..Claim::measured()
    })
}

/// C18: plain Jacobi needs averaging or under-relaxation to converge.
pub fn c18(ctx: &Ctx) -> Result<Claim, Error> {
    let text = "Jacobi on the cloth, one step from the common state, with and without averaging, over relaxations omega 0.25-1.75: plain (unaveraged) Jacobi at omega = 1 does not converge, and averaging makes it converge";
    let base = match ctx.base()? {
        Ok(b) => b,
        Err(note) => return Ok(Claim::untestable("C18", "Macklin 2014", text, note)),
    };
    let omegas = [0.25f32, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75];
    let iters = ctx.scale.conv_iters;
    let path = ctx.path("c18.csv");
    let mut w = RowWriter::create(
        &path,
        &[
            "averaging",
            "omega",
            "residual_start",
            "residual_end",
            "asymptotic_rate",
            "status",
        ],
    )?;
    let mut rates: Vec<(Averaging, f32, f64)> = Vec::new();
    let mut series = Vec::new();
    for (ai, average) in [Averaging::Off, Averaging::Particle, Averaging::Constraint]
        .into_iter()
        .enumerate()
    {
        let mut pts = Vec::new();
        for &omega in &omegas {
            let jacobi = SolverKind::Jacobi(JacobiOptions { average, omega });
            let mut s = jacobi.build(&ctx.tuning.options(1))?;
            let (rate, status, r0, r1) = match or_note(residual_curve(&base, s.as_mut(), iters))? {
                Ok(c) => {
                    let end = c.last().copied().unwrap_or(f64::NAN);
                    let r = if end.is_finite() {
                        (end / c[0]).powf(1.0 / iters as f64)
                    } else {
                        f64::INFINITY
                    };
                    (r, "ok".to_string(), c[0], end)
                }
                Err(note) => (f64::INFINITY, note, f64::NAN, f64::NAN),
            };
            w.record(&[
                format!("{average:?}"),
                omega.to_string(),
                r0.to_string(),
                r1.to_string(),
                rate.to_string(),
                status,
            ])?;
            pts.push((omega as f64, rate.min(10.0)));
            rates.push((average, omega, rate));
        }
        series.push(Series {
            name: format!("averaging {average:?}"),
            points: pts,
            color: Some(ai),
            ..Default::default()
        });
    }
    series.push(Series {
        name: "rate 1 (no convergence above)".into(),
        points: vec![(0.25, 1.0), (1.75, 1.0)],
        dashed: true,
        color: Some(7),
    });
    let plot = Plot::new(
        format!(
            "C18: Jacobi's mean contraction per iteration over {iters} iterations, cloth n={}",
            ctx.scale.conv_n
        ),
        "relaxation omega",
        "(residual at the end / at the start)^(1/iterations)",
        series,
    );
    let files = ctx.files(path, &[(&plot, "c18")])?;
    Ok(Claim {
        id: "C18",
        source: "Macklin 2014",
        text,
        measured: format!(
            "cloth n={}, one step from the common state, {iters} iterations; mean contraction per iteration: {}",
            ctx.scale.conv_n,
            rates.iter().map(|(a, o, r)| format!("{a:?} omega {o}: {r:.4}")).collect::<Vec<_>>().join(", ")
        ),
        files,
        ..Claim::measured()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_xpbd_residual_is_the_step_loops_without_compliance() {
        let base = c15_state("rope", 8, 0.0).unwrap();
        let mut gs = solver_core::GaussSeidel::new();
        let ours = xpbd_curve(&base, &mut gs, 6).unwrap();
        let loops = residual_curve(&base, &mut gs, 6).unwrap();
        assert_eq!(ours.len(), loops.len());
        for (a, b) in ours.iter().zip(&loops) {
            assert!((a - b).abs() <= 1e-6 * b.max(1e-12), "{ours:?} {loops:?}");
        }
    }
}

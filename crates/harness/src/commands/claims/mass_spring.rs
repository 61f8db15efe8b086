//! C7, the mass-spring integrator claim: for each integrator (explicit Euler, semi-implicit
//! Euler, velocity Verlet, RK4) the largest spring stiffness that stays stable at a fixed dt,
//! found by `scenes::mass_spring::largest_stable_stiffness` (bracketing, then bisection in
//! log space to about 1%; "stable" = finite and energy never above its start by more than
//! M·|g|·(bounding diagonal)). Confirmed if k_max(semi-implicit) >= 10 k_max(explicit) and
//! k_max(Verlet) > k_max(explicit), partly if one of the two holds, refuted if neither.

use super::claim::{Claim, Ctx};
use crate::output::csv::RowWriter;
use crate::output::plot::{Plot, Series};
use crate::setup::Error;
use scenes::mass_spring::{largest_stable_stiffness, Integrator};

/// Where C7 comes from.
pub const SOURCE: &str = "Unity soft-body tutorial";
/// C7 as stated.
pub const TEXT: &str = "\"for mass-spring systems, semi-implicit Euler is an order of magnitude more stable than explicit Euler; Verlet is more stable than explicit Euler\" (largest stable stiffness at a fixed dt, per integrator, RK4 included)";

/// C7: the largest stable stiffness per integrator on the cloth at dt = 1/60.
pub fn c7(ctx: &Ctx) -> Result<Claim, Error> {
    let n = if ctx.quick { 6 } else { 8 };
    let steps = if ctx.quick { 200 } else { 600 };
    let dt = 1.0f32 / 60.0;
    let body = scenes::cloth(n)?;
    let path = ctx.path("c7.csv");
    let mut w = RowWriter::create(
        &path,
        &[
            "scene",
            "n",
            "integrator",
            "dt",
            "damping",
            "steps",
            "k_max_n_per_m",
        ],
    )?;
    let mut k = Vec::new();
    for integrator in Integrator::ALL {
        let kmax = largest_stable_stiffness(&body, integrator, dt, 0.0, steps)?;
        w.record(&[
            "cloth".to_string(),
            n.to_string(),
            integrator.name().to_string(),
            dt.to_string(),
            "0".to_string(),
            steps.to_string(),
            kmax.to_string(),
        ])?;
        k.push((integrator, kmax));
    }
    let of = |i: Integrator| k.iter().find(|p| p.0 == i).map_or(f32::NAN, |p| p.1);
    let (ex, si, ve, rk) = (
        of(Integrator::ExplicitEuler),
        of(Integrator::SemiImplicitEuler),
        of(Integrator::Verlet),
        of(Integrator::Rk4),
    );
    let plot = Plot::new(
        format!("C7: largest stable spring stiffness per integrator, cloth n={n}, dt 1/60"),
        "integrator (1 explicit Euler, 2 semi-implicit Euler, 3 Verlet, 4 RK4)",
        "largest stable stiffness (N/m)",
        // Four categories, not a sequence: one dot each, no line between them.
        [ex, si, ve, rk]
            .iter()
            .zip(Integrator::ALL)
            .enumerate()
            .map(|(i, (&k, integrator))| {
                crate::output::plot::dot(
                    &format!("{}: {k:.3e} N/m", integrator.name()),
                    (i as f64 + 1.0, k as f64),
                    i,
                )
            })
            .chain([Series {
                name: "10 x explicit Euler (the claim's order of magnitude)".into(),
                points: vec![(1.0, 10.0 * ex as f64), (4.0, 10.0 * ex as f64)],
                dashed: true,
                color: Some(4),
            }])
            .collect(),
    )
    .log_y();
    let files = ctx.files(path, &[(&plot, "c7")])?;
    Ok(Claim {
        id: "C7",
        source: SOURCE,
        text: TEXT,
        measured: format!(
            "mass-spring cloth n={n} (structural, shear and bend springs), dt = 1/60, no damping, {steps} steps: largest stable stiffness explicit Euler {ex:.3} N/m, semi-implicit Euler {si:.3} N/m ({:.0}x explicit), Verlet {ve:.3} N/m, RK4 {rk:.3} N/m. Explicit Euler amplifies every oscillation mode each step, so its k_max is where the growth over the {steps}-step horizon stays within the energy bound: a longer run gives a lower k_max (the figure is horizon-bound), while the symplectic integrators have a sharp limit independent of the horizon",
            si / ex
        ),
        files,
        ..Claim::measured()
    })
}

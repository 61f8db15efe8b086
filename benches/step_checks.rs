//! What the step's safety checks cost: the input check (folded into the prediction's pass)
//! and the stretch figure of the `StepReport` (a pass over the structural distance
//! constraints), on the docs/SCENES.md cloth at n = 32 (defaults: dt = 1/60, 1 substep, 8
//! iterations) with the reference Gauss-Seidel and the colored solver (one thread).
//!
//! The variants step identical copies of the body (the checks change no bit of the physics),
//! interleaved: every round times a batch of steps of each variant, in an order that rotates
//! from round to round, so that the machine's drift (other builds on a shared VM) falls on
//! all of them alike. Printed: the median over rounds of each variant's time per step, and
//! the median over rounds of each variant's time over the unchecked one's in the same round.
//! Run with `cargo bench --bench step_checks`.

use solver_core::step::step_variant_for_bench;
use solver_core::{Body, Solver, StepParams};
use sparse::{SolverKind, SolverOptions};
use std::hint::black_box;
use std::time::Instant;

const ROUNDS: usize = 41;
const STEPS: usize = 100;
/// (label, input check, stretch figure).
const VARIANTS: [(&str, bool, bool); 4] = [
    ("unchecked", false, false),
    ("input check", true, false),
    ("stretch figure", false, true),
    ("both (step)", true, true),
];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument, if any, picks the solvers.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let params = StepParams::default();
    for kind in [SolverKind::Gs, SolverKind::Colored(Default::default())] {
        let name = kind.name();
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let mut base = scenes::cloth(32).expect("cloth");
        let mut warm = kind.build(&SolverOptions::default()).expect("solver");
        for _ in 0..20 {
            step_variant_for_bench(&mut base, &params, warm.as_mut(), true, true).expect("step");
        }
        let mut runs: Vec<(Body, Box<dyn Solver>)> = VARIANTS
            .iter()
            .map(|_| {
                let s = kind.build(&SolverOptions::default()).expect("solver");
                (base.clone(), s)
            })
            .collect();
        let mut times = vec![Vec::new(); VARIANTS.len()];
        let mut ratios = vec![Vec::new(); VARIANTS.len()];
        for round in 0..ROUNDS {
            let mut per_step = vec![0.0f64; VARIANTS.len()];
            for k in 0..VARIANTS.len() {
                let v = (k + round) % VARIANTS.len();
                let (_, input, stretch) = VARIANTS[v];
                let (body, solver) = &mut runs[v];
                let t0 = Instant::now();
                for _ in 0..STEPS {
                    let r = step_variant_for_bench(body, &params, solver.as_mut(), input, stretch);
                    black_box(r.expect("step"));
                }
                per_step[v] = t0.elapsed().as_secs_f64() / STEPS as f64;
            }
            for v in 0..VARIANTS.len() {
                times[v].push(per_step[v] * 1e6);
                ratios[v].push(per_step[v] / per_step[0]);
            }
        }
        // The checks change nothing: every copy is at the same state.
        let x0 = &runs[0].0.particles().x();
        assert!(
            runs.iter().all(|(b, _)| &b.particles().x() == x0),
            "the variants drifted apart"
        );
        println!(
            "step_checks/{name} cloth n=32 ({} constraints), {ROUNDS} rounds of {STEPS} steps:",
            base.constraints().len()
        );
        for (v, (label, _, _)) in VARIANTS.iter().enumerate() {
            println!(
                "  {label:>15}: median {:8.2} us/step, median ratio to unchecked {:.4}",
                median(times[v].clone()),
                median(ratios[v].clone())
            );
        }
    }
}

//! The GPU solvers against the CPU solvers of the same name, on the same scenes and steps.
//! Every test prints `skipped: no GPU adapter` and returns when no adapter exists.

use gpu::{Gpu, GpuBody, GpuError, SKIP_MESSAGE};
use solver_core::{step, Body, Collider, StepParams};
use sparse::{JacobiOptions, Kernel, SolverKind, SolverOptions};

const COLORED: SolverKind = SolverKind::Colored(sparse::ColoredOptions::DEFAULT);
const JACOBI: SolverKind = SolverKind::Jacobi(JacobiOptions::DEFAULT);
const CHEBYSHEV: SolverKind = SolverKind::Chebyshev(sparse::ChebyshevOptions::DEFAULT);

/// The adapter, or `None` (after printing the skip message) when there is none.
fn adapter() -> Option<Gpu> {
    match Gpu::new() {
        Ok(gpu) => Some(gpu),
        Err(GpuError::NoAdapter(why)) => {
            println!("{SKIP_MESSAGE} ({why})");
            None
        }
        Err(e) => panic!("an adapter exists but its device failed: {e}"),
    }
}

/// Mean and largest distance between the world positions of `a` and `b` (the CPU body follows
/// itself and moves its origin; the device holds world coordinates).
fn difference(a: &Body, b: &Body) -> (f64, f32) {
    let mut sum = 0.0f64;
    let mut max = 0.0f32;
    for i in 0..a.len() {
        let d = (a.world_position(i) - b.world_position(i)).length() as f32;
        sum += d as f64;
        max = max.max(d);
    }
    (sum / a.len() as f64, max)
}

/// Steps `body` on the CPU and on the GPU with `kind` side by side for `steps` steps of
/// `params`; returns the (mean, largest) position difference after the first step and after
/// the last.
fn side_by_side_with(
    gpu: &Gpu,
    mut cpu: Body,
    kind: SolverKind,
    params: &StepParams,
    steps: usize,
) -> ((f64, f32), (f64, f32)) {
    let opts = SolverOptions {
        kernel: Kernel::Scalar,
        ..Default::default()
    };
    let params = *params;
    let mut on_gpu = GpuBody::new(gpu, &cpu, kind).unwrap();
    let mut read = cpu.clone();
    let mut cpu_solver = kind.build(&opts).unwrap();
    let mut first = (0.0, 0.0);
    for s in 0..steps {
        step(&mut cpu, &params, cpu_solver.as_mut(), None).unwrap();
        on_gpu.step(&params).unwrap();
        if s == 0 {
            on_gpu.read_into(&mut read).unwrap();
            first = difference(&cpu, &read);
        }
    }
    on_gpu.read_into(&mut read).unwrap();
    (first, difference(&cpu, &read))
}

/// [`side_by_side_with`] the default step and options.
fn side_by_side(gpu: &Gpu, cpu: Body, kind: SolverKind, steps: usize) -> ((f64, f32), (f64, f32)) {
    let params = StepParams::default();
    side_by_side_with(gpu, cpu, kind, &params, steps)
}

/// After one step the GPU and CPU states agree within this distance (m) at every particle:
/// float tolerance (lavapipe gives the CPU's bits; a device that fuses multiply-adds differs in
/// the last bits).
const ONE_STEP: f32 = 1e-5;

/// After 100 steps the mean distance (m) between the GPU and CPU states stays below this: 0.1%
/// of the cloth's 1 m side.
const HUNDRED_STEPS_MEAN: f64 = 1e-3;

/// Chebyshev's bound after 100 steps: its norms are f32 sums on the device (f64 on the CPU),
/// so the probe's ρ and the restarts may differ slightly (lavapipe: 1.1e-3 m at n = 32).
const CHEBYSHEV_HUNDRED_STEPS_MEAN: f64 = 5e-3;

/// The 16 x 16 cloth falling on a sphere above a ground plane (friction and restitution on).
fn cloth_on_sphere() -> Body {
    let mut body = scenes::cloth(16).unwrap();
    body.add_collider(Collider::ground(0.5, 0.3)).unwrap();
    let centre = solver_core::glam::Vec3::new(0.5, 0.6, 0.5);
    body.add_collider(Collider::sphere(centre, 0.25).unwrap())
        .unwrap();
    body
}

/// Checks the one-step and hundred-step bounds of `kind` on the GPU against the CPU's.
fn check_against_cpu(gpu: &Gpu, body: Body, kind: SolverKind, mean_bound: f64) {
    let name = kind.name();
    let (first, last) = side_by_side(gpu, body, kind, 100);
    println!("{name}: after 1 step (mean, max) {first:?}, after 100 {last:?}");
    assert!(first.1 <= ONE_STEP, "{name} after one step: {first:?}");
    assert!(last.0 <= mean_bound, "{name} after 100 steps: {last:?}");
}

#[test]
fn colored_matches_the_cpu_colored_solver_with_the_scalar_kernel() {
    let Some(gpu) = adapter() else { return };
    let cloth = scenes::cloth(32).unwrap();
    check_against_cpu(&gpu, cloth, COLORED, HUNDRED_STEPS_MEAN);
}

#[test]
fn jacobi_matches_the_cpu_jacobi_solver() {
    let Some(gpu) = adapter() else { return };
    let cloth = scenes::cloth(32).unwrap();
    check_against_cpu(&gpu, cloth, JACOBI, HUNDRED_STEPS_MEAN);
}

#[test]
fn chebyshev_stays_close_to_the_cpu_chebyshev_solver() {
    let Some(gpu) = adapter() else { return };
    let cloth = scenes::cloth(32).unwrap();
    let bound = CHEBYSHEV_HUNDRED_STEPS_MEAN;
    check_against_cpu(&gpu, cloth, CHEBYSHEV, bound);
}

#[test]
fn contacts_with_a_sphere_and_the_ground_match_the_cpu() {
    let Some(gpu) = adapter() else { return };
    for kind in [COLORED, JACOBI] {
        check_against_cpu(&gpu, cloth_on_sphere(), kind, HUNDRED_STEPS_MEAN);
    }
    // The sphere was met: some particle rests on its surface.
    let mut body = cloth_on_sphere();
    let mut on_gpu = GpuBody::new(&gpu, &body, COLORED).unwrap();
    for _ in 0..100 {
        on_gpu.step(&StepParams::default()).unwrap();
    }
    on_gpu.read_into(&mut body).unwrap();
    let centre = solver_core::glam::Vec3::new(0.5, 0.6, 0.5);
    let nearest = body
        .particles()
        .x()
        .iter()
        .map(|p| (p.xyz() - centre).length())
        .fold(f32::INFINITY, f32::min);
    assert!(
        (nearest - 0.25).abs() < 0.01,
        "nearest particle at {nearest} from the centre"
    );
}

#[test]
fn two_gpu_runs_give_the_same_bits() {
    let Some(gpu) = adapter() else { return };
    for kind in [COLORED, JACOBI, CHEBYSHEV] {
        let run = || {
            let body = cloth_on_sphere();
            let mut b = GpuBody::new(&gpu, &body, kind).unwrap();
            for _ in 0..50 {
                b.step(&StepParams::default()).unwrap();
            }
            b.read_positions().unwrap()
        };
        let (a, b) = (run(), run());
        let bits =
            |v: &[[f32; 4]]| -> Vec<u32> { v.iter().flatten().map(|c| c.to_bits()).collect() };
        assert_eq!(bits(&a), bits(&b), "{kind}");
    }
}

#[test]
fn a_body_with_bending_or_wind_is_refused_not_run() {
    let Some(gpu) = adapter() else { return };
    let flag = scenes::flag(8).unwrap();
    let err = GpuBody::new(&gpu, &flag, COLORED);
    let message = err.unwrap_err().to_string();
    assert!(
        message.contains("not supported on the GPU backend"),
        "{message}"
    );
}

#[test]
fn substeps_damping_pbd_stiffness_attachments_and_relaxation_match_the_cpu() {
    let Some(gpu) = adapter() else { return };
    let params = StepParams {
        substeps: 2,
        damping: 0.5,
        stiffness: solver_core::Stiffness::Pbd {
            k: 0.9,
            iteration_corrected: true,
        },
        ..Default::default()
    };
    let relaxed = SolverKind::Jacobi(JacobiOptions {
        omega: 0.8,
        average: sparse::Averaging::Particle,
    });
    for kind in [COLORED, relaxed] {
        let mut body = scenes::cloth(16).unwrap();
        body.attach(8).unwrap();
        let (first, last) = side_by_side_with(&gpu, body, kind, &params, 100);
        println!("{kind}: after 1 step {first:?}, after 100 {last:?}");
        assert!(first.1 <= ONE_STEP, "{kind}: {first:?}");
        assert!(last.0 <= HUNDRED_STEPS_MEAN, "{kind}: {last:?}");
    }
}

/// The 16 x 16 cloth with two tethers per free particle to its nearest pins (graph distance):
/// they act wherever the falling cloth stretches past its rest shape (22% without them).
fn tethered_cloth() -> Body {
    use solver_core::constraints::{TetherDistance, Tethers};
    let mut body = scenes::cloth(16).unwrap();
    let tethers = Tethers::from_pins(
        &body.particles().x(),
        &body.constraints().distance,
        TetherDistance::Graph,
        2,
        0.0,
    )
    .unwrap();
    body.constraints_mut().push_kind(Box::new(tethers));
    body.topology_changed();
    body
}

#[test]
fn tethers_match_the_cpu_on_every_gpu_solver() {
    let Some(gpu) = adapter() else { return };
    for (kind, bound) in [
        (COLORED, HUNDRED_STEPS_MEAN),
        (JACOBI, HUNDRED_STEPS_MEAN),
        (CHEBYSHEV, CHEBYSHEV_HUNDRED_STEPS_MEAN),
    ] {
        check_against_cpu(&gpu, tethered_cloth(), kind, bound);
    }
    // The tethers act: after 60 steps the worst tether excess (|x_i - x_a| - L over L) is far
    // smaller than on the same cloth run without them.
    let table = tethered_cloth().constraints().extra[0]
        .as_any()
        .downcast_ref::<solver_core::constraints::Tethers>()
        .unwrap()
        .clone();
    let worst_excess = |mut body: Body| {
        let mut on_gpu = GpuBody::new(&gpu, &body, COLORED).unwrap();
        for _ in 0..60 {
            on_gpu.step(&StepParams::default()).unwrap();
        }
        on_gpu.read_into(&mut body).unwrap();
        let x = &body.particles().x();
        table
            .pairs
            .iter()
            .zip(&table.rest)
            .map(|(&[i, a], &l)| ((x[i as usize].xyz() - x[a as usize].xyz()).length() - l) / l)
            .fold(0.0f32, f32::max)
    };
    let (free, tethered) = (
        worst_excess(scenes::cloth(16).unwrap()),
        worst_excess(tethered_cloth()),
    );
    println!("worst tether excess: {tethered} with tethers, {free} without");
    assert!(
        tethered < 0.5 * free,
        "{tethered} with tethers, {free} without"
    );
}

#[test]
fn a_tether_to_a_free_anchor_is_refused_by_colored_and_run_by_jacobi() {
    let Some(gpu) = adapter() else { return };
    use solver_core::constraints::{TetherDistance, Tethers};
    let mut body = scenes::cloth(8).unwrap();
    let tethers = Tethers::to_anchors(
        &body.particles().x(),
        &body.constraints().distance,
        &[10],
        TetherDistance::Euclidean,
        1,
        0.0,
    )
    .unwrap();
    body.constraints_mut().push_kind(Box::new(tethers));
    body.topology_changed();
    let err = GpuBody::new(&gpu, &body, COLORED);
    let message = err.unwrap_err().to_string();
    assert!(message.contains("not pinned"), "{message}");
    // Jacobi moves both ends of every constraint through its gather: a free anchor is fine.
    let (first, last) = side_by_side(&gpu, body, JACOBI, 100);
    assert!(first.1 <= ONE_STEP, "after one step: {first:?}");
    assert!(last.0 <= HUNDRED_STEPS_MEAN, "after 100 steps: {last:?}");
}

#[test]
fn residuals_read_back_per_iteration_match_the_cpu_step_loop() {
    let Some(gpu) = adapter() else { return };
    let params = StepParams {
        iterations: 12,
        ..Default::default()
    };
    let opts = SolverOptions {
        kernel: Kernel::Scalar,
        ..Default::default()
    };
    for kind in [COLORED, JACOBI, CHEBYSHEV] {
        let name = kind.name();
        let body = cloth_on_sphere();
        let mut cpu = body.clone();
        let mut cpu_residuals = Vec::new();
        let mut cpu_solver = kind.build(&opts).unwrap();
        step(
            &mut cpu,
            &params,
            cpu_solver.as_mut(),
            Some(&mut cpu_residuals),
        )
        .unwrap();
        let mut traced = GpuBody::new(&gpu, &body, kind).unwrap();
        let mut residuals = Vec::new();
        let report = traced
            .step_with_residuals(&params, body.constraints(), &mut residuals)
            .unwrap();
        assert_eq!(report.submissions, 1 + params.iterations, "{name}");
        assert_eq!(residuals.len(), cpu_residuals.len(), "{name}");
        for (k, (g, c)) in residuals.iter().zip(&cpu_residuals).enumerate() {
            assert!(
                (g - c).abs() <= 1e-4 * c.abs() + 1e-7,
                "{name} iteration {k}: GPU {g}, CPU {c}"
            );
        }
        // Tracing changes when the device is told to run, not what it runs.
        let mut plain = GpuBody::new(&gpu, &body, kind).unwrap();
        plain.step(&params).unwrap();
        assert_eq!(
            plain.read_positions().unwrap(),
            traced.read_positions().unwrap(),
            "{name}"
        );
        // A restart from the common state gives the first step again.
        traced.write_state(&body).unwrap();
        let mut again = Vec::new();
        traced
            .step_with_residuals(&params, body.constraints(), &mut again)
            .unwrap();
        if name != "chebyshev" {
            // Chebyshev's probe of ρ ran in the first step; the second extrapolates.
            assert_eq!(again, residuals, "{name}");
        }
    }
}

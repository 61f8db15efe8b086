//! `wobble step --backend gpu` and `wobble converge --backend gpu` end to end against the CPU
//! runs of the same scene. Skipped, with `skipped: no GPU adapter`, where no adapter exists
//! (and where the build has no `gpu` feature).

mod common;

use common::step_json as step;

/// Whether an adapter exists (printing the skip message when not).
fn have_adapter() -> bool {
    #[cfg(feature = "gpu")]
    match gpu::Gpu::new() {
        Ok(_) => true,
        Err(gpu::GpuError::NoAdapter(why)) => {
            println!("skipped: no GPU adapter ({why})");
            false
        }
        Err(e) => panic!("an adapter exists but its device failed: {e}"),
    }
    #[cfg(not(feature = "gpu"))]
    {
        println!("skipped: no GPU adapter (this build has no `gpu` feature)");
        false
    }
}

#[test]
fn gpu_colored_stretch_after_120_steps_is_within_5_percent_of_the_cpu() {
    if !have_adapter() {
        return;
    }
    let common = [
        "--scene", "cloth", "--n", "64", "--solver", "colored", "--json", "--warmup", "0",
        "--steps", "120",
    ];
    let cpu = step(&common);
    let gpu = step(&[&common[..], &["--backend", "gpu"]].concat());
    assert_eq!(gpu["backend"], "gpu");
    assert_eq!(cpu["backend"], "cpu");
    assert!(
        gpu["adapter"].as_str().is_some_and(|a| !a.is_empty()),
        "{gpu}"
    );
    assert_eq!(gpu["colors"], cpu["colors"]);
    let (c, g) = (
        cpu["stretch_mean"].as_f64().unwrap(),
        gpu["stretch_mean"].as_f64().unwrap(),
    );
    println!("stretch after 120 steps: cpu {c}, gpu {g}");
    assert!(c > 0.0 && (g - c).abs() <= 0.05 * c, "cpu {c}, gpu {g}");
}

#[test]
fn a_solver_the_gpu_lacks_is_refused_with_its_name() {
    if !have_adapter() {
        return;
    }
    let err = common::refused(&[
        "step",
        "--backend",
        "gpu",
        "--solver",
        "gauss-newton-gs",
        "--n",
        "8",
    ]);
    assert!(
        err.contains("unknown GPU solver 'gauss-newton-gs'"),
        "{err}"
    );
}

/// The residual column of converge.csv in `dir`, per solver, in row order.
fn residuals(dir: &std::path::Path) -> std::collections::BTreeMap<String, Vec<f64>> {
    let mut by_solver = std::collections::BTreeMap::<String, Vec<f64>>::new();
    let text = std::fs::read_to_string(dir.join("converge.csv")).unwrap();
    for line in text.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        by_solver
            .entry(cells[2].to_string())
            .or_default()
            .push(cells[4].parse().unwrap());
    }
    by_solver
}

#[test]
fn converge_on_the_gpu_gives_the_cpu_residual_curves() {
    if !have_adapter() {
        return;
    }
    let tmp = std::env::temp_dir().join(format!("wobble-converge-gpu-{}", std::process::id()));
    let run = |backend: &str| {
        let dir = tmp.join(backend);
        common::ok(&[
            "converge",
            "--n",
            "12",
            "--iters",
            "10",
            "--reps",
            "1",
            "--stretch-iters",
            "2",
            "--stretch-steps",
            "10",
            "--kernel",
            "scalar",
            "--solvers",
            "colored,jacobi,chebyshev",
            "--backend",
            backend,
            "--out",
            dir.to_str().unwrap(),
        ]);
        dir
    };
    let (cpu, gpu) = (residuals(&run("cpu")), residuals(&run("gpu")));
    assert_eq!(
        cpu.keys().collect::<Vec<_>>(),
        gpu.keys().collect::<Vec<_>>()
    );
    for (name, c) in &cpu {
        let g = &gpu[name];
        assert_eq!(g.len(), 11, "{name}: iteration 0 and 10 iterations");
        for (k, (g, c)) in g.iter().zip(c).enumerate() {
            assert!(
                (g - c).abs() <= 1e-4 * c.abs(),
                "{name} iteration {k}: GPU {g}, CPU {c}"
            );
        }
    }
    let stretch = std::fs::read_to_string(tmp.join("gpu/converge_stretch.csv")).unwrap();
    assert_eq!(
        stretch.lines().filter(|l| l.ends_with(",ok")).count(),
        3,
        "{stretch}"
    );
    // A CPU-only solver is refused with the list the GPU runs.
    let refused = tmp.join("refused");
    let err = common::refused(&[
        "converge",
        "--backend",
        "gpu",
        "--solvers",
        "gs",
        "--out",
        refused.to_str().unwrap(),
    ]);
    assert!(
        err.contains("colored, jacobi, chebyshev") && err.contains("'gs'"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

//! `wobble step --backend gpu` end to end against the CPU run of the same scene. Skipped, with
//! `skipped: no GPU adapter`, where no adapter exists (and where the build has no `gpu`
//! feature).

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
        "newton-gs",
        "--n",
        "8",
    ]);
    assert!(err.contains("unknown GPU solver 'newton-gs'"), "{err}");
}

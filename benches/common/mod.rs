//! Shared setup of the benches: their `main`, the Criterion configurations and the kernels the
//! running CPU has.
#![allow(dead_code)]

use criterion::Criterion;
use solver_core::simd::{cpu_features, Kernel, DETERMINISTIC};
use std::time::Duration;

/// The bench's `main`, running `targets` with Criterion configured by `config`.
macro_rules! bench_main {
    ($config:expr; $($target:path),+ $(,)?) => {
        criterion::criterion_group! {
            name = benches;
            config = $config;
            targets = $($target),+
        }
        criterion::criterion_main!(benches);
    };
}
pub(crate) use bench_main;

/// Criterion without plots: its plotters backend looks for system fonts, which a bare machine
/// lacks.
pub fn plain_config() -> Criterion {
    Criterion::default().without_plots()
}

/// [`plain_config`] with short warm-up and measurement, for benches of many groups.
pub fn short_config() -> Criterion {
    plain_config()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20)
}

/// Prints the CPU's features, the kernel `auto` runs and whether enhanced determinism is on.
pub fn print_cpu() {
    eprintln!(
        "CPU features: {}; auto runs {}; enhanced-determinism {}",
        cpu_features().join(" "),
        Kernel::best(),
        if DETERMINISTIC { "on" } else { "off" }
    );
}

/// The kernels this CPU has besides the scalar twin; the others printed as skipped, each
/// named as `name` gives it.
pub fn simd_kernels(name: impl Fn(Kernel) -> String) -> Vec<Kernel> {
    Kernel::CONCRETE[1..]
        .iter()
        .copied()
        .filter(|&k| {
            if !k.available() {
                eprintln!("{} skipped: this CPU lacks {}", name(k), k.needs());
            }
            k.available()
        })
        .collect()
}

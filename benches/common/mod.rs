//! Shared setup of the benches: their `main`, the Criterion configurations and the kernels the
//! running CPU has.
#![allow(dead_code)]

use criterion::measurement::WallTime;
use criterion::{BatchSize, BenchmarkGroup, Criterion, Throughput};
use solver_core::constraints::{project_generic, ConstraintKind};
use solver_core::Packed4;
use sparse::colored::simd::{cpu_features, Kernel, DETERMINISTIC};
use std::hint::black_box;
use std::time::Duration;

/// 1 / dt² at dt = 1/60, the projections' compliance scale.
pub const INV_DT2: f32 = 3600.0;

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

/// The benchmark group `name` over `kind`'s constraints (throughput: constraints per sweep),
/// with its benchmark `generic`: every constraint projected once in storage order by the
/// scalar update through `dyn ConstraintKind`. Returns the group, for the kind's other paths,
/// and the state each of their sweeps starts from (a copy of `x0` and zeroed multipliers).
pub fn projection_group<'a>(
    c: &'a mut Criterion,
    name: String,
    kind: &'a dyn ConstraintKind,
    x0: &'a [Packed4],
) -> (
    BenchmarkGroup<'a, WallTime>,
    impl Fn() -> (Vec<Packed4>, Vec<f32>) + Copy + 'a,
) {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(kind.len() as u64));
    let fresh = move || (x0.to_vec(), vec![0.0f32; kind.len()]);
    g.bench_function("generic", |b| {
        b.iter_batched_ref(
            fresh,
            |(x, l)| {
                let kind = black_box(kind);
                for (c, l) in l.iter_mut().enumerate() {
                    project_generic(kind, c, x, l, kind.compliance(c) * INV_DT2, 1.0);
                }
            },
            BatchSize::LargeInput,
        )
    });
    (g, fresh)
}

/// One batch of `body`'s distance constraints per color of the colored solver's greedy
/// coloring. The coloring numbers every constraint of the body, the distance constraints first,
/// so the other kinds' rows are left out; a color with no distance constraint gives no batch.
pub fn distance_batches(body: &solver_core::Body) -> Vec<sparse::colored::simd::EdgeBatch> {
    let (distance, particles) = (&body.constraints().distance, body.particles().x().len());
    let inc = sparse::Incidence::new(body.constraints(), particles).expect("incidence");
    let coloring = sparse::Coloring::greedy(&inc);
    (0..coloring.colors())
        .map(|k| {
            let rows: Vec<u32> = coloring
                .color(k)
                .iter()
                .copied()
                .filter(|&c| (c as usize) < distance.len())
                .collect();
            sparse::colored::simd::EdgeBatch::new(distance, &rows, particles)
                .expect("independent colors")
        })
        .filter(|b| !b.is_empty())
        .collect()
}

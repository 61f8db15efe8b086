//! The distance kernels of `colored` on every standard scene: every kernel the CPU has follows
//! the scalar twin (within rounding by default, bit for bit with `enhanced-determinism`), and
//! with `enhanced-determinism` the state hash after 500 steps is the same for every kernel and
//! for 1 and 2 threads. Kernels the CPU lacks are printed as skipped, by name.

use solver_core::{figures, step, Body, Scene, StepParams};
use sparse::{make_solver, Kernel, SolverOptions};

/// Scenes and sizes (jelly and cube add volume and tetrahedron constraints beside distances).
const SCENES: [(&str, usize); 5] = [
    ("cloth", 16),
    ("rope", 64),
    ("flag", 8),
    ("jelly", 2),
    ("cube", 3),
];

/// The kernels this CPU has; the others are printed as skipped.
fn available(test: &str) -> Vec<Kernel> {
    Kernel::CONCRETE
        .into_iter()
        .filter(|k| {
            if !k.available() {
                eprintln!("{test}: kernel {k} skipped: this CPU lacks {}", k.needs());
            }
            k.available()
        })
        .collect()
}

fn body(scene: &str, n: usize) -> Body {
    Scene::parse(scene, n, None)
        .and_then(|s| s.build())
        .unwrap_or_else(|e| panic!("{scene}: {e}"))
}

/// `scene` after `steps` steps of `colored` with `kernel` on `threads` threads; blocks small
/// enough that two threads really split the colors.
fn run(scene: &str, n: usize, kernel: Kernel, threads: usize, steps: usize) -> Body {
    let mut b = body(scene, n);
    let opts = SolverOptions {
        threads,
        kernel,
        chunk: 32,
        parallel_threshold: 64,
        ..Default::default()
    };
    let mut solver = make_solver("colored", &opts).unwrap();
    assert_eq!(solver.kernel(), Some(kernel));
    let params = StepParams::default();
    for _ in 0..steps {
        step(&mut b, &params, solver.as_mut(), None).unwrap();
    }
    assert!(figures::all_finite(&b), "{scene} with {kernel}");
    b
}

#[test]
fn every_kernel_follows_the_scalar_twin_on_every_scene() {
    let kernels = available("every_kernel_follows_the_scalar_twin_on_every_scene");
    assert!(kernels.contains(&Kernel::Portable));
    for (scene, n) in SCENES {
        let reference = run(scene, n, Kernel::Scalar, 1, 20);
        for &kernel in &kernels[1..] {
            let b = run(scene, n, kernel, 1, 20);
            if solver_core::simd::DETERMINISTIC {
                assert_eq!(
                    figures::state_hash(&b.particles.x),
                    figures::state_hash(&reference.particles.x),
                    "{scene}: {kernel} against the scalar twin"
                );
            }
            let diff = b
                .particles
                .x
                .iter()
                .zip(&reference.particles.x)
                .map(|(p, q)| (p.xyz() - q.xyz()).abs().max_element())
                .fold(0.0f32, f32::max);
            assert!(
                diff < 1e-3,
                "{scene}: {kernel} is {diff} m from the scalar twin"
            );
        }
    }
}

#[cfg(feature = "enhanced-determinism")]
#[test]
fn every_kernel_and_thread_count_gives_the_same_state_hash() {
    let kernels = available("every_kernel_and_thread_count_gives_the_same_state_hash");
    for (scene, n) in SCENES {
        let mut hashes = Vec::new();
        for &kernel in &kernels {
            for threads in [1, 2] {
                let b = run(scene, n, kernel, threads, 500);
                hashes.push((kernel, threads, figures::state_hash(&b.particles.x)));
            }
        }
        let first = hashes[0].2;
        for (kernel, threads, h) in &hashes {
            assert_eq!(
                *h, first,
                "{scene}: {kernel} on {threads} thread(s) gives {h:016x}, the scalar twin {first:016x}"
            );
        }
    }
}

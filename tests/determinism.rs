//! Determinism: for every parallel solver (one that, built with 2 threads, reports
//! `report().threads > 1`), the state hash after 500 steps is the same with 1 and 2 threads and across
//! repeated runs; every solver repeats itself bit for bit; and, in the manner of avian's
//! cross-platform determinism test, a chaotic scene run with the reference Gauss-Seidel has a
//! pinned state hash.
//!
//! The distance kernels of `colored` on the same scenes: every kernel the CPU has follows the
//! scalar twin (within rounding by default, bit for bit with `enhanced-determinism`), and with
//! `enhanced-determinism` the state hash after 500 steps is the same for every kernel and for
//! 1 and 2 threads, and pinned, so that machines with different instruction sets check each
//! other. Kernels the CPU lacks are printed as skipped, by name. The same holds for
//! the bend and tether batches: the flag at n = 16 with its dihedral bending, with isometric
//! bending instead, and the cloth with tethers.
//!
//! Written generically over `sparse::SolverKind::ALL` and the standard scenes, so a new solver
//! joins by itself; every combination must build and run.

use scenes::Scene;
use solver_core::collide::{Collider, Shape};
use solver_core::constraints::{IsometricBending, TetherDistance, Tethers};
use solver_core::glam::Vec3;
use solver_core::{figures, step, Body, GaussSeidel, Solver, StepParams};
use sparse::{Kernel, SolverKind, SolverOptions};

const STEPS: usize = 500;
/// Scenes and sizes: large enough that a parallel solver splits its work over 2 threads.
const SCENES: [(&str, usize); 5] = [
    ("cloth", 16),
    ("rope", 64),
    ("flag", 8),
    ("jelly", 2),
    ("cube", 3),
];

/// The state hash after `STEPS` steps of `scene` with `solver` on `threads` threads.
fn run(scene: &str, n: usize, solver: SolverKind, threads: usize) -> Result<u64, String> {
    let mut body = Scene::parse(scene, n, None)
        .and_then(|s| s.build())
        .map_err(|e| format!("{scene}: {e}"))?;
    let options = SolverOptions {
        threads,
        ..Default::default()
    };
    let mut solver = solver
        .build(&options)
        .map_err(|e| format!("{solver}: {e}"))?;
    let params = StepParams::default();
    for s in 0..STEPS {
        step(&mut body, &params, solver.as_mut(), None)
            .map_err(|e| format!("{scene} step {s}: {e}"))?;
    }
    Ok(figures::state_hash(&body.particles().x()))
}

#[test]
#[cfg_attr(
    not(feature = "parallel"),
    ignore = "needs the `parallel` feature (threads)"
)]
fn parallel_solvers_match_serial_bit_for_bit_and_repeat() {
    let (mut compared, mut serial_only) = (Vec::new(), Vec::new());
    for kind in SolverKind::ALL {
        let name = kind.name();
        let two_threads = SolverOptions {
            threads: 2,
            ..Default::default()
        };
        let parallel = kind
            .build(&two_threads)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .report()
            .threads
            > 1;
        for (scene, n) in SCENES {
            let label = format!("{scene} n={n} solver={name}");
            let one = run(scene, n, kind, 1).unwrap();
            let again = run(scene, n, kind, 1).unwrap();
            assert_eq!(one, again, "{label}: two serial runs differ");
            if parallel {
                let two = run(scene, n, kind, 2).unwrap();
                let two_again = run(scene, n, kind, 2).unwrap();
                assert_eq!(two, two_again, "{label}: two runs on 2 threads differ");
                assert_eq!(one, two, "{label}: 1 and 2 threads differ");
                compared.push(label);
            } else {
                serial_only.push(label);
            }
        }
    }
    println!(
        "determinism: {} parallel (1 vs 2 threads, repeated), {} serial (repeated)",
        compared.len(),
        serial_only.len()
    );
    for s in &compared {
        println!("  1 = 2 threads: {s}");
    }
    assert_eq!(
        compared.len() + serial_only.len(),
        SolverKind::ALL.len() * SCENES.len()
    );
}

/// A chaotic scene: a cloth with one corner freed and the other dragged around, falling onto a
/// sphere and the ground with friction and restitution, so that contacts, friction, the
/// attachment and the solver all shape the result. Only +, -, *, / and sqrt are used (no libm
/// functions, whose last bits may differ between platforms).
fn chaotic_hash() -> u64 {
    let mut body = scenes::cloth(12).unwrap();
    body.add_collider(Collider::ground(0.5, 0.2)).unwrap();
    body.add_collider(Collider {
        shape: Shape::Sphere {
            center: Vec3::new(0.45, 0.55, 0.5),
            radius: 0.25,
        },
        friction: 0.3,
        restitution: 0.1,
        motion: None,
    })
    .unwrap();
    body.particles_mut().set_mass(0, 1.0 / 144.0).unwrap();
    let a = body.attach(11).unwrap();
    let mut gs = GaussSeidel::new();
    let params = StepParams {
        dt: 1.0 / 64.0,
        substeps: 2,
        ..Default::default()
    };
    // A triangle wave in [-1, 1] with a period of 128 steps.
    let wave = |s: usize, shift: usize| {
        let p = ((s + shift) % 128) as f32 / 64.0;
        if p < 1.0 {
            2.0 * p - 1.0
        } else {
            3.0 - 2.0 * p
        }
    };
    for s in 0..STEPS {
        let target = Vec3::new(
            1.0 + 0.2 * wave(s, 0),
            1.0 + 0.1 * wave(2 * s, 0),
            0.2 * wave(s, 32),
        );
        body.move_attachment(a, target).unwrap();
        step(&mut body, &params, &mut gs, None).unwrap();
    }
    assert!(figures::all_finite(&body));
    figures::state_hash(&body.particles().x())
}

#[test]
fn gauss_seidel_hash_is_pinned_like_avians_determinism_test() {
    let hash = chaotic_hash();
    assert_eq!(hash, chaotic_hash(), "two runs in one process differ");
    // Update this value when the simulation's behaviour changes on purpose (step loop,
    // Gauss-Seidel, colliders or the cloth scene); a change nobody intended is a bug.
    let expected: u64 = 0x24ec_3346_21b9_d8a8;
    assert_eq!(
        hash, expected,
        "\nexpected state hash {expected:#018x}, found {hash:#018x}.\nIf the change in behaviour was intended, update `expected` in tests/determinism.rs.\n"
    );
}

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

fn scene_body(scene: &str, n: usize) -> Body {
    Scene::parse(scene, n, None)
        .and_then(|s| s.build())
        .unwrap_or_else(|e| panic!("{scene}: {e}"))
}

/// `colored` with the distance kernel `kernel` on `threads` threads; blocks small enough that
/// two threads really split the colors.
fn colored(kernel: Kernel, threads: usize) -> Box<dyn Solver> {
    let opts = SolverOptions {
        threads,
        kernel,
        chunk: 32,
        parallel_threshold: 64,
        ..Default::default()
    };
    SolverKind::Colored(Default::default())
        .build(&opts)
        .unwrap()
}

/// `b` after `steps` default steps of `solver`, checked finite (`label` names the run).
fn run_steps(mut b: Body, solver: &mut dyn Solver, steps: usize, label: &str) -> Body {
    let params = StepParams::default();
    for _ in 0..steps {
        step(&mut b, &params, solver, None).unwrap();
    }
    assert!(figures::all_finite(&b), "{label}");
    b
}

/// `scene` after `steps` steps of [`colored`] with `kernel` on `threads` threads.
fn run_kernel(scene: &str, n: usize, kernel: Kernel, threads: usize, steps: usize) -> Body {
    let mut solver = colored(kernel, threads);
    assert_eq!(solver.report().kernel, Some(kernel.name()));
    let label = format!("{scene} with {kernel}");
    run_steps(scene_body(scene, n), solver.as_mut(), steps, &label)
}

/// The largest coordinate difference in metres between the positions of `a` and `b`; NaN where
/// any is NaN, so that a diverged kernel cannot pass as close.
fn largest_difference(a: &Body, b: &Body) -> f32 {
    a.particles()
        .x()
        .iter()
        .zip(b.particles().x())
        .map(|(p, q)| (p.xyz() - q.xyz()).abs().max_element())
        .fold(0.0f32, |m, d| if d > m || d.is_nan() { d } else { m })
}

#[test]
fn every_kernel_follows_the_scalar_twin_on_every_scene() {
    let kernels = available("every_kernel_follows_the_scalar_twin_on_every_scene");
    assert!(kernels.contains(&Kernel::Portable));
    for (scene, n) in SCENES {
        let reference = run_kernel(scene, n, Kernel::Scalar, 1, 20);
        for &kernel in &kernels[1..] {
            let b = run_kernel(scene, n, kernel, 1, 20);
            if sparse::colored::simd::DETERMINISTIC {
                assert_eq!(
                    figures::state_hash(&b.particles().x()),
                    figures::state_hash(&reference.particles().x()),
                    "{scene}: {kernel} against the scalar twin"
                );
            }
            let diff = largest_difference(&b, &reference);
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
    let mut found = Vec::new();
    for (scene, n) in SCENES {
        let mut hashes = Vec::new();
        for &kernel in &kernels {
            for threads in sparse::thread_counts(&[1, 2]) {
                let b = run_kernel(scene, n, kernel, threads, 500);
                hashes.push((kernel, threads, figures::state_hash(&b.particles().x())));
            }
        }
        let first = hashes[0].2;
        for (kernel, threads, h) in &hashes {
            assert_eq!(
                *h, first,
                "{scene}: {kernel} on {threads} thread(s) gives {h:016x}, the scalar twin {first:016x}"
            );
        }
        found.push((scene, first));
    }
    // The bits a lockstep game gets on every machine: pinned, so that two CPUs (AVX-512 and
    // AVX2 ones, x86-64 and aarch64) running this test check each other. Update them only when
    // the simulation's behaviour changes on purpose.
    let hex = |v: &[(&str, u64)]| {
        v.iter()
            .map(|(s, h)| format!("{s} {h:#018x}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    assert!(
        found == PINNED_DETERMINISTIC,
        "\nstate hashes with enhanced-determinism: {}\npinned in tests/determinism.rs: {}",
        hex(&found),
        hex(&PINNED_DETERMINISTIC)
    );
}

/// The state hash of each of [`SCENES`] after 500 steps of `colored` with
/// `enhanced-determinism` (every kernel, 1 and 2 threads).
#[cfg(feature = "enhanced-determinism")]
const PINNED_DETERMINISTIC: [(&str, u64); 5] = [
    ("cloth", 0x00ae_0016_d968_cc48),
    ("rope", 0x610b_d9fe_cdc8_a4a2),
    ("flag", 0x8284_6880_e4b0_2f51),
    ("jelly", 0x57aa_ca0f_08e4_5350),
    ("cube", 0xf063_02b5_9247_32ca),
];

/// Bodies whose bending or tethers go through the bend and tether batches, with enough
/// constraints per color for whole blocks of every kernel.
fn batched_bodies() -> Vec<(&'static str, Body)> {
    let flag = scene_body("flag", 16);
    let mut iso = scene_body("flag", 16);
    let bending =
        IsometricBending::from_triangles(&iso.particles().x(), &iso.topology().triangles, 1e-4)
            .unwrap();
    iso.constraints_mut().extra = vec![Box::new(bending)];
    iso.topology_changed();
    let mut tethered = scene_body("cloth", 16);
    let t = Tethers::from_pins(
        &tethered.particles().x(),
        &tethered.constraints().distance,
        TetherDistance::Euclidean,
        2,
        0.0,
    )
    .unwrap();
    tethered.constraints_mut().push_kind(Box::new(t));
    tethered.topology_changed();
    vec![
        ("flag 16 dihedral", flag),
        ("flag 16 isometric", iso),
        ("cloth 16 tethers", tethered),
    ]
}

/// `body` after `steps` steps of [`colored`] with `kernel` on `threads` threads.
fn run_body(b: Body, kernel: Kernel, threads: usize, steps: usize) -> Body {
    run_steps(
        b,
        colored(kernel, threads).as_mut(),
        steps,
        &kernel.to_string(),
    )
}

#[test]
fn bend_and_tether_kernels_follow_the_scalar_twin_and_thread_counts_agree() {
    let kernels = available("bend_and_tether_kernels_follow_the_scalar_twin");
    let steps = if sparse::colored::simd::DETERMINISTIC {
        STEPS
    } else {
        60
    };
    for (label, body) in batched_bodies() {
        let reference = run_body(body.clone(), Kernel::Scalar, 1, steps);
        let want = figures::state_hash(&reference.particles().x());
        for &kernel in &kernels {
            for threads in sparse::thread_counts(&[1, 2]) {
                let b = run_body(body.clone(), kernel, threads, steps);
                let h = figures::state_hash(&b.particles().x());
                if sparse::colored::simd::DETERMINISTIC {
                    assert_eq!(
                        h, want,
                        "{label}: {kernel} on {threads} thread(s) gives {h:016x}, the scalar twin {want:016x}"
                    );
                }
                let diff = largest_difference(&b, &reference);
                assert!(
                    diff < 1e-3,
                    "{label}: {kernel} on {threads} thread(s) is {diff} m from the scalar twin"
                );
            }
        }
        println!("{label}: {} kernels x 1, 2 threads agree", kernels.len());
    }
}

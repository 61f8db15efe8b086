//! The `character` scene (issue 35): a cape and a skirt skinned to an animated skeleton, its
//! body proxy of capsules moved with it. Through the script's swings, turns and teleports no
//! vertex ends a step beyond its max distance, inside its back stop or inside the proxy, and
//! the scene gives the same bits on one and two threads.

use scenes::character::{Character, CharacterFigures, TELEPORT_EVERY_S};
use wobble::sparse::Kernel;
use wobble::{figures, step, SolverKind, SolverOptions, StepParams};

/// The character's step parameters: docs/SCENES.md's (4 substeps, a 2 cm contact margin).
fn params() -> StepParams {
    StepParams {
        substeps: 4,
        contact_margin: 0.02,
        ..Default::default()
    }
}

/// Runs `frames` frames with `solver` on `threads`; the worst figures after any step and the
/// final state hash.
fn run(frames: usize, solver: SolverKind, threads: usize) -> (CharacterFigures, u64) {
    run_kernel(frames, solver, threads, Kernel::Auto)
}

/// [`run`] with the distance kernel `kernel`.
fn run_kernel(
    frames: usize,
    solver: SolverKind,
    threads: usize,
    kernel: Kernel,
) -> (CharacterFigures, u64) {
    let mut c = Character::new(16).unwrap();
    let options = SolverOptions {
        threads,
        kernel,
        chunk: 16,
        parallel_threshold: 1,
        ..Default::default()
    };
    let mut s = solver.build(&options).unwrap();
    let p = params();
    let mut worst = CharacterFigures::default();
    for k in 0..frames {
        c.animate(p.dt).unwrap();
        step(&mut c.body, &p, s.as_mut(), None)
            .unwrap_or_else(|e| panic!("{solver} frame {k}: {e}"));
        let f = c.figures();
        worst.skin_max_distance_violations = worst
            .skin_max_distance_violations
            .max(f.skin_max_distance_violations);
        worst.skin_backstop_violations = worst
            .skin_backstop_violations
            .max(f.skin_backstop_violations);
        worst.proxy_penetrations = worst.proxy_penetrations.max(f.proxy_penetrations);
    }
    (worst, figures::state_hash(&c.body.particles().x()))
}

#[test]
fn the_clothing_stays_on_its_skin_and_off_the_body_through_the_script() {
    // Two teleport periods and a half: swings, two turns and two teleports.
    let frames = (2.5 * TELEPORT_EVERY_S * 60.0) as usize;
    for solver in [
        SolverKind::Gs,
        SolverKind::Colored(wobble::ColoredOptions::DEFAULT),
    ] {
        let (worst, _) = run(frames, solver, 1);
        assert_eq!(worst, CharacterFigures::default(), "{solver}: {worst:?}");
    }
}

#[test]
fn the_character_gives_the_same_bits_on_one_and_two_threads() {
    if !wobble::sparse::PARALLEL {
        eprintln!("skipped: built without the `parallel` feature");
        return;
    }
    let colored = SolverKind::Colored(wobble::ColoredOptions::DEFAULT);
    assert_eq!(run(300, colored, 1).1, run(300, colored, 2).1);
}

/// Under `enhanced-determinism` every SIMD kernel gives the scalar twin's bits with the skin,
/// its back stops and the moving proxy in the step, on one thread and two.
#[cfg(feature = "enhanced-determinism")]
#[test]
fn every_kernel_and_thread_count_gives_the_character_the_same_bits() {
    let colored = SolverKind::Colored(wobble::ColoredOptions::DEFAULT);
    let reference = run_kernel(120, colored, 1, Kernel::Scalar).1;
    for kernel in Kernel::CONCRETE {
        if !kernel.available() {
            eprintln!("kernel {kernel} skipped: this CPU lacks {}", kernel.needs());
            continue;
        }
        for threads in wobble::sparse::thread_counts(&[1, 2]) {
            let hash = run_kernel(120, colored, threads, kernel).1;
            assert_eq!(hash, reference, "{kernel} on {threads} threads");
        }
    }
}

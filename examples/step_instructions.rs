//! The step and the world step on fixed scenes, for instruction counts: what the one-world
//! issue compares before and after a change on a machine whose clock cannot be trusted (shared,
//! or with AVX-512 where the speed goals are judged on AVX2).
//!
//! `step_instructions SCENE STEPS` warms the scene 10 steps, then steps it `STEPS` more.
//! Scenes: `cloth64-colored` (colored, AVX2 kernel, one thread) and `cloth64-gs` (`step()` on
//! the 64 x 64 cloth, default step), `drape64` and `crowd` (the worlds of docs/SCENES.md, 1
//! substep of 8 iterations). The instructions of `STEPS` steps are the count of a run with
//! `STEPS` less that of a run with 0 (the setup is the same):
//!
//! ```sh
//! cargo build --release --example step_instructions
//! RAYON_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/step_instructions drape64 20   # and again with 0
//! ```

use wobble::sparse::{ColoredOptions, Kernel, SolverKind, SolverOptions};
use wobble::{step, StepParams};

const SCENES: &str = "cloth64-colored, cloth64-gs, drape64, crowd";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let usage = || format!("usage: step_instructions SCENE STEPS (scenes: {SCENES})");
    let (scene, steps) = match args.as_slice() {
        [_, scene, steps] => (
            scene.as_str(),
            steps
                .parse::<usize>()
                .map_err(|e| format!("STEPS {steps:?}: {e}; {}", usage()))?,
        ),
        _ => return Err(usage().into()),
    };
    match scene {
        "cloth64-colored" | "cloth64-gs" => {
            let mut body = scenes::cloth(64)?;
            let kind = if scene == "cloth64-colored" {
                SolverKind::Colored(ColoredOptions::DEFAULT)
            } else {
                SolverKind::Gs
            };
            let options = SolverOptions {
                threads: 1,
                kernel: Kernel::Avx2,
                ..Default::default()
            };
            let mut solver = kind.build(&options)?;
            let params = StepParams::default();
            for _ in 0..10 + steps {
                step(&mut body, &params, solver.as_mut(), None)?;
            }
        }
        "drape64" | "crowd" => {
            let params = StepParams {
                substeps: 1,
                iterations: 8,
                ..Default::default()
            };
            let mut world = if scene == "drape64" {
                scenes::drape(64, true)?
            } else {
                scenes::crowd()?
            };
            for _ in 0..10 + steps {
                world.step(&params)?;
            }
        }
        other => return Err(format!("no scene {other:?} (scenes: {SCENES})").into()),
    }
    println!("{scene}: {steps} steps after 10 warm");
    Ok(())
}

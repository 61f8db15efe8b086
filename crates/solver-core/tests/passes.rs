//! The step loop's per-particle passes give the same bits however a solver runs their blocks.

use solver_core::step::PARTICLE_BLOCK;
use solver_core::{
    figures, glam::Vec3, step, Body, Constraints, Executor, GaussSeidel, SolveState, Solver,
    StepParams,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// An executor that runs the blocks backwards, half of them on another thread.
#[derive(Default)]
struct Scrambler {
    blocks_run: AtomicUsize,
}

impl Executor for Scrambler {
    fn run_home(&self, f: &mut (dyn FnMut() + Send)) {
        f()
    }
    fn run_blocks(&self, blocks: usize, f: &(dyn Fn(usize) + Sync)) {
        self.blocks_run.fetch_add(blocks, Ordering::Relaxed);
        std::thread::scope(|scope| {
            scope.spawn(|| (0..blocks).rev().step_by(2).for_each(f));
            (0..blocks).rev().skip(1).step_by(2).for_each(f);
        });
    }
}

/// Gauss-Seidel on the [`Scrambler`].
#[derive(Default)]
struct ScrambledBlocks {
    gs: GaussSeidel,
    executor: Arc<Scrambler>,
}

impl Solver for ScrambledBlocks {
    fn name(&self) -> &'static str {
        "gs"
    }
    fn prepare(&mut self, c: &Constraints, n: usize) -> solver_core::Result<()> {
        self.gs.prepare(c, n)
    }
    fn preparation(&mut self) -> Option<&mut solver_core::Preparation> {
        self.gs.preparation()
    }
    fn iterate(&mut self, s: &mut SolveState, it: usize) {
        self.gs.iterate(s, it)
    }
    fn executor(&self) -> Option<Arc<dyn Executor>> {
        Some(self.executor.clone())
    }
}

fn run(body: &mut Body, solver: &mut dyn Solver, params: &StepParams, steps: usize) -> u64 {
    for s in 0..steps {
        // An external force on a few particles, consumed by each step.
        let i = s * 7919 % body.len();
        body.particles_mut().force_mut()[i].y = 2.0;
        step(body, params, solver, None).unwrap();
    }
    figures::state_hash(&body.particles().x())
        ^ figures::state_hash(&body.particles().v()).rotate_left(1)
}

#[test]
fn particle_passes_give_the_same_bits_whatever_runs_their_blocks() {
    // The flag (wind, pins) at 3 blocks of particles, with substeps, so that the backup of the
    // first substep, the wind path and the force clearing all run in several blocks.
    let n = 130;
    let mut a = scenes::flag(n).unwrap();
    assert!(a.len() > 2 * PARTICLE_BLOCK, "{} particles", a.len());
    let mut b = a.clone();
    let params = StepParams {
        substeps: 2,
        iterations: 2,
        ..Default::default()
    };
    let mut scrambled = ScrambledBlocks::default();
    let serial = run(&mut a, &mut GaussSeidel::new(), &params, 4);
    let parallel = run(&mut b, &mut scrambled, &params, 4);
    assert_eq!(serial, parallel);
    assert!(scrambled.executor.blocks_run.load(Ordering::Relaxed) >= 4 * 3 * 3);
    assert!(b.particles().force().iter().all(|f| f.xyz() == Vec3::ZERO));
}

#[test]
fn a_diverged_step_restores_the_backup_taken_during_prediction() {
    let mut body = scenes::cloth(130).unwrap();
    let params = StepParams::default();
    let mut solver = ScrambledBlocks::default();
    run(&mut body, &mut solver, &params, 2);
    let (x0, v0) = (body.particles().x().to_vec(), body.particles().v().to_vec());
    // A huge force on one particle in the last block overflows its velocity.
    let last = body.len() - 3;
    body.particles_mut().force_mut()[last].y = f32::MAX;
    let err = step(&mut body, &params, &mut solver, None).unwrap_err();
    assert!(err.to_string().contains(&last.to_string()), "{err}");
    assert_eq!(body.particles().x(), x0);
    assert_eq!(body.particles().v(), v0);
}

//! In-process timing of alternatives for the timed verdicts: each arm (a body, a solver and
//! step parameters) takes turns with the others, in the rotated order of
//! [`crate::measure::paired::interleave`], so drift on the shared machine hits every arm alike and each
//! round gives one paired sample of every ratio.

use crate::measure::paired::{interleave, Interleaved};
use crate::setup::Error;
use solver_core::{step, Body, Solver, StepParams};
use std::time::Instant;

/// One alternative to time.
pub struct Arm {
    /// The body stepped (or, with `from_start`, copied before every timed step).
    pub body: Body,
    /// Its solver.
    pub solver: Box<dyn Solver>,
    /// Its step parameters.
    pub params: StepParams,
    /// Time every step from a copy of the starting body (one step from a fixed state, as the
    /// convergence claims measure) instead of letting the body run on.
    pub from_start: bool,
}

/// How many rounds and steps per turn.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Rounds (each gives one paired sample per ratio).
    pub rounds: usize,
    /// Timed steps per turn (after one untimed step that brings the arm's data back).
    pub turn: usize,
    /// Untimed steps per arm before the first round.
    pub warmup: usize,
}

impl Plan {
    /// Quick or full sizes of the timed claims.
    pub fn new(quick: bool) -> Plan {
        if quick {
            Plan {
                rounds: 15,
                turn: 3,
                warmup: 2,
            }
        } else {
            Plan {
                rounds: 41,
                turn: 5,
                warmup: 5,
            }
        }
    }
}

/// Times the arms in turns; samples are ms per step.
pub fn time_arms(arms: &mut [Arm], plan: Plan) -> Result<Interleaved, Error> {
    let starts: Vec<Body> = arms.iter().map(|a| a.body.clone()).collect();
    let one = |a: &mut Arm, start: &Body| -> Result<f64, Error> {
        if a.from_start {
            let mut b = start.clone();
            let t0 = Instant::now();
            step(&mut b, &a.params, a.solver.as_mut(), None)?;
            Ok(t0.elapsed().as_secs_f64() * 1e3)
        } else {
            let t0 = Instant::now();
            step(&mut a.body, &a.params, a.solver.as_mut(), None)?;
            Ok(t0.elapsed().as_secs_f64() * 1e3)
        }
    };
    for (a, s) in arms.iter_mut().zip(&starts) {
        for _ in 0..plan.warmup {
            one(a, s)?;
        }
    }
    interleave(arms.len(), plan.rounds, |k| {
        let (a, s) = (&mut arms[k], &starts[k]);
        one(a, s)?;
        (0..plan.turn).map(|_| one(a, s)).collect()
    })
}

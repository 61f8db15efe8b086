//! Several bodies stepped at once, one body per thread of a [`Pool`].
//!
//! A game cloth of 1k-10k particles is too small for its colors to be split across threads with
//! profit (the hand-offs cost more than a color's work), but a game rarely has one body: bodies
//! are independent until they touch, so stepping whole bodies on different threads scales
//! where splitting one body does not. Each body keeps its own solver (usually a serial one),
//! and each result is exactly what stepping the bodies one after the other gives, whatever the
//! thread count.

use crate::Pool;
use solver_core::step::StepReport;
use solver_core::{step, Body, Solver, StepParams, WobbleError};

/// One body's share of the work: the body, its solver and, once stepped, its result.
type Work<'a> = (
    &'a mut Body,
    &'a mut Box<dyn Solver>,
    Option<Result<StepReport, WobbleError>>,
);

/// Steps `bodies[k]` with `solvers[k]`, the bodies spread over `pool`'s threads; returns one
/// result per body (a body that fails leaves the others stepped). The slices must be equally
/// long; colliders are the bodies' own.
pub fn step_bodies(
    pool: &Pool,
    bodies: &mut [Body],
    solvers: &mut [Box<dyn Solver>],
    params: &StepParams,
) -> Result<Vec<Result<StepReport, WobbleError>>, WobbleError> {
    if bodies.len() != solvers.len() {
        return Err(WobbleError::BadCount {
            name: "solvers (one per body)",
            value: solvers.len() as u64,
            max: bodies.len() as u64,
        });
    }
    let mut work: Vec<Work<'_>> = bodies
        .iter_mut()
        .zip(solvers.iter_mut())
        .map(|(b, s)| (b, s, None))
        .collect();
    pool.for_each_chunk_mut(&mut work, 1, true, |_, one| {
        for (body, solver, out) in one.iter_mut() {
            *out = Some(step(body, params, solver.as_mut(), None));
        }
    });
    Ok(work
        .into_iter()
        .map(|(_, _, r)| r.expect("every body was stepped"))
        .collect())
}

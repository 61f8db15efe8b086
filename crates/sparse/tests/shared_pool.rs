//! Solvers of several bodies sharing one pool (`SolverOptions::pool`) give each body exactly
//! the bits it gets from a serial solver of its own. Every test here runs threads: the file
//! builds only with the `parallel` feature.

#![cfg(feature = "parallel")]

use solver_core::figures::state_hash;
use solver_core::{step, StepParams};
use sparse::{Pool, SolverKind, SolverOptions};

#[test]
fn bodies_on_one_shared_pool_match_their_serial_runs() {
    let params = StepParams::default();
    let pool = Pool::new(2).unwrap();
    for kind in [
        SolverKind::Colored(Default::default()),
        SolverKind::Jacobi(Default::default()),
        SolverKind::Chebyshev(Default::default()),
    ] {
        let name = kind.name();
        let shared = SolverOptions {
            pool: Some(pool.clone()),
            chunk: 16,
            parallel_threshold: 1,
            ..Default::default()
        };
        let serial = SolverOptions {
            threads: 1,
            ..shared.clone()
        };
        let serial = SolverOptions {
            pool: None,
            ..serial
        };
        let mut bodies = vec![scenes::cloth(12).unwrap(), scenes::flag(8).unwrap()];
        let mut twins = bodies.clone();
        let mut on_pool: Vec<_> = (0..2).map(|_| kind.build(&shared).unwrap()).collect();
        let mut alone: Vec<_> = (0..2).map(|_| kind.build(&serial).unwrap()).collect();
        assert_eq!(on_pool[0].report().threads, 2, "{name}");
        for _ in 0..15 {
            for k in 0..2 {
                step(&mut bodies[k], &params, on_pool[k].as_mut(), None).unwrap();
                step(&mut twins[k], &params, alone[k].as_mut(), None).unwrap();
            }
        }
        for k in 0..2 {
            assert_eq!(
                state_hash(&bodies[k].particles().x()),
                state_hash(&twins[k].particles().x()),
                "{name}: body {k}"
            );
        }
    }
}

#[test]
fn bodies_stepped_at_once_match_the_bodies_stepped_in_turn() {
    let params = StepParams::default();
    let pool = Pool::new(2).unwrap();
    let make = || -> Vec<_> {
        [
            SolverKind::Gs,
            SolverKind::Colored(Default::default()),
            SolverKind::Jacobi(Default::default()),
            SolverKind::Colored(Default::default()),
        ]
        .iter()
        .map(|k| k.build(&SolverOptions::default()).unwrap())
        .collect()
    };
    let scenes = || {
        vec![
            scenes::cloth(12).unwrap(),
            scenes::flag(8).unwrap(),
            scenes::cloth(9).unwrap(),
            scenes::rope(20).unwrap(),
        ]
    };
    let (mut at_once, mut in_turn) = (scenes(), scenes());
    let (mut s1, mut s2) = (make(), make());
    for _ in 0..20 {
        for r in sparse::step_bodies(&pool, &mut at_once, &mut s1, &params).unwrap() {
            r.unwrap();
        }
        for (b, s) in in_turn.iter_mut().zip(s2.iter_mut()) {
            step(b, &params, s.as_mut(), None).unwrap();
        }
    }
    for (k, (a, b)) in at_once.iter().zip(&in_turn).enumerate() {
        assert_eq!(
            state_hash(&a.particles().x()),
            state_hash(&b.particles().x()),
            "body {k}"
        );
    }
    let short = &mut s1[..3];
    assert!(sparse::step_bodies(&pool, &mut at_once, short, &params).is_err());
}

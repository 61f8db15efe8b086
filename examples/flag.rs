//! A flag in the wind: the `flag` scene of docs/SCENES.md (pinned along its pole, dihedral
//! bending, a steady (5, 0, 1) m/s wind) stepped for 300 frames with the colored solver.
//!
//! `cargo run --release --example flag`

use wobble::core::{figures, scenes, step, Body, StepParams};
use wobble::glam::Vec3;
use wobble::sparse::{make_solver, SolverOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = 16;
    let mut flag = scenes::flag(n)?;
    let mut solver = make_solver("colored", &SolverOptions::default())?;
    // 4 substeps of 4 iterations: the same 16 projections per frame as 1 x 16, much stiffer.
    let params = StepParams {
        substeps: 4,
        iterations: 4,
        ..StepParams::default()
    };
    let wind = flag.wind.expect("the flag scene has wind").velocity;

    // The free edge is the last column of the (2n-1) x n grid, opposite the pole.
    let cols = 2 * n - 1;
    let edge: Vec<usize> = (0..n).map(|j| j * cols + cols - 1).collect();
    let edge_centre = |body: &Body| {
        edge.iter()
            .map(|&v| body.particles.position(v))
            .sum::<Vec3>()
            / n as f32
    };
    let start = edge_centre(&flag);

    let frames = 300;
    for _ in 0..frames {
        step(&mut flag, &params, solver.as_mut(), None)?;
    }

    let (mean, max) = figures::stretch(&flag);
    let moved = edge_centre(&flag) - start;
    println!(
        "flag: {} particles, {frames} frames in a {wind} m/s wind, solver '{}'",
        flag.len(),
        solver.name()
    );
    println!(
        "mean stretch {:.2}% (max {:.2}%)",
        100.0 * mean,
        100.0 * max
    );
    // The flag starts in the XY plane; the wind's drag pushes along the cloth's normal (+z).
    println!(
        "free edge moved {:.3} m downwind (along the wind), {:.3} m out of the pole's plane, {:.3} m down",
        moved.dot(wind.normalize()),
        moved.z,
        -moved.y
    );
    assert!(figures::all_finite(&flag), "the flag stays finite");
    Ok(())
}

//! A flag in the wind: a 2 m x 1 m flag on a pole (pinned along it, dihedral bending, a steady
//! (5, 0, 1) m/s wind), stepped for 300 frames with the colored solver, its positions and
//! normals read back every frame as a renderer would.
//!
//! `cargo run --release --example flag`

use wobble::glam::Vec3;
use wobble::{figures, step, vertex_normals_into, Flag, StepParams};
use wobble::{ColoredOptions, SolverKind, SolverOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let builder = Flag::new().size(2.0, 1.0).resolution(31, 16).at(Vec3::Y);
    let mut flag = builder.build()?;
    let mut solver =
        SolverKind::Colored(ColoredOptions::default()).build(&SolverOptions::default())?;
    // 4 substeps of 4 iterations: the same 16 projections per frame as 1 x 16, much stiffer.
    let params = StepParams {
        substeps: 4,
        iterations: 4,
        ..StepParams::default()
    };
    let wind = flag.wind().ok_or("the flag has wind")?.velocity;
    let edge = builder.free_edge();
    let (mut vertices, mut normals) = (vec![Vec3::ZERO; flag.len()], vec![[0.0f32; 3]; flag.len()]);
    let edge_centre =
        |v: &[Vec3]| edge.iter().map(|&i| v[i as usize]).sum::<Vec3>() / edge.len() as f32;
    flag.particles().positions_into(&mut vertices)?;
    let start = edge_centre(&vertices);

    let frames = 300;
    for _ in 0..frames {
        step(&mut flag, &params, &mut solver, None)?;
        flag.particles().positions_into(&mut vertices)?;
        vertex_normals_into(
            &flag.topology().triangles,
            &flag.particles().x(),
            &mut normals,
        )?;
    }

    let (mean, max) = figures::stretch(&flag);
    let moved = edge_centre(&vertices) - start;
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
    let unit = normals
        .iter()
        .all(|n| (Vec3::from_array(*n).length() - 1.0).abs() < 1e-3);
    println!("{} normals, all of unit length: {unit}", normals.len());
    assert!(
        figures::all_finite(&flag) && unit,
        "the flag stays finite and shaded"
    );
    Ok(())
}

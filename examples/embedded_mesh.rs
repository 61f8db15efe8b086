//! A high-resolution render mesh embedded in a low-resolution simulation body: a 2562-vertex
//! sphere rides on the 42-particle `jelly` as it drops onto the ground, and its normals are
//! recomputed every frame for the renderer.
//!
//! `cargo run --release --example embedded_mesh`

use wobble::core::effects::embedding::{Anchor, Embedding, EmbeddingScratch, VertexNormals};
use wobble::core::{scenes, step, GaussSeidel, StepParams};
use wobble::glam::Vec3;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut jelly = scenes::jelly(1)?; // radius 0.25 m at (0, 1, 0), on a ground plane
    let render = scenes::icosphere(Vec3::new(0.0, 1.0, 0.0), 0.25, 4)?;
    let embedding = Embedding::on_surface(
        &render.positions,
        &jelly.particles.x,
        &jelly.topology.triangles,
    )?;
    let normals = VertexNormals::new(&render.triangles, render.positions.len())?;
    let (mut scratch, mut out) = (EmbeddingScratch::default(), render.positions.clone());
    let mut out_normals = vec![Vec3::ZERO; out.len()];

    let mut solver = GaussSeidel::new();
    let params = StepParams::default();
    for _ in 0..90 {
        step(&mut jelly, &params, &mut solver, None)?;
        // What a renderer does every frame: place the render vertices, then shade them.
        embedding.update(&jelly.particles.x, &mut out, &mut scratch)?;
        normals.compute(&out, &mut out_normals)?;
    }

    // Each render vertex hangs off a point of the simulation surface; how far off is it now?
    let x = &jelly.particles.x;
    let off_surface = out
        .iter()
        .zip(&embedding.anchors)
        .map(|(v, a)| match *a {
            Anchor::Surface {
                corners, weights, ..
            } => {
                let on: Vec3 = (0..3)
                    .map(|k| x[corners[k] as usize].xyz() * weights[k])
                    .sum();
                (*v - on).length()
            }
            Anchor::Tet { .. } => 0.0,
        })
        .fold(0.0, f32::max);
    let centre = out.iter().sum::<Vec3>() / out.len() as f32;
    let outward = out
        .iter()
        .zip(&out_normals)
        .filter(|(v, n)| n.dot(**v - centre) > 0.0);
    println!(
        "render mesh: {} vertices, {} triangles",
        out.len(),
        render.triangles.len()
    );
    println!(
        "simulation body: {} particles, {} triangles",
        jelly.len(),
        jelly.topology.triangles.len()
    );
    println!(
        "after 90 frames: render centre at {centre:.3}, max distance from the sim surface {:.1} mm, \
         {} of {} normals point outward",
        1000.0 * off_surface,
        outward.count(),
        out.len()
    );
    Ok(())
}

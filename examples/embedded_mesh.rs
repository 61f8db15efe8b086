//! A high-resolution render mesh embedded in a low-resolution simulation body: a 2562-vertex
//! sphere rides on a 42-particle soft body as it drops onto the ground, and its normals are
//! recomputed every frame for the renderer.
//!
//! `cargo run --release --example embedded_mesh`

use wobble::core::effects::embedding::{Embedding, EmbeddingScratch, VertexNormals};
use wobble::core::mesh::shapes::icosphere;
use wobble::glam::Vec3;
use wobble::{step, Collider, GaussSeidel, SoftBody, StepParams};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ground = Collider::plane(Vec3::Y, 0.0)?;
    let mut jelly = SoftBody::sphere(0.25, 1)
        .at(Vec3::Y)
        .collider(ground)
        .build()?;
    let render = icosphere(Vec3::Y, 0.25, 4)?;
    let embedding = Embedding::on_surface(
        &render.positions,
        &jelly.particles().x(),
        &jelly.topology().triangles,
    )?;
    let normals = VertexNormals::new(&render.triangles, render.positions.len())?;
    let (mut scratch, mut out) = (EmbeddingScratch::default(), render.positions.clone());
    let mut out_normals = vec![Vec3::ZERO; out.len()];
    let mut sim = vec![Vec3::ZERO; jelly.len()];

    let mut solver = GaussSeidel::new();
    for _ in 0..90 {
        step(&mut jelly, &StepParams::default(), &mut solver, None)?;
        // What a renderer does every frame: place the render vertices, then shade them.
        embedding.update(&jelly.particles().x(), &mut out, &mut scratch)?;
        normals.compute(&out, &mut out_normals)?;
    }

    jelly.particles().positions_into(&mut sim)?;
    let centre = |v: &[Vec3]| v.iter().sum::<Vec3>() / v.len() as f32;
    let (c_render, c_sim) = (centre(&out), centre(&sim));
    let outward = out
        .iter()
        .zip(&out_normals)
        .filter(|(v, n)| n.dot(**v - c_render) > 0.0)
        .count();
    println!(
        "render mesh: {} vertices, {} triangles",
        out.len(),
        render.triangles.len()
    );
    println!(
        "simulation body: {} particles, {} triangles",
        jelly.len(),
        jelly.topology().triangles.len()
    );
    println!(
        "after 90 frames: render centre at {c_render:.3}, {:.1} mm from the body's, \
         {outward} of {} normals point outward",
        1000.0 * (c_render - c_sim).length(),
        out.len()
    );
    assert!(
        c_render.y < 0.5 && outward == out.len(),
        "it fell, and it is shaded outward"
    );
    Ok(())
}

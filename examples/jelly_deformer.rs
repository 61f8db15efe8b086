//! The Unity-style jelly deformer on an icosphere's vertices: poked three times, each vertex
//! springs back to its rest position.
//!
//! `cargo run --release --example jelly_deformer`

use wobble::core::interaction::deformer::{Deformer, Falloff, Push};
use wobble::glam::Vec3;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let sphere = wobble::core::mesh::shapes::icosphere(Vec3::ZERO, 1.0, 4)?;
    // Spring stiffness 60 /s², damping 6 /s: a few visible wobbles, settled within 2 s.
    let mut jelly = Deformer::new(&sphere.positions, 60.0, 6.0, Falloff::default())?;
    let dt = 1.0 / 60.0;
    let poke = Vec3::new(0.0, 1.2, 0.3); // just above the top, as a mouse ray would hit it
    println!("deformer over {} vertices", jelly.len());

    let mut peak: f32 = 0.0;
    for frame in 0..180 {
        // Pressed for the first three frames of each half second: a press, then let go.
        if frame % 30 < 3 && frame < 90 {
            jelly.add_force(poke, Push::Along(Vec3::NEG_Y), 6.0)?;
        }
        jelly.update(dt)?;
        peak = peak.max(jelly.max_displacement());
        if frame % 20 == 19 {
            println!(
                "t = {:.2} s: max displacement {:.1} mm",
                (frame + 1) as f32 * dt,
                1000.0 * jelly.max_displacement()
            );
        }
    }
    let last = jelly.max_displacement();
    println!(
        "peak {:.1} mm, final {:.3} mm: it springs back",
        1000.0 * peak,
        1000.0 * last
    );
    assert!(last < 0.05 * peak, "the jelly springs back");
    Ok(())
}

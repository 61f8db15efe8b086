//! A cape on an animated character: what a game writes each frame. The cape is a cloth
//! skinned to the character's torso joint; its top row follows the animation exactly, the
//! rest may swing up to 40 cm from the skin and never closer to the body than its back stop;
//! a capsule on the torso joint is the body proxy it drapes over. Each frame: the animation's
//! joint matrices in, the step, positions and normals out for the renderer.
//!
//! `cargo run --release --example cape`

use std::f32::consts::{FRAC_PI_2, PI};
use wobble::core::collide::Shape;
use wobble::core::skin::{Skin, SkinDesc, SkinningMethod};
use wobble::core::SkinnedVertex;
use wobble::glam::{Mat4, Quat, Vec3};
use wobble::{step, vertex_normals_into, Cloth, Collider, GaussSeidel, StepParams};

/// The torso joint's world matrix at time `t`: the game's animation (here, a sway and a turn).
fn torso(t: f32) -> Mat4 {
    Mat4::from_rotation_translation(
        Quat::from_rotation_y(0.8 * (1.5 * t).sin()),
        Vec3::new(0.4 * (2.0 * t).sin(), 1.3, 0.0),
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The cape in the bind pose: 0.5 m x 0.8 m hanging 20 cm behind the torso joint's axis,
    // rotated upright so that its triangles face away from the body (-z).
    let mut cape = Cloth::new()
        .size(0.5, 0.8)
        .resolution(12, 16)
        .rotated(Quat::from_rotation_y(PI) * Quat::from_rotation_x(FRAC_PI_2))
        .at(Vec3::new(0.25, 1.7, -0.2))
        .build()?;
    let n = cape.len();
    let skin = SkinDesc {
        inverse_bind: vec![torso(0.0).inverse()],
        joints: vec![[0; 4]; n],
        weights: vec![[1.0, 0.0, 0.0, 0.0]; n],
        method: SkinningMethod::DualQuaternion,
        ..Default::default()
    };
    let held: Vec<SkinnedVertex> = (0..n as u32)
        .map(|i| {
            let row = i / 12;
            let max = if row == 0 {
                0.0
            } else {
                0.4 * row as f32 / 15.0
            };
            SkinnedVertex::within(i, max).with_backstop(0.01, 0.3)
        })
        .collect();
    let mut skin = Skin::new(&mut cape, skin, &held)?;
    assert!(
        skin.normals()[0].z < -0.99,
        "the cape's triangles face away from the body"
    );
    let proxy = |m: Mat4| Shape::Capsule {
        a: m.transform_point3(Vec3::new(0.0, -0.3, 0.0)),
        b: m.transform_point3(Vec3::new(0.0, 0.3, 0.0)),
        radius: 0.15,
    };
    let Shape::Capsule { a, b, radius } = proxy(torso(0.0)) else {
        unreachable!()
    };
    cape.add_collider(Collider::capsule(a, b, radius)?)?;
    skin.hard_skin(&mut cape, &[torso(0.0)])?; // spawn on the skin

    let params = StepParams {
        substeps: 4,
        contact_margin: 0.02,
        ..StepParams::default()
    };
    let mut solver = GaussSeidel::new();
    let mut positions = vec![[0.0f32; 3]; n];
    let mut normals = vec![[0.0f32; 3]; n];
    let mut farthest = 0.0f32;
    for frame in 1..=300 {
        // Joint matrices in: the skin's targets and the proxy's pose at the end of the frame.
        let joints = [torso(frame as f32 / 60.0)];
        skin.pose(&mut cape, &joints)?;
        cape.move_collider(0, proxy(joints[0]))?;
        step(&mut cape, &params, &mut solver, None)?;
        // Positions and normals out, straight into the renderer's vertex buffers.
        cape.positions_into(&mut positions)?;
        vertex_normals_into(
            &cape.topology().triangles,
            &cape.particles().x(),
            &mut normals,
        )?;
        for (p, s) in positions.iter().zip(skin.skinned()) {
            farthest = farthest.max((Vec3::from(*p) - *s).length());
        }
    }
    let top_row_off = (0..12)
        .map(|i| (Vec3::from(positions[i]) - skin.skinned()[i]).length())
        .fold(0.0f32, f32::max);
    println!("300 frames of a swaying, turning torso with a {n}-vertex cape");
    println!("top row off its skin: {top_row_off} m (driven: exactly on it)");
    println!("farthest vertex from its skin: {farthest:.3} m (max distance 0.4 m)");
    let inside = positions
        .iter()
        .filter(|p| cape.colliders()[0].shape.signed_distance(Vec3::from(**p)).0 < -1e-3)
        .count();
    println!("vertices inside the body proxy: {inside}");
    println!("normal of vertex 0: {:?}", normals[0]);
    Ok(())
}

//! Dragging a cloth with the mouse: a ray from a camera picks a hanging cloth through a BVH
//! refitted every frame, a grab pulls the hit point along a path, and the cloth swings back
//! once it is released.
//!
//! `cargo run --release --example drag_cloth`

use wobble::core::interaction::picking::{grab, move_grab, release, Hit, TriangleBvh};
use wobble::core::{scenes, step, Body, GaussSeidel, StepParams};
use wobble::glam::Vec3;

/// The grabbed surface point: its triangle's corners blended by the hit's barycentrics.
fn point(body: &Body, hit: &Hit) -> Vec3 {
    (0..3)
        .map(|k| body.particles.position(hit.corners[k] as usize) * hit.barycentric[k])
        .sum()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut cloth = scenes::cloth(24)?; // pinned at two corners
    let mut solver = GaussSeidel::new();
    let params = StepParams {
        damping: 1.0,
        ..StepParams::default()
    };
    let mut bvh = TriangleBvh::build(&cloth.topology.triangles, &cloth.particles.x)?;
    let mut frame = |body: &mut Body, bvh: &mut TriangleBvh| -> wobble::core::Result<()> {
        step(body, &params, &mut solver, None)?;
        bvh.refit(&body.particles.x)
    };
    for _ in 0..120 {
        frame(&mut cloth, &mut bvh)?; // let it fall and hang
    }

    let camera = Vec3::new(0.5, 0.4, 3.0);
    let aim = Vec3::new(0.5, 0.4, 0.0) - camera;
    let hit = bvh
        .raycast(&cloth.particles.x, camera, aim, 100.0)?
        .ok_or("the camera ray misses the cloth")?;
    println!(
        "ray from {camera} hit triangle {} at {:.3}, {:.3} m from the camera",
        hit.triangle, hit.point, hit.distance
    );

    // Pull the point 0.4 m toward the camera and 0.3 m sideways over one second.
    let rest = point(&cloth, &hit);
    let id = grab(&mut cloth, &hit, 1e-3)?;
    let frames = 60;
    let mut target = rest;
    for f in 1..=frames {
        let s = f as f32 / frames as f32;
        target = rest + Vec3::new(0.3 * s, 0.0, 0.4 * s);
        move_grab(&mut cloth, id, target)?;
        frame(&mut cloth, &mut bvh)?;
    }
    let held = point(&cloth, &hit);
    println!(
        "after {frames} dragged frames the grabbed point is {:.1} mm from its target",
        1000.0 * (held - target).length()
    );

    release(&mut cloth, id)?;
    for _ in 0..180 {
        frame(&mut cloth, &mut bvh)?;
    }
    let back = point(&cloth, &hit);
    println!(
        "released: 3 s later the point is {:.1} mm from where it hung (it was {:.1} mm away)",
        1000.0 * (back - rest).length(),
        1000.0 * (held - rest).length()
    );
    assert!(
        (back - rest).length() < 0.5 * (held - rest).length(),
        "it swings back"
    );
    Ok(())
}

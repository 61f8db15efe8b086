//! Dragging a cloth with the mouse: a ray from a camera picks a hanging cloth, a grab pulls
//! the hit point along a path, and the cloth swings back once it is released.
//!
//! `cargo run --release --example drag_cloth`

use wobble::glam::Vec3;
use wobble::picking::{grab, grab_state, move_grab, release, surface_point};
use wobble::{step, Cloth, GaussSeidel, Picker, StepParams};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut cloth = Cloth::new()
        .resolution(24, 24)
        .at(Vec3::Y)
        .pin_corners()
        .build()?;
    let mut solver = GaussSeidel::new();
    let params = StepParams {
        damping: 1.0,
        ..StepParams::default()
    };
    for _ in 0..120 {
        step(&mut cloth, &params, &mut solver, None)?; // let it fall and hang
    }

    let camera = Vec3::new(0.5, 0.4, 3.0);
    let mut picker = Picker::new(&cloth)?;
    let hit = picker
        .pick(&cloth, camera, Vec3::new(0.5, 0.4, 0.0) - camera, 100.0)?
        .ok_or("the camera ray misses the cloth")?;
    println!(
        "ray from {camera} hit triangle {} at {:.3}, {:.3} m from the camera",
        hit.triangle, hit.point, hit.distance
    );

    // Pull the point 0.4 m toward the camera and 0.3 m sideways over one second.
    let id = grab(&mut cloth, &hit, 1e-3)?;
    let rest = grab_state(&cloth, id)?.point;
    for f in 1..=60 {
        let s = f as f32 / 60.0;
        move_grab(&mut cloth, id, rest + Vec3::new(0.3 * s, 0.0, 0.4 * s))?;
        step(&mut cloth, &params, &mut solver, None)?;
    }
    let held = grab_state(&cloth, id)?;
    println!(
        "after 60 dragged frames the grabbed point is {:.1} mm from its target",
        1000.0 * held.gap()
    );

    release(&mut cloth, id)?;
    for _ in 0..180 {
        step(&mut cloth, &params, &mut solver, None)?;
    }
    let back = surface_point(&cloth, &hit)?;
    let (away, was) = ((back - rest).length(), (held.point - rest).length());
    println!(
        "released: 3 s later the point is {:.1} mm from where it hung (it was {:.1} mm away)",
        1000.0 * away,
        1000.0 * was
    );
    assert!(away < 0.5 * was, "it swings back");
    Ok(())
}

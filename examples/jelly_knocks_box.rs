//! A jelly slides along a ledge into a rapier box standing near its edge and knocks it off:
//! the soft body (wobble) and the rigid bodies (rapier3d) stepped together by
//! `wobble::RapierCoupling`, the jelly's contacts pushing the box with impulses.
//!
//! `cargo run --release --features rapier --example jelly_knocks_box`

use wobble::glam::Vec3;
use wobble::rapier3d::prelude::{ColliderBuilder, RigidBodyBuilder, Vector};
use wobble::{RapierCoupling, StepParams};

/// Top of the ledge (m); it ends at x = `LEDGE_EDGE`.
const LEDGE_TOP: f32 = 1.0;
const LEDGE_EDGE: f32 = 1.0;
/// Half the box's side (m).
const BOX_HALF: f32 = 0.15;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The 162-particle jelly (1 kg, radius 0.25 m), moved onto the ledge a centimetre above its
    // top and sliding towards the box at 3 m/s; rapier's ground replaces the jelly's own plane.
    let mut jelly = scenes::jelly(2)?;
    jelly.clear_colliders();
    let shift = Vec3::new(-0.8, LEDGE_TOP + 0.25 + 0.02 - 1.0, 0.0);
    let slices = jelly.particles_mut().slices_mut();
    for (x, v) in slices.x.iter_mut().zip(slices.v.iter_mut()) {
        x.set_xyz(x.xyz() + shift);
        v.set_xyz(Vec3::new(3.0, 0.0, 0.0));
    }
    slices.x_prev.copy_from_slice(slices.x);
    let mut coupling = RapierCoupling::new(jelly, None)?;
    coupling.friction = 0.2;

    let world = coupling.rapier_mut();
    world.insert(
        RigidBodyBuilder::fixed().translation(Vector::new(0.0, -0.1, 0.0)),
        ColliderBuilder::cuboid(5.0, 0.1, 5.0),
    );
    // The ledge: x from -1.5 m to its edge, top at LEDGE_TOP.
    world.insert(
        RigidBodyBuilder::fixed().translation(Vector::new(-0.25, LEDGE_TOP / 2.0, 0.0)),
        ColliderBuilder::cuboid(1.25, LEDGE_TOP / 2.0, 0.5),
    );
    // A 0.3 m box of 0.3 kg standing 5 cm from the edge.
    let (box_handle, _) = world.insert(
        RigidBodyBuilder::dynamic().translation(Vector::new(
            LEDGE_EDGE - BOX_HALF - 0.05,
            LEDGE_TOP + BOX_HALF,
            0.0,
        )),
        ColliderBuilder::cuboid(BOX_HALF, BOX_HALF, BOX_HALF).density(0.3 / 0.027),
    );

    let params = StepParams {
        substeps: 4,
        iterations: 10,
        ..StepParams::default()
    };
    let box_y = |c: &RapierCoupling| c.rigid_body(box_handle).map(|b| b.translation().y);
    let before = box_y(&coupling)?;
    let mut impulse = Vec3::ZERO;
    let mut peak_contacts = 0;
    for frame in 0..180 {
        let report = coupling.step(&params)?;
        impulse += report.impulse;
        peak_contacts = peak_contacts.max(report.contacts);
        if frame % 30 == 29 {
            let b = coupling.rigid_body(box_handle)?;
            let t = b.translation();
            println!(
                "t = {:.1} s: box at ({:.2}, {:.2}, {:.2}) m, moving at {:.2} m/s; {} contacts",
                (frame + 1) as f32 / 60.0,
                t.x,
                t.y,
                t.z,
                b.linvel().length(),
                report.contacts
            );
        }
    }
    let after = box_y(&coupling)?;
    let box_x = coupling.rigid_body(box_handle)?.translation().x;
    println!(
        "impulse the jelly gave the box: ({:.3}, {:.3}, {:.3}) N s; at most {peak_contacts} contacts in a substep",
        impulse.x, impulse.y, impulse.z
    );
    println!("box height before: {before:.3} m, after: {after:.3} m (ledge top {LEDGE_TOP} m)");
    let fell = after < LEDGE_TOP && box_x > LEDGE_EDGE;
    println!(
        "box fell off the ledge: {}",
        if fell { "yes" } else { "no" }
    );
    Ok(())
}

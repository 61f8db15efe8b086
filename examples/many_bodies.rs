//! Many small bodies in one frame, as a game steps them: eight hammocks with a soft ball
//! dropped into each, in one `World` whose bodies are spread over one shared pool of two
//! threads (`World::set_executor`). The same world stepped on the caller's thread alone ends
//! with the same bits.
//!
//! `cargo run --release --example many_bodies`

use std::sync::Arc;
use wobble::core::{Executor, Serial, World};
use wobble::glam::Vec3;
use wobble::{figures, Cloth, Collider, Pool, SoftBody, StepParams};

/// Eight cells 2 m apart, each a 12 x 12 hammock pinned at its corners and a ball above its
/// centre (a cloth spans from the point it is placed at).
fn hammocks(executor: Arc<dyn Executor>) -> Result<World, Box<dyn std::error::Error>> {
    let mut world = World::new();
    world.set_executor(Some(executor));
    for cell in 0..8 {
        let centre = Vec3::new(2.0 * cell as f32, 1.0, 0.0);
        let n = 12u32;
        let mut hammock = Cloth::new()
            .size(1.0, 1.0)
            .resolution(n as usize, n as usize)
            .at(centre - Vec3::new(0.5, 0.0, 0.5))
            .mass(0.25)
            .pin(0)
            .pin(n - 1)
            .pin(n * (n - 1))
            .pin(n * n - 1)
            .build()?;
        hammock.add_collider(Collider::ground(0.5, 0.0))?;
        world.add_body(hammock, None)?;
        let mut ball = SoftBody::sphere(0.2, 2)
            .at(centre + Vec3::new(0.0, 0.35, 0.0))
            .mass(0.25)
            .build()?;
        ball.add_collider(Collider::ground(0.5, 0.0))?;
        world.add_body(ball, None)?;
    }
    Ok(world)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A build without the `parallel` feature has no threads: the caller's thread alone.
    let pool = Pool::new(2).or_else(|_| Pool::new(1))?;
    let mut worlds = [
        hammocks(pool.world_executor())?,
        hammocks(Arc::new(Serial))?,
    ];
    let params = StepParams::default();
    for world in &mut worlds {
        for _ in 0..120 {
            world.step(&params)?;
        }
    }
    let hash = |w: &World| {
        let x: Vec<_> = w
            .bodies()
            .flat_map(|b| b.body().particles().x().to_vec())
            .collect();
        figures::state_hash(&x)
    };
    let world = &worlds[0];
    let lowest = |i: usize| {
        let b = world.bodies().nth(i).expect("a body").body();
        b.particles()
            .x()
            .iter()
            .map(|p| p.y)
            .fold(f32::INFINITY, f32::min)
    };
    let held = (0..8).filter(|&c| lowest(2 * c + 1) > 0.3).count();
    println!(
        "{} bodies, 2 s on {} threads: {held} of 8 balls held by their hammocks",
        world.len(),
        pool.threads()
    );
    println!(
        "state hash on 2 threads {:016x}, on the caller's thread {:016x}: same bits {}",
        hash(&worlds[0]),
        hash(&worlds[1]),
        hash(&worlds[0]) == hash(&worlds[1])
    );
    assert_eq!(held, 8, "a ball fell through its hammock");
    assert_eq!(hash(&worlds[0]), hash(&worlds[1]));
    Ok(())
}

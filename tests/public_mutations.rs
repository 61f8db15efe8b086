//! Every public mutation a game can make to a body or a world between two steps, each tried
//! with good and bad arguments: the call makes the change or returns an error, and the next
//! step either steps (every value finite) or returns an error; nothing panics (issue 54, item
//! 3). The body is a pinned cloth with a collider, an attachment and wind, in a world of two
//! bodies, so that every table a step reads is there to spoil.

use std::panic::{catch_unwind, AssertUnwindSafe};
use wobble::core::figures;
use wobble::prelude::*;

/// A mutation: its name and what it does to the world and the first body.
type Mutation = (&'static str, fn(&mut World, BodyHandle) -> Result<()>);

fn body_of(world: &mut World, h: BodyHandle) -> &mut Body {
    world
        .body_mut(h)
        .expect("the body is in the world")
        .body_mut()
}

fn mutations() -> Vec<Mutation> {
    vec![
        ("pin a particle", |w, h| {
            body_of(w, h).particles_mut().pin(3)
        }),
        ("pin past the end", |w, h| {
            body_of(w, h).particles_mut().pin(1 << 20)
        }),
        ("set a mass", |w, h| {
            body_of(w, h).particles_mut().set_mass(5, 0.2)
        }),
        ("set a zero mass", |w, h| {
            body_of(w, h).particles_mut().set_mass(5, 0.0)
        }),
        ("set a negative mass", |w, h| {
            body_of(w, h).particles_mut().set_mass(5, -1.0)
        }),
        ("set a NaN mass", |w, h| {
            body_of(w, h).particles_mut().set_mass(5, f32::NAN)
        }),
        ("set a mass past the end", |w, h| {
            body_of(w, h).particles_mut().set_mass(1 << 20, 1.0)
        }),
        ("set a velocity", |w, h| {
            body_of(w, h).particles_mut().set_velocity(7, Vec3::X)
        }),
        ("set a NaN velocity", |w, h| {
            body_of(w, h).particles_mut().set_velocity(7, Vec3::NAN)
        }),
        ("set every velocity", |w, h| {
            body_of(w, h).particles_mut().set_all_velocities(Vec3::Y)
        }),
        ("teleport", |w, h| {
            body_of(w, h)
                .particles_mut()
                .teleport(9, Vec3::new(0.1, 2.0, 0.0))
        }),
        ("teleport to infinity", |w, h| {
            body_of(w, h).particles_mut().teleport(9, Vec3::INFINITY)
        }),
        ("teleport past the end", |w, h| {
            body_of(w, h)
                .particles_mut()
                .teleport(usize::MAX, Vec3::ZERO)
        }),
        ("add a force", |w, h| {
            body_of(w, h).particles_mut().add_force(4, Vec3::Y)
        }),
        ("add a NaN force", |w, h| {
            body_of(w, h).particles_mut().add_force(4, Vec3::NAN)
        }),
        ("add an impulse past the end", |w, h| {
            body_of(w, h).particles_mut().add_impulse(1 << 30, Vec3::Y)
        }),
        ("write a NaN position", |w, h| {
            body_of(w, h).particles_mut().x_mut()[6].y = f32::NAN;
            Ok(())
        }),
        ("write a negative inverse mass", |w, h| {
            body_of(w, h).particles_mut().x_mut()[6].w = -1.0;
            Ok(())
        }),
        ("write an infinite velocity", |w, h| {
            body_of(w, h).particles_mut().v_mut()[2].z = f32::INFINITY;
            Ok(())
        }),
        ("write a NaN force", |w, h| {
            body_of(w, h).particles_mut().force_mut()[2].x = f32::NAN;
            Ok(())
        }),
        ("write a NaN start position", |w, h| {
            body_of(w, h).particles_mut().x_prev_mut()[2].x = f32::NAN;
            Ok(())
        }),
        ("translate", |w, h| {
            body_of(w, h).translate(DVec3::new(1e4, 0.0, 0.0))
        }),
        ("translate by NaN", |w, h| {
            body_of(w, h).translate(DVec3::NAN)
        }),
        ("set the origin", |w, h| {
            body_of(w, h).set_origin(DVec3::new(0.0, 1.0, 0.0))
        }),
        ("recentre", |w, h| body_of(w, h).recentre()),
        ("a negative recentre distance", |w, h| {
            body_of(w, h).set_recentre_distance(-1.0)
        }),
        ("keep the origin", |w, h| {
            body_of(w, h).keep_origin();
            Ok(())
        }),
        ("add a collider", |w, h| {
            body_of(w, h)
                .add_collider(Collider::sphere(Vec3::new(0.0, 0.5, 0.0), 0.2)?)
                .map(|_| ())
        }),
        ("spoil a collider in place", |w, h| {
            if let Some(c) = body_of(w, h).colliders_mut().first_mut() {
                c.friction = f32::NAN;
            }
            Ok(())
        }),
        ("move a collider past the end", |w, h| {
            body_of(w, h).move_collider(
                99,
                Shape::Sphere {
                    center: Vec3::ZERO,
                    radius: 1.0,
                },
            )
        }),
        ("remove a collider past the end", |w, h| {
            body_of(w, h).remove_collider(99).map(|_| ())
        }),
        ("remove every collider", |w, h| {
            body_of(w, h).clear_colliders();
            Ok(())
        }),
        ("attach past the end", |w, h| {
            body_of(w, h).attach(1 << 20).map(|_| ())
        }),
        ("move an attachment", |w, h| {
            body_of(w, h).move_attachment(0, Vec3::new(0.0, 1.2, 0.0))
        }),
        ("move an attachment to NaN", |w, h| {
            body_of(w, h).move_attachment(0, Vec3::NAN)
        }),
        ("move an attachment past the end", |w, h| {
            body_of(w, h).move_attachment(7, Vec3::ZERO)
        }),
        ("release an attachment", |w, h| {
            body_of(w, h).release_attachment(0, 0.1)
        }),
        ("release an attachment with no mass", |w, h| {
            body_of(w, h).release_attachment(0, 0.0)
        }),
        ("set a bad wind", |w, h| {
            body_of(w, h).set_wind(Some(Wind::new(Vec3::X, -1.0, 1.0, 0.0)?))
        }),
        ("spoil the wind in place", |w, h| {
            if let Some(wind) = body_of(w, h).wind_mut() {
                wind.drag = f32::NAN;
            }
            Ok(())
        }),
        ("push a distance constraint past the particles", |w, h| {
            let d = &mut body_of(w, h).constraints_mut().distance;
            d.pairs.push([0, 1 << 20]);
            d.rest.push(0.1);
            d.compliance.push(0.0);
            Ok(())
        }),
        ("push a distance pair without its rest length", |w, h| {
            body_of(w, h).constraints_mut().distance.pairs.push([0, 1]);
            Ok(())
        }),
        ("renumber with a bad permutation", |w, h| {
            body_of(w, h).renumber_particles(&[0, 0, 1])
        }),
        ("a negative world thickness", |w, _| {
            w.thickness = -1.0;
            Ok(())
        }),
        ("a NaN world friction", |w, _| {
            w.friction = f32::NAN;
            Ok(())
        }),
        ("self-collision at a NaN thickness", |w, h| {
            w.enable_self_collision(h, f32::NAN)
        }),
        ("self-collision on, then off", |w, h| {
            w.enable_self_collision(h, 0.02)?;
            w.disable_self_collision(h)
        }),
        ("a world collider", |w, _| {
            w.add_collider(Collider::ground(0.5, 0.0))
        }),
        ("remove the body, then use its handle", |w, h| {
            w.remove_body(h)?;
            w.enable_self_collision(h, 0.01)
        }),
    ]
}

fn world() -> (World, BodyHandle) {
    let mut cloth = Cloth::new()
        .resolution(8, 8)
        .at(Vec3::new(0.0, 1.0, 0.0))
        .pin_corners()
        .build()
        .unwrap();
    cloth
        .add_collider(Collider::sphere(Vec3::new(0.0, 0.6, 0.0), 0.2).unwrap())
        .unwrap();
    cloth.attach(10).unwrap();
    cloth
        .set_wind(Some(
            Wind::new(Vec3::new(0.0, 0.0, 3.0), 1.2, 1.0, 0.2).unwrap(),
        ))
        .unwrap();
    let rope = Rope::new().build().unwrap();
    let mut world = World::new();
    let h = world.add_body(cloth, None).unwrap();
    world.add_body(rope, None).unwrap();
    (world, h)
}

#[test]
fn every_public_mutation_between_two_steps_is_made_or_refused_and_no_step_panics() {
    let params = StepParams {
        substeps: 2,
        ..StepParams::default()
    };
    let mut panics = Vec::new();
    let (mut refused, mut made) = (0, 0);
    for (name, mutate) in mutations() {
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let (mut world, h) = world();
            world.step(&params).expect("a healthy first step");
            let call = mutate(&mut world, h);
            let stepped = world.step(&params);
            if stepped.is_ok() {
                for b in world.bodies() {
                    assert!(
                        figures::all_finite(b.body()),
                        "{name}: Ok with a non-finite body"
                    );
                }
            }
            // And the step after, whatever the last one said.
            let again = world.step(&params);
            (call.is_err(), stepped.is_err(), again.is_err())
        }));
        match outcome {
            Ok((call_refused, _, _)) => {
                if call_refused {
                    refused += 1;
                } else {
                    made += 1;
                }
            }
            Err(_) => panics.push(name),
        }
    }
    assert!(
        panics.is_empty(),
        "these mutations made something panic: {panics:?}"
    );
    // Both kinds are present, so the list tries changes and refusals alike.
    assert!(
        refused >= 15 && made >= 15,
        "refused {refused}, made {made}"
    );
}

#[test]
fn a_refused_call_leaves_the_body_as_it_was() {
    let (mut world, h) = world();
    world.step(&StepParams::default()).unwrap();
    let before = figures::state_hash(world.body(h).unwrap().body().particles().x());
    let b = body_of(&mut world, h);
    assert!(b.particles_mut().set_mass(5, -1.0).is_err());
    assert!(b.particles_mut().teleport(9, Vec3::NAN).is_err());
    assert!(b.particles_mut().set_velocity(1 << 20, Vec3::X).is_err());
    assert!(b.move_attachment(0, Vec3::NAN).is_err());
    assert!(b
        .set_wind(Some(Wind::new(Vec3::X, 1.2, 1.0, 0.0).unwrap()))
        .is_ok());
    let after = figures::state_hash(world.body(h).unwrap().body().particles().x());
    assert_eq!(before, after);
}

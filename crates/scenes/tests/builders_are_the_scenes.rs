//! The builders with the standard scenes' settings build the scenes of docs/SCENES.md, bit
//! for bit.

use glam::Vec3;
use solver_core::build::{Cloth, Flag, Rope, SoftBody, TetBody};
use solver_core::{Body, Collider};

/// Same particles, constraints (every kind, constraint by constraint), topology, wind and
/// colliders, bit for bit; `structural` is compared only when `structural` is true.
fn assert_same(a: &Body, b: &Body, structural: bool) {
    let bits = |x: &[solver_core::Packed4]| -> Vec<[u32; 4]> {
        x.iter()
            .map(|p| [p.x, p.y, p.z, p.w].map(f32::to_bits))
            .collect()
    };
    assert_eq!(
        bits(&a.particles().x()),
        bits(&b.particles().x()),
        "positions"
    );
    assert_eq!(bits(&a.particles().x_prev()), bits(&b.particles().x_prev()));
    assert_eq!(bits(&a.particles().v()), bits(&b.particles().v()));
    let mass = |m: &[f32]| m.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(
        mass(&a.particles().mass()),
        mass(&b.particles().mass()),
        "masses"
    );
    assert_eq!(a.constraints().len(), b.constraints().len());
    let (ka, kb): (Vec<_>, Vec<_>) = (
        a.constraints().kinds().collect(),
        b.constraints().kinds().collect(),
    );
    assert_eq!(ka.len(), kb.len(), "kinds");
    let mut ga = [Vec3::ZERO; solver_core::constraints::MAX_ARITY];
    let mut gb = ga;
    for (ka, kb) in ka.iter().zip(&kb) {
        assert_eq!((ka.name(), ka.len()), (kb.name(), kb.len()));
        for c in 0..ka.len() {
            assert_eq!(ka.particles(c), kb.particles(c), "{} {c}", ka.name());
            assert_eq!(ka.compliance(c).to_bits(), kb.compliance(c).to_bits());
            let (va, vb) = (
                ka.evaluate(c, &a.particles().x(), &mut ga),
                kb.evaluate(c, &b.particles().x(), &mut gb),
            );
            assert_eq!(va.to_bits(), vb.to_bits(), "{} {c}", ka.name());
        }
    }
    assert_eq!(a.topology().triangles, b.topology().triangles);
    assert_eq!(a.topology().tets, b.topology().tets);
    assert_eq!(a.topology().closed, b.topology().closed);
    assert_eq!(
        a.topology().rest_volume.to_bits(),
        b.topology().rest_volume.to_bits()
    );
    if structural {
        assert_eq!(a.topology().structural, b.topology().structural);
    }
    assert_eq!(a.wind(), b.wind());
    assert_eq!(a.colliders(), b.colliders());
}

#[test]
fn cloth_with_the_scene_settings_is_the_scene() {
    for n in [2, 5, 16] {
        let built = Cloth::new()
            .resolution(n, n)
            .at(Vec3::Y)
            .pin_corners()
            .build()
            .unwrap();
        assert_same(&built, &scenes::cloth(n).unwrap(), true);
    }
}

#[test]
fn flag_with_the_scene_settings_is_the_scene() {
    for n in [2, 7, 16] {
        let built = Flag::new()
            .resolution(2 * n - 1, n)
            .at(Vec3::Y)
            .build()
            .unwrap();
        assert_same(&built, &scenes::flag(n).unwrap(), true);
    }
}

#[test]
fn rope_with_the_scene_settings_is_the_scene() {
    let built = Rope::new()
        .particles(33)
        .at(Vec3::Y)
        .pin_start()
        .build()
        .unwrap();
    assert_same(&built, &scenes::rope(33).unwrap(), true);
}

#[test]
fn soft_and_tet_bodies_with_the_scene_settings_are_the_scenes() {
    let ground = Collider::ground(0.5, 0.0);
    let jelly = SoftBody::sphere(0.25, 2)
        .at(Vec3::Y)
        .collider(ground)
        .build()
        .unwrap();
    assert_same(&jelly, &scenes::jelly(2).unwrap(), false);
    assert_eq!(
        jelly.topology().structural,
        jelly.constraints().distance.len()
    );
    let cube = TetBody::cube(0.5, 3)
        .at(Vec3::new(-0.25, 0.5, -0.25))
        .collider(ground)
        .build()
        .unwrap();
    assert_same(&cube, &scenes::cube(3).unwrap(), false);
    assert_eq!(
        cube.topology().structural,
        cube.constraints().distance.len()
    );
}

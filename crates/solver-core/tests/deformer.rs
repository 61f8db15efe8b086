//! The mesh deformer: forces act locally, the mesh returns to rest, the parallel path equals
//! the serial one bit for bit.

use solver_core::figures::state_hash;
use solver_core::glam::Vec3;
use solver_core::interaction::deformer::{Deformer, Falloff, Push};
use solver_core::mesh::shapes::icosphere;

fn ball() -> Vec<Vec3> {
    icosphere(Vec3::ZERO, 1.0, 3).unwrap().positions
}

#[test]
fn near_vertices_move_more_than_far_ones_and_the_mesh_returns_to_rest() {
    for falloff in [
        Falloff::default(),
        Falloff::Gaussian { radius: 0.5 },
        Falloff::Linear { radius: 0.8 },
    ] {
        let rest = ball();
        let mut d = Deformer::new(&rest, 20.0, 5.0, falloff).unwrap();
        let point = Vec3::new(0.0, 1.2, 0.0);
        let dt = 1.0 / 60.0;
        for _ in 0..10 {
            d.add_force(point, Push::Along(-Vec3::Y), 10.0).unwrap();
            d.update(dt).unwrap();
        }
        let disp = d.displacements();
        let dist: Vec<f32> = rest.iter().map(|p| (*p - point).length()).collect();
        let mean = |f: &dyn Fn(f32) -> bool| {
            let sel: Vec<f32> = (0..rest.len())
                .filter(|&i| f(dist[i]))
                .map(|i| disp[i].length())
                .collect();
            sel.iter().sum::<f32>() / sel.len() as f32
        };
        let near = mean(&|d| d < 0.5);
        let far = mean(&|d| d > 1.5);
        eprintln!("{falloff:?}: near {near}, far {far}");
        assert!(near > 3.0 * far, "{falloff:?}: near {near} vs far {far}");
        // The top vertex went down, along the push.
        let top = (0..rest.len())
            .min_by(|&a, &b| dist[a].total_cmp(&dist[b]))
            .unwrap();
        assert!(disp[top].y < -0.01);
        // Released, the damped springs bring every vertex back within 1 mm.
        let mut steps = 0;
        while d.max_displacement() >= 1e-3 {
            d.update(dt).unwrap();
            steps += 1;
            assert!(steps <= 300, "not back to rest after {steps} steps");
        }
    }
}

#[test]
fn radial_pushes_point_away_from_the_force_point() {
    let rest = ball();
    let mut d = Deformer::new(&rest, 20.0, 5.0, Falloff::default()).unwrap();
    d.add_force(Vec3::ZERO, Push::Radial, 5.0).unwrap();
    d.update(1.0 / 60.0).unwrap();
    for (p, u) in rest.iter().zip(d.displacements()) {
        assert!(u.dot(*p) > 0.0, "radially outward");
    }
}

#[test]
fn the_parallel_path_equals_the_serial_one_bit_for_bit() {
    let rest: Vec<Vec3> = (0..20_000)
        .map(|i| {
            Vec3::new(
                (i % 173) as f32 * 0.01,
                (i / 173) as f32 * 0.01,
                ((i * 7) % 11) as f32 * 0.01,
            )
        })
        .collect();
    let mut a = Deformer::new(&rest, 30.0, 4.0, Falloff::default()).unwrap();
    let mut b = a.clone();
    for s in 0..20 {
        let p = Vec3::new(0.5 + 0.02 * s as f32, 0.3, 0.0);
        a.add_force(p, Push::Along(Vec3::new(0.0, -1.0, 0.3)), 4.0)
            .unwrap();
        a.add_force(p, Push::Radial, 1.0).unwrap();
        a.update(1.0 / 60.0).unwrap();
        b.add_force_parallel(p, Push::Along(Vec3::new(0.0, -1.0, 0.3)), 4.0)
            .unwrap();
        b.add_force_parallel(p, Push::Radial, 1.0).unwrap();
        b.update_parallel(1.0 / 60.0).unwrap();
    }
    assert!(a.max_displacement() > 0.01);
    assert_eq!(state_hash(&a.position), state_hash(&b.position));
    assert_eq!(state_hash(&a.velocity), state_hash(&b.velocity));
}

#[test]
fn bad_deformer_input_is_an_error() {
    let rest = ball();
    assert!(Deformer::new(&[], 1.0, 1.0, Falloff::default()).is_err());
    assert!(Deformer::new(&[Vec3::NAN], 1.0, 1.0, Falloff::default()).is_err());
    assert!(Deformer::new(&rest, -1.0, 1.0, Falloff::default()).is_err());
    assert!(Deformer::new(&rest, 1.0, 1.0, Falloff::Gaussian { radius: 0.0 }).is_err());
    let mut d = Deformer::new(&rest, 20.0, 5.0, Falloff::default()).unwrap();
    assert!(d
        .add_force(Vec3::ZERO, Push::Along(Vec3::ZERO), 1.0)
        .is_err());
    assert!(d.add_force(Vec3::ZERO, Push::Radial, f32::NAN).is_err());
    assert!(d.update(0.0).is_err());
    assert!(d.update(1.0).is_err(), "dt √k = 4.5: unstable, refused");
}

//! Every new constraint kind through the common interface: arity, renumbering, residual,
//! Gauss-Seidel stepping.

use solver_core::constraints::{
    ConstraintKind, DihedralBending, IsometricBending, NeoHookean, SurfaceVolume, TetherDistance,
    Tethers, MAX_ARITY,
};
use solver_core::glam::Vec3;
use solver_core::interaction::picking::{grab, TriangleBvh};
use solver_core::{figures, step, Body, GaussSeidel, Material, Packed4, StepParams};

/// A body carrying one table of every kind (a cube's tets, its surface, a cloth-like use of its
/// boundary triangles for bending, tethers to two pinned corners, a drag).
fn everything() -> Body {
    let mut body = scenes::cube(2).unwrap();
    body.particles_mut().pin(0).unwrap();
    body.particles_mut().pin(2).unwrap();
    let x = body.particles().x().to_vec();
    let tris = body.topology().triangles.clone();
    let tets = body.topology().tets.clone();
    let c = &mut body.constraints_mut();
    c.push_kind(Box::new(
        DihedralBending::from_triangles(&x, &tris, 1e-3).unwrap(),
    ));
    c.push_kind(Box::new(
        IsometricBending::from_triangles(&x, &tris, 1e-3).unwrap(),
    ));
    c.push_kind(Box::new(SurfaceVolume::new(&x, &tris, 0.0).unwrap()));
    c.push_kind(Box::new(
        NeoHookean::new(&x, &tets, &Material::new(1e4, 0.3).unwrap()).unwrap(),
    ));
    let tethers = Tethers::from_pins(
        &body.particles().x(),
        &body.constraints().distance,
        TetherDistance::Graph,
        2,
        0.0,
    )
    .unwrap();
    body.constraints_mut().push_kind(Box::new(tethers));
    let bvh = TriangleBvh::build(&body.topology().triangles, &body.particles().x()).unwrap();
    let hit = bvh
        .raycast(
            &body.particles().x(),
            Vec3::new(0.01, 3.0, 0.02),
            -Vec3::Y,
            10.0,
        )
        .unwrap()
        .unwrap();
    grab(&mut body, &hit, 1e-4).unwrap();
    body.topology_changed();
    body.validate().unwrap();
    body
}

#[test]
fn every_kind_keeps_its_values_when_particles_are_renumbered() {
    let body = everything();
    let names: Vec<&str> = body.constraints().kinds().map(|k| k.name()).collect();
    assert_eq!(
        names,
        [
            "distance",
            "tet_volume",
            "dihedral_bending",
            "isometric_bending",
            "surface_volume",
            "neohookean",
            "tether",
            "drag"
        ]
    );
    // A deformed state, then a reversing permutation of the particles.
    let x: Vec<Packed4> = body
        .particles()
        .x()
        .iter()
        .map(|p| {
            Packed4::new(
                p.xyz() + Vec3::new(0.05 * p.y, -0.03 * p.x, 0.02 * p.z * p.z),
                p.w,
            )
        })
        .collect();
    let n = x.len();
    let new_index: Vec<u32> = (0..n as u32).map(|i| (i * 7 + 3) % n as u32).collect();
    let mut seen = vec![false; n];
    new_index.iter().for_each(|&i| seen[i as usize] = true);
    assert!(seen.iter().all(|&s| s), "a permutation");
    let mut xr = vec![Packed4::default(); n];
    for (old, &new) in new_index.iter().enumerate() {
        xr[new as usize] = x[old];
    }
    let mut renumbered = body.constraints().clone();
    renumbered.distance.remap_particles(&new_index);
    for k in renumbered.extra.iter_mut() {
        k.remap_particles(&new_index);
    }
    let mut g = [Vec3::ZERO; MAX_ARITY];
    let mut h = [Vec3::ZERO; MAX_ARITY];
    for (a, b) in body.constraints().kinds().zip(renumbered.kinds()) {
        assert_eq!(a.len(), b.len());
        for c in 0..a.len() {
            let va = a.evaluate(c, &x, &mut g);
            let vb = b.evaluate(c, &xr, &mut h);
            assert!(
                (va - vb).abs() <= 1e-5 * (1.0 + va.abs()),
                "{} {c}: {va} vs {vb}",
                a.name()
            );
            if !a.is_global() {
                assert!(a.particles(c).len() <= MAX_ARITY);
                for (s, (&p, &q)) in a.particles(c).iter().zip(b.particles(c)).enumerate() {
                    assert_eq!(new_index[p as usize], q);
                    assert!(
                        (g[s] - h[s]).length() <= 1e-4 * (1.0 + g[s].length()),
                        "{} grad",
                        a.name()
                    );
                }
            }
        }
    }
    // The residual sees every kind, the global one included.
    let r0 = figures::residual(body.constraints(), &x);
    let r1 = figures::residual(&renumbered, &xr);
    assert!(r0.is_finite() && r0 > 0.0);
    assert!((r0 - r1).abs() <= 1e-5 * r0);
}

#[test]
fn gauss_seidel_steps_a_body_with_every_kind() {
    let mut body = everything();
    let mut gs = GaussSeidel::new();
    let mut r = Vec::new();
    for _ in 0..30 {
        r.clear();
        step(&mut body, &StepParams::default(), &mut gs, Some(&mut r)).unwrap();
    }
    assert!(figures::all_finite(&body));
    assert!(r.iter().all(|v| v.is_finite()));
}

#[test]
fn one_xpbd_update_with_one_degeneracy_guard() {
    use solver_core::constraints::{xpbd_delta_lambda, MIN_DENOMINATOR};
    // Δλ = (-C - α̃λ) / denom.
    assert_eq!(
        xpbd_delta_lambda(0.5, 0.25, 2.0, 4.0),
        Some((-0.5 - 0.5) / 4.0)
    );
    for degenerate in [0.0, MIN_DENOMINATOR, -1.0, f32::INFINITY, f32::NAN] {
        assert_eq!(
            xpbd_delta_lambda(1.0, 0.0, 0.0, degenerate),
            None,
            "{degenerate}"
        );
    }
    // A rigid constraint between two pinned particles: the guard, not a division by zero.
    let (mut a, mut b) = (
        Packed4::new(Vec3::ZERO, 0.0),
        Packed4::new(Vec3::X * 2.0, 0.0),
    );
    let mut lambda = 0.0;
    solver_core::constraints::project_distance_pair(&mut a, &mut b, 1.0, 0.0, &mut lambda, 1.0);
    assert_eq!((a.x, b.x, lambda), (0.0, 2.0, 0.0));
}

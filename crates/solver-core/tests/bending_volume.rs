//! Bending and volume constraints: gradients against finite differences, specialised paths
//! against the generic projection, and the done-when figures (strip droop, jelly volume, cube
//! rest).

use proptest::prelude::*;
use solver_core::build::{add_bending_links, body_from_trimesh};
use solver_core::constraints::{
    bending::{bending_stencils, dihedral_angle_and_grad, DIHEDRAL_MAX_STEP},
    project_generic, project_range, project_tet_volumes, ConstraintKind, DihedralBending,
    IsometricBending, SurfaceVolume, TetVolume, MAX_ARITY,
};
use solver_core::glam::Vec3;
use solver_core::mesh::TriMesh;
use solver_core::{figures, step, Body, GaussSeidel, Packed4, StepParams};

fn packed(p: &[Vec3]) -> Vec<Packed4> {
    p.iter().map(|&v| Packed4::new(v, 1.0)).collect()
}

/// Checks every gradient of constraint `c` against central differences of `evaluate`.
fn check_gradient(kind: &dyn ConstraintKind, c: usize, x: &[Packed4], tol: f32) {
    let mut grad = [Vec3::ZERO; MAX_ARITY];
    let mut scratch = [Vec3::ZERO; MAX_ARITY];
    kind.evaluate(c, x, &mut grad);
    let h = 1e-3f32;
    for (slot, &p) in kind.particles(c).iter().enumerate() {
        // `axis` indexes a `Vec3` (`grad[slot][axis]`); clippy's hint reads it as an index into `grad`.
        #[allow(clippy::needless_range_loop)]
        for axis in 0..3 {
            let mut xp = x.to_vec();
            let mut xm = x.to_vec();
            let bump = |q: &mut Packed4, d: f32| match axis {
                0 => q.x += d,
                1 => q.y += d,
                _ => q.z += d,
            };
            bump(&mut xp[p as usize], h);
            bump(&mut xm[p as usize], -h);
            let fd = (kind.evaluate(c, &xp, &mut scratch) - kind.evaluate(c, &xm, &mut scratch))
                / (2.0 * h);
            let an = grad[slot][axis];
            assert!(
                (fd - an).abs() <= tol * (1.0 + an.abs()),
                "{} slot {slot} axis {axis}: analytic {an}, numeric {fd}",
                kind.name()
            );
        }
    }
}

fn stencil_strategy() -> impl Strategy<Value = [Vec3; 4]> {
    let v = || (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0).prop_map(|(a, b, c)| Vec3::new(a, b, c));
    (v(), v(), v(), v()).prop_map(|(a, b, c, d)| {
        // A stencil with a 1 m edge along x and wings well away from it, so that no triangle
        // is close to degenerate.
        let x0 = Vec3::ZERO;
        let x1 = Vec3::X;
        // Wings may project beyond the edge's ends (s outside [0, 1]) and fold far.
        let x2 = Vec3::new(0.5, 1.0, 0.0) + Vec3::new(1.2, 0.3, 1.5) * a + 0.1 * c;
        let x3 = Vec3::new(0.5, -1.0, 0.0) + Vec3::new(1.2, 0.3, 1.5) * b + 0.1 * d;
        [x0, x1, x2, x3]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn dihedral_gradient_matches_finite_differences(rest in stencil_strategy(), now in stencil_strategy()) {
        let x0 = packed(&rest);
        // The signed angle θ and ∇θ over the whole range.
        let mut g = [Vec3::ZERO; MAX_ARITY];
        let theta = dihedral_angle_and_grad(now, &mut g);
        let h = 1e-3f32;
        let mut scratch = [Vec3::ZERO; MAX_ARITY];
        for slot in 0..4 {
            for axis in 0..3 {
                let (mut p, mut m) = (now, now);
                p[slot][axis] += h;
                m[slot][axis] -= h;
                let fd = (dihedral_angle_and_grad(p, &mut scratch)
                    - dihedral_angle_and_grad(m, &mut scratch))
                    / (2.0 * h);
                prop_assert!((fd - g[slot][axis]).abs() <= 2e-2 * (1.0 + fd.abs()), "θ {theta}: slot {slot} axis {axis}: {} vs {fd}", g[slot][axis]);
            }
        }
        // The constraint C = |θ| - θ0, away from its kink at θ = 0 and inside the trust region.
        let kind = DihedralBending::from_stencils(&x0, &[[0, 1, 2, 3]], 0.0).unwrap();
        let c = kind.evaluate(0, &packed(&now), &mut scratch);
        prop_assume!(theta.abs() > 0.05 && c.abs() < DIHEDRAL_MAX_STEP - 0.05);
        check_gradient(&kind, 0, &packed(&now), 2e-2);
    }

    #[test]
    fn isometric_gradient_matches_finite_differences(rest in stencil_strategy(), now in stencil_strategy()) {
        let x0 = packed(&rest);
        let kind = IsometricBending::from_stencils(&x0, &[[0, 1, 2, 3]], 0.0).unwrap();
        // Away from C = 0, where |v| has no gradient.
        let x = packed(&now);
        let mut g = [Vec3::ZERO; MAX_ARITY];
        prop_assume!(kind.evaluate(0, &x, &mut g) > 0.05);
        check_gradient(&kind, 0, &x, 2e-2);
    }

    #[test]
    fn tet_volume_gradient_matches_finite_differences(now in stencil_strategy()) {
        let rest = [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z];
        let kind = TetVolume::new(&packed(&rest), &[[0, 1, 2, 3]], 0.0).unwrap();
        check_gradient(&kind, 0, &packed(&now), 1e-2);
    }
}

#[test]
fn flat_stencils_have_zero_bending_and_dihedral_bending_is_signed() {
    let flat = [
        Vec3::ZERO,
        Vec3::X,
        Vec3::new(0.3, 0.8, 0.0),
        Vec3::new(0.6, -0.7, 0.0),
    ];
    let x = packed(&flat);
    let mut g = [Vec3::ZERO; MAX_ARITY];
    let iso = IsometricBending::from_stencils(&x, &[[0, 1, 2, 3]], 0.0).unwrap();
    assert!(iso.evaluate(0, &x, &mut g).abs() < 1e-6);
    let dih = DihedralBending::from_stencils(&x, &[[0, 1, 2, 3]], 0.0).unwrap();
    assert!(dih.rest[0].abs() < 1e-6);
    // Folding the wing x3 up or down by 90 degrees gives θ = ∓π/2; the signed C clamps to
    // the trust region on the side of the fold.
    let mut up = flat;
    up[3] = Vec3::new(0.6, 0.0, 0.7);
    let mut down = flat;
    down[3] = Vec3::new(0.6, 0.0, -0.7);
    let a = dihedral_angle_and_grad(up, &mut g);
    let b = dihedral_angle_and_grad(down, &mut g);
    assert!((a + std::f32::consts::FRAC_PI_2).abs() < 1e-4, "{a}");
    assert!((a + b).abs() < 1e-4, "{a} {b}");
    assert_eq!(dih.evaluate(0, &packed(&up), &mut g), -DIHEDRAL_MAX_STEP);
    assert_eq!(dih.evaluate(0, &packed(&down), &mut g), DIHEDRAL_MAX_STEP);
    // A small fold up or down gives opposite C, and gradients pointing back to flat.
    let mut up = flat;
    up[3].z = 0.1;
    let mut down = flat;
    down[3].z = -0.1;
    // (The projection moves the free wing by -C ∇C, times positive factors.)
    let c1 = dih.evaluate(0, &packed(&up), &mut g);
    assert!(-c1 * g[3].z < 0.0, "up: C {c1}, ∇3 {:?}", g[3]);
    let c2 = dih.evaluate(0, &packed(&down), &mut g);
    assert!(-c2 * g[3].z > 0.0, "down: C {c2}, ∇3 {:?}", g[3]);
    assert!(c1 < -0.1 && (c1 + c2).abs() < 1e-5, "{c1} {c2}");
    // Folded flat onto itself from either side: θ = ±π, one configuration.
    let mut over = flat;
    over[3] = Vec3::new(0.6, 0.7, 1e-3);
    let mut under = flat;
    under[3] = Vec3::new(0.6, 0.7, -1e-3);
    let t1 = dihedral_angle_and_grad(over, &mut g);
    let t2 = dihedral_angle_and_grad(under, &mut g);
    assert!(t1 < -3.1 && t2 > 3.1, "{t1} {t2}");
    // A rest state folded onto itself: C continuous across the fold.
    let folded = DihedralBending::from_stencils(&packed(&over), &[[0, 1, 2, 3]], 0.0).unwrap();
    let c = folded.evaluate(0, &packed(&under), &mut g);
    assert!(c.abs() < 1e-2, "{c}");
    assert!(iso.evaluate(0, &packed(&up), &mut g) > 0.1);
}

#[test]
fn bending_stencils_pair_the_triangles_of_each_inner_edge() {
    let body = scenes::cloth(4).unwrap();
    let s = bending_stencils(&body.topology().triangles);
    // Inner edges of an n x n grid with one diagonal per quad: 3(n-1)^2 - 2(n-1).
    assert_eq!(s.len(), 3 * 9 - 2 * 3);
    for st in &s {
        let mut sorted = *st;
        sorted.sort_unstable();
        assert!(sorted.windows(2).all(|w| w[0] != w[1]));
    }
}

fn random_state(n: usize, seed: u64) -> Vec<Packed4> {
    let mut s = seed;
    let mut next = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 40) as f32) / (1u64 << 24) as f32
    };
    (0..n)
        .map(|_| Packed4::new(Vec3::new(next(), next(), next()), 0.5 + next()))
        .collect()
}

#[test]
fn specialised_paths_equal_the_generic_projection() {
    let cube = solver_core::mesh::shapes::cube_tets(2, Vec3::ZERO, 1.0).unwrap();
    let x0: Vec<Packed4> = cube
        .positions
        .iter()
        .map(|&p| Packed4::new(p, 1.0))
        .collect();
    let table = TetVolume::new(&x0, &cube.tets, 1e-3).unwrap();
    let mut perturbed = x0.clone();
    for (p, r) in perturbed.iter_mut().zip(random_state(x0.len(), 7)) {
        p.x += 0.1 * r.x;
        p.y += 0.1 * r.y;
        p.z += 0.1 * r.z;
        p.w = r.w;
    }
    let (mut xa, mut xb, mut xc) = (perturbed.clone(), perturbed.clone(), perturbed.clone());
    let (mut la, mut lb, mut lc) = (
        vec![0.0; table.len()],
        vec![0.0; table.len()],
        vec![0.0; table.len()],
    );
    let inv_dt2 = 3600.0;
    for (c, l) in la.iter_mut().enumerate() {
        project_generic(&table, c, &mut xa, l, table.compliance[c] * inv_dt2, 1.0);
    }
    project_tet_volumes(&mut xb, &table, 0..table.len(), &mut lb, inv_dt2, 1.0);
    project_range(&table, 0..table.len(), &mut xc, &mut lc, inv_dt2, 1.0);
    for k in 0..xa.len() {
        assert!(
            (xa[k].xyz() - xb[k].xyz()).length() <= 1e-6,
            "tet fast path, particle {k}"
        );
        assert_eq!(xa[k], xc[k], "project_range, particle {k}");
    }
    for c in 0..la.len() {
        assert!((la[c] - lb[c]).abs() <= 1e-5 * (1.0 + la[c].abs()));
    }

    let cloth = scenes::cloth(5).unwrap();
    let mut x = cloth.particles().x().to_vec();
    let noise = random_state(x.len(), 3);
    for (p, r) in x.iter_mut().zip(noise) {
        p.y += 0.2 * r.y;
        p.w = r.w;
    }
    let tris = &cloth.topology().triangles;
    let x0 = &cloth.particles().x();
    generic_equals_range(
        &DihedralBending::from_triangles(x0, tris, 1e-4).unwrap(),
        &x,
    );
    generic_equals_range(
        &IsometricBending::from_triangles(x0, tris, 1e-4).unwrap(),
        &x,
    );
}

/// `project_range` (no dynamic dispatch) gives bit-for-bit the state of `project_generic`.
fn generic_equals_range<K: ConstraintKind>(t: &K, x: &[Packed4]) {
    let inv_dt2 = 3600.0;
    let (mut a, mut b) = (x.to_vec(), x.to_vec());
    let (mut la, mut lb) = (vec![0.0; t.len()], vec![0.0; t.len()]);
    for (c, l) in la.iter_mut().enumerate() {
        project_generic(t, c, &mut a, l, t.compliance(c) * inv_dt2, 1.0);
    }
    project_range(t, 0..t.len(), &mut b, &mut lb, inv_dt2, 1.0);
    assert_eq!(a, b, "{}", t.name());
    assert_eq!(la, lb, "{}", t.name());
}

/// A horizontal strip `cols` x `rows` along x (5 cm spacing, 0.1 kg), clamped along its first
/// two columns.
fn strip(cols: usize, rows: usize) -> Body {
    let mut pos = Vec::new();
    for j in 0..rows {
        for i in 0..cols {
            pos.push(Vec3::new(i as f32 * 0.05, 1.0, j as f32 * 0.05));
        }
    }
    let v = |i: usize, j: usize| (j * cols + i) as u32;
    let mut tris = Vec::new();
    for j in 0..rows - 1 {
        for i in 0..cols - 1 {
            tris.push([v(i, j), v(i + 1, j + 1), v(i + 1, j)]);
            tris.push([v(i, j), v(i, j + 1), v(i + 1, j + 1)]);
        }
    }
    let mesh = TriMesh::new(pos, tris).unwrap();
    let mut body = body_from_trimesh(&mesh, 0.1, 0.0).unwrap();
    for j in 0..rows {
        body.particles_mut().pin(v(0, j) as usize).unwrap();
        body.particles_mut().pin(v(1, j) as usize).unwrap();
    }
    body
}

fn droop(mut body: Body) -> f32 {
    let mut gs = GaussSeidel::new();
    let params = StepParams {
        // PBD bending converges slowly along a chain; 32 iterations make the effect clear.
        iterations: 32,
        damping: 2.0,
        ..Default::default()
    };
    for _ in 0..240 {
        step(&mut body, &params, &mut gs, None).unwrap();
    }
    assert!(figures::all_finite(&body));
    1.0 - figures::lowest_y(&body)
}

#[test]
fn a_strip_droops_less_with_bending() {
    let plain = droop(strip(12, 3));
    let with = |make: &dyn Fn(&Body) -> Box<dyn ConstraintKind>| {
        let mut b = strip(12, 3);
        let kind = make(&b);
        b.constraints_mut().push_kind(kind);
        b.topology_changed();
        droop(b)
    };
    let dihedral = with(&|b| {
        Box::new(
            DihedralBending::from_triangles(&b.particles().x(), &b.topology().triangles, 0.0)
                .unwrap(),
        )
    });
    let isometric = with(&|b| {
        Box::new(
            IsometricBending::from_triangles(&b.particles().x(), &b.topology().triangles, 0.0)
                .unwrap(),
        )
    });
    let mut linked = strip(12, 3);
    let added = add_bending_links(&mut linked, 0.0).unwrap();
    assert!(added > 0);
    let links = droop(linked);
    eprintln!("droop: none {plain:.4}, dihedral {dihedral:.4}, isometric {isometric:.4}, links {links:.4}");
    assert!(plain > 0.3, "without bending the strip hangs: {plain}");
    assert!(dihedral < 0.8 * plain, "dihedral {dihedral} vs {plain}");
    assert!(isometric < 0.8 * plain, "isometric {isometric} vs {plain}");
    // Links resist bending only to second order in the angle: less, but still measurable.
    assert!(links < plain - 0.01, "links {links} vs {plain}");
}

#[test]
fn bending_links_join_particles_two_edges_apart_after_the_structural_prefix() {
    let mut rope = scenes::rope(6).unwrap();
    let structural = rope.topology().structural;
    let id = rope.topology_id();
    assert_eq!(add_bending_links(&mut rope, 1e-3).unwrap(), 4);
    assert_ne!(rope.topology_id(), id);
    assert_eq!(rope.topology().structural, structural);
    assert_eq!(
        &rope.constraints().distance.pairs[5..],
        &[[0, 2], [1, 3], [2, 4], [3, 5]]
    );
    assert!((rope.constraints().distance.rest[5] - 0.4).abs() < 1e-6);
    assert_eq!(rope.constraints().distance.compliance[5], 1e-3);
    assert!(add_bending_links(&mut rope, f32::NAN).is_err());
}

#[test]
fn surface_volume_matches_the_figure_and_its_projection_restores_volume() {
    let body = scenes::jelly(2).unwrap();
    let kind = body.constraints().kind_named("surface_volume").unwrap();
    assert!(kind.is_global());
    assert_eq!(kind.len(), 1);
    assert_eq!(kind.particles(0).len(), body.len());
    let v0 = figures::enclosed_volume(&body.topology().triangles, &body.particles().x());
    assert!((v0 - body.topology().rest_volume as f64).abs() < 1e-6);
    // Squash the sphere to 80% height: C < 0; one projection at compliance 0 brings the
    // volume back to within 1% (the constraint is nearly linear for small changes).
    let mut x = body.particles().x().to_vec();
    for p in x.iter_mut() {
        p.y = 1.0 + 0.8 * (p.y - 1.0);
    }
    let mut g = [Vec3::ZERO; MAX_ARITY];
    let before = kind.evaluate(0, &x, &mut g);
    assert!(before < -0.1 * v0 as f32);
    let mut lambda = 0.0;
    for _ in 0..3 {
        project_generic(kind, 0, &mut x, &mut lambda, 0.0, 1.0);
    }
    let after = kind.evaluate(0, &x, &mut g);
    assert!(after.abs() < 1e-3 * v0 as f32, "{before} -> {after}");
    // Renumbering keeps the volume.
    let mut table =
        SurfaceVolume::new(&body.particles().x(), &body.topology().triangles, 0.0).unwrap();
    let n = body.len();
    let new_index: Vec<u32> = (0..n as u32).rev().collect();
    let mut xr = vec![Packed4::default(); n];
    for (old, &new) in new_index.iter().enumerate() {
        xr[new as usize] = body.particles().x()[old];
    }
    table.remap_particles(&new_index);
    assert!((table.volume(&xr) - v0).abs() < 1e-6);
}

#[test]
fn jelly_keeps_its_volume_on_the_ground() {
    let mut body = scenes::jelly(3).unwrap();
    assert_eq!(body.len(), 642);
    assert_eq!(body.constraints().distance.len(), 1920);
    let mut gs = GaussSeidel::new();
    let params = StepParams::default();
    let (mut lo, mut hi) = (f64::MAX, f64::MIN);
    for _ in 0..300 {
        step(&mut body, &params, &mut gs, None).unwrap();
        let r = figures::volume_ratio(&body).unwrap();
        lo = lo.min(r);
        hi = hi.max(r);
    }
    eprintln!(
        "jelly volume ratio in [{lo:.4}, {hi:.4}], lowest y {}",
        figures::lowest_y(&body)
    );
    assert!(
        lo >= 0.95 && hi <= 1.05,
        "volume ratio left 0.95..1.05: [{lo}, {hi}]"
    );
    assert!(figures::lowest_y(&body) > -0.01, "rests on the ground");
    assert!(figures::lowest_y(&body) < 0.05, "fell to the ground");
}

#[test]
fn cube_lands_and_rests_with_no_inverted_tetrahedron() {
    let mut body = scenes::cube(4).unwrap();
    assert_eq!(body.len(), 125);
    assert_eq!(body.topology().tets.len(), 320);
    assert!(
        (figures::tet_volume(&body.topology().tets, &body.particles().x()) - 0.125).abs() < 1e-5
    );
    // The boundary is the cube's 6 faces of 4x4 cells, two triangles each.
    assert_eq!(body.topology().triangles.len(), 6 * 16 * 2);
    assert!(
        (figures::enclosed_volume(&body.topology().triangles, &body.particles().x()) - 0.125).abs()
            < 1e-5
    );
    let mut gs = GaussSeidel::new();
    let params = StepParams::default();
    for s in 0..240 {
        step(&mut body, &params, &mut gs, None).unwrap();
        for (t, tet) in body.topology().tets.iter().enumerate() {
            let v = figures::tet_volume(std::slice::from_ref(tet), &body.particles().x());
            assert!(v > 0.0, "tet {t} inverted at step {s}");
        }
    }
    let speed = body
        .particles()
        .v()
        .iter()
        .map(|v| v.xyz().length())
        .fold(0.0f32, f32::max);
    let low = figures::lowest_y(&body);
    let ratio = figures::volume_ratio(&body).unwrap();
    eprintln!("cube: lowest {low}, max speed {speed}, volume ratio {ratio}");
    assert!(
        low > -0.01 && low < 0.01,
        "rests on the ground: lowest y {low}"
    );
    assert!(speed < 0.05, "at rest: max speed {speed}");
    assert!((ratio - 1.0).abs() < 0.05, "volume ratio {ratio}");
}

#[test]
fn bending_skips_non_manifold_edges() {
    // Three triangles on the edge 0-1 (a fin): no stencil there; the ordinary edge 0-2 of the
    // fourth triangle pairs as usual.
    let tris = [[0, 1, 2], [1, 0, 3], [0, 1, 4], [0, 2, 5]];
    let s = bending_stencils(&tris);
    assert!(
        s.iter()
            .all(|st| !(st[..2].contains(&0) && st[..2].contains(&1))),
        "{s:?}"
    );
    assert_eq!(s.len(), 1, "{s:?}");
}

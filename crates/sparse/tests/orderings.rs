//! Orderings: permutations that rename every particle reference consistently and change
//! nothing but the memory layout.

mod common;

use common::{cloth_with_extra_kinds, TriangleArea};
use solver_core::{figures, step, Body, GaussSeidel, StepParams};
use sparse::ordering::{invert, particle_graph, reverse_cuthill_mckee};
use sparse::{apply_ordering, Incidence, Ordering, SolverKind, SolverOptions};

const ALL: [&str; 5] = ["natural", "shuffled", "shuffled:42", "rcm", "morton"];

#[test]
fn names_parse_and_round_trip() {
    for name in ALL {
        let o: Ordering = name.parse().unwrap();
        assert_eq!(o.name(), name.split(':').next().unwrap());
    }
    assert_eq!(
        "shuffled:42".parse::<Ordering>().unwrap(),
        Ordering::Shuffled { seed: 42 }
    );
    assert!("shuffled:x".parse::<Ordering>().is_err());
    assert!("hilbert".parse::<Ordering>().is_err());
}

/// Positions in the original numbering, as bits.
fn bits_in_old_order(body: &Body, new_index: &[u32]) -> Vec<[u32; 4]> {
    new_index
        .iter()
        .map(|&new| {
            let p = body.particles().x()[new as usize];
            [p.x.to_bits(), p.y.to_bits(), p.z.to_bits(), p.w.to_bits()]
        })
        .collect()
}

#[test]
fn every_ordering_is_a_permutation_that_keeps_the_rest_state_figures() {
    let original = cloth_with_extra_kinds(9);
    for name in ALL {
        let mut body = original.clone();
        let id = body.topology_id();
        let new_index = apply_ordering(&mut body, name.parse().unwrap()).unwrap();
        let mut sorted = new_index.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..body.len() as u32).collect::<Vec<_>>(), "{name}");
        if name != "natural" {
            assert_ne!(body.topology_id(), id, "{name}: topology id must change");
            assert_ne!(
                new_index,
                (0..body.len() as u32).collect::<Vec<_>>(),
                "{name} is not the identity on the cloth"
            );
        }
        assert_eq!(
            figures::stretch(&body),
            figures::stretch(&original),
            "{name}"
        );
        assert_eq!(
            figures::residual(body.constraints(), &body.particles().x()),
            figures::residual(original.constraints(), &original.particles().x()),
            "{name}"
        );
        // Every reference moved with its particle.
        let old = &original.constraints().distance.pairs;
        for (c, pair) in body.constraints().distance.pairs.iter().enumerate() {
            assert_eq!(*pair, old[c].map(|p| new_index[p as usize]));
        }
        for (t, tri) in body.topology().triangles.iter().enumerate() {
            assert_eq!(
                *tri,
                original.topology().triangles[t].map(|p| new_index[p as usize])
            );
        }
        let (kind, _) = body.constraints().locate(body.constraints().distance.len());
        let (old_kind, _) = original
            .constraints()
            .locate(original.constraints().distance.len());
        for c in 0..kind.len() {
            let moved: Vec<u32> = old_kind
                .particles(c)
                .iter()
                .map(|&p| new_index[p as usize])
                .collect();
            assert_eq!(kind.particles(c), &moved[..]);
        }
        assert_eq!(
            bits_in_old_order(&body, &new_index),
            bits_in_old_order(&original, &(0..original.len() as u32).collect::<Vec<_>>())
        );
        for (i, &m) in original.particles().mass().iter().enumerate() {
            assert_eq!(body.particles().mass()[new_index[i] as usize], m);
        }
    }
}

#[test]
fn renumbered_bodies_step_to_the_same_state_bit_for_bit() {
    // Constraints keep their order, so storage-order solvers do the same arithmetic.
    let params = StepParams::default();
    let mut reference = scenes::cloth(10).unwrap();
    reference.attach(3).unwrap();
    let mut gs = GaussSeidel::new();
    for name in ["shuffled:7", "rcm", "morton"] {
        let mut body = scenes::cloth(10).unwrap();
        body.attach(3).unwrap();
        let new_index = apply_ordering(&mut body, name.parse().unwrap()).unwrap();
        assert_eq!(body.attachments()[0].particle, new_index[3]);
        let mut colored = SolverKind::Colored(Default::default())
            .build(&SolverOptions::default())
            .unwrap();
        let mut r = reference.clone();
        let mut rc = reference.clone();
        let mut colored_ref = SolverKind::Colored(Default::default())
            .build(&SolverOptions::default())
            .unwrap();
        let mut bc = body.clone();
        for s in 0..30 {
            let target = solver_core::glam::Vec3::new(0.3, 1.0 + 0.01 * s as f32, 0.0);
            r.move_attachment(0, target).unwrap();
            body.move_attachment(0, target).unwrap();
            rc.move_attachment(0, target).unwrap();
            bc.move_attachment(0, target).unwrap();
            step(&mut r, &params, &mut gs, None).unwrap();
            step(&mut body, &params, &mut gs, None).unwrap();
            step(&mut rc, &params, colored_ref.as_mut(), None).unwrap();
            step(&mut bc, &params, colored.as_mut(), None).unwrap();
        }
        let identity: Vec<u32> = (0..r.len() as u32).collect();
        assert_eq!(
            bits_in_old_order(&body, &new_index),
            bits_in_old_order(&r, &identity),
            "gs, {name}"
        );
        assert_eq!(
            bits_in_old_order(&bc, &new_index),
            bits_in_old_order(&rc, &identity),
            "colored, {name}"
        );
    }
}

#[test]
fn extra_kinds_are_remapped_through_the_trait() {
    let mut body = scenes::cloth(5).unwrap();
    let area = TriangleArea::new(&body.topology().triangles, &body.particles().x());
    let before = area.tris.clone();
    body.constraints_mut().push_kind(Box::new(area));
    body.topology_changed();
    let new_index = apply_ordering(&mut body, "shuffled:3".parse().unwrap()).unwrap();
    let kind = body.constraints().kind_named("test-area").unwrap();
    for (c, t) in before.iter().enumerate() {
        assert_eq!(kind.particles(c), &t.map(|p| new_index[p as usize])[..]);
    }
}

/// Largest |new(i) - new(j)| over the particle graph's edges.
fn bandwidth(body: &Body) -> u32 {
    body.constraints()
        .distance
        .pairs
        .iter()
        .map(|&[i, j]| i.abs_diff(j))
        .max()
        .unwrap()
}

#[test]
fn rcm_and_morton_restore_locality_after_a_shuffle() {
    let n = 24;
    let mut shuffled = scenes::cloth(n).unwrap();
    apply_ordering(&mut shuffled, "shuffled".parse().unwrap()).unwrap();
    let bw_shuffled = bandwidth(&shuffled);
    assert!(bw_shuffled > (n * n / 2) as u32);
    let mut rcm = shuffled.clone();
    apply_ordering(&mut rcm, Ordering::ReverseCuthillMcKee).unwrap();
    // A grid's RCM numbering follows anti-diagonal fronts: bandwidth about 2n.
    assert!(bandwidth(&rcm) <= 2 * n as u32 + 2, "{}", bandwidth(&rcm));
    let mut morton = shuffled.clone();
    apply_ordering(&mut morton, Ordering::Morton).unwrap();
    // Morton keeps most edges short even if a few cross quadrant boundaries.
    let short = morton
        .constraints()
        .distance
        .pairs
        .iter()
        .filter(|&&[i, j]| i.abs_diff(j) <= 16)
        .count();
    assert!(
        short * 2 > morton.constraints().distance.len(),
        "{short} short edges"
    );
}

#[test]
fn rcm_handles_disconnected_graphs_and_isolated_particles() {
    // Two ropes and an isolated particle in one graph.
    let offsets = [0u32, 1, 3, 4, 4, 5, 6];
    let neighbours = [1u32, 0, 2, 1, 5, 4];
    let order = reverse_cuthill_mckee(&offsets, &neighbours);
    let mut sorted = order.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, vec![0, 1, 2, 3, 4, 5]);
    let new_index = invert(&order);
    assert_eq!(invert(&new_index), order);
    // Each rope stays contiguous.
    assert_eq!(new_index[0].abs_diff(new_index[1]), 1);
    assert_eq!(new_index[1].abs_diff(new_index[2]), 1);
    assert_eq!(new_index[4].abs_diff(new_index[5]), 1);
    let body = scenes::rope(6).unwrap();
    let (off, nb) = particle_graph(&Incidence::new(body.constraints(), body.len()).unwrap());
    assert_eq!(off, vec![0, 1, 3, 5, 7, 9, 10]);
    assert_eq!(&nb[..3], &[1, 0, 2]);
}

#[test]
fn morton_codes_interleave_the_quantized_coordinates() {
    let body = scenes::cloth(9).unwrap();
    let codes = sparse::ordering::morton_codes(&body);
    let naive = |q: [u64; 3]| {
        (0..21).fold(0u64, |code, bit| {
            code | ((q[0] >> bit) & 1) << (3 * bit)
                | ((q[1] >> bit) & 1) << (3 * bit + 1)
                | ((q[2] >> bit) & 1) << (3 * bit + 2)
        })
    };
    let cells = ((1u64 << 21) - 1) as f64;
    for (k, p) in body.particles().x().iter().enumerate() {
        // The cloth spans [0, 1] in x and z and is flat in y (quantized to 0).
        let q = [
            (p.x as f64 * cells).round() as u64,
            0,
            (p.z as f64 * cells).round() as u64,
        ];
        assert_eq!(codes[k], naive(q), "particle {k}");
    }
}

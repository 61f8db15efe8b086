//! Figures of a state, as defined in docs/SCENES.md: stretch error, residual, energy, volume, hash.

use crate::body::Body;
use crate::constraints::{Constraints, MAX_ARITY};
use crate::geometry::bvh::TriangleBvh;
use crate::geometry::packed::Packed4;
use crate::geometry::queries::{segment_triangle, triangles_intersect};
pub use crate::geometry::volume::{enclosed_volume, tet_volume, winding_number};
use glam::Vec3;

/// Mean and max of `|l - l0| / l0` over the structural distance constraints (all distance
/// constraints when the body marks none as structural).
pub fn stretch(body: &Body) -> (f32, f32) {
    let d = &body.constraints.distance;
    let count = if body.topology.structural > 0 {
        body.topology.structural.min(d.len())
    } else {
        d.len()
    };
    if count == 0 {
        return (0.0, 0.0);
    }
    let x = &body.particles.x;
    let (mut sum, mut max) = (0.0f64, 0.0f32);
    for c in 0..count {
        let [i, j] = d.pairs[c];
        let l = (x[i as usize].xyz() - x[j as usize].xyz()).length();
        let e = (l - d.rest[c]).abs() / d.rest[c];
        sum += e as f64;
        max = max.max(e);
    }
    ((sum / count as f64) as f32, max)
}

/// The residual: root mean square of the constraint values, each divided by its kind's scale
/// (for distance constraints, `|x_i - x_j| - l0` over the mean rest length).
pub fn residual(constraints: &Constraints, x: &[Packed4]) -> f32 {
    let mut grad = [Vec3::ZERO; MAX_ARITY];
    let (mut sum, mut count) = (0.0f64, 0usize);
    let d = &constraints.distance;
    let inv_scale = 1.0 / d.mean_rest() as f64;
    for (c, &[i, j]) in d.pairs.iter().enumerate() {
        let l = (x[i as usize].xyz() - x[j as usize].xyz()).length();
        let v = (l - d.rest[c]) as f64 * inv_scale;
        sum += v * v;
    }
    count += d.len();
    for kind in &constraints.extra {
        let inv = 1.0 / kind.scale().max(f32::MIN_POSITIVE) as f64;
        for c in 0..kind.len() {
            let mut v = kind.evaluate(c, x, &mut grad);
            if kind.unilateral() {
                v = v.max(0.0);
            }
            let v = v as f64 * inv;
            sum += v * v;
        }
        count += kind.len();
    }
    if count == 0 {
        0.0
    } else {
        (sum / count as f64).sqrt() as f32
    }
}

/// Kinetic plus gravitational energy, `Σ m (|v|²/2 - g·x)`, over particles that are not pinned.
pub fn energy(body: &Body, gravity: Vec3) -> f64 {
    let p = &body.particles;
    let mut e = 0.0f64;
    for i in 0..p.len() {
        let m = p.mass[i] as f64;
        if m == 0.0 {
            continue;
        }
        let v = p.v[i].xyz();
        e += m * (0.5 * v.length_squared() as f64 - gravity.dot(p.x[i].xyz()) as f64);
    }
    // The potential energy is measured from the world's origin: the body frame's origin adds
    // `-M g · origin`, with M the free particles' mass.
    let origin = body.origin();
    if origin != glam::DVec3::ZERO {
        let mass: f64 = p.mass.iter().map(|&m| m as f64).sum();
        e -= mass * gravity.as_dvec3().dot(origin);
    }
    e
}

/// Current volume over rest volume, for closed surfaces and tet meshes; `None` for open meshes.
pub fn volume_ratio(body: &Body) -> Option<f64> {
    let t = &body.topology;
    if t.rest_volume <= 0.0 {
        return None;
    }
    let v = if !t.tets.is_empty() {
        tet_volume(&t.tets, &body.particles.x)
    } else if t.closed {
        enclosed_volume(&t.triangles, &body.particles.x)
    } else {
        return None;
    };
    Some(v / t.rest_volume as f64)
}

/// True when every position and velocity component is finite.
pub fn all_finite(body: &Body) -> bool {
    body.particles.x.iter().all(|p| p.is_finite()) && body.particles.v.iter().all(|p| p.is_finite())
}

/// FNV-1a over the bits of every position coordinate: equal hashes mean bitwise-equal states.
pub fn state_hash(x: &[Packed4]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in x {
        for c in [p.x, p.y, p.z] {
            for byte in c.to_bits().to_le_bytes() {
                h ^= byte as u64;
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
    }
    h
}

/// The lowest y coordinate of the body, in the world.
pub fn lowest_y(body: &Body) -> f32 {
    let low = body
        .particles
        .x
        .iter()
        .map(|p| p.y)
        .fold(f32::INFINITY, f32::min);
    (low as f64 + body.origin().y) as f32
}

/// One surface for [`self_intersections`]: its triangles and the positions they index.
pub type Surface<'a> = (&'a [[u32; 3]], &'a [Packed4]);

/// Number of (edge, triangle) pairs that intersect, over every edge of every surface against
/// every triangle of the same surface (those sharing a vertex with the edge left out) and of
/// every other surface. Each intersection is decided by [`crate::geometry::queries::segment_triangle`]
/// in f64 (a touching, degenerate configuration counts as one); nothing is sampled, every
/// pair whose boxes overlap is tested, so a surface that passes through itself or another
/// counts at least two. 0 for a set of surfaces without any intersection.
pub fn self_intersections(surfaces: &[Surface]) -> crate::error::Result<u64> {
    let mut count = 0u64;
    let bvhs: Vec<Option<TriangleBvh>> = surfaces
        .iter()
        .map(|(t, x)| {
            if t.is_empty() {
                Ok(None)
            } else {
                TriangleBvh::build(t, x).map(Some)
            }
        })
        .collect::<crate::error::Result<_>>()?;
    for (a, (tris_a, xa)) in surfaces.iter().enumerate() {
        let mut edges: Vec<[u32; 2]> = tris_a
            .iter()
            .flat_map(|t| [[t[0], t[1]], [t[1], t[2]], [t[2], t[0]]])
            .map(|[i, j]| [i.min(j), i.max(j)])
            .collect();
        edges.sort_unstable();
        edges.dedup();
        for (b, (_, xb)) in surfaces.iter().enumerate() {
            let Some(bvh) = &bvhs[b] else { continue };
            for &[i, j] in &edges {
                let (p, q) = (xa[i as usize].xyz(), xa[j as usize].xyz());
                bvh.for_each_overlapping(p.min(q), p.max(q), |_, t| {
                    if a == b && t.iter().any(|&v| v == i || v == j) {
                        return;
                    }
                    let [u, v, w] = t.map(|k| xb[k as usize].xyz());
                    if segment_triangle(p, q, u, v, w).is_some() {
                        count += 1;
                    }
                });
            }
        }
    }
    Ok(count)
}

/// Number of intersecting triangle pairs over `surfaces`: within a surface the pairs that
/// share no vertex, between two surfaces every pair, each unordered pair once, each decided
/// by [`triangles_intersect`] for the pairs whose boxes overlap (a BVH per surface, nothing
/// sampled). 0 for surfaces that neither pass through themselves nor each other; a mesh of
/// parts that intersect at load has a positive count, which the contact response should not
/// grow (docs/SCENES.md, `mesh FILE`).
pub fn intersecting_triangle_pairs(surfaces: &[Surface]) -> crate::error::Result<u64> {
    let bvhs: Vec<Option<TriangleBvh>> = surfaces
        .iter()
        .map(|(t, x)| {
            if t.is_empty() {
                Ok(None)
            } else {
                TriangleBvh::build(t, x).map(Some)
            }
        })
        .collect::<crate::error::Result<_>>()?;
    let mut count = 0u64;
    for (a, (tris_a, xa)) in surfaces.iter().enumerate() {
        for (ta, tri_a) in tris_a.iter().enumerate() {
            let pa = tri_a.map(|k| xa[k as usize].xyz());
            let lo = pa[0].min(pa[1]).min(pa[2]);
            let hi = pa[0].max(pa[1]).max(pa[2]);
            for (b, (_, xb)) in surfaces.iter().enumerate().skip(a) {
                let Some(bvh) = &bvhs[b] else { continue };
                bvh.for_each_overlapping(lo, hi, |tb, tri_b| {
                    if a == b && (tb as usize <= ta || tri_b.iter().any(|v| tri_a.contains(v))) {
                        return;
                    }
                    let pb = tri_b.map(|k| xb[k as usize].xyz());
                    if triangles_intersect(pa, pb) {
                        count += 1;
                    }
                });
            }
        }
    }
    Ok(count)
}

//! Exact queries between points, segments and triangles.

use glam::Vec3;

/// Where the segment `p`-`q` crosses triangle `a b c`: its parameter `t ∈ [0, 1]` and the
/// barycentric coordinates of the crossing (Möller & Trumbore 1997, in f64).
pub fn segment_triangle(p: Vec3, q: Vec3, a: Vec3, b: Vec3, c: Vec3) -> Option<(f32, Vec3)> {
    let (p, q, a, b, c) = (
        p.as_dvec3(),
        q.as_dvec3(),
        a.as_dvec3(),
        b.as_dvec3(),
        c.as_dvec3(),
    );
    let dir = q - p;
    let (e1, e2) = (b - a, c - a);
    let h = dir.cross(e2);
    let det = e1.dot(h);
    if det.abs() < 1e-18 {
        return None;
    }
    let s = p - a;
    let u = s.dot(h) / det;
    let qv = s.cross(e1);
    let v = dir.dot(qv) / det;
    let t = e2.dot(qv) / det;
    let inside = (0.0..=1.0).contains(&u) && v >= 0.0 && u + v <= 1.0;
    (inside && (0.0..=1.0).contains(&t)).then(|| {
        (
            t as f32,
            Vec3::new((1.0 - u - v) as f32, u as f32, v as f32),
        )
    })
}

/// The point of triangle `a b c` nearest `p` and its barycentric coordinates (Ericson,
/// "Real-Time Collision Detection", §5.1.5).
pub fn closest_point_on_triangle(p: Vec3, a: Vec3, b: Vec3, c: Vec3) -> (Vec3, Vec3) {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, Vec3::X);
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return (b, Vec3::Y);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return (a + ab * v, Vec3::new(1.0 - v, v, 0.0));
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return (c, Vec3::Z);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return (a + ac * w, Vec3::new(1.0 - w, 0.0, w));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (b + (c - b) * w, Vec3::new(0.0, 1.0 - w, w));
    }
    let denom = 1.0 / (va + vb + vc);
    let (v, w) = (vb * denom, vc * denom);
    (a + ab * v + ac * w, Vec3::new(1.0 - v - w, v, w))
}

/// Whether triangles `s` and `t` intersect: some edge of one crosses the other
/// ([`segment_triangle`], in f64). Two triangles that are not coplanar meet along a segment
/// whose ends lie on edges of one or the other, so this test decides them exactly up to the
/// f64 rounding of the crossing; coplanar triangles (no edge crosses the other's plane
/// transversally) count as apart.
pub fn triangles_intersect(s: [Vec3; 3], t: [Vec3; 3]) -> bool {
    let crosses = |a: &[Vec3; 3], b: &[Vec3; 3]| {
        (0..3).any(|k| segment_triangle(a[k], a[(k + 1) % 3], b[0], b[1], b[2]).is_some())
    };
    crosses(&s, &t) || crosses(&t, &s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tri(a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> [Vec3; 3] {
        [Vec3::from(a), Vec3::from(b), Vec3::from(c)]
    }

    /// A triangle through the middle of another intersects it; lifted above it, or beside its
    /// edge, it does not; two triangles that cross like links of a chain (each edge misses
    /// the other's interior on one side, the other's edge pierces it) intersect.
    #[test]
    fn triangles_intersect_decides_piercing_apart_and_chained_triangles() {
        let floor = tri([-1.0, 0.0, -1.0], [1.0, 0.0, -1.0], [0.0, 0.0, 1.0]);
        let through = tri([0.0, -1.0, 0.0], [0.0, 1.0, 0.1], [0.1, 1.0, -0.1]);
        assert!(triangles_intersect(floor, through));
        assert!(triangles_intersect(through, floor));
        let above = through.map(|p| p + Vec3::Y * 1.5);
        assert!(!triangles_intersect(floor, above));
        let beside = through.map(|p| p + Vec3::X * 3.0);
        assert!(!triangles_intersect(floor, beside));
        // Only an edge of the second pierces the first: the first's edges pass beside it.
        let wide = tri([-5.0, 0.0, -5.0], [5.0, 0.0, -5.0], [0.0, 0.0, 5.0]);
        let small = tri([0.0, -0.1, 0.0], [0.0, 0.2, 0.0], [0.1, 0.2, 0.0]);
        assert!(triangles_intersect(wide, small));
        assert!(triangles_intersect(small, wide));
        // Coplanar, overlapping: counted apart (documented).
        let shifted = floor.map(|p| p + Vec3::X * 0.1);
        assert!(!triangles_intersect(floor, shifted));
    }
}

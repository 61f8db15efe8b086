//! Volumes of tetrahedra and closed surfaces, and the winding number of a point.

use crate::geometry::packed::Packed4;
use glam::Vec3;

/// Signed volume of the tetrahedron (x0, x1, x2, x3).
#[inline(always)]
pub fn signed_tet_volume(x0: Vec3, x1: Vec3, x2: Vec3, x3: Vec3) -> f32 {
    (x1 - x0).dot((x2 - x0).cross(x3 - x0)) / 6.0
}

/// Signed volume enclosed by triangles (positive for outward, counter-clockwise faces).
pub fn enclosed_volume(triangles: &[[u32; 3]], x: &[Packed4]) -> f64 {
    let mut v = 0.0f64;
    for t in triangles {
        let a = x[t[0] as usize].xyz().as_dvec3();
        let b = x[t[1] as usize].xyz().as_dvec3();
        let c = x[t[2] as usize].xyz().as_dvec3();
        v += a.dot(b.cross(c));
    }
    v / 6.0
}

/// Sum of the signed volumes of the tetrahedra.
pub fn tet_volume(tets: &[[u32; 4]], x: &[Packed4]) -> f64 {
    tets.iter()
        .map(|t| {
            let p0 = x[t[0] as usize].xyz().as_dvec3();
            let a = x[t[1] as usize].xyz().as_dvec3() - p0;
            let b = x[t[2] as usize].xyz().as_dvec3() - p0;
            let c = x[t[3] as usize].xyz().as_dvec3() - p0;
            a.dot(b.cross(c)) / 6.0
        })
        .sum()
}

/// The generalized winding number of the closed surface `triangles` at `p` (Jacobson et al.
/// 2013: the solid angles of the triangles over 4π, in f64): about 1 inside, 0 outside.
pub fn winding_number(triangles: &[[u32; 3]], x: &[Packed4], p: Vec3) -> f64 {
    let p = p.as_dvec3();
    let mut sum = 0.0f64;
    for t in triangles {
        let [a, b, c] = t.map(|k| x[k as usize].xyz().as_dvec3() - p);
        let (la, lb, lc) = (a.length(), b.length(), c.length());
        let num = a.dot(b.cross(c));
        let den = la * lb * lc + a.dot(b) * lc + b.dot(c) * la + c.dot(a) * lb;
        sum += 2.0 * num.atan2(den);
    }
    sum / (4.0 * std::f64::consts::PI)
}

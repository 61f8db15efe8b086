//! Long-range attachments ("tethers"): each particle stays within its rest distance of the pins
//! it hangs from.
//!
//! Theory (Kim, Chentanez and Müller 2012, "Long range attachments — a method to simulate
//! inextensible clothing in computer games"): for a particle `i` and an anchor (pinned particle)
//! `a`, the unilateral constraint
//!
//! ```text
//! C = |x_i - x_a| - L_ia <= 0
//! ```
//!
//! with `L_ia` the rest distance of `i` from `a` along the surface (the geodesic; on a flat
//! sheet, the straight-line distance). It acts only while the particle is too far, so it never
//! stops the cloth from folding, but it removes the stretch that Gauss-Seidel leaves when an
//! error has to travel across many edges to reach the pins ("rubber-banding"). The anchor is
//! pinned (`w_a = 0`), so only the particle moves: `Δx_i = -w_i n Δλ`, as in a distance
//! constraint. Rest distances are measured either straight or through the graph of the distance
//! constraints (Dijkstra, an upper bound on the geodesic).

use super::distance::DistanceConstraints;
use super::{check_compliance, xpbd_delta_lambda, ConstraintKind, MAX_ARITY};
use crate::error::check_index;
use crate::error::{Result, WobbleError};
use crate::geometry::packed::Packed4;
use glam::{DVec3, Vec3};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// How a tether's rest length is measured in the rest pose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TetherDistance {
    /// Straight line (exact for flat sheets, a lower bound otherwise).
    Euclidean,
    /// Shortest path through the distance constraints (an upper bound on the geodesic).
    Graph,
}

/// Unilateral tethers `|x_i - x_a| <= L` from particles to anchors.
#[derive(Clone, Debug, Default)]
pub struct Tethers {
    /// `[particle, anchor]` pairs.
    pub pairs: Vec<[u32; 2]>,
    /// Rest distances L (> 0).
    pub rest: Vec<f32>,
    /// Compliances α (0 = inextensible).
    pub compliance: Vec<f32>,
}

#[derive(PartialEq)]
struct Visit(f32, u32);
impl Eq for Visit {}
impl PartialOrd for Visit {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Visit {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

impl Tethers {
    /// Tethers from every free particle to its `per_particle` nearest pins (particles with
    /// inverse mass 0), rest lengths measured in the current (rest) pose by `distance`.
    /// Particles no pin can reach through the constraints get no tether.
    pub fn from_pins(
        x: &[Packed4],
        links: &DistanceConstraints,
        distance: TetherDistance,
        per_particle: usize,
        compliance: f32,
    ) -> Result<Self> {
        let pins: Vec<u32> = (0..x.len() as u32)
            .filter(|&i| x[i as usize].w == 0.0)
            .collect();
        Self::to_anchors(x, links, &pins, distance, per_particle, compliance)
    }

    /// Tethers from every free particle to its `per_particle` nearest of `anchors`.
    pub fn to_anchors(
        x: &[Packed4],
        links: &DistanceConstraints,
        anchors: &[u32],
        distance: TetherDistance,
        per_particle: usize,
        compliance: f32,
    ) -> Result<Self> {
        check_compliance(compliance)?;
        let n = x.len();
        if per_particle == 0 {
            return Err(WobbleError::BadCount {
                name: "tethers per particle",
                value: 0,
                max: anchors.len().max(1) as u64,
            });
        }
        for (k, &a) in anchors.iter().enumerate() {
            check_index("tether anchor", k, a as usize, n)?;
        }
        // dist[a][i]: rest distance of particle i from anchor a.
        let dist: Vec<Vec<f32>> = anchors
            .iter()
            .map(|&a| match distance {
                TetherDistance::Euclidean => {
                    let pa = x[a as usize].xyz();
                    let reach = graph_distances(x, links, a);
                    x.iter()
                        .zip(reach)
                        .map(|(p, r)| {
                            if r.is_finite() {
                                (p.xyz() - pa).length()
                            } else {
                                f32::INFINITY
                            }
                        })
                        .collect()
                }
                TetherDistance::Graph => graph_distances(x, links, a),
            })
            .collect();
        let mut t = Tethers::default();
        let mut near: Vec<(f32, u32)> = Vec::with_capacity(anchors.len());
        for i in 0..n {
            if x[i].w == 0.0 {
                continue;
            }
            near.clear();
            for (k, &a) in anchors.iter().enumerate() {
                let d = dist[k][i];
                if d.is_finite() && d > 0.0 && a as usize != i {
                    near.push((d, a));
                }
            }
            near.sort_by(|p, q| p.0.total_cmp(&q.0).then(p.1.cmp(&q.1)));
            for &(d, a) in near.iter().take(per_particle) {
                t.pairs.push([i as u32, a]);
                t.rest.push(d);
                t.compliance.push(compliance);
            }
        }
        Ok(t)
    }

    /// Mean rest length (1 when empty).
    pub fn mean_rest(&self) -> f32 {
        super::mean_rest(&self.rest)
    }
}

/// Shortest-path distances from `source` through the distance constraints `links` between the
/// particles at `x` (Dijkstra, edge weights = lengths in `x`); infinity where unreachable.
pub fn graph_distances(x: &[Packed4], links: &DistanceConstraints, source: u32) -> Vec<f32> {
    let n = x.len();
    let (start, nbr) = super::distance::neighbours(n, &links.pairs);
    let mut dist = vec![f32::INFINITY; n];
    let mut heap = BinaryHeap::new();
    dist[source as usize] = 0.0;
    heap.push(Visit(0.0, source));
    while let Some(Visit(du, u)) = heap.pop() {
        if du > dist[u as usize] {
            continue;
        }
        let pu = x[u as usize].xyz();
        for &v in &nbr[start[u as usize] as usize..start[u as usize + 1] as usize] {
            let dv = du + (x[v as usize].xyz() - pu).length();
            if dv < dist[v as usize] {
                dist[v as usize] = dv;
                heap.push(Visit(dv, v));
            }
        }
    }
    dist
}

impl ConstraintKind for Tethers {
    index_table_accessors!("tether", pairs);
    fn evaluate(&self, c: usize, x: &[Packed4], grad: &mut [Vec3; MAX_ARITY]) -> f32 {
        super::distance::pair_distance_and_grad(x, self.pairs[c], self.rest[c], grad)
    }
    fn scale(&self) -> f32 {
        self.mean_rest()
    }
    fn unilateral(&self) -> bool {
        true
    }
    fn has_second_order(&self) -> bool {
        true
    }
    fn second_order(
        &self,
        c: usize,
        x: &[DVec3],
        grad: &mut [DVec3; MAX_ARITY],
        hess: &mut super::Hessian,
    ) -> Option<f64> {
        Some(super::distance::pair_second_order(
            x,
            self.pairs[c],
            self.rest[c],
            grad,
            hess,
        ))
    }
}

/// The specialised scalar projection of tethers `range` (the distance update, skipped while
/// `C <= 0`); equals [`super::project_generic`] on each in turn up to rounding. `lambda` is
/// indexed like the table.
pub fn project_tethers(
    x: &mut [Packed4],
    table: &Tethers,
    range: std::ops::Range<usize>,
    lambda: &mut [f32],
    inv_dt2: f32,
    k: f32,
) {
    for c in range {
        let [i, a] = table.pairs[c];
        let (pi, pa) = (x[i as usize], x[a as usize]);
        let (dx, dy, dz) = (pi.x - pa.x, pi.y - pa.y, pi.z - pa.z);
        let len = (dx * dx + dy * dy + dz * dz).sqrt();
        let value = len - table.rest[c];
        if value <= 0.0 || len <= 0.0 {
            continue;
        }
        let alpha = table.compliance[c] * inv_dt2;
        let Some(dl) = xpbd_delta_lambda(value, lambda[c], alpha, pi.w + pa.w + alpha) else {
            continue;
        };
        lambda[c] += dl;
        let s = k * dl / len;
        let (si, sa) = (s * pi.w, s * pa.w);
        let q = &mut x[i as usize];
        q.x += si * dx;
        q.y += si * dy;
        q.z += si * dz;
        let q = &mut x[a as usize];
        q.x -= sa * dx;
        q.y -= sa * dy;
        q.z -= sa * dz;
    }
}

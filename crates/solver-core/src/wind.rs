//! Wind: aerodynamic drag and lift on every triangle of a surface, from its velocity relative to
//! the air, so that flags and banners flutter.
//!
//! Theory (the flat-plate model used for cloth by Keckeisen et al. 2004, "Interactive cloth
//! simulation in virtual environments", and by PhysX/NvCloth). For a triangle of area `A`, unit
//! normal `n`, mean corner velocity `v_t`, the air moves past it at `u = w - v_t` (`w` the wind);
//! with `û = u/|u|` and `c = û·n`,
//!
//! ```text
//! F_drag = ½ ρ C_D A |u|² c n                 (pressure drag, along the normal)
//! F_lift = ½ ρ C_L A |u|² c (n - c û)          (perpendicular to the flow; ∝ sin 2θ)
//! ```
//!
//! and a third of `F_drag + F_lift` goes to each corner. Both vanish for a triangle edge-on to
//! the flow, and the drag opposes the cloth's own motion through still air, so it also damps.
//! The step loop evaluates the wind once per substep from the velocities at its start.

use crate::error::check_non_negative;
use crate::error::{Result, WobbleError};
use crate::geometry::packed::Packed4;
use glam::Vec3;
use wide::f32x4;

/// A steady, uniform wind acting on a body's triangles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wind {
    /// Wind velocity (m/s).
    pub velocity: Vec3,
    /// Air density ρ (kg/m³; 1.2 at sea level).
    pub air_density: f32,
    /// Drag coefficient C_D (1 for a flat plate across the flow).
    pub drag: f32,
    /// Lift coefficient C_L (0 for none).
    pub lift: f32,
}

impl Wind {
    /// A wind; all parameters are checked.
    pub fn new(velocity: Vec3, air_density: f32, drag: f32, lift: f32) -> Result<Self> {
        let w = Wind {
            velocity,
            air_density,
            drag,
            lift,
        };
        w.validate()?;
        Ok(w)
    }

    /// Checks that the velocity is finite and the coefficients finite and >= 0.
    pub fn validate(&self) -> Result<()> {
        if !self.velocity.is_finite() {
            return Err(WobbleError::BadParameter {
                name: "wind velocity",
                value: f64::NAN,
                reason: "must be finite",
            });
        }
        for (name, v) in [
            ("air density", self.air_density),
            ("drag coefficient", self.drag),
            ("lift coefficient", self.lift),
        ] {
            check_non_negative(name, v)?;
        }
        Ok(())
    }

    /// The aerodynamic force on one triangle with corners `p` and corner velocities `v`.
    #[inline]
    pub fn triangle_force(&self, p: [Vec3; 3], v: [Vec3; 3]) -> Vec3 {
        let cross = (p[1] - p[0]).cross(p[2] - p[0]);
        let twice_area = cross.length();
        if twice_area <= f32::MIN_POSITIVE {
            return Vec3::ZERO;
        }
        let n = cross / twice_area;
        let u = self.velocity - (v[0] + v[1] + v[2]) * (1.0 / 3.0);
        let u2 = u.length_squared();
        if u2 <= f32::MIN_POSITIVE {
            return Vec3::ZERO;
        }
        let u_hat = u / u2.sqrt();
        let c = u_hat.dot(n);
        // ½ ρ A |u|², with A = twice_area / 2.
        let q = 0.25 * self.air_density * twice_area * u2;
        n * (q * self.drag * c) + (n - u_hat * c) * (q * self.lift * c)
    }

    /// Adds the wind force on every triangle, a third to each corner, into `force`.
    ///
    /// Four triangles at a time in `wide::f32x4` lanes (SSE on x86-64, NEON on aarch64), the
    /// rest one by one: each lane does the operations of [`Wind::triangle_force`] in its order,
    /// with no fused multiply-add, and the sums into `force` are made triangle by triangle in
    /// order, so the result is the scalar loop's bit for bit.
    pub fn accumulate(
        &self,
        triangles: &[[u32; 3]],
        x: &[Packed4],
        v: &[Packed4],
        force: &mut [Packed4],
    ) {
        let mut add = |t: &[u32; 3], f: Vec3| {
            for &i in t {
                let p = &mut force[i as usize];
                p.x += f.x;
                p.y += f.y;
                p.z += f.z;
            }
        };
        let mut quads = triangles.chunks_exact(4);
        for quad in &mut quads {
            let quad: &[[u32; 3]; 4] = quad.try_into().expect("chunks of four");
            for (t, f) in quad.iter().zip(self.quad_forces(quad, x, v)) {
                add(t, f);
            }
        }
        for t in quads.remainder() {
            let [a, b, c] = t.map(|i| i as usize);
            let f = self.triangle_force(
                [x[a].xyz(), x[b].xyz(), x[c].xyz()],
                [v[a].xyz(), v[b].xyz(), v[c].xyz()],
            ) * (1.0 / 3.0);
            add(t, f);
        }
    }

    /// A third of [`Wind::triangle_force`] on each of four triangles, one per lane.
    #[inline(always)]
    fn quad_forces(&self, quad: &[[u32; 3]; 4], x: &[Packed4], v: &[Packed4]) -> [Vec3; 4] {
        let [p0, p1, p2] = [corner(quad, x, 0), corner(quad, x, 1), corner(quad, x, 2)];
        let [v0, v1, v2] = [corner(quad, v, 0), corner(quad, v, 1), corner(quad, v, 2)];
        let cross = cross4(sub4(p1, p0), sub4(p2, p0));
        let twice_area = dot4(cross, cross).sqrt();
        let n = scale4(cross, |c| c / twice_area);
        let third = f32x4::splat(1.0 / 3.0);
        let mean = scale4(add4(add4(v0, v1), v2), |c| c * third);
        let w = self.velocity;
        let wind = [f32x4::splat(w.x), f32x4::splat(w.y), f32x4::splat(w.z)];
        let u = sub4(wind, mean);
        let u2 = dot4(u, u);
        let u_len = u2.sqrt();
        let u_hat = scale4(u, |c| c / u_len);
        let c = dot4(u_hat, n);
        let q = f32x4::splat(0.25 * self.air_density) * twice_area * u2;
        let drag = q * f32x4::splat(self.drag) * c;
        let lift = q * f32x4::splat(self.lift) * c;
        let across = sub4(n, scale4(u_hat, |h| h * c));
        // `triangle_force`'s early returns: an edge-on or degenerate triangle, still air.
        let min = f32x4::splat(f32::MIN_POSITIVE);
        let none = twice_area.simd_le(min) | u2.simd_le(min);
        let f = |k: usize| none.select(f32x4::ZERO, n[k] * drag + across[k] * lift) * third;
        let (fx, fy, fz) = (f(0).to_array(), f(1).to_array(), f(2).to_array());
        [
            Vec3::new(fx[0], fy[0], fz[0]),
            Vec3::new(fx[1], fy[1], fz[1]),
            Vec3::new(fx[2], fy[2], fz[2]),
            Vec3::new(fx[3], fy[3], fz[3]),
        ]
    }
}

/// Four 3-vectors as rows x, y, z.
type Rows = [f32x4; 3];

/// Corner `k` of the four triangles of `quad` at `s`, as rows.
#[inline(always)]
fn corner(quad: &[[u32; 3]; 4], s: &[Packed4], k: usize) -> Rows {
    let lanes = |t: &[u32; 3]| {
        let p = s[t[k] as usize];
        f32x4::from([p.x, p.y, p.z, p.w])
    };
    let [x, y, z, _] = f32x4::transpose([
        lanes(&quad[0]),
        lanes(&quad[1]),
        lanes(&quad[2]),
        lanes(&quad[3]),
    ]);
    [x, y, z]
}

/// `f` on each row.
#[inline(always)]
fn scale4(a: Rows, f: impl Fn(f32x4) -> f32x4) -> Rows {
    [f(a[0]), f(a[1]), f(a[2])]
}

/// The rows' sums.
#[inline(always)]
fn add4(a: Rows, b: Rows) -> Rows {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// The rows' differences.
#[inline(always)]
fn sub4(a: Rows, b: Rows) -> Rows {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// `glam::Vec3::dot`'s order: (x x' + y y') + z z'.
#[inline(always)]
fn dot4(a: Rows, b: Rows) -> f32x4 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// `glam::Vec3::cross`'s operations.
#[inline(always)]
fn cross4(a: Rows, b: Rows) -> Rows {
    [
        a[1] * b[2] - b[1] * a[2],
        a[2] * b[0] - b[2] * a[0],
        a[0] * b[1] - b[0] * a[1],
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `accumulate` gives the bits of the scalar loop over `triangle_force`, on every count of
    /// triangles around a multiple of four, with degenerate triangles and still air among them.
    #[test]
    fn accumulate_gives_the_bits_of_the_scalar_loop() {
        let mut seed = 0x2545_f491_u32;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            (seed >> 8) as f32 / (1 << 24) as f32 * 2.0 - 1.0
        };
        let wind = Wind::new(Vec3::new(4.0, 0.5, -1.0), 1.2, 1.0, 0.3).unwrap();
        let count = 12;
        let x: Vec<Packed4> = (0..count)
            .map(|i| {
                let p = if i == 5 {
                    Vec3::splat(0.25)
                } else {
                    Vec3::new(next(), next(), next()) * 3.0
                };
                Packed4::new(p, 1.0)
            })
            .collect();
        let v: Vec<Packed4> = (0..count)
            .map(|i| {
                let u = if i >= 9 {
                    wind.velocity
                } else {
                    Vec3::new(next(), next(), next())
                };
                Packed4::new(u, 0.0)
            })
            .collect();
        let mut triangles: Vec<[u32; 3]> = (0..11)
            .map(|t| [t % 12, (t * 5 + 1) % 12, (t * 7 + 3) % 12])
            .collect();
        // Degenerate (two equal corners, a point triangle) and still-air triangles.
        triangles.extend([[1, 1, 2], [5, 5, 5], [9, 10, 11], [0, 4, 8]]);
        for len in 0..=triangles.len() {
            let tris = &triangles[..len];
            let mut fast = vec![Packed4::default(); count];
            wind.accumulate(tris, &x, &v, &mut fast);
            let mut slow = vec![Packed4::default(); count];
            for t in tris {
                let [a, b, c] = t.map(|i| i as usize);
                let f = wind.triangle_force(
                    [x[a].xyz(), x[b].xyz(), x[c].xyz()],
                    [v[a].xyz(), v[b].xyz(), v[c].xyz()],
                ) * (1.0 / 3.0);
                for i in [a, b, c] {
                    slow[i].x += f.x;
                    slow[i].y += f.y;
                    slow[i].z += f.z;
                }
            }
            let bits = |f: &[Packed4]| -> Vec<[u32; 3]> {
                f.iter()
                    .map(|p| [p.x.to_bits(), p.y.to_bits(), p.z.to_bits()])
                    .collect()
            };
            assert_eq!(bits(&fast), bits(&slow), "{len} triangles");
            if len == triangles.len() {
                assert!(
                    slow.iter().any(|p| p.xyz().length() > 1e-3),
                    "the wind acts"
                );
            }
        }
    }
}

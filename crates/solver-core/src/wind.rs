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
    pub fn accumulate(
        &self,
        triangles: &[[u32; 3]],
        x: &[Packed4],
        v: &[Packed4],
        force: &mut [Packed4],
    ) {
        for t in triangles {
            let [a, b, c] = t.map(|i| i as usize);
            let f = self.triangle_force(
                [x[a].xyz(), x[b].xyz(), x[c].xyz()],
                [v[a].xyz(), v[b].xyz(), v[c].xyz()],
            ) * (1.0 / 3.0);
            for i in [a, b, c] {
                force[i].x += f.x;
                force[i].y += f.y;
                force[i].z += f.z;
            }
        }
    }
}

//! The rectangular grid the cloth and the flag share: particles `v = j * cols + i`, and the
//! distance constraints and triangles in the order of docs/SCENES.md.

use super::MAX_N;
use super::{add_bending, check_compliance, check_length, Bending, Common};
use crate::body::particles::Particles;
use crate::body::{Body, Topology};
use crate::constraints::{Constraints, DistanceConstraints};
use crate::error::{check_size, Result};
use crate::wind::Wind;
use glam::Vec3;

/// A grid's settings beyond the common ones.
pub(super) struct Grid {
    /// Extent along local x and along the grid's second axis (m).
    pub size: [f32; 2],
    /// Particles along local x and along the second axis.
    pub resolution: [usize; 2],
    /// Compliance of the diagonals.
    pub shear: f32,
    pub bending: Bending,
    pub wind: Option<Wind>,
}

/// The setters every grid builder (a `grid: Grid` field) shares: shear, bending and wind, each
/// documented with the builder's own default.
macro_rules! grid_setters {
    (bending: $bending_doc:literal, wind: $wind_doc:literal) => {
        super::setters! {
            /// Compliance of the diagonal (shear) constraints (m/N; default 0).
            shear(compliance: f32) => grid.shear;
            #[doc = $bending_doc]
            bending(bending: Bending) => grid.bending;
            #[doc = $wind_doc]
            wind(wind: Option<Wind>) => grid.wind;
        }
    };
}
pub(crate) use grid_setters;

fn check_resolution(name: &'static str, n: usize) -> Result<()> {
    check_size(
        name,
        n,
        2,
        MAX_N,
        "a grid needs at least 2 particles along each side",
    )
}

impl Grid {
    /// Builds the grid; `axis` maps grid coordinates `(u, v)` (metres) to local positions.
    pub fn build(
        &self,
        common: &Common,
        what: [&'static str; 4],
        axis: fn(f32, f32) -> Vec3,
    ) -> Result<Body> {
        let [cols, rows] = self.resolution;
        check_resolution(what[0], cols)?;
        check_resolution(what[1], rows)?;
        check_length(what[2], self.size[0])?;
        check_length(what[3], self.size[1])?;
        common.check()?;
        check_compliance("shear compliance", self.shear)?;
        if let Some(w) = &self.wind {
            w.validate()?;
        }
        let (du, dv) = ((cols - 1) as f32, (rows - 1) as f32);
        let (w, h) = (self.size[0], self.size[1]);
        let local = (0..rows)
            .flat_map(|j| (0..cols).map(move |i| axis(w * (i as f32 / du), h * (j as f32 / dv))));
        let pos = common.place(local)?;
        let particles =
            Particles::new(&pos, &vec![common.mass / (cols * rows) as f32; cols * rows])?;
        let mut body = Body::new(particles, Constraints::default(), Topology::default())?;
        common.apply_pins(&mut body)?;
        let (distance, triangles, structural) =
            grid_constraints(&body, cols, rows, common.stretch, self.shear)?;
        body.constraints.distance = distance;
        body.topology = Topology {
            triangles,
            structural,
            ..Default::default()
        };
        add_bending(&mut body, self.bending)?;
        body.wind = self.wind;
        common.finish(body)
    }
}

/// Horizontal, vertical (structural, `stretch`), then one diagonal per quad (`shear`), and two
/// triangles per quad.
fn grid_constraints(
    body: &Body,
    cols: usize,
    rows: usize,
    stretch: f32,
    shear: f32,
) -> Result<(DistanceConstraints, Vec<[u32; 3]>, usize)> {
    let x = &body.particles.x;
    let v = |i: usize, j: usize| (j * cols + i) as u32;
    let mut d = DistanceConstraints::default();
    for j in 0..rows {
        for i in 0..cols - 1 {
            d.push_rest(x, v(i, j), v(i + 1, j), stretch)?;
        }
    }
    for j in 0..rows - 1 {
        for i in 0..cols {
            d.push_rest(x, v(i, j), v(i, j + 1), stretch)?;
        }
    }
    let structural = d.len();
    let mut tris = Vec::with_capacity(2 * (rows - 1) * (cols - 1));
    for j in 0..rows - 1 {
        for i in 0..cols - 1 {
            d.push_rest(x, v(i, j), v(i + 1, j + 1), shear)?;
            tris.push([v(i, j), v(i + 1, j + 1), v(i + 1, j)]);
            tris.push([v(i, j), v(i, j + 1), v(i + 1, j + 1)]);
        }
    }
    Ok((d, tris, structural))
}

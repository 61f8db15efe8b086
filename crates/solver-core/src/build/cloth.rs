//! [`Cloth`]: a rectangular cloth, a grid of particles in its local XZ plane.

use super::grid::Grid;
use super::{common_setters, setters, Bending, Common};
use crate::body::Body;
use crate::error::Result;
use crate::wind::Wind;
use glam::Vec3;

/// Builds a rectangular cloth: `cols` x `rows` particles spanning `width` (local x) by `depth`
/// (local z) from the local origin, in the plane y = 0, then placed.
///
/// Defaults: 1 m x 1 m, 16 x 16 particles, 1 kg, rigid stretch and shear, no bending, no pins,
/// no wind, at the origin. `Cloth::new().at(Vec3::Y).pin_corners()` is the standard `cloth`
/// scene of docs/SCENES.md at n = 16, bit for bit.
///
/// ```
/// use solver_core::build::{Bending, Cloth};
/// use solver_core::glam::Vec3;
///
/// let cloth = Cloth::new()
///     .size(2.0, 1.0)
///     .resolution(33, 17)
///     .at(Vec3::new(0.0, 2.0, 0.0))
///     .pin_corners()
///     .bending(Bending::Dihedral(1e-3))
///     .build()?;
/// assert_eq!(cloth.len(), 33 * 17);
/// # Ok::<(), solver_core::WobbleError>(())
/// ```
pub struct Cloth {
    common: Common,
    grid: Grid,
}

impl Default for Cloth {
    fn default() -> Self {
        Self::new()
    }
}

impl Cloth {
    /// The default cloth (see the type's documentation).
    pub fn new() -> Self {
        Cloth {
            common: Common::new(),
            grid: Grid {
                size: [1.0, 1.0],
                resolution: [16, 16],
                shear: 0.0,
                bending: Bending::None,
                wind: None,
            },
        }
    }

    common_setters!();

    setters! {
        /// Extent along local x and local z (m).
        size(width: f32, depth: f32) => grid.size;
        /// Particles along local x (`cols`) and local z (`rows`), each at least 2.
        resolution(cols: usize, rows: usize) => grid.resolution;
    }

    /// Pins the two corners of the first row (particles 0 and `cols - 1`), as the scene does.
    pub fn pin_corners(mut self) -> Self {
        let cols = self.grid.resolution[0] as u32;
        self.common.pins.extend([0, cols.saturating_sub(1)]);
        self
    }

    /// Pins the particle in column `i`, row `j`.
    pub fn pin_grid(mut self, i: usize, j: usize) -> Self {
        let cols = self.grid.resolution[0];
        let index = if i < cols { j * cols + i } else { usize::MAX };
        self.common
            .pins
            .push(u32::try_from(index).unwrap_or(u32::MAX));
        self
    }

    super::grid::grid_setters!(
        bending: "Bending resistance (default none).",
        wind: "Wind on the cloth's triangles (default still air)."
    );

    /// Checks every setting and builds the body.
    pub fn build(&self) -> Result<Body> {
        self.grid.build(
            &self.common,
            ["cloth columns", "cloth rows", "cloth width", "cloth depth"],
            |u, v| Vec3::new(u, 0.0, v),
        )
    }
}

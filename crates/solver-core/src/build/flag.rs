//! [`Flag`]: a cloth hanging from a pole in the wind.

use super::grid::Grid;
use super::{common_setters, setters, Bending, Common};
use crate::body::Body;
use crate::error::Result;
use crate::wind::Wind;
use glam::Vec3;

/// Compliance of the flag's dihedral bending constraints (docs/SCENES.md).
pub const FLAG_BENDING_COMPLIANCE: f32 = 1e-4;

/// The flag's wind (docs/SCENES.md): (5, 0, 1) m/s, air density 1.2 kg/m³, drag coefficient 1.
pub fn flag_wind() -> Wind {
    Wind {
        velocity: Vec3::new(5.0, 0.0, 1.0),
        air_density: 1.2,
        drag: 1.0,
        lift: 0.0,
    }
}

/// Builds a flag: `cols` x `rows` particles spanning `width` along local x (the fly) by
/// `height` along local y (the pole), in the plane z = 0 from the local origin, pinned along
/// the pole (local x = 0), with dihedral bending and wind, then placed.
///
/// Defaults: 2 m x 1 m, 31 x 16 particles, 1 kg, rigid stretch and shear, dihedral bending of
/// compliance [`FLAG_BENDING_COMPLIANCE`], the wind of [`flag_wind`], at the origin.
/// `Flag::new().at(Vec3::Y)` is the standard `flag` scene of docs/SCENES.md at n = 16, bit for
/// bit.
///
/// ```
/// use solver_core::build::Flag;
/// use solver_core::glam::{Quat, Vec3};
///
/// // A 3 m x 1.5 m banner on a pole at (4, 2, 0), facing +x.
/// let flag = Flag::new()
///     .size(3.0, 1.5)
///     .resolution(31, 16)
///     .at(Vec3::new(4.0, 2.0, 0.0))
///     .rotated(Quat::from_rotation_y(std::f32::consts::FRAC_PI_2))
///     .build()?;
/// assert_eq!(flag.particles().inv_mass(0), 0.0, "pinned to the pole");
/// # Ok::<(), solver_core::WobbleError>(())
/// ```
pub struct Flag {
    common: Common,
    grid: Grid,
    pole: bool,
}

impl Default for Flag {
    fn default() -> Self {
        Self::new()
    }
}

impl Flag {
    /// The default flag (see the type's documentation).
    pub fn new() -> Self {
        Flag {
            common: Common::new(),
            grid: Grid {
                size: [2.0, 1.0],
                resolution: [31, 16],
                shear: 0.0,
                bending: Bending::Dihedral(FLAG_BENDING_COMPLIANCE),
                wind: Some(flag_wind()),
            },
            pole: true,
        }
    }

    common_setters!();

    setters! {
        /// Extent along the fly (local x) and along the pole (local y), in metres.
        size(width: f32, height: f32) => grid.size;
        /// Particles along the fly (`cols`) and along the pole (`rows`), each at least 2.
        resolution(cols: usize, rows: usize) => grid.resolution;
        /// Whether the column at the pole is pinned (default true).
        pole(pinned: bool) => pole;
    }

    super::grid::grid_setters!(
        bending: "Bending resistance (default dihedral, [`FLAG_BENDING_COMPLIANCE`]).",
        wind: "The wind (default [`flag_wind`]; `None`: still air)."
    );

    /// The particles of the free edge, opposite the pole (last column), bottom to top.
    pub fn free_edge(&self) -> Vec<u32> {
        let [cols, rows] = self.grid.resolution;
        (0..rows).map(|j| (j * cols + cols - 1) as u32).collect()
    }

    /// Checks every setting and builds the body.
    pub fn build(&self) -> Result<Body> {
        let mut body = self.grid.build(
            &self.common,
            ["flag columns", "flag rows", "flag width", "flag height"],
            |u, v| Vec3::new(u, v, 0.0),
        )?;
        if self.pole {
            let [cols, rows] = self.grid.resolution;
            for j in 0..rows {
                body.particles.pin(j * cols)?;
            }
        }
        Ok(body)
    }
}

//! [`Rope`]: a chain of particles linked to their neighbours.

use super::MAX_N;
use super::{add_bending, check_length, common_setters, setters, Bending, Common};
use crate::body::particles::Particles;
use crate::body::{Body, Topology};
use crate::constraints::{Constraints, DistanceConstraints};
use crate::error::{Result, WobbleError};
use glam::Vec3;

/// Most particles in one rope (as many as a grid scene of side [`MAX_N`] has).
pub const MAX_ROPE_PARTICLES: usize = MAX_N * MAX_N;

/// Builds a rope: `particles` particles evenly spaced along local x from the local origin to
/// `length`, each linked to the next (structural, `stretch`), then placed.
///
/// Defaults: 1 m, 16 particles, 1 kg, rigid, no bending, no pins, at the origin.
/// `Rope::new().at(Vec3::Y).pin_start()` is the standard `rope` scene of docs/SCENES.md at
/// n = 16, bit for bit.
///
/// ```
/// use solver_core::build::{Bending, Rope};
/// use solver_core::glam::{Quat, Vec3};
///
/// // A 2 m rope hanging straight down from (0, 3, 0), stiffened against bending.
/// let rope = Rope::new()
///     .length(2.0)
///     .particles(41)
///     .at(Vec3::new(0.0, 3.0, 0.0))
///     .rotated(Quat::from_rotation_z(-std::f32::consts::FRAC_PI_2))
///     .pin_start()
///     .bending(Bending::Links(1e-4))
///     .build()?;
/// assert_eq!(rope.topology().structural, 40);
/// # Ok::<(), solver_core::WobbleError>(())
/// ```
pub struct Rope {
    common: Common,
    length: f32,
    particles: usize,
    bending: Bending,
}

impl Default for Rope {
    fn default() -> Self {
        Self::new()
    }
}

impl Rope {
    /// The default rope (see the type's documentation).
    pub fn new() -> Self {
        Rope {
            common: Common::new(),
            length: 1.0,
            particles: 16,
            bending: Bending::None,
        }
    }

    common_setters!();

    setters! {
        /// Length along local x (m).
        length(metres: f32) => length;
        /// Number of particles (at least 2).
        particles(count: usize) => particles;
        /// Bending resistance: [`Bending::Links`] or none (a rope has no triangles to bend).
        bending(bending: Bending) => bending;
    }

    /// Pins the first particle (at the local origin).
    pub fn pin_start(mut self) -> Self {
        self.common.pins.push(0);
        self
    }

    /// Pins the last particle.
    pub fn pin_end(mut self) -> Self {
        let last = self.particles.saturating_sub(1);
        self.common
            .pins
            .push(u32::try_from(last).unwrap_or(u32::MAX));
        self
    }

    /// Checks every setting and builds the body.
    pub fn build(&self) -> Result<Body> {
        let n = self.particles;
        if n < 2 {
            return Err(WobbleError::BadParameter {
                name: "rope particles",
                value: n as f64,
                reason: "a rope needs at least 2 particles",
            });
        }
        if n > MAX_ROPE_PARTICLES {
            return Err(WobbleError::BadCount {
                name: "rope particles",
                value: n as u64,
                max: MAX_ROPE_PARTICLES as u64,
            });
        }
        check_length("rope length", self.length)?;
        self.common.check()?;
        if matches!(self.bending, Bending::Dihedral(_) | Bending::Isometric(_)) {
            return Err(WobbleError::UnsuitableBody {
                what: "dihedral or isometric bending",
                needs: "triangles: a rope bends through Bending::Links",
            });
        }
        let local = (0..n).map(|i| Vec3::new(self.length * (i as f32 / (n - 1) as f32), 0.0, 0.0));
        let pos = self.common.place(local)?;
        let particles = Particles::new(&pos, &vec![self.common.mass / n as f32; n])?;
        let mut body = Body::new(particles, Constraints::default(), Topology::default())?;
        self.common.apply_pins(&mut body)?;
        let mut distance = DistanceConstraints::default();
        for i in 0..n as u32 - 1 {
            distance.push_rest(&body.particles.x, i, i + 1, self.common.stretch)?;
        }
        body.topology.structural = distance.len();
        body.constraints.distance = distance;
        add_bending(&mut body, self.bending)?;
        self.common.finish(body)
    }
}

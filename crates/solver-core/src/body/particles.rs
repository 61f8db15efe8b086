//! Particle storage: one array per attribute (structure of arrays), each particle's position
//! packed with its inverse mass as `[x, y, z, w]` so that a projection gets everything it needs
//! from one 16-byte load.

use crate::error::{check_finite, Result, WobbleError};
use crate::geometry::packed::{check_buffer, Packed4, Xyz};
use glam::Vec3;

/// The particles of one body: positions (with inverse mass), positions at the start of the
/// substep, velocities and accumulated external forces.
#[derive(Clone, Debug, Default)]
pub struct Particles {
    /// Current (during a solve: predicted) positions; `w` is the inverse mass.
    pub x: Vec<Packed4>,
    /// Positions at the start of the current substep; `w` mirrors the inverse mass.
    pub x_prev: Vec<Packed4>,
    /// Velocities; `w` is unused.
    pub v: Vec<Packed4>,
    /// External forces accumulated for the next step (cleared after it); `w` is unused.
    pub force: Vec<Packed4>,
    /// Masses (0 for pinned particles, whose inverse mass is 0 and mass infinite).
    pub mass: Vec<f32>,
}

impl Particles {
    /// Builds particles at rest from positions and masses; a mass of `f32::INFINITY` pins.
    pub fn new(positions: &[Vec3], masses: &[f32]) -> Result<Self> {
        if positions.len() != masses.len() {
            return Err(WobbleError::IndexOutOfRange {
                what: "mass array",
                index: 0,
                value: masses.len() as u64,
                len: positions.len(),
            });
        }
        let mut p = Particles::default();
        for (k, (&pos, &m)) in positions.iter().zip(masses).enumerate() {
            check_finite("position x", k, pos.x)?;
            check_finite("position y", k, pos.y)?;
            check_finite("position z", k, pos.z)?;
            let w = inverse_mass(k, m)?;
            p.x.push(Packed4::new(pos, w));
            p.mass.push(if w == 0.0 { 0.0 } else { m });
        }
        p.x_prev = p.x.clone();
        p.v = vec![Packed4::default(); p.x.len()];
        p.force = vec![Packed4::default(); p.x.len()];
        Ok(p)
    }

    /// Number of particles.
    #[inline]
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// True when there are no particles.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    /// Position of particle `i`.
    #[inline]
    pub fn position(&self, i: usize) -> Vec3 {
        self.x[i].xyz()
    }

    /// Velocity of particle `i`.
    #[inline]
    pub fn velocity(&self, i: usize) -> Vec3 {
        self.v[i].xyz()
    }

    /// Inverse mass of particle `i` (0 when pinned).
    #[inline]
    pub fn inv_mass(&self, i: usize) -> f32 {
        self.x[i].w
    }

    /// Pins particle `i` (inverse mass 0) where it is.
    pub fn pin(&mut self, i: usize) {
        self.x[i].w = 0.0;
        self.x_prev[i].w = 0.0;
        self.v[i] = Packed4::default();
        self.mass[i] = 0.0;
    }

    /// Sets the mass of particle `i`; `f32::INFINITY` pins it.
    pub fn set_mass(&mut self, i: usize, mass: f32) -> Result<()> {
        let w = inverse_mass(i, mass)?;
        self.x[i].w = w;
        self.x_prev[i].w = w;
        self.mass[i] = if w == 0.0 { 0.0 } else { mass };
        Ok(())
    }

    /// Moves particle `i` to `p` with zero velocity (a teleport).
    pub fn teleport(&mut self, i: usize, p: Vec3) -> Result<()> {
        check_finite("teleport target", i, p.x + p.y + p.z)?;
        self.x[i].set_xyz(p);
        self.x_prev[i].set_xyz(p);
        self.v[i] = Packed4::default();
        Ok(())
    }

    /// Adds a force (newtons) to particle `i` for the next step.
    pub fn add_force(&mut self, i: usize, f: Vec3) -> Result<()> {
        check_finite("force", i, f.x + f.y + f.z)?;
        let a = &mut self.force[i];
        a.x += f.x;
        a.y += f.y;
        a.z += f.z;
        Ok(())
    }

    /// Adds an impulse (newton seconds) to particle `i`: dv = impulse / m.
    pub fn add_impulse(&mut self, i: usize, impulse: Vec3) -> Result<()> {
        check_finite("impulse", i, impulse.x + impulse.y + impulse.z)?;
        let w = self.x[i].w;
        let v = &mut self.v[i];
        v.x += impulse.x * w;
        v.y += impulse.y * w;
        v.z += impulse.z * w;
        Ok(())
    }

    /// Positions as glam vectors (allocates; for API edges and tests).
    pub fn positions(&self) -> Vec<Vec3> {
        self.x.iter().map(|p| p.xyz()).collect()
    }

    /// Writes every position into `out` (one entry per particle, as `[f32; 3]`, `Vec3` or
    /// `Vec3A`): the read-back a renderer does every frame, without allocating.
    pub fn positions_into<P: Xyz>(&self, out: &mut [P]) -> Result<()> {
        read_back("position read-back buffer", &self.x, out)
    }

    /// Writes every velocity into `out` (one entry per particle), like
    /// [`Particles::positions_into`].
    pub fn velocities_into<P: Xyz>(&self, out: &mut [P]) -> Result<()> {
        read_back("velocity read-back buffer", &self.v, out)
    }
}

fn read_back<P: Xyz>(what: &'static str, from: &[Packed4], out: &mut [P]) -> Result<()> {
    check_buffer(what, out.len(), from.len())?;
    for (o, p) in out.iter_mut().zip(from) {
        o.set(p.xyz());
    }
    Ok(())
}

/// The inverse mass of particle `index` of mass `mass` (0 for `f32::INFINITY`, a pin); an error
/// for a mass that is NaN, not positive, or so small that its inverse overflows.
fn inverse_mass(index: usize, mass: f32) -> Result<f32> {
    let w = if mass.is_infinite() { 0.0 } else { 1.0 / mass };
    if mass.is_nan() || mass <= 0.0 || !w.is_finite() {
        return Err(WobbleError::BadMass {
            what: "particle",
            index,
            value: mass,
        });
    }
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_back_fills_every_layout_and_refuses_a_wrong_length() {
        let pos = [Vec3::new(1.0, 2.0, 3.0), Vec3::new(-4.0, 5.0, 0.5)];
        let mut p = Particles::new(&pos, &[1.0, f32::INFINITY]).unwrap();
        p.v[0] = Packed4::new(Vec3::new(0.0, -1.0, 0.0), 0.0);
        let mut arrays = [[0.0f32; 3]; 2];
        let mut vecs = [Vec3::ZERO; 2];
        let mut aligned = [glam::Vec3A::ZERO; 2];
        p.positions_into(&mut arrays).unwrap();
        p.positions_into(&mut vecs).unwrap();
        p.positions_into(&mut aligned).unwrap();
        assert_eq!(arrays, [[1.0, 2.0, 3.0], [-4.0, 5.0, 0.5]]);
        assert_eq!(vecs, pos);
        assert_eq!(aligned.map(Vec3::from), pos);
        p.velocities_into(&mut vecs).unwrap();
        assert_eq!(vecs, [Vec3::NEG_Y, Vec3::ZERO]);
        let err = p
            .positions_into(&mut [[0.0f32; 3]; 3])
            .unwrap_err()
            .to_string();
        assert!(err.contains("holds 3 entries for 2 particles"), "{err}");
        assert!(p.velocities_into(&mut [Vec3::ZERO; 1]).is_err());
    }
}

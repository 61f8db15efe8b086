//! Particle storage: one array per attribute (structure of arrays), each particle's position
//! packed with its inverse mass as `[x, y, z, w]` so that a projection gets everything it needs
//! from one 16-byte load.

use crate::error::{check_finite, check_index, Result, WobbleError};
use crate::geometry::packed::{check_buffer, Packed4, Xyz};
use glam::Vec3;

/// The particles of one body: positions (with inverse mass), positions at the start of the
/// substep, velocities and accumulated external forces.
///
/// The arrays are private, so that their lengths always agree: a game reads and writes them as
/// slices ([`Particles::x`], [`Particles::v_mut`], ...), whose length cannot change, and
/// changes pins, masses, velocities and places through methods that check the index and the
/// value ([`Particles::pin`], [`Particles::set_mass`], [`Particles::set_velocity`],
/// [`Particles::teleport`], [`Particles::add_force`], [`Particles::add_impulse`]). A value
/// written through a slice is checked by the next step, which refuses a non-finite one
/// ([`WobbleError::BadState`]).
#[derive(Clone, Debug, Default)]
pub struct Particles {
    /// Current (during a solve: predicted) positions; `w` is the inverse mass.
    pub(crate) x: Vec<Packed4>,
    /// Positions at the start of the current substep; `w` mirrors the inverse mass.
    pub(crate) x_prev: Vec<Packed4>,
    /// Velocities; `w` is unused.
    pub(crate) v: Vec<Packed4>,
    /// External forces accumulated for the next step (cleared after it); `w` is unused.
    pub(crate) force: Vec<Packed4>,
    /// Masses (0 for pinned particles, whose inverse mass is 0 and mass infinite).
    pub(crate) mass: Vec<f32>,
}

/// A body's particle arrays borrowed at once ([`Particles::slices_mut`]): slices, so no length
/// can change.
pub struct ParticlesMut<'a> {
    /// Positions; `w` is the inverse mass.
    pub x: &'a mut [Packed4],
    /// Positions at the start of the last substep.
    pub x_prev: &'a mut [Packed4],
    /// Velocities.
    pub v: &'a mut [Packed4],
    /// External forces for the next step.
    pub force: &'a mut [Packed4],
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

    /// Current (during a solve: predicted) positions, in the body frame; `w` is the inverse
    /// mass.
    #[inline]
    #[must_use]
    pub fn x(&self) -> &[Packed4] {
        &self.x
    }

    /// The positions, to change in place (a teleport of many particles; keep `w` the inverse
    /// mass, or use [`Particles::set_mass`]).
    #[inline]
    pub fn x_mut(&mut self) -> &mut [Packed4] {
        &mut self.x
    }

    /// Positions at the start of the last substep; `w` mirrors the inverse mass.
    #[inline]
    #[must_use]
    pub fn x_prev(&self) -> &[Packed4] {
        &self.x_prev
    }

    /// The positions at the start of the last substep, to change in place (set them with
    /// [`Particles::x_mut`] when a teleport must carry no velocity into friction).
    #[inline]
    pub fn x_prev_mut(&mut self) -> &mut [Packed4] {
        &mut self.x_prev
    }

    /// Velocities; `w` is unused.
    #[inline]
    #[must_use]
    pub fn v(&self) -> &[Packed4] {
        &self.v
    }

    /// The velocities, to change in place.
    #[inline]
    pub fn v_mut(&mut self) -> &mut [Packed4] {
        &mut self.v
    }

    /// External forces accumulated for the next step (cleared after it).
    #[inline]
    #[must_use]
    pub fn force(&self) -> &[Packed4] {
        &self.force
    }

    /// The external forces for the next step, to change in place.
    #[inline]
    pub fn force_mut(&mut self) -> &mut [Packed4] {
        &mut self.force
    }

    /// The arrays a step changes, as slices borrowed at once (an integrator of a game's own
    /// reads some while it writes others).
    pub fn slices_mut(&mut self) -> ParticlesMut<'_> {
        ParticlesMut {
            x: &mut self.x,
            x_prev: &mut self.x_prev,
            v: &mut self.v,
            force: &mut self.force,
        }
    }

    /// Allocates the arrays `x`, `x_prev` and `v` anew, in that order, with the same
    /// contents, calling `before_each` before each allocation: what `wobble cache` uses to move
    /// their addresses against each other (it allocates a spacer there).
    #[doc(hidden)]
    pub fn reallocate(&mut self, mut before_each: impl FnMut()) {
        for a in [&mut self.x, &mut self.x_prev, &mut self.v] {
            before_each();
            let mut fresh = Vec::with_capacity(a.len());
            fresh.extend_from_slice(a);
            *a = fresh;
        }
    }

    /// Masses (0 for pinned particles); change one with [`Particles::set_mass`].
    #[inline]
    #[must_use]
    pub fn mass(&self) -> &[f32] {
        &self.mass
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

    /// Pins particle `i` (inverse mass 0) where it is; an error for an index out of range.
    pub fn pin(&mut self, i: usize) -> Result<()> {
        self.check("pinned particle", i)?;
        self.x[i].w = 0.0;
        self.x_prev[i].w = 0.0;
        self.v[i] = Packed4::default();
        self.mass[i] = 0.0;
        Ok(())
    }

    /// An error unless `i` names a particle.
    fn check(&self, what: &'static str, i: usize) -> Result<()> {
        check_index(what, i, i, self.x.len())
    }

    /// Sets the mass of particle `i`; `f32::INFINITY` pins it.
    pub fn set_mass(&mut self, i: usize, mass: f32) -> Result<()> {
        self.check("particle given a mass", i)?;
        let w = inverse_mass(i, mass)?;
        self.x[i].w = w;
        self.x_prev[i].w = w;
        self.mass[i] = if w == 0.0 { 0.0 } else { mass };
        Ok(())
    }

    /// Moves particle `i` to `p` with zero velocity (a teleport).
    pub fn teleport(&mut self, i: usize, p: Vec3) -> Result<()> {
        self.check("teleported particle", i)?;
        check_finite("teleport target", i, p.x + p.y + p.z)?;
        self.x[i].set_xyz(p);
        self.x_prev[i].set_xyz(p);
        self.v[i] = Packed4::default();
        Ok(())
    }

    /// Adds a force (newtons) to particle `i` for the next step.
    pub fn add_force(&mut self, i: usize, f: Vec3) -> Result<()> {
        self.check("particle given a force", i)?;
        check_finite("force", i, f.x + f.y + f.z)?;
        let a = &mut self.force[i];
        a.x += f.x;
        a.y += f.y;
        a.z += f.z;
        Ok(())
    }

    /// Adds an impulse (newton seconds) to particle `i`: dv = impulse / m.
    pub fn add_impulse(&mut self, i: usize, impulse: Vec3) -> Result<()> {
        self.check("particle given an impulse", i)?;
        check_finite("impulse", i, impulse.x + impulse.y + impulse.z)?;
        let w = self.x[i].w;
        let v = &mut self.v[i];
        v.x += impulse.x * w;
        v.y += impulse.y * w;
        v.z += impulse.z * w;
        Ok(())
    }

    /// Sets the velocity of particle `i` (m/s); a pinned particle keeps zero.
    pub fn set_velocity(&mut self, i: usize, velocity: Vec3) -> Result<()> {
        self.check("particle given a velocity", i)?;
        check_finite("velocity", i, velocity.x + velocity.y + velocity.z)?;
        if self.x[i].w != 0.0 {
            self.v[i].set_xyz(velocity);
        }
        Ok(())
    }

    /// Sets every particle's velocity to `velocity` (pinned ones keep zero).
    pub fn set_all_velocities(&mut self, velocity: Vec3) -> Result<()> {
        check_finite("velocity", 0, velocity.x + velocity.y + velocity.z)?;
        for (v, x) in self.v.iter_mut().zip(&self.x) {
            if x.w != 0.0 {
                v.set_xyz(velocity);
            }
        }
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

//! A body's state: everything that changes while it steps, taken out and put back, so that a
//! game can save, rewind or network a simulation.
//!
//! [`Body::state`] copies the particles (positions with inverse masses, the previous positions,
//! velocities, pending forces, masses), the attachments, the targets of active grabs and the
//! body's origin (the positions are relative to it);
//! [`Body::restore`] writes them back into a body with the same particles and constraints (the
//! same body, or a fresh copy of the same scene). Stepping on from a restored state gives the
//! same bits as stepping on from where it was taken: the step loop keeps nothing else between
//! steps (its multipliers are zeroed every substep, its other buffers overwritten).
//!
//! What the state does not hold: what does not change while a body steps (constraints and
//! their rest values, colliders, wind). Plasticity edits rest values and tearing adds
//! particles; restore a state only into a body that has had the same such edits (a torn body
//! has another topology and is refused). With the `serde` feature the state is `Serialize` and
//! `Deserialize`; [`BodyState::topology_fingerprint`], unlike the process-unique topology id,
//! is the same in every process, so a state can cross a network or a save file.

use crate::body::{Attachment, Body};
use crate::error::check_index;
use crate::error::{check_finite, Result, WobbleError};
use crate::geometry::packed::Packed4;
use glam::Vec3;

/// Everything that changes while a body steps (see the [module](self) doc).
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BodyState {
    /// Positions; `w` is the inverse mass (0 = pinned).
    pub x: Vec<Packed4>,
    /// Positions at the start of the last substep; `w` mirrors the inverse mass.
    pub x_prev: Vec<Packed4>,
    /// Velocities.
    pub v: Vec<Packed4>,
    /// External forces pending for the next step.
    pub force: Vec<Packed4>,
    /// Masses (0 for pinned particles).
    pub mass: Vec<f32>,
    /// Attachments (moving pins) with their targets.
    pub attachments: Vec<Attachment>,
    /// Targets of the active grabs, in the order of the body's drag constraints (body frame).
    pub drag_targets: Vec<Vec3>,
    /// The body's origin ([`Body::origin`]): the positions above are relative to it. A state
    /// saved before the origin existed reads as the world's origin.
    #[cfg_attr(feature = "serde", serde(default))]
    pub origin: glam::DVec3,
    /// The topology id of the body it was taken from ([`Body::topology_id`]; unique within the
    /// process that took the state, so restore checks the fingerprint instead).
    pub topology_id: u64,
    /// A hash of the particle count, every constraint's particles and the triangles and
    /// tetrahedra: equal for bodies built alike, in any process ([`topology_fingerprint`]).
    pub topology_fingerprint: u64,
}

/// FNV-1a, which gives the same value on every machine and in every process (std's hashers
/// promise neither).
struct Fnv(u64);

impl Fnv {
    fn word(&mut self, w: u64) {
        for byte in w.to_le_bytes() {
            self.0 ^= byte as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// A hash of what a state must fit: the particle count, each constraint table's name and the
/// particles of each of its constraints, the triangles and the tetrahedra.
pub fn topology_fingerprint(body: &Body) -> u64 {
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    h.word(body.len() as u64);
    for kind in body.constraints.kinds() {
        kind.name().bytes().for_each(|b| h.word(b as u64));
        h.word(kind.len() as u64);
        for c in 0..kind.len() {
            let ids = kind.particles(c);
            h.word(ids.len() as u64);
            ids.iter().for_each(|&p| h.word(p as u64));
        }
    }
    let t = &body.topology;
    h.word(t.triangles.len() as u64);
    t.triangles.iter().flatten().for_each(|&p| h.word(p as u64));
    h.word(t.tets.len() as u64);
    t.tets.iter().flatten().for_each(|&p| h.word(p as u64));
    h.0
}

/// Checks a packed array of a state: its length is the body's and every value is finite; for
/// positions (`inverse_mass`), `w` is a valid inverse mass.
fn check_packed(what: &'static str, a: &[Packed4], n: usize, inverse_mass: bool) -> Result<()> {
    check_len(what, a.len(), n)?;
    for (k, p) in a.iter().enumerate() {
        for c in [p.x, p.y, p.z, p.w] {
            check_finite(what, k, c)?;
        }
        if inverse_mass && p.w < 0.0 {
            return Err(WobbleError::BadMass {
                what: "state particle (inverse)",
                index: k,
                value: p.w,
            });
        }
    }
    Ok(())
}

fn check_len(what: &'static str, found: usize, expected: usize) -> Result<()> {
    if found == expected {
        Ok(())
    } else {
        Err(WobbleError::StateMismatch {
            what,
            found: found as u64,
            expected: expected as u64,
        })
    }
}

impl Body {
    /// Everything that changes while the body steps, to [`Body::restore`] later (allocates).
    pub fn state(&self) -> BodyState {
        let p = &self.particles;
        BodyState {
            x: p.x.clone(),
            x_prev: p.x_prev.clone(),
            v: p.v.clone(),
            force: p.force.clone(),
            mass: p.mass.clone(),
            attachments: self.attachments.clone(),
            drag_targets: self.drag_table().map_or(Vec::new(), |d| d.targets.clone()),
            origin: self.origin(),
            topology_id: self.topology_id(),
            topology_fingerprint: topology_fingerprint(self),
        }
    }

    /// Puts `state` back: the body then steps on exactly as the one it was taken from. Refuses,
    /// changing nothing, a state taken from a body with other particles or constraints, and
    /// one with a non-finite value or an index out of range (a state read from a file or the
    /// network is checked like any input). The body keeps its topology id, so a solver
    /// prepared for it keeps its structures.
    pub fn restore(&mut self, state: &BodyState) -> Result<()> {
        let n = self.len();
        check_len("particle count", state.x.len(), n)?;
        // Always the fingerprint: topology ids count up from 1 in every process, so a state
        // read from elsewhere may carry this body's id by chance.
        let fingerprint = topology_fingerprint(self);
        if state.topology_fingerprint != fingerprint {
            return Err(WobbleError::StateMismatch {
                what: "topology fingerprint (constraints, triangles, tetrahedra)",
                found: state.topology_fingerprint,
                expected: fingerprint,
            });
        }
        check_packed("state position", &state.x, n, true)?;
        check_packed("state previous position", &state.x_prev, n, true)?;
        check_packed("state velocity", &state.v, n, false)?;
        check_packed("state force", &state.force, n, false)?;
        check_len("mass count", state.mass.len(), n)?;
        for (k, &m) in state.mass.iter().enumerate() {
            if !(m.is_finite() && m >= 0.0) {
                return Err(WobbleError::BadMass {
                    what: "state particle",
                    index: k,
                    value: m,
                });
            }
        }
        for (k, a) in state.attachments.iter().enumerate() {
            check_index("state attachment", k, a.particle as usize, n)?;
            for c in a.from.to_array().into_iter().chain(a.to.to_array()) {
                check_finite("state attachment target", k, c)?;
            }
        }
        let grabs = self.drag_table().map_or(0, |d| d.targets.len());
        check_len("grab count", state.drag_targets.len(), grabs)?;
        for (k, t) in state.drag_targets.iter().enumerate() {
            for c in t.to_array() {
                check_finite("state drag target", k, c)?;
            }
        }

        let o = state.origin;
        check_finite("state origin", 0, (o.x + o.y + o.z) as f32)?;

        let p = &mut self.particles;
        p.x.copy_from_slice(&state.x);
        p.x_prev.copy_from_slice(&state.x_prev);
        p.v.copy_from_slice(&state.v);
        p.force.copy_from_slice(&state.force);
        p.mass.copy_from_slice(&state.mass);
        self.attachments.clone_from(&state.attachments);
        if let Some((_, d)) = self.drag_table_mut() {
            d.targets.copy_from_slice(&state.drag_targets);
        }
        self.origin = state.origin;
        Ok(())
    }
}

//! A body: particles, constraints, the surface/volume topology, colliders and attachments.

pub mod particles;
pub mod state;

use crate::body::particles::Particles;
use crate::collide::{Collider, Contact};
use crate::constraints::{ConstraintKind, Constraints, Drag};
use crate::error::{check_finite, Result, WobbleError};
use crate::error::{check_index, check_indices};
use crate::geometry::packed::Packed4;
use crate::wind::Wind;
use glam::Vec3;
use std::sync::atomic::{AtomicU64, Ordering};

static NEXT_TOPOLOGY_ID: AtomicU64 = AtomicU64::new(1);

/// A fresh, process-unique topology id.
pub fn fresh_topology_id() -> u64 {
    NEXT_TOPOLOGY_ID.fetch_add(1, Ordering::Relaxed)
}

/// Mesh connectivity kept beside the constraints (for figures, rendering and physics).
#[derive(Clone, Debug, Default)]
pub struct Topology {
    /// Surface triangles (counter-clockwise seen from outside for closed surfaces).
    pub triangles: Vec<[u32; 3]>,
    /// Tetrahedra (positive signed volume in the rest pose).
    pub tets: Vec<[u32; 4]>,
    /// Number of leading distance constraints that are structural (stretch figures use them).
    pub structural: usize,
    /// True when `triangles` is a closed, consistently oriented surface.
    pub closed: bool,
    /// Enclosed volume in the rest pose (closed surfaces and tet meshes; 0 otherwise).
    pub rest_volume: f32,
}

/// A particle driven to a target every substep (a moving pin).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Attachment {
    /// The attached particle (pinned while attached).
    pub particle: u32,
    /// Where the particle is at the start of the next step.
    pub from: Vec3,
    /// Where it must be at the end of the next step; substeps interpolate linearly.
    pub to: Vec3,
}

/// Buffers the step loop reuses, so that stepping does not allocate.
#[derive(Clone, Debug, Default)]
pub struct StepScratch {
    /// Positions at the start of the step (the last good state, for rollback) when the step
    /// has several substeps; empty with one substep, whose `Particles::x_prev` keeps them.
    pub backup_x: Vec<Packed4>,
    /// Velocities at the start of the step.
    pub backup_v: Vec<Packed4>,
    /// Contacts found for the current substep.
    pub contacts: Vec<Contact>,
    /// One XPBD multiplier per constraint (global numbering).
    pub lambda: Vec<f32>,
    /// Wind force per particle for the current substep (sized on first use).
    pub wind_force: Vec<Packed4>,
    /// Per-block sums of the stretch figure of [`crate::step::StepReport`].
    pub stretch_partials: Vec<f64>,
}

/// A simulated body.
///
/// What a solver prepares from (the constraint tables and the topology) is private: it is read
/// through [`Body::constraints`] and [`Body::topology`] and changed only through
/// [`Body::constraints_mut`] and [`Body::topology_mut`], which record the change (a new
/// [`Body::topology_id`]), so that a solver prepared for the old tables is prepared again before
/// it runs. Positions, velocities and masses are the game's to set ([`Body::particles`]); the
/// step checks that the particle count is still the one the solver was prepared for.
#[derive(Clone, Debug, Default)]
pub struct Body {
    /// The particles.
    pub particles: Particles,
    /// The constraints.
    pub(crate) constraints: Constraints,
    /// Triangles, tetrahedra and what the figures need to know of them.
    pub(crate) topology: Topology,
    /// Static or kinematic colliders.
    pub colliders: Vec<Collider>,
    /// Moving attachments.
    pub attachments: Vec<Attachment>,
    /// Wind on the body's triangles, evaluated every substep (`None`: still air).
    pub wind: Option<Wind>,
    /// Reused buffers of the step loop.
    pub(crate) scratch: StepScratch,
    topology_id: u64,
}

impl Body {
    /// Assembles a body and checks it: indices in range, finite positions, valid masses.
    pub fn new(particles: Particles, constraints: Constraints, topology: Topology) -> Result<Self> {
        let body = Body {
            particles,
            constraints,
            topology,
            colliders: Vec::new(),
            attachments: Vec::new(),
            wind: None,
            scratch: StepScratch::default(),
            topology_id: fresh_topology_id(),
        };
        body.validate()?;
        Ok(body)
    }

    /// Checks every invariant the solvers rely on.
    pub fn validate(&self) -> Result<()> {
        let n = self.particles.len();
        if n == 0 {
            return Err(WobbleError::EmptyMesh("body".into()));
        }
        for (k, p) in self.particles.x.iter().enumerate() {
            check_finite("position x", k, p.x)?;
            check_finite("position y", k, p.y)?;
            check_finite("position z", k, p.z)?;
            if !(p.w.is_finite() && p.w >= 0.0) {
                return Err(WobbleError::BadMass {
                    what: "particle (inverse)",
                    index: k,
                    value: p.w,
                });
            }
        }
        for kind in self.constraints.kinds() {
            for c in 0..kind.len() {
                let ids = kind.particles(c);
                for (a, &p) in ids.iter().enumerate() {
                    check_index(kind.name(), c, p as usize, n)?;
                    // Global kinds check their (long) particle lists when they are built.
                    if !kind.is_global() && ids[..a].contains(&p) {
                        return Err(WobbleError::RepeatedParticle {
                            kind: kind.name(),
                            index: c,
                            particle: p,
                        });
                    }
                }
            }
        }
        for (t, tri) in self.topology.triangles.iter().enumerate() {
            check_indices("triangle", t, tri, n)?;
        }
        for (t, tet) in self.topology.tets.iter().enumerate() {
            check_indices("tetrahedron", t, tet, n)?;
        }
        Ok(())
    }

    /// Process-unique id of the current topology; solvers rebuild their structures when it changes.
    pub fn topology_id(&self) -> u64 {
        self.topology_id
    }

    /// Declares that particles were added, removed or renumbered (changes made through
    /// [`Body::constraints_mut`] and [`Body::topology_mut`] are recorded by those).
    pub fn topology_changed(&mut self) {
        self.topology_id = fresh_topology_id();
    }

    /// The constraint tables.
    #[must_use]
    pub fn constraints(&self) -> &Constraints {
        &self.constraints
    }

    /// The constraint tables, to change: records the change, so the body's solver prepares
    /// again before its next step.
    pub fn constraints_mut(&mut self) -> &mut Constraints {
        self.topology_changed();
        &mut self.constraints
    }

    /// Triangles, tetrahedra and what the figures need to know of them.
    #[must_use]
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// The topology, to change: records the change (a world rebuilds the body's surface).
    pub fn topology_mut(&mut self) -> &mut Topology {
        self.topology_changed();
        &mut self.topology
    }

    /// Number of particles.
    pub fn len(&self) -> usize {
        self.particles.len()
    }

    /// True when the body has no particle.
    pub fn is_empty(&self) -> bool {
        self.particles.is_empty()
    }

    /// Adds a collider.
    pub fn add_collider(&mut self, collider: Collider) {
        self.colliders.push(collider);
    }

    /// Attaches particle `i` where it is now, pinning it; move it with [`Body::move_attachment`].
    pub fn attach(&mut self, i: u32) -> Result<usize> {
        check_index("attachment", self.attachments.len(), i as usize, self.len())?;
        self.particles.pin(i as usize);
        let p = self.particles.position(i as usize);
        self.attachments.push(Attachment {
            particle: i,
            from: p,
            to: p,
        });
        Ok(self.attachments.len() - 1)
    }

    /// Sets where attachment `a` must be at the end of the next step.
    pub fn move_attachment(&mut self, a: usize, target: Vec3) -> Result<()> {
        check_finite("attachment target", a, target.x + target.y + target.z)?;
        check_index("attachment", a, a, self.attachments.len())?;
        self.attachments[a].to = target;
        Ok(())
    }

    /// Releases attachment `a`, giving its particle `mass` back.
    pub fn release_attachment(&mut self, a: usize, mass: f32) -> Result<()> {
        check_index("attachment", a, a, self.attachments.len())?;
        let at = self.attachments.remove(a);
        self.particles.set_mass(at.particle as usize, mass)
    }

    /// The grab (drag) table, if a grab made one: its position among the kinds of
    /// `constraints.extra`, and the table.
    pub(crate) fn drag_table_mut(&mut self) -> Option<(usize, &mut Drag)> {
        self.constraints
            .extra
            .iter_mut()
            .enumerate()
            .find_map(|(k, kind)| kind.as_any_mut().downcast_mut::<Drag>().map(|d| (k, d)))
    }

    /// The grab (drag) table, if a grab made one.
    pub(crate) fn drag_table(&self) -> Option<&Drag> {
        self.constraints
            .extra
            .iter()
            .find_map(|kind| kind.as_any().downcast_ref::<Drag>())
    }

    /// Renumbers the particles: particle `old` becomes `new_index[old]` in the particles, the
    /// constraints, the topology and the attachments (a cache-friendlier order); records the
    /// change.
    pub fn renumber_particles(&mut self, new_index: &[u32]) -> Result<()> {
        check_permutation(new_index, self.len())?;
        let p = &mut self.particles;
        permute(&mut p.x, new_index);
        permute(&mut p.x_prev, new_index);
        permute(&mut p.v, new_index);
        permute(&mut p.force, new_index);
        permute(&mut p.mass, new_index);
        self.constraints.distance.remap_particles(new_index);
        for kind in &mut self.constraints.extra {
            kind.remap_particles(new_index);
        }
        let map = |q: &mut u32| *q = new_index[*q as usize];
        self.topology.triangles.iter_mut().flatten().for_each(map);
        self.topology.tets.iter_mut().flatten().for_each(map);
        self.attachments
            .iter_mut()
            .for_each(|a| a.particle = new_index[a.particle as usize]);
        self.scratch.contacts.clear();
        self.topology_changed();
        self.validate()
    }

    /// The shape-collider contacts of the last substep.
    #[must_use]
    pub fn contacts(&self) -> &[Contact] {
        &self.scratch.contacts
    }

    /// The XPBD multipliers of the last step's last substep, one per constraint (global
    /// numbering, [`Constraints::offsets`]); empty before the first step.
    #[must_use]
    pub fn multipliers(&self) -> &[f32] {
        &self.scratch.lambda
    }
}

/// `v[new_index[old]] = v[old]` for every entry.
fn permute<T: Copy + Default>(v: &mut Vec<T>, new_index: &[u32]) {
    let mut out = vec![T::default(); v.len()];
    for (old, &new) in new_index.iter().enumerate() {
        out[new as usize] = v[old];
    }
    *v = out;
}

/// Checks that `new_index` is a permutation of `0..n`.
pub fn check_permutation(new_index: &[u32], n: usize) -> Result<(), WobbleError> {
    if new_index.len() != n {
        return Err(WobbleError::BadCount {
            name: "permutation length",
            value: new_index.len() as u64,
            max: n as u64,
        });
    }
    let mut seen = vec![false; n];
    for (old, &new) in new_index.iter().enumerate() {
        if new as usize >= n || seen[new as usize] {
            return Err(WobbleError::IndexOutOfRange {
                what: "permutation (not a bijection)",
                index: old,
                value: new as u64,
                len: n,
            });
        }
        seen[new as usize] = true;
    }
    Ok(())
}

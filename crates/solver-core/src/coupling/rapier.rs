//! Two-way coupling of one wobble [`Body`] with a rapier3d world of rigid bodies
//! ([`RapierCoupling`], feature `rapier`): a [`World`] of that one body with the rapier world as
//! its contact source ([`World::set_rapier`]). The contacts push the rigid bodies back with
//! impulses at the contact points, and moving rigid bodies push the soft body; how, and the
//! theory, is in [`crate::world::rigid`]. A game with several soft bodies uses a [`World`] with
//! [`World::set_rapier`] directly ([`RapierCoupling::into_world`] turns a coupling into one).

use crate::body::Body;
use crate::error::Result;
use crate::solver::{GaussSeidel, Solver};
use crate::step::{StepParams, StepReport};
use crate::world::{BodyHandle, World};
use glam::Vec3;
use rapier3d::prelude::{ColliderHandle, PhysicsWorld, RigidBody, RigidBodyHandle};

pub use crate::world::rigid::{from_rapier, to_rapier, RigidContacts};
pub use rapier3d;

/// What a [`RapierCoupling::step`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CouplingReport {
    /// Substeps run (each one wobble substep and one rapier step).
    pub substeps: usize,
    /// Contacts between particles and rapier colliders in the last substep.
    pub contacts: usize,
    /// Total linear impulse given to dynamic rapier bodies over the step (N s).
    pub impulse: Vec3,
    /// Wobble's report of the last substep.
    pub soft: StepReport,
}

/// A soft body and a rapier world stepped together, with two-way contacts (module doc).
pub struct RapierCoupling {
    /// The world of the one body, holding the rapier world.
    world: World,
    /// The body's handle in `world`.
    handle: BodyHandle,
    /// Distance kept between a particle and a rigid surface (m, >= 0).
    pub thickness: f32,
    /// Coulomb friction between the soft body and the rigid bodies (>= 0).
    pub friction: f32,
    /// How far beyond `thickness` a predicted position may be and still get a contact (m, >= 0;
    /// the step's `contact_margin` if larger): the solve moves particles off their prediction.
    pub search_distance: f32,
}

impl RapierCoupling {
    /// Couples `body`, stepped by `solver` (`None`: [`GaussSeidel`]), with an empty rapier
    /// world; thickness 1 cm, friction 0.5, search distance 2 cm.
    pub fn new(body: Body, solver: Option<Box<dyn Solver>>) -> Result<Self> {
        Self::with_world(body, solver, PhysicsWorld::new())
    }

    /// Couples `body` with the rapier world `rapier`.
    pub fn with_world(
        body: Body,
        solver: Option<Box<dyn Solver>>,
        rapier: PhysicsWorld,
    ) -> Result<Self> {
        let mut world = World::new();
        let handle = world.add_body(
            body,
            Some(solver.unwrap_or_else(|| Box::new(GaussSeidel::default()))),
        )?;
        world.set_rapier(rapier);
        Ok(RapierCoupling {
            thickness: world.thickness,
            friction: world.friction,
            search_distance: world.search_distance,
            world,
            handle,
        })
    }

    /// The world this coupling steps (its one body and the rapier world), with the coupling's
    /// contact settings: to add more soft bodies, static meshes or self-collision.
    #[must_use]
    pub fn into_world(mut self) -> (World, BodyHandle) {
        self.settle_settings();
        (self.world, self.handle)
    }

    /// The coupling's contact settings written into its world.
    fn settle_settings(&mut self) {
        self.world.thickness = self.thickness;
        self.world.friction = self.friction;
        self.world.search_distance = self.search_distance;
    }

    fn entry(&self) -> &crate::world::WorldBody {
        self.world
            .body(self.handle)
            .expect("the coupling's body stays in its world")
    }

    /// The soft body.
    #[must_use]
    pub fn body(&self) -> &Body {
        self.entry().body()
    }

    /// The soft body, to change (its particles, colliders and attachments through their
    /// methods; the contact tables the coupling gave it must stay, or the next step says so).
    pub fn body_mut(&mut self) -> &mut Body {
        self.world
            .body_mut(self.handle)
            .expect("the coupling's body stays in its world")
            .body_mut()
    }

    /// The solver that steps the soft body.
    #[must_use]
    pub fn solver(&self) -> &dyn Solver {
        self.entry().solver()
    }

    /// Replaces the solver that steps the soft body.
    pub fn set_solver(&mut self, solver: Box<dyn Solver>) {
        self.world
            .body_mut(self.handle)
            .expect("the coupling's body stays in its world")
            .set_solver(solver);
    }

    /// The rapier world.
    #[must_use]
    pub fn rapier(&self) -> &PhysicsWorld {
        self.world
            .rapier()
            .expect("a coupling holds a rapier world")
    }

    /// The rapier world, to add, move or remove rigid bodies (its gravity and
    /// `integration_parameters.dt` are set by every step).
    pub fn rapier_mut(&mut self) -> &mut PhysicsWorld {
        self.world
            .rapier_mut()
            .expect("a coupling holds a rapier world")
    }

    /// The rigid body `handle`, or an error naming it when the world has none such.
    pub fn rigid_body(&self, handle: RigidBodyHandle) -> Result<&RigidBody> {
        self.rapier()
            .bodies
            .get(handle)
            .ok_or_else(|| crate::world::rigid::unknown_handle("rapier rigid body handle", handle))
    }

    /// Stops (`coupled = false`) or resumes the contacts between the soft body and collider
    /// `handle`; an error when the world has no such collider.
    pub fn set_coupled(&mut self, handle: ColliderHandle, coupled: bool) -> Result<()> {
        self.world.set_rapier_coupled(handle, coupled)
    }

    /// [`RapierCoupling::set_coupled`] with `false`: the soft body ignores collider `handle`.
    pub fn exclude(&mut self, handle: ColliderHandle) -> Result<()> {
        self.set_coupled(handle, false)
    }

    /// Linear momentum of the soft body, `Σ m_i v_i` over its free particles (kg m/s).
    #[must_use]
    pub fn soft_momentum(&self) -> Vec3 {
        self.world.soft_momentum()
    }

    /// Linear momentum of the dynamic rapier bodies, `Σ M V` (kg m/s).
    #[must_use]
    pub fn rigid_momentum(&self) -> Vec3 {
        self.world.rigid_momentum()
    }

    /// Total linear momentum of the soft body and the dynamic rapier bodies (kg m/s).
    #[must_use]
    pub fn momentum(&self) -> Vec3 {
        self.world.momentum()
    }

    /// Advances the soft body and the rapier world by `params.dt`, in substeps as
    /// [`crate::step()`] plans them (each one wobble substep and one rapier step of the same
    /// length, gravity `params.gravity` for both): [`World::step`] on the coupling's world.
    ///
    /// Errors, before anything moves: bad step parameters (`dt <= 0`, NaN, ...), a negative or
    /// non-finite `thickness`, `friction` or `search_distance`, a rigid body with a non-finite
    /// pose or velocity. A soft substep that fails (every error [`crate::step()`] gives) is
    /// rolled back by wobble and the body held there for the rest of the step while rapier
    /// finishes it; the error is then [`crate::WobbleError::InBody`] with the cause.
    pub fn step(&mut self, params: &StepParams) -> Result<CouplingReport> {
        self.settle_settings();
        let report = self.world.step(params)?;
        Ok(CouplingReport {
            substeps: report.substeps,
            contacts: report.rigid_contacts,
            impulse: report.rigid_impulse,
            soft: self.entry().last_report().clone(),
        })
    }
}

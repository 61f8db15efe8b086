//! The plugin, its resources and messages, and the systems that move data between Bevy's
//! entities and the wobble world.
//!
//! Order within a frame (Bevy runs `FixedUpdate` before `Update`):
//! - `FixedUpdate`, [`WobbleSystems::Step`], once per fixed timestep: pointer messages applied,
//!   colliders moved to their entities, the world stepped, stats and events written.
//! - `Update`, [`WobbleSystems::Attach`]: bodies and colliders of despawned entities removed,
//!   new [`SoftBody`] and mesh [`WobbleCollider`] entities added to the world.
//! - `PostUpdate`, [`WobbleSystems::WriteMeshes`]: the bodies' `Mesh3d` assets rewritten if
//!   the world stepped since the last frame.

use crate::body::{mesh_of, placed_trimesh, Render, Source};
use crate::collider::ColliderShape;
use crate::pointer::{Held, PointerGrab, PointerInput, GRAB_COMPLIANCE, PICK_DISTANCE};
use crate::{SoftBody, SoftBodyHandle, SoftBodyStats, WobbleCollider};
use bevy::prelude::*;
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use wobble::core::{BodyHandle, ColliderHandle, MeshCollider, World};
use wobble::{picking, Picker, Pool, SolverOptions, StepParams, StepWarning, WobbleError};

/// Steps every [`SoftBody`] in `FixedUpdate` at Bevy's fixed timestep, in one wobble
/// [`World`] (bodies that touch push each other) spread over one shared pool of `threads`.
pub struct WobblePlugin {
    /// Threads of the shared pool the bodies and parallel solvers run on (1: the thread that
    /// runs the step system; more needs wobble's `parallel` feature).
    pub threads: usize,
    /// The step's parameters; `dt` is replaced by the fixed timestep at every step.
    pub params: StepParams,
}

impl Default for WobblePlugin {
    fn default() -> Self {
        WobblePlugin {
            threads: 1,
            params: StepParams::default(),
        }
    }
}

/// The plugin's system sets, for ordering a game's systems against them.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WobbleSystems {
    /// `FixedUpdate`: [`PointerInput`] messages applied (write them before this), colliders
    /// moved, the world stepped, stats and events written.
    Step,
    /// `Update`: bodies and colliders added and removed.
    Attach,
    /// `PostUpdate`: meshes written.
    WriteMeshes,
}

impl Plugin for WobblePlugin {
    fn build(&self, app: &mut App) {
        let pool = match Pool::new(self.threads) {
            Ok(pool) => pool,
            Err(e) => {
                warn!("bevy_wobble: {e}; stepping on one thread");
                Pool::new(1).expect("a pool of one thread needs no threads")
            }
        };
        let mut world = World::new();
        world.set_executor(Some(pool.world_executor()));
        app.insert_resource(WobbleWorld {
            world: Mutex::new(world),
            pool,
            bodies: BTreeMap::new(),
            meshes: BTreeMap::new(),
            stepped: false,
            shapes: Vec::new(),
        })
        .insert_resource(WobbleParams(self.params))
        .init_resource::<SimulationControl>()
        .init_resource::<WobbleStats>()
        .init_resource::<PointerGrab>()
        .add_message::<WobbleEvent>()
        .add_message::<PointerInput>()
        .add_systems(FixedUpdate, step_world.in_set(WobbleSystems::Step))
        .add_systems(Update, attach_and_remove.in_set(WobbleSystems::Attach))
        .add_systems(PostUpdate, write_meshes.in_set(WobbleSystems::WriteMeshes));
    }
}

/// The wobble world every [`SoftBody`] is stepped in, and which entity is which body.
#[derive(Resource)]
pub struct WobbleWorld {
    world: Mutex<World>,
    pool: Pool,
    bodies: BTreeMap<Entity, Tracked>,
    meshes: BTreeMap<Entity, TrackedMesh>,
    stepped: bool,
    /// The shape colliders of the step being made, kept so that steps allocate none.
    shapes: Vec<(Entity, wobble::Collider)>,
}

/// What the plugin keeps of a body beside the world.
struct Tracked {
    handle: BodyHandle,
    /// Colliders the body came with (its builder's); the plugin's follow them.
    own_colliders: usize,
    /// The collider entities whose colliders follow, in that order.
    synced: Vec<Entity>,
    /// Its render mesh, and how the mesh follows the particles.
    mesh: Handle<Mesh>,
    render: Render,
}

/// A mesh collider of the world, and where its entity was when it was added.
struct TrackedMesh {
    handle: ColliderHandle,
    added_at: Vec3,
}

impl WobbleWorld {
    /// The wobble world, to read or change (thickness and friction between bodies, a body's
    /// solver, its particles).
    pub fn world(&self) -> MutexGuard<'_, World> {
        // A panic while the world was held leaves it as it was after its last whole step.
        self.world
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
    /// The body of `entity`, if it is in the world.
    #[must_use]
    pub fn handle_of(&self, entity: Entity) -> Option<BodyHandle> {
        self.bodies.get(&entity).map(|t| t.handle)
    }
    /// The entity of body `handle`.
    #[must_use]
    pub fn entity_of(&self, handle: BodyHandle) -> Option<Entity> {
        self.bodies
            .iter()
            .find(|(_, t)| t.handle == handle)
            .map(|(&e, _)| e)
    }
    /// The pool the bodies and their solvers share.
    #[must_use]
    pub fn pool(&self) -> &Pool {
        &self.pool
    }
    /// Bodies in the world.
    #[must_use]
    pub fn len(&self) -> usize {
        self.bodies.len()
    }
    /// True when no body is in the world.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.bodies.is_empty()
    }
}

/// The parameters every step runs with (`dt` is replaced by the fixed timestep).
#[derive(Resource, Clone, Copy, Debug, PartialEq, Deref, DerefMut)]
pub struct WobbleParams(pub StepParams);

/// Pausing and single-stepping.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimulationControl {
    /// No step runs while true, but those asked for by [`SimulationControl::step_once`].
    pub paused: bool,
    pending: u32,
}

impl SimulationControl {
    /// While paused, run one step at the next fixed timestep.
    pub fn step_once(&mut self) {
        self.pending += 1;
    }
    /// Whether the next fixed timestep steps, counting off a single step if it does.
    fn take_step(&mut self) -> bool {
        if !self.paused {
            return true;
        }
        let go = self.pending > 0;
        self.pending = self.pending.saturating_sub(1);
        go
    }
}

/// What the last step of the world did.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq)]
pub struct WobbleStats {
    /// Wall time of `World::step` (ms), the world's own work without the plugin's.
    pub step_ms: f64,
    /// Wall time of the plugin's step system (ms): colliders, the step, stats.
    pub system_ms: f64,
    /// Substeps run.
    pub substeps: usize,
    /// Contacts of the last substep.
    pub contacts: usize,
    /// Steps run.
    pub steps: u64,
}

/// What a game may want to react to.
#[derive(Message, Clone, Debug, PartialEq)]
pub enum WobbleEvent {
    /// The step ran, but the body may not look as it should (wobble's `StepWarning`).
    Warning {
        /// The body's entity.
        entity: Entity,
        /// What is wrong.
        warning: StepWarning,
    },
    /// A substep failed for the body (it diverged, or held a non-finite value): the body was
    /// put back to its state at that substep's start, and the step ended there.
    Restored {
        /// The body's entity.
        entity: Entity,
        /// wobble's error, as text.
        error: String,
    },
    /// The step was refused before anything moved (its parameters, the world's settings).
    StepRefused {
        /// wobble's error, as text.
        error: String,
    },
    /// A [`SoftBody`] or [`WobbleCollider`] could not be added: the entity has no body or
    /// collider in the world (the component is removed).
    Refused {
        /// The entity.
        entity: Entity,
        /// wobble's error, as text.
        error: String,
    },
}

/// Soft bodies not yet in the world.
type NewBodies<'w, 's> =
    Query<'w, 's, (Entity, &'static mut SoftBody, &'static mut Transform), Without<SoftBodyHandle>>;

/// Collider entities where they are.
type PlacedColliders<'w, 's> =
    Query<'w, 's, (Entity, &'static WobbleCollider, &'static GlobalTransform)>;

/// [`WobbleSystems::Attach`]: the bodies and mesh colliders of entities that are gone removed,
/// then the new ones added (one system, so that a frame hands the task pool one task, not three).
#[allow(clippy::too_many_arguments)]
fn attach_and_remove(
    mut commands: Commands,
    mut ww: ResMut<WobbleWorld>,
    mut meshes: ResMut<Assets<Mesh>>,
    server: Option<Res<AssetServer>>,
    mut gone_bodies: RemovedComponents<SoftBodyHandle>,
    mut gone_colliders: RemovedComponents<WobbleCollider>,
    mut grab: ResMut<PointerGrab>,
    mut new: NewBodies,
    colliders: PlacedColliders,
    mut events: MessageWriter<WobbleEvent>,
) {
    let ww = &mut *ww;
    let server = server.as_deref();
    forget_removed(ww, &mut gone_bodies, &mut gone_colliders, &mut grab);
    attach_bodies(
        &mut commands,
        ww,
        &mut meshes,
        server,
        &mut new,
        &mut events,
    );
    attach_mesh_colliders(&mut commands, ww, &meshes, server, &colliders, &mut events);
}

/// Removes the bodies and mesh colliders of entities that are gone (or lost the component).
fn forget_removed(
    ww: &mut WobbleWorld,
    gone_bodies: &mut RemovedComponents<SoftBodyHandle>,
    gone_colliders: &mut RemovedComponents<WobbleCollider>,
    grab: &mut PointerGrab,
) {
    for entity in gone_bodies.read() {
        if let Some(t) = ww.bodies.remove(&entity) {
            // The handle came from this world, so removing it cannot fail.
            let _ = ww.world().remove_body(t.handle);
            if grab.held.is_some_and(|h| h.entity == entity) {
                grab.held = None;
            }
        }
    }
    for entity in gone_colliders.read() {
        if let Some(m) = ww.meshes.remove(&entity) {
            let _ = ww.world().remove_mesh_collider(m.handle);
        }
    }
}

/// Moves each new [`SoftBody`] into the world (a mesh body once its asset is loaded).
fn attach_bodies(
    commands: &mut Commands,
    ww: &mut WobbleWorld,
    meshes: &mut Assets<Mesh>,
    server: Option<&AssetServer>,
    new: &mut NewBodies,
    events: &mut MessageWriter<WobbleEvent>,
) {
    for (entity, mut soft, mut transform) in new {
        let mut failed = None;
        let mut waiting = false;
        let source_mesh = match soft.source.get() {
            Some(Source::Mesh(m)) => Some(m.mesh.clone()),
            _ => None,
        };
        for mesh in source_mesh.iter().chain(soft.render_mesh.iter()) {
            if !meshes.contains(mesh) {
                match load_failure(server, mesh) {
                    Some(e) => failed = Some(e),
                    None => waiting = true,
                }
            }
        }
        if waiting && failed.is_none() {
            continue; // not loaded yet
        }
        let Some(source) = soft.source.get().take() else {
            continue;
        };
        let attached = match failed {
            Some(e) => Err(e),
            None => attach(ww, meshes, &soft, source, &transform),
        };
        match attached {
            Ok(tracked) => {
                commands.entity(entity).insert((
                    SoftBodyHandle(tracked.handle),
                    SoftBodyStats::default(),
                    Mesh3d(tracked.mesh.clone()),
                ));
                *transform = Transform::IDENTITY;
                ww.bodies.insert(entity, tracked);
            }
            Err(e) => {
                refuse(events, entity, "soft body", &e);
                commands.entity(entity).remove::<SoftBody>();
            }
        }
    }
}

/// Logs and reports that `entity`'s `what` was not added.
fn refuse(events: &mut MessageWriter<WobbleEvent>, entity: Entity, what: &str, e: &WobbleError) {
    warn!("bevy_wobble: {what} {entity} refused: {e}");
    events.write(WobbleEvent::Refused {
        entity,
        error: e.to_string(),
    });
}

/// The error of a mesh asset that the asset server failed to load (`None` while it may still
/// arrive).
fn load_failure(server: Option<&AssetServer>, mesh: &Handle<Mesh>) -> Option<WobbleError> {
    match server?.get_load_state(mesh)? {
        bevy::asset::LoadState::Failed(e) => Some(WobbleError::InvalidStructure {
            what: "bevy mesh asset",
            detail: format!("it failed to load: {e}"),
        }),
        _ => None,
    }
}

/// The body of `source` placed by `transform`, in the world, with its render mesh.
fn attach(
    ww: &mut WobbleWorld,
    meshes: &mut Assets<Mesh>,
    soft: &SoftBody,
    source: Source,
    transform: &Transform,
) -> Result<Tracked, WobbleError> {
    let (body, mut render, mut map) = match source {
        Source::Body(mut body) => {
            let rigid_only = transform.rotation.is_near_identity()
                && transform.scale.abs_diff_eq(Vec3::ONE, 1e-6);
            if !rigid_only {
                return Err(WobbleError::InvalidStructure {
                    what: "soft body transform",
                    detail: format!(
                        "a body made by a wobble builder takes its entity's translation only, and this one is rotated or scaled ({transform:?}): build it rotated or sized instead"
                    ),
                });
            }
            body.translate(crate::to_wobble(transform.translation).as_dvec3())?;
            let mut map = Render::particles((0..body.len() as u32).collect());
            let render = mesh_of(&body, &mut map)?;
            (*body, render, map)
        }
        Source::Mesh(m) => {
            let asset = meshes.get(&m.mesh).expect("checked loaded");
            let (body, map) = m.build(asset, transform)?;
            let mut map = Render::particles(map);
            let mut render = asset.clone();
            map.write(&mut render, &body)?;
            (body, render, map)
        }
    };
    if let Some(handle) = &soft.render_mesh {
        let asset = meshes.get(handle).expect("checked loaded");
        map = Render::embedded(asset, transform, &body)?;
        render = asset.clone();
        map.write(&mut render, &body)?;
    }
    let solver = soft.solver.build(&SolverOptions {
        pool: Some(ww.pool.clone()),
        ..SolverOptions::default()
    })?;
    let mut world = ww.world();
    let own_colliders = body.colliders().len();
    let handle = world.add_body(body, Some(solver))?;
    let set_up = (|| {
        if let Some(thickness) = soft.self_collision {
            world.enable_self_collision(handle, thickness)?;
        }
        if soft.record_residuals {
            world
                .body_mut(handle)
                .expect("just added")
                .record_residuals(true);
        }
        Ok(())
    })();
    if let Err(e) = set_up {
        world.remove_body(handle)?;
        return Err(e);
    }
    drop(world);
    Ok(Tracked {
        handle,
        own_colliders,
        synced: Vec::new(),
        mesh: meshes.add(render),
        render: map,
    })
}

/// Adds each new mesh [`WobbleCollider`] to the world once its asset is loaded.
fn attach_mesh_colliders(
    commands: &mut Commands,
    ww: &mut WobbleWorld,
    meshes: &Assets<Mesh>,
    server: Option<&AssetServer>,
    colliders: &PlacedColliders,
    events: &mut MessageWriter<WobbleEvent>,
) {
    for (entity, collider, at) in colliders {
        let ColliderShape::Mesh { mesh, thickness } = &collider.shape else {
            continue;
        };
        if ww.meshes.contains_key(&entity) {
            continue;
        }
        let asset = meshes.get(mesh);
        let failed = asset
            .is_none()
            .then(|| load_failure(server, mesh))
            .flatten();
        let made = (|| {
            if let Some(e) = failed {
                return Err(e);
            }
            let Some(asset) = asset else {
                return Ok(None); // not loaded yet
            };
            let (tri, _) = placed_trimesh(asset, &at.compute_transform())?;
            let made = MeshCollider::new(&tri, *thickness, collider.friction)?;
            Ok::<_, WobbleError>(Some(made))
        })();
        match made {
            Ok(None) => {}
            Ok(Some(made)) => {
                let handle = ww.world().add_mesh_collider(made);
                ww.meshes.insert(
                    entity,
                    TrackedMesh {
                        handle,
                        added_at: at.translation(),
                    },
                );
            }
            Err(e) => {
                refuse(events, entity, "mesh collider", &e);
                commands.entity(entity).remove::<WobbleCollider>();
            }
        }
    }
}

/// Applies the pointer's messages: a press grabs, a drag moves the grab, a release lets go.
fn apply_pointer(
    ww: &WobbleWorld,
    input: &mut MessageReader<PointerInput>,
    grab: &mut PointerGrab,
) {
    for message in input.read() {
        let mut world = ww.world();
        match *message {
            PointerInput::Press(ray) => {
                if let Some(held) = grab.held.take() {
                    let _ = release_held(ww, &mut world, held);
                }
                grab.held = press(ww, &mut world, ray);
            }
            PointerInput::Drag(ray) => {
                if let Some(held) = &mut grab.held {
                    let target = ray.origin + held.distance * *ray.direction;
                    let moved = ww
                        .handle_of(held.entity)
                        .and_then(|h| world.body_mut(h))
                        .map(|b| {
                            picking::move_grab(b.body_mut(), held.grab, crate::to_wobble(target))
                        });
                    match moved {
                        Some(Ok(())) => held.target = target,
                        _ => grab.held = None,
                    }
                }
            }
            PointerInput::Release => {
                if let Some(held) = grab.held.take() {
                    let _ = release_held(ww, &mut world, held);
                }
            }
        }
    }
}

/// The nearest point of any body that `ray` hits, grabbed.
fn press(ww: &WobbleWorld, world: &mut World, ray: Ray3d) -> Option<Held> {
    let (origin, dir) = (
        crate::to_wobble(ray.origin),
        crate::to_wobble(*ray.direction),
    );
    let mut best: Option<(Entity, wobble::Hit)> = None;
    for (&entity, t) in &ww.bodies {
        let Some(b) = world.body(t.handle) else {
            continue;
        };
        let body = b.body();
        if body.topology().triangles.is_empty() {
            continue;
        }
        let hit = Picker::new(body)
            .and_then(|mut p| p.pick(body, origin, dir, PICK_DISTANCE))
            .ok()
            .flatten();
        if let Some(hit) = hit {
            if best.as_ref().is_none_or(|(_, b)| hit.distance < b.distance) {
                best = Some((entity, hit));
            }
        }
    }
    let (entity, hit) = best?;
    let body = world.body_mut(ww.handle_of(entity)?)?.body_mut();
    let grab = picking::grab(body, &hit, GRAB_COMPLIANCE).ok()?;
    Some(Held {
        entity,
        grab,
        distance: hit.distance,
        target: crate::to_bevy(hit.point),
    })
}

fn release_held(ww: &WobbleWorld, world: &mut World, held: Held) -> Result<(), WobbleError> {
    if let Some(b) = ww.handle_of(held.entity).and_then(|h| world.body_mut(h)) {
        picking::release(b.body_mut(), held.grab)?;
    }
    Ok(())
}

/// [`WobbleSystems::Step`]: the pointer's messages applied, then one step of the world at the
/// fixed timestep, unless paused.
#[allow(clippy::too_many_arguments)]
fn step_world(
    mut ww: ResMut<WobbleWorld>,
    mut input: MessageReader<PointerInput>,
    mut grab: ResMut<PointerGrab>,
    params: Res<WobbleParams>,
    time: Res<Time>,
    mut control: ResMut<SimulationControl>,
    mut stats: ResMut<WobbleStats>,
    colliders: Query<(Entity, &WobbleCollider, &GlobalTransform)>,
    mut bodies: Query<(Entity, &mut SoftBodyStats)>,
    mut events: MessageWriter<WobbleEvent>,
) {
    apply_pointer(&ww, &mut input, &mut grab);
    if !control.take_step() {
        return;
    }
    let started = std::time::Instant::now();
    let ww = &mut *ww;
    let params = StepParams {
        dt: time.delta_secs(),
        ..params.0
    };
    // The shape colliders in entity order, so every run adds them alike.
    let shapes = &mut ww.shapes;
    shapes.clear();
    for (entity, collider, at) in &colliders {
        match collider.collider_at(at) {
            Ok(Some(c)) => shapes.push((entity, c)),
            Ok(None) => {}
            Err(e) => {
                warn!("bevy_wobble: collider {entity} left out of this step: {e}");
            }
        }
    }
    shapes.sort_by_key(|(e, _)| *e);
    let mut world = ww.world.lock().unwrap_or_else(|p| p.into_inner());
    for t in ww.bodies.values_mut() {
        let Some(b) = world.body_mut(t.handle) else {
            continue;
        };
        let body = b.body_mut();
        if t.synced.iter().eq(shapes.iter().map(|(e, _)| e)) {
            for (k, (_, c)) in shapes.iter().enumerate() {
                let at = t.own_colliders + k;
                body.colliders_mut()[at].friction = c.friction;
                // A shape that changed kind (a component replaced) is put there anew.
                if body.move_collider(at, c.shape).is_err() {
                    body.colliders_mut()[at] = *c;
                }
            }
        } else {
            while body.colliders().len() > t.own_colliders {
                let last = body.colliders().len() - 1;
                let _ = body.remove_collider(last);
            }
            for (_, c) in shapes.iter() {
                // The shapes were checked when they were made from their components.
                if let Err(e) = body.add_collider(*c) {
                    warn!("bevy_wobble: a collider was refused: {e}");
                }
            }
            t.synced.clear();
            t.synced.extend(shapes.iter().map(|(e, _)| *e));
        }
    }
    for (&entity, m) in &ww.meshes {
        if let Ok((_, _, at)) = colliders.get(entity) {
            if let Some(mesh) = world.mesh_collider_mut(m.handle) {
                let _ = mesh.set_origin(crate::to_wobble(at.translation() - m.added_at).as_dvec3());
            }
        }
    }
    let stepping = std::time::Instant::now();
    let result = world.step(&params);
    stats.step_ms = stepping.elapsed().as_secs_f64() * 1e3;
    stats.steps += 1;
    match result {
        Ok(report) => {
            stats.substeps = report.substeps;
            stats.contacts = report.contacts;
        }
        Err(WobbleError::InBody { .. }) => {
            // Every body that failed, not only the first the error names.
            for &handle in &world.last_report().failed {
                let (Some(entity), Some(error)) = (
                    ww.entity_of(handle),
                    world.body(handle).and_then(|b| b.failure()),
                ) else {
                    continue;
                };
                warn!("bevy_wobble: soft body {entity} restored: {error}");
                events.write(WobbleEvent::Restored {
                    entity,
                    error: error.to_string(),
                });
            }
        }
        Err(e) => {
            warn!("bevy_wobble: step refused: {e}");
            events.write(WobbleEvent::StepRefused {
                error: e.to_string(),
            });
        }
    }
    for (entity, mut s) in &mut bodies {
        let Some(b) = ww.bodies.get(&entity).and_then(|t| world.body(t.handle)) else {
            continue;
        };
        let report = b.last_report();
        s.stretch_mean = report.stretch_mean;
        s.residuals.clear();
        s.residuals.extend_from_slice(b.residuals());
        s.steps += 1;
        for &warning in &report.warnings {
            events.write(WobbleEvent::Warning { entity, warning });
        }
    }
    drop(world);
    ww.stepped = true;
    stats.system_ms = started.elapsed().as_secs_f64() * 1e3;
}

/// Writes each body's positions and normals into its `Mesh3d` asset after a step.
fn write_meshes(mut ww: ResMut<WobbleWorld>, mut meshes: ResMut<Assets<Mesh>>) {
    if !std::mem::take(&mut ww.stepped) {
        return;
    }
    let WobbleWorld { world, bodies, .. } = &mut *ww;
    let world = world.get_mut().unwrap_or_else(|p| p.into_inner());
    for t in bodies.values_mut() {
        let (Some(b), Some(mut mesh)) = (world.body(t.handle), meshes.get_mut(&t.mesh)) else {
            continue;
        };
        if let Err(e) = t.render.write(&mut mesh, b.body()) {
            warn!("bevy_wobble: mesh of body {:?} not written: {e}", t.handle);
        }
    }
}

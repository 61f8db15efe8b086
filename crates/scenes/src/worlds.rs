//! The world scenes of docs/SCENES.md: several bodies, or one body against colliders and
//! itself, stepped by a [`World`].

use crate::standard::{check_n, closed_surface_body, grid_body, load_placed_obj, surface_body};
use glam::Vec3;
use solver_core::build::body_from_tetmesh;
use solver_core::mesh::parts::parts;
use solver_core::mesh::repair::{MeshOptions, RepairReport};
use solver_core::mesh::shapes::{cube_tets, icosphere};
use solver_core::mesh::TriMesh;
use solver_core::{Collider, MeshCollider, Particles, Result, World};

/// The `mesh FILE` scene of an OBJ surface of several parts (connected components), as a
/// world: one body per part, built as the one-part scene builds its body (placed as a whole so
/// that the lowest point is half the mesh's height above the ground, closed parts with their
/// own volume constraint), the 1 kg shared by vertex count so every particle keeps the mass it
/// has in the one-body scene; the world's contacts between bodies keep the parts apart, and
/// the particles inside another part at load are pushed out of it ([`World::find_tangles`]).
/// `None` for a TetGen mesh or a surface of one part, which stay one body
/// ([`crate::mesh_scene_with`]).
pub fn mesh_parts_world(
    path: &std::path::Path,
    options: &MeshOptions,
) -> Result<Option<(World, RepairReport)>> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if ext == "node" || ext == "ele" {
        return Ok(None);
    }
    let (mesh, report) = load_placed_obj(path, options)?;
    Ok(parts_world(&mesh)?.map(|w| (w, report)))
}

/// The world of [`mesh_parts_world`] for a mesh already placed; `None` for one part.
pub fn parts_world(mesh: &TriMesh) -> Result<Option<World>> {
    let parts = parts(mesh);
    if parts.len() < 2 {
        return Ok(None);
    }
    let vertices: usize = parts.iter().map(|p| p.positions.len()).sum();
    let mut world = World::new();
    for part in &parts {
        let mass = part.positions.len() as f32 / vertices as f32;
        world.add_body(surface_body(part, mass)?, None)?;
    }
    world.find_tangles()?;
    Ok(Some(world))
}

/// Side of a `stack` block (m).
pub const STACK_BLOCK: f32 = 0.5;

/// Gap between the `stack` blocks, and between the lowest one and the ground, at the start (m).
pub const STACK_GAP: f32 = 0.05;

/// Horizontal offset of each `stack` block from the one below (m): the blocks are staggered,
/// so that edges of one lie across the faces of the next.
pub const STACK_STAGGER: Vec3 = Vec3::new(0.04, 0.0, 0.03);

/// The `stack` world: three jelly blocks, each a [`STACK_BLOCK`] m cube of 3³ cells of
/// tetrahedra (distance and volume compliance 1e-4 m/N, 1 kg), one above the other, each
/// [`STACK_STAGGER`] off the one below, [`STACK_GAP`] apart and the lowest that far above the
/// ground (friction 0.5), so that they fall onto each other and come to rest as a tower.
pub fn stack() -> Result<World> {
    let mut world = World::new();
    for i in 0..3 {
        let y = STACK_GAP + i as f32 * (STACK_BLOCK + STACK_GAP);
        let corner =
            Vec3::new(-0.5 * STACK_BLOCK, y, -0.5 * STACK_BLOCK) + STACK_STAGGER * i as f32;
        let mesh = cube_tets(3, corner, STACK_BLOCK)?;
        let mut body = body_from_tetmesh(&mesh, 1.0, 1e-4, 1e-4)?;
        body.add_collider(Collider::ground(0.5, 0.0))?;
        world.add_body(body, None)?;
    }
    Ok(world)
}

/// Side of the `drape` cloth (m).
pub const DRAPE_SIZE: f32 = 1.6;

/// The `drape` world: an `n` x `n` cloth of [`DRAPE_SIZE`] m, 1 kg, no pins, flat at y = 1,
/// its centre 0.1 m off the top of a sphere of radius 0.3 m resting on the ground (both
/// colliders friction 0.5), so that it hangs over the sphere and folds onto itself on the
/// ground; self-collision at a thickness of 1.2 edge lengths (a particle's travel per
/// substep bounded by a quarter of it) when `self_collision`.
pub fn drape(n: usize, self_collision: bool) -> Result<World> {
    check_n("drape n", n)?;
    let spacing = DRAPE_SIZE / (n - 1) as f32;
    let mut pos = Vec::with_capacity(n * n);
    for j in 0..n {
        for i in 0..n {
            pos.push(Vec3::new(
                i as f32 * spacing - 0.5 * DRAPE_SIZE + 0.1,
                1.0,
                j as f32 * spacing - 0.5 * DRAPE_SIZE,
            ));
        }
    }
    let mut body = grid_body(Particles::new(&pos, &vec![1.0 / (n * n) as f32; n * n])?, n)?;
    body.add_collider(Collider::ground(0.5, 0.0))?;
    body.add_collider(Collider::sphere(Vec3::new(0.0, 0.3, 0.0), 0.3)?)?;
    let mut world = World::new();
    let cloth = world.add_body(body, None)?;
    if self_collision {
        world.enable_self_collision(cloth, 1.2 * spacing)?;
        if let Some(sc) = world.body_mut(cloth).and_then(|b| b.self_collision_mut()) {
            sc.max_travel = 0.25 * sc.thickness;
        }
    }
    Ok(world)
}

/// Speed of the `tunnel` bodies (m/s).
pub const TUNNEL_SPEED: f32 = 20.0;

/// The `tunnel` world: two jellies (radius 0.1 m, 1 subdivision, 0.5 kg) at 20 m/s along +x,
/// starting 0.5 m before x = 0: the first at z = 0 toward a 1 cm box (half extents 0.005, 0.5,
/// 0.5 m, centred on x = 0), the second at z = 2 toward a triangle-mesh wall of two triangles
/// in the plane x = 0; ground plane, no gravity. At dt = 1/60 a body moves 0.33 m per step,
/// 33 times the box's thickness.
pub fn tunnel() -> Result<World> {
    let mut world = World::new();
    for z in [0.0, 2.0] {
        let mesh = icosphere(Vec3::new(-0.5, 0.6, z), 0.1, 1)?;
        let mut body = closed_surface_body(&mesh, 0.5)?;
        for v in body.particles_mut().v_mut().iter_mut() {
            v.set_xyz(Vec3::new(TUNNEL_SPEED, 0.0, 0.0));
        }
        world.add_body(body, None)?;
    }
    world.add_collider(Collider::cuboid(
        Vec3::new(0.0, 0.6, 0.0),
        Vec3::new(0.005, 0.5, 0.5),
        glam::Quat::IDENTITY,
    )?)?;
    let wall = TriMesh::new(
        vec![
            Vec3::new(0.0, 0.0, 1.5),
            Vec3::new(0.0, 1.2, 1.5),
            Vec3::new(0.0, 1.2, 2.5),
            Vec3::new(0.0, 0.0, 2.5),
        ],
        vec![[0, 1, 2], [0, 2, 3]],
    )?;
    world.add_mesh_collider(MeshCollider::new(&wall, 0.005, 0.5)?);
    Ok(world)
}

/// Cells of the `crowd` world, each holding a hammock and a jelly.
pub const CROWD_CELLS: usize = 32;

/// Distance between the centres of neighbouring `crowd` cells (m).
pub const CROWD_PITCH: f32 = 2.0;

/// The `crowd` world: 64 small bodies, as a game steps them. [`CROWD_CELLS`] cells in rows of
/// 8, [`CROWD_PITCH`] m apart, each holding a 16 x 16 hammock (1 m square at y = 1, 0.25 kg,
/// pinned at its four corners) and a jelly (icosphere of radius 0.2 m, 2 subdivisions: 162
/// vertices, 0.25 kg, volume constraint, ground plane with friction 0.5). In even cells the
/// jelly starts 0.35 m above the hammock's centre and falls into it (the two touch); in odd
/// cells it starts beside the hammock (centre 0.75 m off along z) and falls to the ground
/// alone. Bodies are added cell by cell, the hammock before its jelly.
pub fn crowd() -> Result<World> {
    crowd_with(true)
}

/// The `crowd` world, or with `touching` false every jelly beside its hammock (no two bodies
/// touch): the world's own cost apart from the contacts between bodies.
pub fn crowd_with(touching: bool) -> Result<World> {
    const N: usize = 16;
    let mut world = World::new();
    for cell in 0..CROWD_CELLS {
        let centre = Vec3::new(
            (cell % 8) as f32 * CROWD_PITCH,
            1.0,
            (cell / 8) as f32 * CROWD_PITCH,
        );
        let spacing = 1.0 / (N - 1) as f32;
        let pos: Vec<Vec3> = (0..N * N)
            .map(|k| {
                let (i, j) = ((k % N) as f32, (k / N) as f32);
                centre + Vec3::new(i * spacing - 0.5, 0.0, j * spacing - 0.5)
            })
            .collect();
        let mut mass = vec![0.25 / (N * N) as f32; N * N];
        for corner in [0, N - 1, N * (N - 1), N * N - 1] {
            mass[corner] = f32::INFINITY;
        }
        let mut hammock = grid_body(Particles::new(&pos, &mass)?, N)?;
        hammock.add_collider(Collider::ground(0.5, 0.0))?;
        world.add_body(hammock, None)?;
        let at = if touching && cell % 2 == 0 {
            centre + Vec3::new(0.0, 0.35, 0.0)
        } else {
            centre + Vec3::new(0.0, 0.35, 0.75)
        };
        let jelly = closed_surface_body(&icosphere(at, 0.2, 2)?, 0.25)?;
        world.add_body(jelly, None)?;
    }
    Ok(world)
}

//! The standard scenes of docs/SCENES.md, built exactly as written there (vertex order, constraint
//! order, masses, pins), so that figures can sit beside other engines'.

use crate::body::particles::Particles;
use crate::body::{Body, Topology};
use crate::collide::Collider;
use crate::constraints::{
    ConstraintKind, Constraints, DihedralBending, DistanceConstraints, SurfaceVolume, TetVolume,
};
use crate::effects::wind::Wind;
use crate::error::{check_at_most, check_count, check_size, Result, WobbleError};
use crate::mesh::repair::{load_obj_repaired, MeshOptions, RepairReport};
use crate::mesh::tetgen::{load_tetgen, TetMesh};
use crate::mesh::TriMesh;
use glam::Vec3;
use std::collections::HashMap;
use std::path::PathBuf;

/// A standard scene and its size parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum Scene {
    /// n x n cloth, 1 m x 1 m at y = 1, pinned at vertices 0 and n-1.
    Cloth {
        /// Vertices along each side.
        n: usize,
    },
    /// n vertices on a 1 m horizontal line, vertex 0 pinned.
    Rope {
        /// Vertices.
        n: usize,
    },
    /// (2n-1) x n flag in the XY plane, pinned along the pole.
    Flag {
        /// Vertices along the pole (2n-1 along the fly).
        n: usize,
    },
    /// Icosphere of radius 0.25 m with `subdivisions` levels, on the ground.
    Jelly {
        /// Subdivision levels of the icosahedron.
        subdivisions: usize,
    },
    /// 0.5 m cube of k³ cells, 5 tetrahedra each, on the ground.
    Cube {
        /// Cells along each side.
        k: usize,
    },
    /// A mesh file (OBJ, or TetGen .node/.ele), dropped on the ground.
    Mesh {
        /// The file.
        path: PathBuf,
    },
}

/// Largest accepted size parameter for the grid scenes (n = 4096 is 16.7M vertices).
pub const MAX_N: usize = 4096;

/// Largest accepted icosphere subdivision level (9 gives 2.6M vertices).
pub const MAX_SUBDIVISIONS: usize = 9;

/// Largest accepted number of cube cells per side (256 gives 84M tetrahedra).
pub const MAX_CUBE_CELLS: usize = 256;

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

impl Scene {
    /// Parses a scene name as the CLI gives it; `n` is the size parameter (subdivision level for
    /// jelly, cells per side for cube) and `mesh` the file of the `mesh` scene.
    pub fn parse(name: &str, n: usize, mesh: Option<PathBuf>) -> Result<Self> {
        Ok(match name {
            "cloth" => Scene::Cloth { n },
            "rope" => Scene::Rope { n },
            "flag" => Scene::Flag { n },
            "jelly" => Scene::Jelly { subdivisions: n },
            "cube" => Scene::Cube { k: n },
            "mesh" => Scene::Mesh {
                path: mesh.ok_or(WobbleError::MissingInput(
                    "the mesh scene needs a file (--mesh FILE)",
                ))?,
            },
            other => {
                return Err(WobbleError::UnknownName {
                    what: "scene",
                    name: other.into(),
                    expected: "cloth, rope, flag, jelly, cube or mesh".into(),
                })
            }
        })
    }

    /// The scene's name.
    pub fn name(&self) -> &'static str {
        match self {
            Scene::Cloth { .. } => "cloth",
            Scene::Rope { .. } => "rope",
            Scene::Flag { .. } => "flag",
            Scene::Jelly { .. } => "jelly",
            Scene::Cube { .. } => "cube",
            Scene::Mesh { .. } => "mesh",
        }
    }

    /// Builds the body.
    pub fn build(&self) -> Result<Body> {
        match self {
            Scene::Cloth { n } => cloth(*n),
            Scene::Rope { n } => rope(*n),
            Scene::Flag { n } => flag(*n),
            Scene::Jelly { subdivisions } => jelly(*subdivisions),
            Scene::Cube { k } => cube(*k),
            Scene::Mesh { path } => mesh_scene(path),
        }
    }
}

fn check_n(name: &'static str, n: usize) -> Result<()> {
    check_size(
        name,
        n,
        2,
        MAX_N,
        "is below the smallest size of this scene (2)",
    )
}

/// Checks the size and placement of a generated shape: `extent` finite and `> 0`, `origin`
/// finite.
fn check_extent(name: &'static str, extent: f32, origin: Vec3, reason: &'static str) -> Result<()> {
    if extent.is_finite() && extent > 0.0 && origin.is_finite() {
        Ok(())
    } else {
        Err(WobbleError::BadParameter {
            name,
            value: extent as f64,
            reason,
        })
    }
}

/// Particles at `positions` sharing `total_mass` equally.
fn equal_mass_particles(positions: &[Vec3], total_mass: f32) -> Result<Particles> {
    if !(total_mass.is_finite() && total_mass > 0.0) {
        return Err(WobbleError::BadMass {
            what: "body total",
            index: 0,
            value: total_mass,
        });
    }
    let n = positions.len();
    Particles::new(positions, &vec![total_mass / n as f32; n])
}

/// The body of `particles` held by `distance` and then the kinds `extra`.
fn scene_body(
    particles: Particles,
    distance: DistanceConstraints,
    extra: Vec<Box<dyn ConstraintKind>>,
    topology: Topology,
) -> Result<Body> {
    Body::new(particles, Constraints { distance, extra }, topology)
}

/// Distance constraints and triangles of a `cols` x `rows` grid numbered `v = j*cols + i`, in
/// the order of docs/SCENES.md: horizontal, vertical, then one diagonal per quad.
fn grid_constraints(
    x: &Particles,
    cols: usize,
    rows: usize,
) -> Result<(DistanceConstraints, Vec<[u32; 3]>, usize)> {
    let v = |i: usize, j: usize| (j * cols + i) as u32;
    let mut d = DistanceConstraints::default();
    let edges = rows * (cols - 1) + (rows - 1) * cols + (rows - 1) * (cols - 1);
    d.pairs.reserve(edges);
    d.rest.reserve(edges);
    d.compliance.reserve(edges);
    for j in 0..rows {
        for i in 0..cols - 1 {
            d.push_rest(&x.x, v(i, j), v(i + 1, j), 0.0)?;
        }
    }
    for j in 0..rows - 1 {
        for i in 0..cols {
            d.push_rest(&x.x, v(i, j), v(i, j + 1), 0.0)?;
        }
    }
    let structural = d.len();
    let mut tris = Vec::with_capacity(2 * (rows - 1) * (cols - 1));
    for j in 0..rows - 1 {
        for i in 0..cols - 1 {
            d.push_rest(&x.x, v(i, j), v(i + 1, j + 1), 0.0)?;
            tris.push([v(i, j), v(i + 1, j + 1), v(i + 1, j)]);
            tris.push([v(i, j), v(i, j + 1), v(i + 1, j + 1)]);
        }
    }
    Ok((d, tris, structural))
}

/// The reference cloth: n x n vertices, 3n² - 4n + 1 distance constraints, pinned at 0 and n-1.
pub fn cloth(n: usize) -> Result<Body> {
    check_n("cloth n", n)?;
    let denom = (n - 1) as f32;
    let mut pos = Vec::with_capacity(n * n);
    for j in 0..n {
        for i in 0..n {
            pos.push(Vec3::new(i as f32 / denom, 1.0, j as f32 / denom));
        }
    }
    let mut mass = vec![1.0 / (n * n) as f32; n * n];
    mass[0] = f32::INFINITY;
    mass[n - 1] = f32::INFINITY;
    grid_body(Particles::new(&pos, &mass)?, n)
}

/// The body of an `n` x `n` grid of `particles` with [`grid_constraints`] and nothing else.
fn grid_body(particles: Particles, n: usize) -> Result<Body> {
    let (distance, triangles, structural) = grid_constraints(&particles, n, n)?;
    let topology = Topology {
        triangles,
        structural,
        ..Default::default()
    };
    scene_body(particles, distance, Vec::new(), topology)
}

/// The rope: n vertices from (0,1,0) to (1,1,0), neighbours linked, vertex 0 pinned.
pub fn rope(n: usize) -> Result<Body> {
    check_n("rope n", n)?;
    let pos: Vec<Vec3> = (0..n)
        .map(|i| Vec3::new(i as f32 / (n - 1) as f32, 1.0, 0.0))
        .collect();
    let mut mass = vec![1.0 / n as f32; n];
    mass[0] = f32::INFINITY;
    let particles = Particles::new(&pos, &mass)?;
    let mut distance = DistanceConstraints::default();
    for i in 0..n - 1 {
        distance.push_rest(&particles.x, i as u32, i as u32 + 1, 0.0)?;
    }
    let structural = distance.len();
    let topology = Topology {
        structural,
        ..Default::default()
    };
    scene_body(particles, distance, Vec::new(), topology)
}

/// A body from a triangle mesh: one particle per vertex, `total_mass` shared equally, one
/// distance constraint (compliance `compliance`) per unique edge, in order of first appearance.
pub fn body_from_trimesh(mesh: &TriMesh, total_mass: f32, compliance: f32) -> Result<Body> {
    mesh.validate()?;
    let particles = equal_mass_particles(&mesh.positions, total_mass)?;
    let adj = mesh.edge_adjacency();
    let mut distance = DistanceConstraints::default();
    for (e, &[a, b]) in adj.edges.iter().enumerate() {
        distance
            .push_rest(&particles.x, a, b, compliance)
            .map_err(|err| match err {
                WobbleError::ZeroLengthConstraint { kind, i, j, .. } => {
                    WobbleError::ZeroLengthConstraint {
                        kind,
                        index: e,
                        i,
                        j,
                    }
                }
                other => other,
            })?;
    }
    let closed = adj.is_closed();
    let rest_volume = if closed {
        crate::figures::enclosed_volume(&mesh.triangles, &particles.x) as f32
    } else {
        0.0
    };
    let topology = Topology {
        triangles: mesh.triangles.clone(),
        structural: 0,
        closed,
        rest_volume,
        tets: Vec::new(),
    };
    scene_body(particles, distance, Vec::new(), topology)
}

/// The `flag`: (2n-1) x n vertices in the XY plane, 2 m x 1 m, pinned along the pole (i = 0),
/// cloth constraints in rows of 2n-1, dihedral bending (compliance 1e-4) and the docs/SCENES.md wind.
pub fn flag(n: usize) -> Result<Body> {
    check_n("flag n", n)?;
    let cols = 2 * n - 1;
    let denom_x = (2 * n - 2) as f32;
    let denom_y = (n - 1) as f32;
    let mut pos = Vec::with_capacity(cols * n);
    for j in 0..n {
        for i in 0..cols {
            pos.push(Vec3::new(
                2.0 * i as f32 / denom_x,
                1.0 + j as f32 / denom_y,
                0.0,
            ));
        }
    }
    let mut mass = vec![1.0 / (cols * n) as f32; cols * n];
    for j in 0..n {
        mass[j * cols] = f32::INFINITY;
    }
    let particles = Particles::new(&pos, &mass)?;
    let (distance, triangles, structural) = grid_constraints(&particles, cols, n)?;
    let bending =
        DihedralBending::from_triangles(&particles.x, &triangles, FLAG_BENDING_COMPLIANCE)?;
    let topology = Topology {
        triangles,
        structural,
        ..Default::default()
    };
    let mut body = scene_body(particles, distance, vec![Box::new(bending)], topology)?;
    body.wind = Some(flag_wind());
    Ok(body)
}

/// An icosphere: the icosahedron (12 vertices) with every triangle split in four `subdivisions`
/// times, new vertices projected onto the sphere; outward counter-clockwise triangles.
pub fn icosphere(center: Vec3, radius: f32, subdivisions: usize) -> Result<TriMesh> {
    check_at_most("icosphere subdivisions", subdivisions, MAX_SUBDIVISIONS)?;
    check_extent(
        "icosphere radius",
        radius,
        center,
        "needs a finite centre and a finite radius > 0",
    )?;
    let t = (1.0 + 5.0f32.sqrt()) / 2.0;
    let mut unit: Vec<Vec3> = [
        [-1.0, t, 0.0],
        [1.0, t, 0.0],
        [-1.0, -t, 0.0],
        [1.0, -t, 0.0],
        [0.0, -1.0, t],
        [0.0, 1.0, t],
        [0.0, -1.0, -t],
        [0.0, 1.0, -t],
        [t, 0.0, -1.0],
        [t, 0.0, 1.0],
        [-t, 0.0, -1.0],
        [-t, 0.0, 1.0],
    ]
    .iter()
    .map(|&p| Vec3::from_array(p).normalize())
    .collect();
    let mut tris: Vec<[u32; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    for _ in 0..subdivisions {
        let mut mid: HashMap<(u32, u32), u32> = HashMap::with_capacity(tris.len() * 2);
        let mut next = Vec::with_capacity(tris.len() * 4);
        let mut midpoint = |a: u32, b: u32, unit: &mut Vec<Vec3>| {
            *mid.entry((a.min(b), a.max(b))).or_insert_with(|| {
                unit.push((unit[a as usize] + unit[b as usize]).normalize());
                (unit.len() - 1) as u32
            })
        };
        for &[a, b, c] in &tris {
            let ab = midpoint(a, b, &mut unit);
            let bc = midpoint(b, c, &mut unit);
            let ca = midpoint(c, a, &mut unit);
            next.push([a, ab, ca]);
            next.push([b, bc, ab]);
            next.push([c, ca, bc]);
            next.push([ab, bc, ca]);
        }
        tris = next;
    }
    let positions = unit.iter().map(|&u| center + u * radius).collect();
    TriMesh::new(positions, tris)
}

/// Jelly-like body from a closed triangle mesh: distance constraints on every edge
/// (compliance 0), one global volume constraint (compliance 0), `total_mass` shared equally,
/// ground plane y = 0 with friction 0.5, restitution 0. Triangles facing inward are turned
/// outward first.
pub fn closed_surface_body(mesh: &TriMesh, total_mass: f32) -> Result<Body> {
    let mut mesh = mesh.clone();
    let x: Vec<crate::body::particles::Packed4> = mesh
        .positions
        .iter()
        .map(|&p| crate::body::particles::Packed4::new(p, 1.0))
        .collect();
    if crate::figures::enclosed_volume(&mesh.triangles, &x) < 0.0 {
        mesh.triangles.iter_mut().for_each(|t| t.swap(1, 2));
    }
    let mut body = body_from_trimesh(&mesh, total_mass, 0.0)?;
    if !body.topology.closed {
        return Err(WobbleError::UnsuitableBody {
            what: "a volume (pressure) constraint",
            needs: "a closed surface: every edge shared by exactly two triangles",
        });
    }
    let volume = SurfaceVolume::new(&body.particles.x, &mesh.triangles, 0.0)?;
    body.constraints.push_kind(Box::new(volume));
    body.topology_changed();
    body.add_collider(Collider::ground(0.5, 0.0));
    Ok(body)
}

/// The `jelly`: icosphere of radius 0.25 m at (0, 1, 0) with `subdivisions` levels, distance
/// constraints on every edge, one global volume constraint, 1 kg, no pins, ground plane.
pub fn jelly(subdivisions: usize) -> Result<Body> {
    let mesh = icosphere(Vec3::new(0.0, 1.0, 0.0), 0.25, subdivisions)?;
    closed_surface_body(&mesh, 1.0)
}

/// The tetrahedra of a `k`³-cell grid of side `size` with lowest corner `corner`: vertex
/// `i + (k+1)(j + (k+1) l)` at `corner + size (i, j, l) / k`; 5 tetrahedra per cell, the
/// split alternating with the parity of `i + j + l` so that neighbouring faces match.
pub fn cube_tets(k: usize, corner: Vec3, size: f32) -> Result<TetMesh> {
    check_count("cube cells per side", k, MAX_CUBE_CELLS)?;
    check_extent(
        "cube size",
        size,
        corner,
        "needs a finite corner and a finite size > 0",
    )?;
    let m = k + 1;
    let v = |i: usize, j: usize, l: usize| (i + m * (j + m * l)) as u32;
    let mut positions = Vec::with_capacity(m * m * m);
    for l in 0..m {
        for j in 0..m {
            for i in 0..m {
                positions
                    .push(corner + Vec3::new(i as f32, j as f32, l as f32) * (size / k as f32));
            }
        }
    }
    // Corner b of a cell: bit 0 along x, bit 1 along y, bit 2 along z. An odd cell takes this
    // split mirrored in x (bit 0 of every corner flipped).
    const EVEN: [[usize; 4]; 5] = [
        [0, 3, 5, 6],
        [1, 0, 3, 5],
        [2, 0, 3, 6],
        [4, 0, 5, 6],
        [7, 3, 5, 6],
    ];
    let mut tets = Vec::with_capacity(5 * k * k * k);
    for l in 0..k {
        for j in 0..k {
            for i in 0..k {
                let mirror = (i + j + l) % 2;
                let c = |b: usize| {
                    let b = b ^ mirror;
                    v(i + (b & 1), j + ((b >> 1) & 1), l + ((b >> 2) & 1))
                };
                for t in &EVEN {
                    tets.push(t.map(c));
                }
            }
        }
    }
    TetMesh::new(positions, tets)
}

/// A body from a tetrahedral mesh: one particle per vertex, `total_mass` shared equally, one
/// distance constraint per unique tetrahedron edge (`edge_compliance`) and one volume
/// constraint per tetrahedron (`volume_compliance`); the boundary faces are its triangles.
pub fn body_from_tetmesh(
    mesh: &TetMesh,
    total_mass: f32,
    edge_compliance: f32,
    volume_compliance: f32,
) -> Result<Body> {
    let particles = equal_mass_particles(&mesh.positions, total_mass)?;
    let mut distance = DistanceConstraints::default();
    for [a, b] in mesh.edges() {
        distance.push_rest(&particles.x, a, b, edge_compliance)?;
    }
    let volume = TetVolume::new(&particles.x, &mesh.tets, volume_compliance)?;
    let topology = Topology {
        triangles: mesh.boundary_triangles(),
        tets: mesh.tets.clone(),
        structural: 0,
        closed: true,
        rest_volume: mesh.volume() as f32,
    };
    scene_body(particles, distance, vec![Box::new(volume)], topology)
}

/// The `cube`: 0.5 m, k³ cells of 5 tetrahedra, corner (-0.25, 0.5, -0.25), distance on every
/// tetrahedron edge, volume per tetrahedron, 1 kg, no pins, ground plane.
pub fn cube(k: usize) -> Result<Body> {
    let mesh = cube_tets(k, Vec3::new(-0.25, 0.5, -0.25), 0.5)?;
    let mut body = body_from_tetmesh(&mesh, 1.0, 0.0, 0.0)?;
    body.add_collider(Collider::ground(0.5, 0.0));
    Ok(body)
}

/// The height by which a body spanning `lo.y..hi.y` is moved so that its lowest point is half
/// its height above y = 0.
fn lift_to_half_height(lo: Vec3, hi: Vec3) -> f32 {
    0.5 * (hi.y - lo.y) - lo.y
}

/// The `mesh FILE` scene with default repair (obvious defects repaired; see
/// [`mesh_scene_with`]).
pub fn mesh_scene(path: &std::path::Path) -> Result<Body> {
    mesh_scene_with(path, &MeshOptions::default()).map(|(body, _)| body)
}

/// The `mesh FILE` scene: an OBJ surface (repaired, or refused in strict mode, by `options`) or
/// a TetGen `.node`/`.ele` mesh, moved so its lowest point is half its height above y = 0, with
/// a ground plane (friction 0.5), 1 kg in total. Returns the repair report, whose `Display` is
/// the one-line warning to show when it is not clean.
pub fn mesh_scene_with(
    path: &std::path::Path,
    options: &MeshOptions,
) -> Result<(Body, RepairReport)> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if ext == "node" || ext == "ele" {
        let mut mesh = load_tetgen(path)?;
        let (lo, hi) = mesh.bounds();
        let lift = lift_to_half_height(lo, hi);
        mesh.positions.iter_mut().for_each(|p| p.y += lift);
        if options.strict && mesh.turned_over > 0 {
            return Err(WobbleError::RefusedInStrictMode(Box::new(
                WobbleError::Parse {
                    path: path.to_path_buf(),
                    line: 0,
                    message: format!(
                        "{} tetrahedra are inverted against the rest of the mesh",
                        mesh.turned_over
                    ),
                },
            )));
        }
        let mut body = body_from_tetmesh(&mesh, 1.0, 0.0, 0.0)?;
        body.add_collider(Collider::ground(0.5, 0.0));
        let report = RepairReport {
            tets_turned_over: mesh.turned_over,
            ..RepairReport::default()
        };
        return Ok((body, report));
    }
    let (mut mesh, report) = load_obj_repaired(path, options)?;
    let (lo, hi) = mesh.bounds();
    let lift = lift_to_half_height(lo, hi);
    mesh.positions.iter_mut().for_each(|p| p.y += lift);
    if mesh.edge_adjacency().is_closed() {
        return Ok((closed_surface_body(&mesh, 1.0)?, report));
    }
    let mut body = body_from_trimesh(&mesh, 1.0, 0.0)?;
    body.add_collider(Collider::ground(0.5, 0.0));
    Ok((body, report))
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
pub fn stack() -> Result<crate::world::World> {
    let mut world = crate::world::World::new();
    for i in 0..3 {
        let y = STACK_GAP + i as f32 * (STACK_BLOCK + STACK_GAP);
        let corner =
            Vec3::new(-0.5 * STACK_BLOCK, y, -0.5 * STACK_BLOCK) + STACK_STAGGER * i as f32;
        let mesh = cube_tets(3, corner, STACK_BLOCK)?;
        let mut body = body_from_tetmesh(&mesh, 1.0, 1e-4, 1e-4)?;
        body.add_collider(Collider::ground(0.5, 0.0));
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
pub fn drape(n: usize, self_collision: bool) -> Result<crate::world::World> {
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
    body.add_collider(Collider::ground(0.5, 0.0));
    body.add_collider(Collider::sphere(Vec3::new(0.0, 0.3, 0.0), 0.3)?);
    let mut world = crate::world::World::new();
    world.add_body(body, None)?;
    if self_collision {
        world.enable_self_collision(0, 1.2 * spacing)?;
        if let Some(sc) = &mut world.bodies[0].self_collision {
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
pub fn tunnel() -> Result<crate::world::World> {
    let mut world = crate::world::World::new();
    for z in [0.0, 2.0] {
        let mesh = icosphere(Vec3::new(-0.5, 0.6, z), 0.1, 1)?;
        let mut body = closed_surface_body(&mesh, 0.5)?;
        for v in body.particles.v.iter_mut() {
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
    world
        .meshes
        .push(crate::world::MeshCollider::new(&wall, 0.005, 0.5)?);
    Ok(world)
}

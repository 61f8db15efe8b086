//! The standard scenes of docs/SCENES.md, built exactly as written there (vertex order, constraint
//! order, masses, pins), so that figures can sit beside other engines'.

use glam::Vec3;
use solver_core::build::flag::{flag_wind, FLAG_BENDING_COMPLIANCE};
use solver_core::build::{body_from_tetmesh, body_from_trimesh, MAX_N};
use solver_core::constraints::{
    ConstraintKind, Constraints, DihedralBending, DistanceConstraints, SurfaceVolume,
};
use solver_core::error::{check_size, Result, WobbleError};
use solver_core::geometry::volume::enclosed_volume;
use solver_core::mesh::repair::{load_obj_repaired, MeshOptions, RepairReport};
use solver_core::mesh::shapes::{cube_tets, icosphere};
use solver_core::mesh::tetgen::load_tetgen;
use solver_core::mesh::TriMesh;
use solver_core::{Body, Collider, Packed4, Particles, Topology};
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

pub(crate) fn check_n(name: &'static str, n: usize) -> Result<()> {
    check_size(
        name,
        n,
        2,
        MAX_N,
        "is below the smallest size of this scene (2)",
    )
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
            d.push_rest(&x.x(), v(i, j), v(i + 1, j), 0.0)?;
        }
    }
    for j in 0..rows - 1 {
        for i in 0..cols {
            d.push_rest(&x.x(), v(i, j), v(i, j + 1), 0.0)?;
        }
    }
    let structural = d.len();
    let mut tris = Vec::with_capacity(2 * (rows - 1) * (cols - 1));
    for j in 0..rows - 1 {
        for i in 0..cols - 1 {
            d.push_rest(&x.x(), v(i, j), v(i + 1, j + 1), 0.0)?;
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
pub(crate) fn grid_body(particles: Particles, n: usize) -> Result<Body> {
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
        distance.push_rest(&particles.x(), i as u32, i as u32 + 1, 0.0)?;
    }
    let structural = distance.len();
    let topology = Topology {
        structural,
        ..Default::default()
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
        DihedralBending::from_triangles(&particles.x(), &triangles, FLAG_BENDING_COMPLIANCE)?;
    let topology = Topology {
        triangles,
        structural,
        ..Default::default()
    };
    let mut body = scene_body(particles, distance, vec![Box::new(bending)], topology)?;
    body.set_wind(Some(flag_wind()))?;
    Ok(body)
}

/// Jelly-like body from a closed triangle mesh: distance constraints on every edge
/// (compliance 0), one global volume constraint (compliance 0), `total_mass` shared equally,
/// ground plane y = 0 with friction 0.5, restitution 0. Triangles facing inward are turned
/// outward first.
pub fn closed_surface_body(mesh: &TriMesh, total_mass: f32) -> Result<Body> {
    let mut mesh = mesh.clone();
    let x: Vec<Packed4> = mesh
        .positions
        .iter()
        .map(|&p| Packed4::new(p, 1.0))
        .collect();
    if enclosed_volume(&mesh.triangles, &x) < 0.0 {
        mesh.triangles.iter_mut().for_each(|t| t.swap(1, 2));
    }
    let mut body = body_from_trimesh(&mesh, total_mass, 0.0)?;
    if !body.topology().closed {
        return Err(WobbleError::UnsuitableBody {
            what: "a volume (pressure) constraint",
            needs: "a closed surface: every edge shared by exactly two triangles",
        });
    }
    let volume = SurfaceVolume::new(&body.particles().x(), &mesh.triangles, 0.0)?;
    body.constraints_mut().push_kind(Box::new(volume));
    body.topology_changed();
    body.add_collider(Collider::ground(0.5, 0.0))?;
    Ok(body)
}

/// The `jelly`: icosphere of radius 0.25 m at (0, 1, 0) with `subdivisions` levels, distance
/// constraints on every edge, one global volume constraint, 1 kg, no pins, ground plane.
pub fn jelly(subdivisions: usize) -> Result<Body> {
    let mesh = icosphere(Vec3::new(0.0, 1.0, 0.0), 0.25, subdivisions)?;
    closed_surface_body(&mesh, 1.0)
}

/// The `cube`: 0.5 m, k³ cells of 5 tetrahedra, corner (-0.25, 0.5, -0.25), distance on every
/// tetrahedron edge, volume per tetrahedron, 1 kg, no pins, ground plane.
pub fn cube(k: usize) -> Result<Body> {
    let mesh = cube_tets(k, Vec3::new(-0.25, 0.5, -0.25), 0.5)?;
    let mut body = body_from_tetmesh(&mesh, 1.0, 0.0, 0.0)?;
    body.add_collider(Collider::ground(0.5, 0.0))?;
    Ok(body)
}

/// The height by which a body spanning `lo.y..hi.y` is moved so that its lowest point is half
/// its height above y = 0.
fn lift_to_half_height(lo: Vec3, hi: Vec3) -> f32 {
    0.5 * (hi.y - lo.y) - lo.y
}

/// The OBJ surface of the `mesh FILE` scene, repaired (or refused) by `options` and moved so
/// that its lowest point is half its height above y = 0.
pub(crate) fn load_placed_obj(
    path: &std::path::Path,
    options: &MeshOptions,
) -> Result<(TriMesh, RepairReport)> {
    let (mut mesh, report) = load_obj_repaired(path, options)?;
    let (lo, hi) = mesh.bounds();
    let lift = lift_to_half_height(lo, hi);
    mesh.positions.iter_mut().for_each(|p| p.y += lift);
    Ok((mesh, report))
}

/// The body of one part of a mesh (or of a whole one-part mesh) of `total_mass`: a closed
/// surface as [`closed_surface_body`] builds it, an open one with distance constraints on its
/// edges; either on the ground plane (friction 0.5).
pub(crate) fn surface_body(mesh: &TriMesh, total_mass: f32) -> Result<Body> {
    if mesh.edge_adjacency().is_closed() {
        return closed_surface_body(mesh, total_mass);
    }
    let mut body = body_from_trimesh(mesh, total_mass, 0.0)?;
    body.add_collider(Collider::ground(0.5, 0.0))?;
    Ok(body)
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
        body.add_collider(Collider::ground(0.5, 0.0))?;
        let report = RepairReport {
            tets_turned_over: mesh.turned_over,
            ..RepairReport::default()
        };
        return Ok((body, report));
    }
    let (mesh, report) = load_placed_obj(path, options)?;
    Ok((surface_body(&mesh, 1.0)?, report))
}

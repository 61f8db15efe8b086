//! The standard scenes of SCENES.md, built exactly as written there (vertex order, constraint
//! order, masses, pins), so that figures can sit beside other engines'.

use crate::body::{Body, Topology};
use crate::collide::Collider;
use crate::constraints::{Constraints, DistanceConstraints};
use crate::error::{Result, WobbleError};
use crate::mesh::{load_obj, TriMesh};
use crate::particles::Particles;
use glam::Vec3;
use std::path::PathBuf;

/// A standard scene and its size parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum Scene {
    /// n x n cloth, 1 m x 1 m at y = 1, pinned at vertices 0 and n-1.
    Cloth { n: usize },
    /// n vertices on a 1 m horizontal line, vertex 0 pinned.
    Rope { n: usize },
    /// (2n-1) x n flag in the XY plane, pinned along the pole.
    Flag { n: usize },
    /// Icosphere of radius 0.25 m with `subdivisions` levels, on the ground.
    Jelly { subdivisions: usize },
    /// 0.5 m cube of k³ cells, 5 tetrahedra each, on the ground.
    Cube { k: usize },
    /// A mesh file (OBJ, or TetGen .node/.ele), dropped on the ground.
    Mesh { path: PathBuf },
}

/// Largest accepted size parameter for the grid scenes (n = 4096 is 16.7M vertices).
pub const MAX_N: usize = 4096;

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
                path: mesh.ok_or_else(|| {
                    WobbleError::Unsupported("the mesh scene needs a file (--mesh FILE)".into())
                })?,
            },
            other => {
                return Err(WobbleError::Unsupported(format!(
                    "unknown scene '{other}'; expected cloth, rope, flag, jelly, cube or mesh"
                )))
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
            Scene::Flag { .. } => Err(WobbleError::Unsupported(
                "the flag scene needs wind (aerodynamic drag), which wobble does not have yet".into(),
            )),
            Scene::Jelly { .. } => Err(WobbleError::Unsupported(
                "the jelly scene needs the global volume constraint, which wobble does not have yet".into(),
            )),
            Scene::Cube { .. } => Err(WobbleError::Unsupported(
                "the cube scene needs tetrahedral volume constraints, which wobble does not have yet".into(),
            )),
            Scene::Mesh { path } => mesh_scene(path),
        }
    }
}

fn check_n(name: &'static str, n: usize, min: usize) -> Result<()> {
    if n < min {
        return Err(WobbleError::BadParameter {
            name,
            value: n as f64,
            reason: "is below the smallest size of this scene (2)",
        });
    }
    if n > MAX_N {
        return Err(WobbleError::BadCount {
            name,
            value: n as u64,
            max: MAX_N as u64,
        });
    }
    Ok(())
}

/// Distance constraints and triangles of a `cols` x `rows` grid numbered `v = j*cols + i`, in
/// the order of SCENES.md: horizontal, vertical, then one diagonal per quad.
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
    check_n("cloth n", n, 2)?;
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
    let particles = Particles::new(&pos, &mass)?;
    let (distance, triangles, structural) = grid_constraints(&particles, n, n)?;
    let topology = Topology {
        triangles,
        structural,
        ..Default::default()
    };
    Body::new(
        particles,
        Constraints {
            distance,
            extra: Vec::new(),
        },
        topology,
    )
}

/// The rope: n vertices from (0,1,0) to (1,1,0), neighbours linked, vertex 0 pinned.
pub fn rope(n: usize) -> Result<Body> {
    check_n("rope n", n, 2)?;
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
    Body::new(
        particles,
        Constraints {
            distance,
            extra: Vec::new(),
        },
        topology,
    )
}

/// A body from a triangle mesh: one particle per vertex, `total_mass` shared equally, one
/// distance constraint (compliance `compliance`) per unique edge, in order of first appearance.
pub fn body_from_trimesh(mesh: &TriMesh, total_mass: f32, compliance: f32) -> Result<Body> {
    mesh.validate()?;
    if !(total_mass.is_finite() && total_mass > 0.0) {
        return Err(WobbleError::BadMass {
            what: "body total",
            index: 0,
            value: total_mass,
        });
    }
    let n = mesh.positions.len();
    let particles = Particles::new(&mesh.positions, &vec![total_mass / n as f32; n])?;
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
    Body::new(
        particles,
        Constraints {
            distance,
            extra: Vec::new(),
        },
        topology,
    )
}

/// The `mesh FILE` scene: moved so its lowest point is half its height above y = 0, ground
/// plane with friction 0.5, 1 kg in total.
pub fn mesh_scene(path: &std::path::Path) -> Result<Body> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if ext == "node" || ext == "ele" {
        return Err(WobbleError::Unsupported(
            "TetGen .node/.ele meshes need tetrahedral volume constraints, which wobble does not have yet".into(),
        ));
    }
    let mut mesh = load_obj(path)?;
    let (lo, hi) = mesh.bounds();
    let lift = 0.5 * (hi.y - lo.y) - lo.y;
    mesh.positions.iter_mut().for_each(|p| p.y += lift);
    let adj = mesh.edge_adjacency();
    if adj.is_closed() {
        return Err(WobbleError::Unsupported(format!(
            "{} is a closed surface, which is simulated like jelly and needs the global volume constraint, which wobble does not have yet",
            path.display()
        )));
    }
    let mut body = body_from_trimesh(&mesh, 1.0, 0.0)?;
    body.add_collider(Collider::ground(0.5, 0.0));
    Ok(body)
}

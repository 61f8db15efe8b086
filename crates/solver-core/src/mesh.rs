//! Mesh building: indexed triangles to particles, unique edges, adjacency and normals; OBJ
//! loading through `tobj`.

use crate::error::{check_finite, Result, WobbleError};
use glam::Vec3;
use std::collections::HashMap;
use std::path::Path;

/// An indexed triangle mesh, checked on construction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TriMesh {
    /// Vertex positions.
    pub positions: Vec<Vec3>,
    /// Triangles as vertex indices.
    pub triangles: Vec<[u32; 3]>,
}

/// Which triangles share each unique edge.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EdgeAdjacency {
    /// Unique edges `[a, b]` with `a < b`, in order of first appearance.
    pub edges: Vec<[u32; 2]>,
    /// Up to two triangles per edge (`u32::MAX` where there is none).
    pub triangles: Vec<[u32; 2]>,
    /// Edges shared by more than two triangles (non-manifold), as indices into `edges`.
    pub non_manifold: Vec<u32>,
}

impl EdgeAdjacency {
    /// True when every edge has exactly two triangles and none is non-manifold.
    pub fn is_closed(&self) -> bool {
        self.non_manifold.is_empty() && self.triangles.iter().all(|t| t[1] != u32::MAX)
    }
}

impl TriMesh {
    /// Builds a mesh and checks it: finite coordinates, indices in range, no zero-area triangle.
    pub fn new(positions: Vec<Vec3>, triangles: Vec<[u32; 3]>) -> Result<Self> {
        let mesh = TriMesh {
            positions,
            triangles,
        };
        mesh.validate()?;
        Ok(mesh)
    }

    /// The checks of [`TriMesh::new`].
    pub fn validate(&self) -> Result<()> {
        if self.positions.is_empty() || self.triangles.is_empty() {
            return Err(WobbleError::EmptyMesh("triangle mesh".into()));
        }
        for (k, p) in self.positions.iter().enumerate() {
            check_finite("vertex x", k, p.x)?;
            check_finite("vertex y", k, p.y)?;
            check_finite("vertex z", k, p.z)?;
        }
        let n = self.positions.len();
        let scale = self.bounding_diagonal().max(f32::MIN_POSITIVE);
        for (t, tri) in self.triangles.iter().enumerate() {
            for &v in tri {
                if v as usize >= n {
                    return Err(WobbleError::IndexOutOfRange {
                        what: "triangle",
                        index: t,
                        value: v as u64,
                        len: n,
                    });
                }
            }
            if self.double_area(t) <= 1e-12 * scale * scale {
                return Err(WobbleError::DegenerateTriangle {
                    index: t,
                    a: tri[0],
                    b: tri[1],
                    c: tri[2],
                });
            }
        }
        Ok(())
    }

    /// Twice the area of triangle `t`.
    pub fn double_area(&self, t: usize) -> f32 {
        let [a, b, c] = self.triangles[t].map(|v| self.positions[v as usize]);
        (b - a).cross(c - a).length()
    }

    /// Length of the bounding box diagonal.
    pub fn bounding_diagonal(&self) -> f32 {
        let (lo, hi) = self.bounds();
        (hi - lo).length()
    }

    /// Bounding box (min, max).
    pub fn bounds(&self) -> (Vec3, Vec3) {
        self.positions.iter().fold(
            (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
            |(lo, hi), &p| (lo.min(p), hi.max(p)),
        )
    }

    /// Merges vertices closer than `tolerance`; returns the welded mesh and the old-to-new map.
    /// Triangles that collapse are dropped.
    pub fn weld(&self, tolerance: f32) -> (TriMesh, Vec<u32>) {
        let cell = tolerance.max(f32::MIN_POSITIVE);
        let key = |p: Vec3| {
            (
                (p.x / cell).floor() as i64,
                (p.y / cell).floor() as i64,
                (p.z / cell).floor() as i64,
            )
        };
        let mut grid: HashMap<(i64, i64, i64), Vec<u32>> = HashMap::new();
        let mut remap = Vec::with_capacity(self.positions.len());
        let mut positions: Vec<Vec3> = Vec::new();
        for &p in &self.positions {
            let (kx, ky, kz) = key(p);
            let mut found = None;
            'search: for dx in -1..=1 {
                for dy in -1..=1 {
                    for dz in -1..=1 {
                        if let Some(list) = grid.get(&(kx + dx, ky + dy, kz + dz)) {
                            for &q in list {
                                if positions[q as usize].distance(p) <= tolerance {
                                    found = Some(q);
                                    break 'search;
                                }
                            }
                        }
                    }
                }
            }
            let id = found.unwrap_or_else(|| {
                positions.push(p);
                let id = (positions.len() - 1) as u32;
                grid.entry((kx, ky, kz)).or_default().push(id);
                id
            });
            remap.push(id);
        }
        let triangles = self
            .triangles
            .iter()
            .map(|t| t.map(|v| remap[v as usize]))
            .filter(|t| t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
            .collect();
        (
            TriMesh {
                positions,
                triangles,
            },
            remap,
        )
    }

    /// Unique edges with their triangles, in order of first appearance.
    pub fn edge_adjacency(&self) -> EdgeAdjacency {
        let mut index: HashMap<[u32; 2], u32> = HashMap::with_capacity(self.triangles.len() * 2);
        let mut adj = EdgeAdjacency::default();
        for (t, tri) in self.triangles.iter().enumerate() {
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                let e = [a.min(b), a.max(b)];
                let id = *index.entry(e).or_insert_with(|| {
                    adj.edges.push(e);
                    adj.triangles.push([u32::MAX; 2]);
                    (adj.edges.len() - 1) as u32
                });
                let slot = &mut adj.triangles[id as usize];
                if slot[0] == u32::MAX {
                    slot[0] = t as u32;
                } else if slot[1] == u32::MAX {
                    slot[1] = t as u32;
                } else if adj.non_manifold.last() != Some(&id) && !adj.non_manifold.contains(&id) {
                    adj.non_manifold.push(id);
                }
            }
        }
        adj
    }

    /// Area-weighted vertex normals of the mesh at positions `x` (same vertex order).
    pub fn vertex_normals(&self, x: &[Vec3]) -> Vec<Vec3> {
        let mut n = vec![Vec3::ZERO; x.len()];
        for t in &self.triangles {
            let [a, b, c] = t.map(|v| x[v as usize]);
            let face = (b - a).cross(c - a);
            for &v in t {
                n[v as usize] += face;
            }
        }
        n.iter().map(|v| v.normalize_or_zero()).collect()
    }
}

/// Loads a Wavefront OBJ file as one triangle mesh (all its models merged, faces triangulated).
pub fn load_obj(path: &Path) -> Result<TriMesh> {
    let bytes = std::fs::read(path).map_err(|source| WobbleError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_obj(&bytes, path)
}

/// Parses OBJ text (`path` only names the source in errors).
pub fn parse_obj(bytes: &[u8], path: &Path) -> Result<TriMesh> {
    let parse_err = |line: usize, message: String| WobbleError::Parse {
        path: path.to_path_buf(),
        line,
        message,
    };
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        parse_err(
            line,
            "not a text file (invalid UTF-8): not a Wavefront OBJ mesh".into(),
        )
    })?;
    if text.contains('\0') {
        return Err(parse_err(
            1,
            "binary data (NUL byte): not a Wavefront OBJ mesh".into(),
        ));
    }
    let opts = tobj::LoadOptions {
        triangulate: true,
        single_index: false,
        ..Default::default()
    };
    let mut reader = std::io::BufReader::new(text.as_bytes());
    let (models, _) = tobj::load_obj_buf(&mut reader, &opts, |_| Ok(Default::default()))
        .map_err(|e| parse_err(0, format!("not a valid Wavefront OBJ mesh: {e}")))?;
    let mut positions = Vec::new();
    let mut triangles = Vec::new();
    for m in &models {
        let base = positions.len() as u32;
        let mesh = &m.mesh;
        if mesh.positions.len() % 3 != 0 {
            return Err(parse_err(
                0,
                format!("model '{}' has a partial vertex", m.name),
            ));
        }
        positions.extend(
            mesh.positions
                .chunks_exact(3)
                .map(|c| Vec3::new(c[0], c[1], c[2])),
        );
        for (f, tri) in mesh.indices.chunks(3).enumerate() {
            if tri.len() < 3 {
                return Err(parse_err(
                    0,
                    format!("model '{}' face {f} has fewer than 3 vertices", m.name),
                ));
            }
            triangles.push([base + tri[0], base + tri[1], base + tri[2]]);
        }
    }
    if positions.is_empty() || triangles.is_empty() {
        return Err(WobbleError::EmptyMesh(path.display().to_string()));
    }
    TriMesh::new(positions, triangles)
}

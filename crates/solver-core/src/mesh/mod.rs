//! Mesh building: indexed triangles to particles, unique edges, adjacency and normals (also
//! straight from a body's particles, [`vertex_normals_into`]); OBJ loading through `tobj`.
//!
//! OBJ loading runs in two passes over the text. A light scan of the `v` and `f` lines of our
//! own finds what can never be repaired (non-finite coordinates, bad indices, faces with fewer
//! than three vertices) and names the line; `tobj` then does the real parsing, and the two are
//! cross-checked vertex by vertex so that file numbering and line numbers stay exact.
//! [`load_obj_raw`] stops there, so that [`crate::mesh::repair`] can run before validation;
//! [`load_obj`] refuses every defect (it is strict loading).

pub mod parts;
pub mod repair;
pub mod shapes;
pub mod tetgen;

use crate::error::check_indices;
use crate::error::{check_finite, Result, WobbleError};
use crate::geometry::packed::{check_buffer, Packed4, Xyz};
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
        let scale = self.bounding_diagonal();
        for (t, tri) in self.triangles.iter().enumerate() {
            check_indices("triangle", t, tri, n)?;
            if is_zero_area(self.double_area(t), scale) {
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
        let (positions, remap) = weld_map(&self.positions, tolerance);
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
        accumulate_normals(&self.triangles, |v| x[v as usize], &mut n);
        n
    }
}

/// Area-weighted vertex normals of `triangles` at the particle positions `x`, written into
/// `out` (one per particle, as `[f32; 3]`, `Vec3` or `Vec3A`): what a renderer shades a body
/// with, read straight from the simulation's storage. A particle on no triangle gets zero.
/// Nothing is written when an index or the buffer's length is wrong.
pub fn vertex_normals_into<P: Xyz>(
    triangles: &[[u32; 3]],
    x: &[Packed4],
    out: &mut [P],
) -> Result<()> {
    check_buffer("normal read-back buffer", out.len(), x.len())?;
    for (t, tri) in triangles.iter().enumerate() {
        if let Some(&v) = tri.iter().find(|&&v| v as usize >= x.len()) {
            return Err(WobbleError::IndexOutOfRange {
                what: "triangle",
                index: t,
                value: v as u64,
                len: x.len(),
            });
        }
    }
    out.iter_mut().for_each(|n| n.set(Vec3::ZERO));
    accumulate_normals(triangles, |v| x[v as usize].xyz(), out);
    Ok(())
}

/// Adds each triangle's doubled-area normal to its corners in `out` (zeroed by the caller),
/// then normalises; indices are the caller's to have checked.
fn accumulate_normals<P: Xyz>(triangles: &[[u32; 3]], at: impl Fn(u32) -> Vec3, out: &mut [P]) {
    for t in triangles {
        let [a, b, c] = t.map(&at);
        let face = (b - a).cross(c - a);
        for &v in t {
            let n = &mut out[v as usize];
            n.set(n.get() + face);
        }
    }
    out.iter_mut()
        .for_each(|n| n.set(n.get().normalize_or_zero()));
}

/// True when a triangle of doubled area `double_area` counts as zero-area in a mesh whose
/// bounding-box diagonal is `scale` (the threshold [`TriMesh::validate`] and repair share).
/// A NaN area (from overflowing coordinates) counts as zero.
pub fn is_zero_area(double_area: f32, scale: f32) -> bool {
    let scale = scale.max(f32::MIN_POSITIVE);
    double_area.is_nan() || double_area <= 1e-12 * scale * scale
}

/// Clusters vertices closer than `tolerance` (exactly equal ones when it is 0): returns the
/// kept positions (each cluster's first vertex) and the old-to-new index map.
pub fn weld_map(positions: &[Vec3], tolerance: f32) -> (Vec<Vec3>, Vec<u32>) {
    let mut remap = Vec::with_capacity(positions.len());
    let mut kept: Vec<Vec3> = Vec::new();
    if tolerance <= 0.0 || !tolerance.is_finite() {
        // Exact duplicates: key on the bits, with -0.0 read as 0.0.
        let bits = |p: Vec3| [p.x, p.y, p.z].map(|c| (c + 0.0).to_bits());
        let mut seen: HashMap<[u32; 3], u32> = HashMap::with_capacity(positions.len());
        for &p in positions {
            let id = *seen.entry(bits(p)).or_insert_with(|| {
                kept.push(p);
                (kept.len() - 1) as u32
            });
            remap.push(id);
        }
        return (kept, remap);
    }
    // A grid of cells no smaller than the tolerance: a match lies in a neighbouring cell.
    let cell = tolerance;
    let key = |p: Vec3| {
        (
            (p.x / cell).floor() as i64,
            (p.y / cell).floor() as i64,
            (p.z / cell).floor() as i64,
        )
    };
    let mut grid: HashMap<(i64, i64, i64), Vec<u32>> = HashMap::new();
    for &p in positions {
        let (kx, ky, kz) = key(p);
        let mut found = None;
        'search: for dx in -1i64..=1 {
            for dy in -1i64..=1 {
                for dz in -1i64..=1 {
                    let k = (
                        kx.saturating_add(dx),
                        ky.saturating_add(dy),
                        kz.saturating_add(dz),
                    );
                    if let Some(list) = grid.get(&k) {
                        for &q in list {
                            if kept[q as usize].distance(p) <= tolerance {
                                found = Some(q);
                                break 'search;
                            }
                        }
                    }
                }
            }
        }
        let id = found.unwrap_or_else(|| {
            kept.push(p);
            let id = (kept.len() - 1) as u32;
            grid.entry((kx, ky, kz)).or_default().push(id);
            id
        });
        remap.push(id);
    }
    (kept, remap)
}

/// An OBJ file as written: every vertex and every face in file order with their line numbers,
/// checked only for what no repair can fix.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawObj {
    /// Vertex positions in file order (vertex `k` is OBJ vertex `k + 1`), all finite.
    pub positions: Vec<Vec3>,
    /// Faces as 0-based vertex indices, in file order, each with at least 3 vertices, in range.
    pub faces: Vec<Vec<u32>>,
    /// The 1-based line of each vertex.
    pub vertex_lines: Vec<usize>,
    /// The 1-based line of each face.
    pub face_lines: Vec<usize>,
}

/// Loads a Wavefront OBJ file strictly: every defect that [`crate::mesh::repair`] would repair
/// (duplicate vertices, zero-area or duplicate triangles, unused vertices, non-manifold edges)
/// is refused with its line. Use [`crate::mesh::repair::load_obj_repaired`] to repair instead.
pub fn load_obj(path: &Path) -> Result<TriMesh> {
    let bytes = read_file(path)?;
    parse_obj(&bytes, path)
}

/// Parses OBJ text strictly, like [`load_obj`] (`path` only names the source in errors).
pub fn parse_obj(bytes: &[u8], path: &Path) -> Result<TriMesh> {
    let options = crate::mesh::repair::MeshOptions {
        strict: true,
        ..Default::default()
    };
    crate::mesh::repair::parse_obj_repaired(bytes, path, &options).map(|(mesh, _)| mesh)
}

/// Loads an OBJ file without validating it as a mesh (see [`RawObj`]).
pub fn load_obj_raw(path: &Path) -> Result<RawObj> {
    let bytes = read_file(path)?;
    parse_obj_raw(&bytes, path)
}

fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|source| WobbleError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Parses OBJ text without validating it as a mesh (see [`RawObj`]); `path` only names the
/// source in errors.
pub fn parse_obj_raw(bytes: &[u8], path: &Path) -> Result<RawObj> {
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
    if let Some(at) = text.find('\0') {
        let line = text[..at].matches('\n').count() + 1;
        return Err(parse_err(
            line,
            "binary data (NUL byte): not a Wavefront OBJ mesh".into(),
        ));
    }
    let raw = scan_obj(text).map_err(|(line, message)| parse_err(line, message))?;
    if raw.faces.is_empty() {
        return Err(WobbleError::EmptyMesh(format!(
            "{} (an OBJ file with {} vertices and no face)",
            path.display(),
            raw.positions.len()
        )));
    }
    let models = tobj_models(text)
        .map_err(|(line, e)| parse_err(line, format!("not a valid Wavefront OBJ file: {e}")))?;
    cross_check(&raw, &models).map_err(|(line, message)| parse_err(line, message))?;
    Ok(raw)
}

/// What the scan found wrong: the 1-based line and the message.
type LineError = (usize, String);

/// Resolves one OBJ index (1-based, or negative = relative to the `defined` entries so far)
/// to a 0-based index, the way `tobj` does, refusing 0, forward references and overflows.
fn resolve_index(token: &str, what: &str, defined: usize) -> std::result::Result<usize, String> {
    let x: isize = token.parse().map_err(|_| {
        format!(
            "{what} index '{token}' is not an integer (a face vertex is v, v/vt, v//vn or v/vt/vn)"
        )
    })?;
    if x == 0 {
        return Err(format!(
            "{what} index 0 is invalid: OBJ indices start at 1 (negative ones count back)"
        ));
    }
    let index = if x < 0 { defined as isize + x } else { x - 1 };
    if index < 0 || index as usize >= defined {
        let plural = if what == "vertex" {
            "vertices".to_string()
        } else {
            format!("{what}s")
        };
        return Err(format!(
            "{what} index {x} is out of range: {defined} {plural} are defined above this line"
        ));
    }
    Ok(index as usize)
}

/// The light scan of the `v` and `f` lines (the rules follow `tobj`'s, so that every file it
/// accepts reads the same here; see [`cross_check`]).
fn scan_obj(text: &str) -> std::result::Result<RawObj, LineError> {
    let mut raw = RawObj::default();
    let has_vt = text
        .lines()
        .any(|l| l.split_whitespace().next() == Some("vt"));
    let has_vn = text
        .lines()
        .any(|l| l.split_whitespace().next() == Some("vn"));
    let (mut n_vt, mut n_vn) = (0usize, 0usize);
    for (k, line) in text.split('\n').enumerate() {
        let line_no = k + 1;
        let mut words = line.split_whitespace();
        match words.next() {
            Some("v") => {
                let mut xyz = [0.0f32; 3];
                for (c, slot) in xyz.iter_mut().enumerate() {
                    let word = words.next().ok_or_else(|| {
                        (
                            line_no,
                            format!("vertex line has {c} coordinates; it needs x y z"),
                        )
                    })?;
                    *slot = word.parse().map_err(|_| {
                        (
                            line_no,
                            format!("vertex coordinate '{word}' is not a number"),
                        )
                    })?;
                }
                let rest: Vec<&str> = words.collect();
                match rest.len() {
                    0 | 3 => {}
                    1 => {
                        let w: f32 = rest[0].parse().map_err(|_| {
                            (
                                line_no,
                                format!("vertex weight w '{}' is not a number", rest[0]),
                            )
                        })?;
                        if w == 0.0 {
                            return Err((line_no, "vertex weight w is 0".into()));
                        }
                        xyz.iter_mut().for_each(|c| *c /= w);
                    }
                    n => {
                        return Err((
                            line_no,
                            format!(
                            "vertex line has {} numbers; expected x y z, x y z w or x y z r g b",
                            n + 3
                        ),
                        ))
                    }
                }
                for (c, name) in xyz.iter().zip(["x", "y", "z"]) {
                    if !c.is_finite() {
                        return Err((
                            line_no,
                            format!(
                                "vertex {} has a non-finite coordinate: {name} = {c}",
                                raw.positions.len() + 1
                            ),
                        ));
                    }
                }
                raw.positions.push(Vec3::from(xyz));
                raw.vertex_lines.push(line_no);
            }
            Some("vt") => n_vt += 1,
            Some("vn") => n_vn += 1,
            Some("f") => {
                let mut face = Vec::new();
                for word in words {
                    let parts: Vec<&str> = word.split('/').collect();
                    if parts.len() > 3 {
                        return Err((
                            line_no,
                            format!("face vertex '{word}' has more than three parts (v/vt/vn)"),
                        ));
                    }
                    if parts[0].is_empty() {
                        return Err((line_no, format!("face vertex '{word}' has no vertex index")));
                    }
                    let v = resolve_index(parts[0], "vertex", raw.positions.len())
                        .map_err(|m| (line_no, m))?;
                    for (part, what, present, defined) in [
                        (parts.get(1), "texture coordinate", has_vt, n_vt),
                        (parts.get(2), "normal", has_vn, n_vn),
                    ] {
                        match part {
                            Some(p) if !p.is_empty() => {
                                // tobj reads these only when the file has such lines at all.
                                if present {
                                    resolve_index(p, what, defined).map_err(|m| (line_no, m))?;
                                } else {
                                    p.parse::<isize>().map_err(|_| {
                                        (line_no, format!("{what} index '{p}' is not an integer"))
                                    })?;
                                }
                            }
                            _ => {}
                        }
                    }
                    let v = u32::try_from(v).map_err(|_| {
                        (line_no, format!("vertex index {v} does not fit in 32 bits"))
                    })?;
                    face.push(v);
                }
                if face.len() < 3 {
                    return Err((
                        line_no,
                        format!(
                            "face {} has {} vertices; a face needs at least 3",
                            raw.faces.len() + 1,
                            face.len()
                        ),
                    ));
                }
                raw.faces.push(face);
                raw.face_lines.push(line_no);
            }
            _ => {}
        }
    }
    Ok(raw)
}

/// Runs `tobj` on the text (polygons kept, points and polylines ignored). On failure, finds the
/// first line at which it fails by re-reading ever longer prefixes (error path only).
fn tobj_models(text: &str) -> std::result::Result<Vec<tobj::Model>, (usize, tobj::LoadError)> {
    // tobj reads a polyline `l` of three or more vertices as a face; blank those lines (keeping
    // the line count) so that tobj sees the faces the scan sees.
    let text = &text
        .split('\n')
        .map(|l| {
            if l.split_whitespace().next() == Some("l") {
                ""
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let run = |t: &str| {
        let opts = tobj::LoadOptions {
            triangulate: false,
            single_index: false,
            ignore_points: true,
            ignore_lines: true,
        };
        let mut reader = std::io::BufReader::new(t.as_bytes());
        tobj::load_obj_buf(&mut reader, &opts, |_| Ok(Default::default())).map(|(m, _)| m)
    };
    match run(text) {
        Ok(models) => Ok(models),
        Err(e) => {
            let ends: Vec<usize> = text
                .match_indices('\n')
                .map(|(i, _)| i + 1)
                .chain(std::iter::once(text.len()))
                .collect();
            // Smallest line count whose prefix fails (the empty prefix parses).
            let (mut lo, mut hi) = (0usize, ends.len());
            while hi - lo > 1 {
                let mid = (lo + hi) / 2;
                if run(&text[..ends[mid - 1]]).is_err() {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            Err((hi, e))
        }
    }
}

/// Checks that `tobj` read the same faces and vertex positions as the scan, and so that the
/// scan's file numbering and line numbers describe tobj's mesh.
fn cross_check(raw: &RawObj, models: &[tobj::Model]) -> std::result::Result<(), LineError> {
    let disagree = |line: usize, what: &str| {
        (
            line,
            format!(
                "wobble's OBJ scan and tobj read this line differently ({what}); \
                 this is a bug in wobble's loader: please report the file"
            ),
        )
    };
    let mut face = 0usize;
    for model in models {
        let mesh = &model.mesh;
        let local_count = mesh.positions.len() / 3;
        let mut local_to_file = vec![u32::MAX; local_count];
        let mut at = 0usize;
        let mut k = 0usize;
        while at < mesh.indices.len() {
            let arity = if mesh.face_arities.is_empty() {
                3
            } else {
                match mesh.face_arities.get(k) {
                    Some(&a) => a as usize,
                    None => return Err(disagree(0, "face count")),
                }
            };
            let Some(file_face) = raw.faces.get(face) else {
                return Err(disagree(0, "more faces"));
            };
            let line = raw.face_lines[face];
            if file_face.len() != arity || at + arity > mesh.indices.len() {
                return Err(disagree(line, "face size"));
            }
            for (&local, &file) in mesh.indices[at..at + arity].iter().zip(file_face) {
                let slot = local_to_file
                    .get_mut(local as usize)
                    .ok_or_else(|| disagree(line, "vertex index"))?;
                if *slot == u32::MAX {
                    let l = local as usize;
                    let theirs = &mesh.positions[3 * l..3 * l + 3];
                    let ours = raw.positions[file as usize];
                    if theirs
                        .iter()
                        .zip([ours.x, ours.y, ours.z])
                        .any(|(a, b)| a.to_bits() != b.to_bits())
                    {
                        return Err(disagree(line, "vertex position"));
                    }
                    *slot = file;
                } else if *slot != file {
                    return Err(disagree(line, "vertex numbering"));
                }
            }
            at += arity;
            k += 1;
            face += 1;
        }
    }
    if face != raw.faces.len() {
        return Err(disagree(
            raw.face_lines.get(face).copied().unwrap_or(0),
            "fewer faces",
        ));
    }
    Ok(())
}

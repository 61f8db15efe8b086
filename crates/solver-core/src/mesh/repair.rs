//! Mesh repair and strict checking: what an artist's mesh may get wrong, and what loading does
//! about it.
//!
//! Defects that have one obvious repair are repaired by default and counted in a
//! [`RepairReport`] (whose `Display` is the one-line warning to show): duplicate vertices are
//! welded, zero-area and duplicate triangles and unused vertices are dropped, and non-manifold
//! edges (three or more triangles on one edge) are kept for distance constraints but listed, so
//! that bending leaves them out ([`bending_hinges`]). With [`MeshOptions::strict`] each of them
//! is refused instead ([`WobbleError::RefusedInStrictMode`]). What cannot be repaired is always
//! an error that names the vertex or face (and, for files, the line): non-finite coordinates,
//! indices out of range, faces with fewer than three vertices, an empty mesh.
//!
//! Repair runs in a fixed order, each stage on the result of the one before: weld, fan
//! triangulation of polygons, zero-area triangles, duplicate triangles (same vertex set, either
//! orientation), unused vertices, non-manifold edges. Strict mode never renumbers vertices: a
//! mesh it accepts has the input's numbering.

use crate::error::check_non_negative;
use crate::error::{Result, WobbleError};
use crate::mesh::{is_zero_area, parse_obj_raw, weld_map, RawObj, TriMesh};
use glam::Vec3;
use std::collections::HashMap;
use std::fmt;
use std::path::Path;

/// How meshes are loaded: repair (the default) or refuse, and what counts as a duplicate vertex.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshOptions {
    /// Refuse every defect that would otherwise be repaired.
    pub strict: bool,
    /// Vertices at most this far apart are duplicates (0, the default: exactly equal ones).
    pub weld_tolerance: f32,
}

impl Default for MeshOptions {
    /// Repairing, welding exactly coincident vertices only.
    fn default() -> Self {
        MeshOptions {
            strict: false,
            weld_tolerance: 0.0,
        }
    }
}

impl MeshOptions {
    /// Sets strict mode (builder style).
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Sets the weld tolerance (builder style).
    pub fn weld_tolerance(mut self, tolerance: f32) -> Self {
        self.weld_tolerance = tolerance;
        self
    }

    /// Checks the options: the weld tolerance must be finite and >= 0.
    pub fn validate(&self) -> Result<()> {
        check_non_negative("weld_tolerance", self.weld_tolerance)?;
        Ok(())
    }
}

/// What repair did to a mesh; its `Display` is a one-line warning.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RepairReport {
    /// Vertices given.
    pub vertices_in: usize,
    /// Faces given.
    pub faces_in: usize,
    /// Faces of more than three vertices, split into triangles (a fan; not a defect).
    pub polygons_triangulated: usize,
    /// Vertices merged into an earlier vertex within the weld tolerance.
    pub welded_vertices: usize,
    /// Triangles dropped for zero area (collinear or repeated corners, also after welding).
    pub degenerate_triangles: usize,
    /// Triangles dropped because an earlier one has the same three vertices.
    pub duplicate_triangles: usize,
    /// Vertices dropped because no remaining triangle uses them.
    pub unused_vertices: usize,
    /// Edges of the repaired mesh shared by three or more triangles (output numbering); they
    /// keep their distance constraints but get no bending.
    pub non_manifold_edges: Vec<[u32; 2]>,
    /// Where each input vertex went in the repaired mesh (`u32::MAX`: dropped).
    pub vertex_map: Vec<u32>,
    /// Tetrahedra (TetGen meshes) inverted against the rest of the mesh, turned over.
    pub tets_turned_over: usize,
}

impl RepairReport {
    /// True when nothing was repaired and no edge is non-manifold (strict mode accepts exactly
    /// such meshes).
    pub fn is_clean(&self) -> bool {
        self.welded_vertices == 0
            && self.degenerate_triangles == 0
            && self.duplicate_triangles == 0
            && self.unused_vertices == 0
            && self.non_manifold_edges.is_empty()
            && self.tets_turned_over == 0
    }
}

impl fmt::Display for RepairReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_clean() {
            return write!(f, "mesh is clean: nothing repaired");
        }
        let plural = |n: usize, one: &str, many: &str| {
            if n == 1 {
                format!("1 {one}")
            } else {
                format!("{n} {many}")
            }
        };
        let counts = [
            (
                self.welded_vertices,
                "duplicate vertex welded",
                "duplicate vertices welded",
            ),
            (
                self.degenerate_triangles,
                "zero-area triangle dropped",
                "zero-area triangles dropped",
            ),
            (
                self.duplicate_triangles,
                "duplicate triangle dropped",
                "duplicate triangles dropped",
            ),
            (
                self.unused_vertices,
                "unused vertex dropped",
                "unused vertices dropped",
            ),
            (
                self.non_manifold_edges.len(),
                "non-manifold edge left out of bending",
                "non-manifold edges left out of bending",
            ),
            (
                self.tets_turned_over,
                "inverted tetrahedron turned over",
                "inverted tetrahedra turned over",
            ),
        ];
        let parts: Vec<String> = counts
            .into_iter()
            .filter(|&(n, _, _)| n > 0)
            .map(|(n, one, many)| plural(n, one, many))
            .collect();
        write!(f, "mesh repaired: {}", parts.join(", "))
    }
}

/// Where in the input a defect is: what a file loader turns into a line number.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Site {
    Vertex(usize),
    Face(usize),
}

/// An error with the vertex or face it concerns.
struct Sited {
    site: Option<Site>,
    error: WobbleError,
}

impl Sited {
    fn at(site: Site, error: WobbleError) -> Self {
        Sited {
            site: Some(site),
            error,
        }
    }
    fn strict(site: Site, error: WobbleError) -> Self {
        Self::at(site, WobbleError::RefusedInStrictMode(Box::new(error)))
    }
}

impl From<WobbleError> for Sited {
    fn from(error: WobbleError) -> Self {
        Sited { site: None, error }
    }
}

/// Repairs (or, in strict mode, checks) a mesh given as positions and faces of any size
/// (0-based indices; faces of more than three vertices are fan-triangulated).
///
/// Errors name the vertex or face by its input index.
pub fn repair<F: AsRef<[u32]>>(
    positions: &[Vec3],
    faces: &[F],
    options: &MeshOptions,
) -> Result<(TriMesh, RepairReport)> {
    repair_sited(positions, faces, options).map_err(|s| s.error)
}

/// Loads an OBJ file, repairing it as `options` say; errors name the file and line.
pub fn load_obj_repaired(path: &Path, options: &MeshOptions) -> Result<(TriMesh, RepairReport)> {
    let bytes = std::fs::read(path).map_err(|source| WobbleError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_obj_repaired(&bytes, path, options)
}

/// Parses OBJ text and repairs it as `options` say (`path` only names the source in errors).
pub fn parse_obj_repaired(
    bytes: &[u8],
    path: &Path,
    options: &MeshOptions,
) -> Result<(TriMesh, RepairReport)> {
    let raw = parse_obj_raw(bytes, path)?;
    repair_sited(&raw.positions, &raw.faces, options).map_err(|s| locate(s, &raw, path))
}

/// Turns a sited repair error into a `file:line:` error.
fn locate(sited: Sited, raw: &RawObj, path: &Path) -> WobbleError {
    let line = match sited.site {
        Some(Site::Vertex(k)) => raw.vertex_lines.get(k).copied(),
        Some(Site::Face(f)) => raw.face_lines.get(f).copied(),
        None => None,
    };
    match line {
        Some(line) => WobbleError::Parse {
            path: path.to_path_buf(),
            line,
            message: format!("{} [vertex and face numbers count from 0]", sited.error),
        },
        None => WobbleError::Parse {
            path: path.to_path_buf(),
            line: 0,
            message: sited.error.to_string(),
        },
    }
}

fn repair_sited<F: AsRef<[u32]>>(
    positions: &[Vec3],
    faces: &[F],
    options: &MeshOptions,
) -> std::result::Result<(TriMesh, RepairReport), Sited> {
    options.validate()?;
    let n = positions.len();
    if n == 0 || faces.is_empty() {
        return Err(
            WobbleError::EmptyMesh(format!("mesh ({n} vertices, {} faces)", faces.len())).into(),
        );
    }
    let mut report = RepairReport {
        vertices_in: n,
        faces_in: faces.len(),
        ..Default::default()
    };
    let scale = check_unrepairable(positions, faces)?;
    let (welded, remap) = weld_checked(positions, options, &mut report)?;
    let (mut triangles, triangle_face) =
        triangles_without_defects(faces, &welded, &remap, scale, options, &mut report)?;
    let kept = drop_unused_vertices(&welded, &remap, &mut triangles, options, &mut report)?;
    find_non_manifold_edges(&triangles, &triangle_face, options, &mut report)?;
    let mesh = TriMesh::new(kept, triangles)?;
    Ok((mesh, report))
}

/// What no repair can fix: non-finite coordinates, an extent that overflows, faces with fewer
/// than three vertices or indices out of range. Returns the bounding-box diagonal.
fn check_unrepairable<F: AsRef<[u32]>>(
    positions: &[Vec3],
    faces: &[F],
) -> std::result::Result<f32, Sited> {
    let n = positions.len();
    for (k, p) in positions.iter().enumerate() {
        for (value, what) in [(p.x, "vertex x"), (p.y, "vertex y"), (p.z, "vertex z")] {
            if !value.is_finite() {
                return Err(Sited::at(
                    Site::Vertex(k),
                    WobbleError::NonFinite {
                        what,
                        index: k,
                        value,
                    },
                ));
            }
        }
    }
    let (lo, hi) = positions.iter().fold(
        (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
        |(lo, hi), &p| (lo.min(p), hi.max(p)),
    );
    let scale = (hi - lo).length();
    if !scale.is_finite() {
        return Err(WobbleError::BadParameter {
            name: "mesh extent",
            value: scale as f64,
            reason: "the bounding-box diagonal overflows f32: coordinates are too large",
        }
        .into());
    }
    for (f, face) in faces.iter().enumerate() {
        let face = face.as_ref();
        if face.len() < 3 {
            return Err(Sited::at(
                Site::Face(f),
                WobbleError::FaceTooSmall {
                    index: f,
                    vertices: face.len(),
                },
            ));
        }
        if let Some(&v) = face.iter().find(|&&v| v as usize >= n) {
            return Err(Sited::at(
                Site::Face(f),
                WobbleError::IndexOutOfRange {
                    what: "face",
                    index: f,
                    value: v as u64,
                    len: n,
                },
            ));
        }
    }

    Ok(scale)
}

/// Stage 1: welds duplicate vertices (refused in strict mode); returns the welded positions and
/// each input vertex's welded index.
fn weld_checked(
    positions: &[Vec3],
    options: &MeshOptions,
    report: &mut RepairReport,
) -> std::result::Result<(Vec<Vec3>, Vec<u32>), Sited> {
    let n = positions.len();
    let (welded, remap) = weld_map(positions, options.weld_tolerance);
    report.welded_vertices = n - welded.len();
    if report.welded_vertices > 0 && options.strict {
        let mut first_of = vec![u32::MAX; welded.len()];
        for (k, &w) in remap.iter().enumerate() {
            let rep = &mut first_of[w as usize];
            if *rep == u32::MAX {
                *rep = k as u32;
            } else {
                let of = *rep as usize;
                return Err(Sited::strict(
                    Site::Vertex(k),
                    WobbleError::DuplicateVertex {
                        index: k,
                        of,
                        distance: positions[k].distance(positions[of]),
                        tolerance: options.weld_tolerance,
                    },
                ));
            }
        }
    }

    Ok((welded, remap))
}

/// Stages 2-4: fan-triangulates polygons and drops zero-area and repeated triangles (refused in
/// strict mode); returns the triangles in welded numbering and the face each came from.
fn triangles_without_defects<F: AsRef<[u32]>>(
    faces: &[F],
    welded: &[Vec3],
    remap: &[u32],
    scale: f32,
    options: &MeshOptions,
    report: &mut RepairReport,
) -> std::result::Result<(Vec<[u32; 3]>, Vec<usize>), Sited> {
    let mut triangles: Vec<[u32; 3]> = Vec::with_capacity(faces.len());
    let mut triangle_face: Vec<usize> = Vec::with_capacity(faces.len());
    let mut seen: HashMap<[u32; 3], usize> = HashMap::with_capacity(faces.len());
    for (f, face) in faces.iter().enumerate() {
        let face = face.as_ref();
        if face.len() > 3 {
            report.polygons_triangulated += 1;
        }
        for k in 1..face.len() - 1 {
            let original = [face[0], face[k], face[k + 1]];
            let t = original.map(|v| remap[v as usize]);
            let [a, b, c] = t.map(|v| welded[v as usize]);
            let repeated = t[0] == t[1] || t[1] == t[2] || t[0] == t[2];
            if repeated || is_zero_area((b - a).cross(c - a).length(), scale) {
                if options.strict {
                    return Err(Sited::strict(
                        Site::Face(f),
                        WobbleError::DegenerateTriangle {
                            index: f,
                            a: original[0],
                            b: original[1],
                            c: original[2],
                        },
                    ));
                }
                report.degenerate_triangles += 1;
                continue;
            }
            let mut key = t;
            key.sort_unstable();
            if let Some(&of) = seen.get(&key) {
                if options.strict {
                    return Err(Sited::strict(
                        Site::Face(f),
                        WobbleError::DuplicateTriangle { index: f, of },
                    ));
                }
                report.duplicate_triangles += 1;
                continue;
            }
            seen.insert(key, f);
            triangles.push(t);
            triangle_face.push(f);
        }
    }
    if triangles.is_empty() {
        return Err(WobbleError::EmptyMesh(format!(
            "mesh after repair (all {} faces were zero-area or duplicates)",
            faces.len()
        ))
        .into());
    }

    Ok((triangles, triangle_face))
}

/// Stage 5: drops vertices no triangle uses (refused in strict mode), renumbering in order;
/// fills the report's vertex map and returns the kept positions.
fn drop_unused_vertices(
    welded: &[Vec3],
    remap: &[u32],
    triangles: &mut [[u32; 3]],
    options: &MeshOptions,
    report: &mut RepairReport,
) -> std::result::Result<Vec<Vec3>, Sited> {
    let mut new_index = vec![u32::MAX; welded.len()];
    for t in triangles.iter() {
        for &v in t {
            new_index[v as usize] = 0;
        }
    }
    let mut kept = Vec::with_capacity(welded.len());
    for (w, slot) in new_index.iter_mut().enumerate() {
        if *slot == 0 {
            *slot = kept.len() as u32;
            kept.push(welded[w]);
        }
    }
    report.unused_vertices = welded.len() - kept.len();
    if report.unused_vertices > 0 && options.strict {
        // Strict mode did not weld, so welded numbering is the input's.
        let k = new_index.iter().position(|&s| s == u32::MAX).unwrap_or(0);
        return Err(Sited::strict(
            Site::Vertex(k),
            WobbleError::UnusedVertex { index: k },
        ));
    }
    report.vertex_map = remap.iter().map(|&w| new_index[w as usize]).collect();
    triangles
        .iter_mut()
        .for_each(|t| *t = t.map(|v| new_index[v as usize]));

    Ok(kept)
}

/// Stage 6: lists the edges with three or more triangles (refused in strict mode).
fn find_non_manifold_edges(
    triangles: &[[u32; 3]],
    triangle_face: &[usize],
    options: &MeshOptions,
    report: &mut RepairReport,
) -> std::result::Result<(), Sited> {
    let mut on_edge: HashMap<[u32; 2], u32> = HashMap::with_capacity(triangles.len() * 2);
    for (t, tri) in triangles.iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            let e = [a.min(b), a.max(b)];
            let count = on_edge.entry(e).or_insert(0);
            *count += 1;
            if *count == 3 {
                if options.strict {
                    let f = triangle_face[t];
                    return Err(Sited::strict(
                        Site::Face(f),
                        WobbleError::NonManifoldEdge {
                            a: e[0],
                            b: e[1],
                            face: f,
                        },
                    ));
                }
                report.non_manifold_edges.push(e);
            }
        }
    }

    Ok(())
}

/// The hinges bending acts on: interior manifold edges with their two opposite vertices.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Hinges {
    /// `[a, b, c, d]`: the edge `a`-`b` (`a < b`), `c` the third vertex of the first triangle on
    /// it, `d` that of the second; in order of the edge's first appearance.
    pub hinges: Vec<[u32; 4]>,
    /// Edges shared by three or more triangles, which get no hinge.
    pub non_manifold: Vec<[u32; 2]>,
}

/// The bending hinges of a mesh: every edge with exactly two triangles; boundary edges (one
/// triangle) have none, non-manifold edges are listed apart.
pub fn bending_hinges(mesh: &TriMesh) -> Hinges {
    let adj = mesh.edge_adjacency();
    let mut out = Hinges {
        non_manifold: adj
            .non_manifold
            .iter()
            .map(|&e| adj.edges[e as usize])
            .collect(),
        ..Default::default()
    };
    let mut skip = vec![false; adj.edges.len()];
    adj.non_manifold
        .iter()
        .for_each(|&e| skip[e as usize] = true);
    let opposite = |t: u32, [a, b]: [u32; 2]| {
        mesh.triangles[t as usize]
            .into_iter()
            .find(|&v| v != a && v != b)
    };
    for (e, (&edge, &[t0, t1])) in adj.edges.iter().zip(&adj.triangles).enumerate() {
        if skip[e] || t1 == u32::MAX {
            continue;
        }
        if let (Some(c), Some(d)) = (opposite(t0, edge), opposite(t1, edge)) {
            out.hinges.push([edge[0], edge[1], c, d]);
        }
    }
    out
}

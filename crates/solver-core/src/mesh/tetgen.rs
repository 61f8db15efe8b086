//! Tetrahedral meshes: checked storage, boundary surface, unique edges, and loading TetGen
//! `.node`/`.ele` files.
//!
//! TetGen's formats (TetGen manual, §5.2): a `.node` file starts with
//! `<points> <dimension = 3> <attributes> <boundary markers 0|1>` and lists
//! `<index> <x> <y> <z> [attributes] [marker]`; an `.ele` file starts with
//! `<tetrahedra> <nodes per tetrahedron 4|10> <region attribute 0|1>` and lists
//! `<index> <n0> <n1> <n2> <n3> [...]`. `#` starts a comment. Indices start at 0 or 1, as the
//! first point's index says. Ten-node (quadratic) tetrahedra keep their four corners.

use crate::error::{check_finite, Result, WobbleError};
use crate::geometry::packed::Packed4;
use crate::geometry::volume::tet_volume;
use glam::Vec3;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A tetrahedral mesh with every tetrahedron positively oriented.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TetMesh {
    /// Vertex positions.
    pub positions: Vec<Vec3>,
    /// Tetrahedra as vertex indices, positive signed volume.
    pub tets: Vec<[u32; 4]>,
    /// Tetrahedra whose orientation disagreed with the file's majority and were turned over
    /// (a file written wholly in the opposite convention counts 0: that is a convention, not a
    /// defect).
    pub turned_over: usize,
}

impl TetMesh {
    /// Builds a mesh and checks it: finite coordinates, indices in range and distinct, no flat
    /// tetrahedron. Negatively oriented tetrahedra are turned over (files differ in convention).
    pub fn new(positions: Vec<Vec3>, mut tets: Vec<[u32; 4]>) -> Result<Self> {
        if positions.is_empty() || tets.is_empty() {
            return Err(WobbleError::EmptyMesh("tetrahedral mesh".into()));
        }
        for (k, p) in positions.iter().enumerate() {
            check_finite("vertex x", k, p.x)?;
            check_finite("vertex y", k, p.y)?;
            check_finite("vertex z", k, p.z)?;
        }
        let (lo, hi) = bounds(&positions);
        let scale = (hi - lo).max_element().max(f32::MIN_POSITIVE);
        let mut negative = 0;
        for (t, tet) in tets.iter_mut().enumerate() {
            crate::error::check_particles("tetrahedron", t, tet, positions.len())?;
            let [a, b, c, d] = tet.map(|v| positions[v as usize]);
            let v = crate::geometry::volume::signed_tet_volume(a, b, c, d);
            if v.is_nan() || v.abs() <= 1e-9 * scale * scale * scale {
                return Err(WobbleError::InvertedTetrahedron {
                    index: t,
                    volume: v,
                });
            }
            if v < 0.0 {
                tet.swap(2, 3);
                negative += 1;
            }
        }
        let turned_over = negative.min(tets.len() - negative);
        Ok(TetMesh {
            positions,
            tets,
            turned_over,
        })
    }

    /// Lowest and highest corner of the bounding box.
    pub fn bounds(&self) -> (Vec3, Vec3) {
        bounds(&self.positions)
    }

    /// Unique edges `[a, b]` (a < b) in order of first appearance, each tetrahedron giving
    /// (0,1), (0,2), (0,3), (1,2), (1,3), (2,3).
    pub fn edges(&self) -> Vec<[u32; 2]> {
        let mut seen: HashMap<[u32; 2], ()> = HashMap::with_capacity(self.tets.len() * 2);
        let mut out = Vec::new();
        for t in &self.tets {
            for (a, b) in [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)] {
                let e = [t[a].min(t[b]), t[a].max(t[b])];
                if seen.insert(e, ()).is_none() {
                    out.push(e);
                }
            }
        }
        out
    }

    /// The boundary surface: faces that belong to one tetrahedron only, oriented outward
    /// (counter-clockwise seen from outside), in tetrahedron order.
    pub fn boundary_triangles(&self) -> Vec<[u32; 3]> {
        let faces = |t: &[u32; 4]| {
            let [a, b, c, d] = *t;
            [[b, c, d], [a, d, c], [a, b, d], [a, c, b]]
        };
        let key = |f: [u32; 3]| {
            let mut k = f;
            k.sort_unstable();
            k
        };
        let mut count: HashMap<[u32; 3], u32> = HashMap::with_capacity(self.tets.len() * 4);
        for t in &self.tets {
            for f in faces(t) {
                *count.entry(key(f)).or_insert(0) += 1;
            }
        }
        let mut out = Vec::new();
        for t in &self.tets {
            for f in faces(t) {
                if count[&key(f)] == 1 {
                    out.push(f);
                }
            }
        }
        out
    }

    /// Total volume (sum of the tetrahedra's volumes).
    pub fn volume(&self) -> f64 {
        let x: Vec<Packed4> = self
            .positions
            .iter()
            .map(|&p| Packed4::new(p, 0.0))
            .collect();
        tet_volume(&self.tets, &x)
    }
}

fn bounds(p: &[Vec3]) -> (Vec3, Vec3) {
    p.iter().fold(
        (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
        |(lo, hi), &v| (lo.min(v), hi.max(v)),
    )
}

/// The `.node` and `.ele` paths of a TetGen mesh given either file (or their common stem).
pub fn tetgen_paths(path: &Path) -> (PathBuf, PathBuf) {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("node") | Some("ele") => (path.with_extension("node"), path.with_extension("ele")),
        _ => {
            let s = path.as_os_str().to_owned();
            let mut node = s.clone();
            node.push(".node");
            let mut ele = s;
            ele.push(".ele");
            (PathBuf::from(node), PathBuf::from(ele))
        }
    }
}

/// Loads a TetGen mesh from its `.node` and `.ele` files (`path` names either, or the stem).
pub fn load_tetgen(path: &Path) -> Result<TetMesh> {
    let (node_path, ele_path) = tetgen_paths(path);
    let read = |p: &Path| {
        std::fs::read(p).map_err(|source| WobbleError::Io {
            path: p.to_path_buf(),
            source,
        })
    };
    let node = read(&node_path)?;
    let ele = read(&ele_path)?;
    parse_tetgen(&node, &node_path, &ele, &ele_path)
}

/// Non-comment lines of a text file as (line number, tokens).
fn data_lines<'a>(
    bytes: &'a [u8],
    path: &Path,
) -> Result<impl Iterator<Item = (usize, Vec<&'a str>)>> {
    let text = std::str::from_utf8(bytes).map_err(|e| WobbleError::Parse {
        path: path.to_path_buf(),
        line: bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1,
        message: "not a text file (invalid UTF-8): not a TetGen mesh".into(),
    })?;
    Ok(text.lines().enumerate().filter_map(|(k, line)| {
        let data = line.split('#').next().unwrap_or("");
        let tokens: Vec<&str> = data.split_whitespace().collect();
        (!tokens.is_empty()).then_some((k + 1, tokens))
    }))
}

fn parse_num<T: std::str::FromStr>(tok: &str, path: &Path, line: usize, what: &str) -> Result<T> {
    tok.parse().map_err(|_| WobbleError::Parse {
        path: path.to_path_buf(),
        line,
        message: format!("expected {what}, found '{tok}'"),
    })
}

/// The header of a TetGen file (its first data line, in the form `usage`): its first two
/// numbers, `what` naming them in errors. `second_error` says what, if anything, is wrong with
/// the second; then the first, the count of records, must not be 0.
fn header<'a>(
    lines: &mut impl Iterator<Item = (usize, Vec<&'a str>)>,
    path: &Path,
    usage: &str,
    what: [&str; 2],
    second_error: impl Fn(usize) -> Option<String>,
) -> Result<[usize; 2]> {
    let empty = || WobbleError::EmptyMesh(path.display().to_string());
    let (line, head) = lines.next().ok_or_else(empty)?;
    let parse_error = |message| WobbleError::Parse {
        path: path.to_path_buf(),
        line,
        message,
    };
    if head.len() < 2 {
        return Err(parse_error(format!("header needs {usage}")));
    }
    let count = parse_num(head[0], path, line, what[0])?;
    let second = parse_num(head[1], path, line, what[1])?;
    if let Some(message) = second_error(second) {
        return Err(parse_error(message));
    }
    if count == 0 {
        return Err(empty());
    }
    Ok([count, second])
}

/// Checks that a file holds the count of `records` its header promises (`found` of
/// `promised`); the error names no line, as it concerns the whole file.
fn check_record_count(path: &Path, promised: usize, found: usize, records: &str) -> Result<()> {
    if found == promised {
        return Ok(());
    }
    Err(WobbleError::Parse {
        path: path.to_path_buf(),
        line: 0,
        message: format!("header promises {promised} {records}, the file has {found}"),
    })
}

/// Parses TetGen `.node` and `.ele` text (the paths only name the sources in errors).
pub fn parse_tetgen(node: &[u8], node_path: &Path, ele: &[u8], ele_path: &Path) -> Result<TetMesh> {
    let perr = |path: &Path, line: usize, message: String| WobbleError::Parse {
        path: path.to_path_buf(),
        line,
        message,
    };
    // .node
    let mut lines = data_lines(node, node_path)?;
    let [count, _] = header(
        &mut lines,
        node_path,
        "'<points> <dimension> [attributes] [markers]'",
        ["a point count", "a dimension"],
        |dim| (dim != 3).then(|| format!("dimension {dim}; only 3 is supported")),
    )?;
    let mut positions = Vec::with_capacity(count.min(1 << 24));
    let mut base = None;
    for (line, tok) in lines.by_ref().take(count) {
        if tok.len() < 4 {
            return Err(perr(
                node_path,
                line,
                "a point needs '<index> <x> <y> <z>'".into(),
            ));
        }
        let index: i64 = parse_num(tok[0], node_path, line, "a point index")?;
        let b = *base.get_or_insert(index);
        if !(b == 0 || b == 1) {
            return Err(perr(
                node_path,
                line,
                format!("first point index is {b}; TetGen numbers from 0 or 1"),
            ));
        }
        if index != b + positions.len() as i64 {
            return Err(perr(
                node_path,
                line,
                format!(
                    "point index {index}, expected {}",
                    b + positions.len() as i64
                ),
            ));
        }
        let mut p = [0.0f32; 3];
        for a in 0..3 {
            p[a] = parse_num(tok[1 + a], node_path, line, "a coordinate")?;
            check_finite("vertex coordinate", positions.len(), p[a])?;
        }
        positions.push(Vec3::from_array(p));
    }
    check_record_count(node_path, count, positions.len(), "points")?;
    let base = base.unwrap_or(0);
    // .ele
    let mut lines = data_lines(ele, ele_path)?;
    let [tet_count, per] = header(
        &mut lines,
        ele_path,
        "'<tetrahedra> <nodes per tetrahedron> [attribute]'",
        ["a tetrahedron count", "nodes per tetrahedron"],
        |per| {
            (per != 4 && per != 10)
                .then(|| format!("{per} nodes per tetrahedron; TetGen writes 4 or 10"))
        },
    )?;
    let mut tets = Vec::with_capacity(tet_count.min(1 << 24));
    for (line, tok) in lines.take(tet_count) {
        if tok.len() < 1 + per {
            return Err(perr(
                ele_path,
                line,
                format!("a tetrahedron needs an index and {per} nodes"),
            ));
        }
        let mut t = [0u32; 4];
        for a in 0..4 {
            let v: i64 = parse_num(tok[1 + a], ele_path, line, "a node index")?;
            let local = v - base;
            if local < 0 || local >= count as i64 {
                return Err(WobbleError::IndexOutOfRange {
                    what: "tetrahedron",
                    index: tets.len(),
                    value: v.max(0) as u64,
                    len: count,
                });
            }
            t[a] = local as u32;
        }
        tets.push(t);
    }
    check_record_count(ele_path, tet_count, tets.len(), "tetrahedra")?;
    TetMesh::new(positions, tets)
}

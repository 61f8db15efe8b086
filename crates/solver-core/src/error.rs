//! The one error type of wobble: every kind of bad input, named with what and where.

use std::path::PathBuf;

/// Everything that can go wrong when building or stepping a body.
#[derive(Debug, thiserror::Error)]
pub enum WobbleError {
    /// A coordinate, force or parameter is NaN or infinite.
    #[error("non-finite {what} at index {index}: {value}")]
    NonFinite {
        what: &'static str,
        index: usize,
        value: f32,
    },
    /// An index points past the end of the array it indexes.
    #[error("{what} {index} refers to index {value}, but there are only {len}")]
    IndexOutOfRange {
        what: &'static str,
        index: usize,
        value: u64,
        len: usize,
    },
    /// A triangle whose corners are collinear or repeated (zero area).
    #[error("triangle {index} ({a}, {b}, {c}) is degenerate: zero area")]
    DegenerateTriangle {
        index: usize,
        a: u32,
        b: u32,
        c: u32,
    },
    /// A tetrahedron with zero or negative signed volume.
    #[error("tetrahedron {index} is inverted or flat (signed volume {volume})")]
    InvertedTetrahedron { index: usize, volume: f32 },
    /// A constraint whose rest length (or rest measure) is zero.
    #[error("{kind} constraint {index} between particles {i} and {j} has zero rest length")]
    ZeroLengthConstraint {
        kind: &'static str,
        index: usize,
        i: u32,
        j: u32,
    },
    /// A constraint that names the same particle twice.
    #[error("{kind} constraint {index} names particle {particle} twice")]
    RepeatedParticle {
        kind: &'static str,
        index: usize,
        particle: u32,
    },
    /// A mass (or total mass) that is zero, negative or non-finite.
    #[error("mass of {what} {index} is {value}; it must be finite and > 0")]
    BadMass {
        what: &'static str,
        index: usize,
        value: f32,
    },
    /// A time step that is zero, negative or non-finite.
    #[error("time step dt = {0} is invalid; it must be finite and > 0")]
    BadTimeStep(f32),
    /// A count (iterations, substeps, ...) that is zero or absurdly large.
    #[error("{name} = {value} is invalid; it must be in 1..={max}")]
    BadCount {
        name: &'static str,
        value: u64,
        max: u64,
    },
    /// A real-valued parameter outside its meaningful range.
    #[error("{name} = {} is invalid: {reason}", show_value(.value))]
    BadParameter {
        name: &'static str,
        value: f64,
        reason: &'static str,
    },
    /// A mesh with no vertices or no elements.
    #[error("{0} is empty: it has no vertices or no elements")]
    EmptyMesh(String),
    /// A mesh file that cannot be read.
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A mesh file whose contents are not a mesh.
    #[error("{path}:{line}: {message}")]
    Parse {
        path: PathBuf,
        line: usize,
        message: String,
    },
    /// A scene, option or constraint kind that this build does not support yet.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A SIMD kernel asked for by name whose instructions the running CPU lacks.
    #[error("the {kernel} kernel needs {needs}, which this CPU lacks (it has: {has})")]
    KernelUnavailable {
        kernel: &'static str,
        needs: &'static str,
        has: String,
    },
    /// A mesh face with fewer than three vertices.
    #[error("face {index} has {vertices} vertices; a face needs at least 3")]
    FaceTooSmall { index: usize, vertices: usize },
    /// Two vertices closer than the weld tolerance.
    #[error(
        "vertex {index} duplicates vertex {of} (distance {distance} <= weld tolerance {tolerance})"
    )]
    DuplicateVertex {
        index: usize,
        of: usize,
        distance: f32,
        tolerance: f32,
    },
    /// A face with the same vertices as an earlier one.
    #[error("face {index} repeats face {of} (the same three vertices)")]
    DuplicateTriangle { index: usize, of: usize },
    /// A vertex that no face uses.
    #[error("vertex {index} is used by no face")]
    UnusedVertex { index: usize },
    /// An edge shared by more than two triangles.
    #[error("edge ({a}, {b}) is non-manifold: face {face} is the third triangle on it")]
    NonManifoldEdge { a: u32, b: u32, face: usize },
    /// A defect that default loading repairs, refused because strict mode was asked for.
    #[error("{0}; strict mode refuses this (default loading repairs it)")]
    RefusedInStrictMode(Box<WobbleError>),
    /// A step produced a non-finite value; the body was rolled back to its last good state.
    #[error("step diverged: particle {particle} became non-finite ({stage}); the body was restored to its last good state")]
    Diverged { particle: usize, stage: String },
}

/// A parameter value as people write it: the shortest form of the f32 it came from, in
/// scientific notation when very small or very large.
fn show_value(value: &f64) -> String {
    let v = *value;
    let short = if v as f32 as f64 == v || !v.is_finite() {
        (v as f32).to_string()
    } else {
        v.to_string()
    };
    let a = v.abs();
    if v != 0.0 && a.is_finite() && !(1e-4..1e9).contains(&a) {
        if v as f32 as f64 == v {
            format!("{:e}", v as f32)
        } else {
            format!("{v:e}")
        }
    } else {
        short
    }
}

/// Shorthand for results with [`WobbleError`].
pub type Result<T, E = WobbleError> = std::result::Result<T, E>;

/// Returns an error when `value` is NaN or infinite.
pub fn check_finite(what: &'static str, index: usize, value: f32) -> Result<()> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(WobbleError::NonFinite { what, index, value })
    }
}

/// Checks a time step: finite and strictly positive.
pub fn check_dt(dt: f32) -> Result<()> {
    if dt.is_finite() && dt > 0.0 {
        Ok(())
    } else {
        Err(WobbleError::BadTimeStep(dt))
    }
}

/// Checks a count against 1..=max.
pub fn check_count(name: &'static str, value: usize, max: usize) -> Result<()> {
    if value == 0 || value > max {
        Err(WobbleError::BadCount {
            name,
            value: value as u64,
            max: max as u64,
        })
    } else {
        Ok(())
    }
}

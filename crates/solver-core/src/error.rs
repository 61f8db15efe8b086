//! The one error type of wobble: every kind of bad input, named with what and where.

use std::path::PathBuf;

/// Everything that can go wrong when building or stepping a body (more kinds may come: match
/// with a wildcard arm).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WobbleError {
    /// A coordinate, force or parameter is NaN or infinite.
    #[error("non-finite {what} at index {index}: {value}")]
    NonFinite {
        /// What the value is (its role, as a person would name it).
        what: &'static str,
        /// Which one, counting from 0.
        index: usize,
        /// The offending value.
        value: f32,
    },
    /// An index points past the end of the array it indexes.
    #[error("{what} {index} refers to index {value}, but there are only {len}")]
    IndexOutOfRange {
        /// What the value is (its role, as a person would name it).
        what: &'static str,
        /// Which one, counting from 0.
        index: usize,
        /// The index found.
        value: u64,
        /// The length of what it indexes.
        len: usize,
    },
    /// A triangle whose corners are collinear or repeated (zero area).
    #[error("triangle {index} ({a}, {b}, {c}) is degenerate: zero area")]
    DegenerateTriangle {
        /// Which one, counting from 0.
        index: usize,
        /// First corner (or endpoint).
        a: u32,
        /// Second corner (or endpoint).
        b: u32,
        /// Third corner.
        c: u32,
    },
    /// A tetrahedron with zero or negative signed volume.
    #[error("tetrahedron {index} is inverted or flat (signed volume {volume})")]
    InvertedTetrahedron {
        /// Which one, counting from 0.
        index: usize,
        /// The signed volume found.
        volume: f32,
    },
    /// A constraint whose rest length (or rest measure) is zero.
    #[error("{kind} constraint {index} between particles {i} and {j} has zero rest length")]
    ZeroLengthConstraint {
        /// The constraint kind's name.
        kind: &'static str,
        /// Which one, counting from 0.
        index: usize,
        /// First particle.
        i: u32,
        /// Second particle.
        j: u32,
    },
    /// A constraint that names the same particle twice.
    #[error("{kind} constraint {index} names particle {particle} twice")]
    RepeatedParticle {
        /// The constraint kind's name.
        kind: &'static str,
        /// Which one, counting from 0.
        index: usize,
        /// The particle named twice.
        particle: u32,
    },
    /// A mass (or total mass) that is zero, negative or non-finite.
    #[error("mass of {what} {index} is {value}; it must be finite and > 0")]
    BadMass {
        /// What the value is (its role, as a person would name it).
        what: &'static str,
        /// Which one, counting from 0.
        index: usize,
        /// The offending value.
        value: f32,
    },
    /// A time step that is zero, negative or non-finite.
    #[error("time step dt = {0} is invalid; it must be finite and > 0")]
    BadTimeStep(f32),
    /// A count (iterations, substeps, ...) that is zero or absurdly large.
    #[error("{name} = {value} is invalid; it must be in 1..={max}")]
    BadCount {
        /// The parameter or count's name.
        name: &'static str,
        /// The count given.
        value: u64,
        /// The largest value allowed.
        max: u64,
    },
    /// A real-valued parameter outside its meaningful range.
    #[error("{name} = {} is invalid: {reason}", show_value(.value))]
    BadParameter {
        /// The parameter or count's name.
        name: &'static str,
        /// The offending value.
        value: f64,
        /// Why the value is refused.
        reason: &'static str,
    },
    /// A mesh with no vertices or no elements.
    #[error("{0} is empty: it has no vertices or no elements")]
    EmptyMesh(String),
    /// A mesh file that cannot be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A mesh file whose contents are not a mesh.
    #[error("{path}:{line}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The line, counting from 1.
        line: usize,
        /// What is wrong there.
        message: String,
    },
    /// A combination this build does not support (not a fault of the input's values).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A name (of a scene, solver, ordering, integrator, ...) that is none of the known ones.
    #[error("unknown {what} '{name}'; expected {expected}")]
    UnknownName {
        /// What kind of name it is (scene, solver, ...).
        what: &'static str,
        /// The name given.
        name: String,
        /// What would have been accepted.
        expected: String,
    },
    /// Something an option needs was not given (a mesh scene without its file).
    #[error("{0}")]
    MissingInput(&'static str),
    /// A body whose shape does not admit what was asked of it.
    #[error("{what} needs {needs}")]
    UnsuitableBody {
        /// What was asked for.
        what: &'static str,
        /// What it needs of the body.
        needs: &'static str,
    },
    /// A structure whose invariants do not hold (CSR offsets, sparsity patterns, colorings): a
    /// caller's or wobble's bug, never a property of the physics.
    #[error("invalid {what}: {detail}")]
    InvalidStructure {
        /// Which structure.
        what: &'static str,
        /// What went wrong, as the underlying library reports it.
        detail: String,
    },
    /// A linear system that could not be assembled or factorized.
    #[error("{what} failed: {detail}")]
    LinearSolve {
        /// Which step of the solve.
        what: &'static str,
        /// What went wrong, as the underlying library reports it.
        detail: String,
    },
    /// The operating system refused the threads a parallel solver asked for.
    #[error("cannot start {threads} threads: {detail}")]
    ThreadPool {
        /// How many threads were asked for.
        threads: usize,
        /// What went wrong, as the underlying library reports it.
        detail: String,
    },
    /// A grab id that names no active grab (never made, or released already).
    #[error("no active grab {0}")]
    NoSuchGrab(String),
    /// A SIMD kernel asked for by name whose instructions the running CPU lacks.
    #[error("the {kernel} kernel needs {needs}, which this CPU lacks (it has: {has})")]
    KernelUnavailable {
        /// The kernel asked for.
        kernel: &'static str,
        /// The instructions it needs.
        needs: &'static str,
        /// The SIMD features the running CPU has.
        has: String,
    },
    /// A mesh face with fewer than three vertices.
    #[error("face {index} has {vertices} vertices; a face needs at least 3")]
    FaceTooSmall {
        /// Which one, counting from 0.
        index: usize,
        /// How many vertices it has.
        vertices: usize,
    },
    /// Two vertices closer than the weld tolerance.
    #[error(
        "vertex {index} duplicates vertex {of} (distance {distance} <= weld tolerance {tolerance})"
    )]
    DuplicateVertex {
        /// The later vertex, counting from 0.
        index: usize,
        /// The earlier one it repeats.
        of: usize,
        /// How far apart the two are.
        distance: f32,
        /// The weld tolerance.
        tolerance: f32,
    },
    /// A face with the same vertices as an earlier one.
    #[error("face {index} repeats face {of} (the same three vertices)")]
    DuplicateTriangle {
        /// The later face, counting from 0.
        index: usize,
        /// The earlier one it repeats.
        of: usize,
    },
    /// A vertex that no face uses.
    #[error("vertex {index} is used by no face")]
    UnusedVertex {
        /// Which one, counting from 0.
        index: usize,
    },
    /// An edge shared by more than two triangles.
    #[error("edge ({a}, {b}) is non-manifold: face {face} is the third triangle on it")]
    NonManifoldEdge {
        /// First vertex of the edge.
        a: u32,
        /// Second vertex of the edge.
        b: u32,
        /// The face that makes it non-manifold.
        face: usize,
    },
    /// A defect that default loading repairs, refused because strict mode was asked for.
    #[error("{0}; strict mode refuses this (default loading repairs it)")]
    RefusedInStrictMode(Box<WobbleError>),
    /// A saved body state that does not fit the body it is restored into.
    #[error("cannot restore the body state: its {what} is {found}, the body's is {expected}")]
    StateMismatch {
        /// What differs (particle count, topology fingerprint, grab count, an array's length).
        what: &'static str,
        /// The state's value.
        found: u64,
        /// The body's value.
        expected: u64,
    },
    /// A frame time whose substeps, kept at or below the stable substep, would exceed the cap
    /// ([`crate::StepParams::max_substep`], [`crate::StepParams::max_substeps`]); nothing was
    /// stepped.
    #[error("dt = {} s needs {} substeps of at most {max_substep} s, above max_substeps = {max_substeps}; nothing was stepped: step a shorter dt (a game clamps its frame time), or raise max_substeps (each substep costs a full solve) or max_substep (less stable)", show_value(&(*.dt as f64)), show_value(&(*.needed as f32 as f64)))]
    StepTooLarge {
        /// The frame time asked for.
        dt: f32,
        /// The stable substep it must be split into.
        max_substep: f32,
        /// The cap on the substep count.
        max_substeps: usize,
        /// The substeps the frame time would need (a float: an absurd dt needs more than any
        /// integer holds).
        needed: f64,
    },
    /// A value of the body that a step starts from (written since the last step: a position, a
    /// velocity, an inverse mass, an external force, a drag or attachment target) is not
    /// finite or not valid; the step ran nothing and put every such value back to a finite one
    /// (`restored` says to what), so the body is finite again.
    #[error("cannot step: {what} {index} has {field} = {value}, which {reason}; nothing was stepped and it was put back to {restored}")]
    BadState {
        /// What holds the value: `particle`, `drag constraint` or `attachment`.
        what: &'static str,
        /// Which one, counting from 0.
        index: usize,
        /// The field and component (`position y`, `inverse mass (position w)`, `velocity x`,
        /// `external force z`, `target x`, ...).
        field: &'static str,
        /// The offending value.
        value: f32,
        /// What is wrong with it (`is not finite`, `is negative`).
        reason: &'static str,
        /// The finite value it was given instead, in words.
        restored: &'static str,
    },
    /// A body of a [`crate::world::World`] failed to step: it was restored to its state at
    /// the start of the substep that failed and held there for the rest of the step, and the
    /// other bodies finished the step (`World::last_report` lists every body that failed).
    #[error("{body} of the world failed and was restored (the other bodies finished the step): {source}")]
    InBody {
        /// The body, by its handle in the world.
        body: crate::handle::BodyHandle,
        /// What went wrong with it (shared with `WorldBody::failure`).
        source: std::sync::Arc<WobbleError>,
    },
    /// A step produced a non-finite value, or a speed above [`MAX_SPEED`] (`speed`
    /// is then that speed); the body was rolled back to its last good state.
    #[error("step diverged: particle {particle} {} ({stage}); the body was restored to its last good state", divergence(.speed))]
    Diverged {
        /// The first particle that went wrong.
        particle: usize,
        /// The stage of the step where it happened, and what went wrong.
        stage: String,
        /// The speed it reached, when it diverged by speed rather than by a non-finite value.
        speed: Option<f32>,
    },
}

/// What a diverged particle did: became non-finite, or moved faster than the bound.
fn divergence(speed: &Option<f32>) -> String {
    match speed {
        None => "became non-finite".into(),
        Some(v) => format!(
            "reached {} m/s, above the speed bound of {:e} m/s",
            show_value(&(*v as f64)),
            MAX_SPEED
        ),
    }
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

/// The speed (m/s) above which a step is judged diverged: a particle that ends a step faster
/// than this, or with a non-finite value, makes [`crate::step()`] restore the body and return
/// [`WobbleError::Diverged`].
///
/// Why 1e6 m/s: wobble's scenes are in SI units, where soft bodies and cloth move at metres per
/// second; 1e6 m/s is far above the speed of sound in any solid, and at it a particle crosses
/// kilometres in one frame, so no legitimate scene comes near it. A solver that diverges grows
/// its error geometrically, iteration after iteration, so it crosses the bound within a step or
/// two of leaving the physical range, well before f32 overflows (`tests/divergence_guard.rs`
/// drives every solver past it).
pub const MAX_SPEED: f32 = 1e6;

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

/// The one of `all` whose `name` is `s`, or [`WobbleError::UnknownName`] listing every name
/// (`"a, b or c"`): the parser behind the `FromStr` of the library's named options.
pub fn parse_named<T: Copy>(
    what: &'static str,
    s: &str,
    all: &[T],
    name: impl Fn(T) -> &'static str,
) -> Result<T> {
    all.iter().copied().find(|&t| name(t) == s).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|&t| name(t)).collect();
        let expected = match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.concat(),
        };
        WobbleError::UnknownName {
            what,
            name: s.into(),
            expected,
        }
    })
}

/// Returns an error when `value`, which `what` number `index` holds, is not below `len`.
pub fn check_index(what: &'static str, index: usize, value: usize, len: usize) -> Result<()> {
    if value < len {
        Ok(())
    } else {
        Err(WobbleError::IndexOutOfRange {
            what,
            index,
            value: value as u64,
            len,
        })
    }
}

/// Returns an error naming the first of `values` (the particles or vertices that `what`
/// number `index` refers to) that is not below `len`.
pub fn check_indices(what: &'static str, index: usize, values: &[u32], len: usize) -> Result<()> {
    match values.iter().find(|&&v| v as usize >= len) {
        None => Ok(()),
        Some(&v) => check_index(what, index, v as usize, len),
    }
}

/// Checks the particles of constraint `index` of `kind`: in range for `n` particles, distinct.
pub fn check_particles(kind: &'static str, index: usize, ids: &[u32], n: usize) -> Result<()> {
    for (a, &p) in ids.iter().enumerate() {
        check_index(kind, index, p as usize, n)?;
        if ids[..a].contains(&p) {
            return Err(WobbleError::RepeatedParticle {
                kind,
                index,
                particle: p,
            });
        }
    }
    Ok(())
}

/// Returns an error unless `value` is finite and `>= 0`.
pub fn check_non_negative(name: &'static str, value: f32) -> Result<()> {
    check_parameter(name, value, value >= 0.0, "must be finite and >= 0")
}

/// Returns an error unless `value` is finite and `> 0`.
pub fn check_positive(name: &'static str, value: f32) -> Result<()> {
    check_parameter(name, value, value > 0.0, "must be finite and > 0")
}

/// A [`WobbleError::BadParameter`] giving `reason` unless `value` is finite and `in_range`.
pub(crate) fn check_parameter(
    name: &'static str,
    value: f32,
    in_range: bool,
    reason: &'static str,
) -> Result<()> {
    if value.is_finite() && in_range {
        Ok(())
    } else {
        Err(WobbleError::BadParameter {
            name,
            value: value as f64,
            reason,
        })
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

/// Checks a size parameter against `min..=max`: below `min` it is a bad parameter for
/// `too_small`, above `max` too large a count.
pub fn check_size(
    name: &'static str,
    value: usize,
    min: usize,
    max: usize,
    too_small: &'static str,
) -> Result<()> {
    if value < min {
        return Err(WobbleError::BadParameter {
            name,
            value: value as f64,
            reason: too_small,
        });
    }
    check_at_most(name, value, max)
}

/// Checks a count against 0..=max.
pub fn check_at_most(name: &'static str, value: usize, max: usize) -> Result<()> {
    check_count_in(name, value, 0, max)
}

/// Checks a count against 1..=max.
pub fn check_count(name: &'static str, value: usize, max: usize) -> Result<()> {
    check_count_in(name, value, 1, max)
}

/// A [`WobbleError::BadCount`] unless `min <= value <= max`.
fn check_count_in(name: &'static str, value: usize, min: usize, max: usize) -> Result<()> {
    if value < min || value > max {
        Err(WobbleError::BadCount {
            name,
            value: value as u64,
            max: max as u64,
        })
    } else {
        Ok(())
    }
}

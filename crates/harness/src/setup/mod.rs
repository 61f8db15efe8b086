//! Scene, ordering and solver from command-line arguments, the argument groups several
//! subcommands share, the harness's error, and the checks that turn a bad argument into a clear
//! message before a sweep starts. The enumerated values themselves are in [`values`].

pub mod values;

use clap::Args;
pub use errors::Error;
use scenes::mesh_scene_with;
use scenes::Scene;
use solver_core::mesh::repair::MeshOptions;
use solver_core::{Body, Solver};
use sparse::{
    apply_ordering, ChebyshevOptions, ColoredOptions, GaussNewtonOptions, JacobiOptions, Ordering,
    SolverKind, SolverOptions,
};
use std::path::{Path, PathBuf};
pub use values::{
    BackendArg, IntegratorArg, KernelArg, ModelArg, OrderingArg, SceneArg, SolverArg, StepSceneArg,
    ALL_SOLVERS,
};

/// Errors of the harness: the library's, or a bad argument.
pub mod errors {
    /// A harness error.
    #[derive(Debug, thiserror::Error)]
    pub enum Error {
        /// From the library.
        #[error(transparent)]
        Wobble(#[from] solver_core::WobbleError),
        /// A bad command-line argument.
        #[error("{0}")]
        Arg(String),
        /// Writing results failed.
        #[error("{0}")]
        Io(String),
        /// The GPU device failed (a validation or out-of-memory error).
        #[error("{0}")]
        Gpu(String),
    }
}

/// An I/O error with the path it concerns.
pub fn io_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Io(format!("{}: {e}", path.display()))
}

/// Checks that the solvers of a `--solvers` list are not an empty list.
pub fn check_solvers(solvers: &[SolverArg]) -> Result<(), Error> {
    if solvers.is_empty() {
        return Err(Error::Arg("the solver list is empty".into()));
    }
    Ok(())
}

/// Checks a size parameter for `scene` before any work starts (the library checks again).
pub fn check_size(scene: &str, n: usize) -> Result<(), Error> {
    let (lo, hi, what) = match scene {
        "cloth" | "rope" | "flag" => (2, solver_core::build::MAX_N, "grid side n"),
        "jelly" => (0, 7, "jelly subdivision level n"),
        "cube" => (1, 128, "cube cells per side n"),
        _ => return Ok(()),
    };
    if n < lo || n > hi {
        return Err(Error::Arg(format!(
            "{what} = {n} is out of range for the {scene} scene; it must be in {lo}..={hi}"
        )));
    }
    Ok(())
}

/// Parses a comma-separated list of integers.
pub fn parse_usizes(list: &str, what: &str) -> Result<Vec<usize>, Error> {
    let v: Result<Vec<usize>, _> = list
        .split(',')
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<usize>())
        .collect();
    let v = v.map_err(|e| {
        Error::Arg(format!(
            "--{what} must be a comma-separated list of non-negative integers ('{list}': {e})"
        ))
    })?;
    if v.is_empty() {
        return Err(Error::Arg(format!("--{what} is empty")));
    }
    Ok(v)
}

/// Parses a list of counts that must each be at least 1.
pub fn parse_counts(list: &str, what: &str) -> Result<Vec<usize>, Error> {
    let v = parse_usizes(list, what)?;
    if let Some(bad) = v
        .iter()
        .find(|&&c| c == 0 || c > solver_core::step::MAX_COUNT)
    {
        return Err(Error::Arg(format!(
            "--{what} contains {bad}; every entry must be in 1..={}",
            solver_core::step::MAX_COUNT
        )));
    }
    Ok(v)
}

/// Parses a list of sizes for `scene`, each checked.
pub fn parse_sizes(list: &str, scene: &str) -> Result<Vec<usize>, Error> {
    let v = parse_usizes(list, "sizes")?;
    for &n in &v {
        check_size(scene, n)?;
    }
    Ok(v)
}

/// Checks that a mesh file exists when the scene is `mesh`.
pub fn check_mesh(scene: &str, mesh: &Option<PathBuf>) -> Result<(), Error> {
    if scene != "mesh" {
        return Ok(());
    }
    match mesh {
        None => Err(Error::Arg("the mesh scene needs --mesh FILE".into())),
        Some(p) if !p.exists() => Err(Error::Arg(format!(
            "mesh file {} does not exist",
            p.display()
        ))),
        Some(_) => Ok(()),
    }
}

/// How much solving a step does: solver iterations per substep and substeps per step.
#[derive(Args, Debug, Clone, Copy)]
pub struct Passes {
    /// Solver iterations per substep.
    #[arg(long, default_value_t = 8)]
    pub iterations: usize,
    /// Substeps per step.
    #[arg(long, default_value_t = 1)]
    pub substeps: usize,
}

/// How a body's particles are numbered and how `colored` sweeps them: the ordering, the cache
/// tile and the distance kernel (`wobble step` and `wobble threads` take them alike).
#[derive(Args, Debug, Clone)]
pub struct Layout {
    /// Particle ordering.
    #[arg(long, value_enum, default_value_t = OrderingArg::Natural)]
    pub ordering: OrderingArg,
    /// `colored`: particles per cache tile (0: sweep each color over the whole body).
    #[arg(long, default_value_t = sparse::colored::DEFAULT_TILE_PARTICLES)]
    pub tile: usize,
    /// `colored`'s distance kernel (one the CPU lacks is refused).
    #[arg(long, value_enum, default_value_t = KernelArg::Auto)]
    pub kernel: KernelArg,
}

impl Layout {
    /// `kind` with `--tile` applied (`colored`'s tile; the other kinds as they are).
    pub fn tune(&self, kind: SolverKind) -> SolverKind {
        match kind {
            SolverKind::Colored(o) => SolverKind::Colored(ColoredOptions {
                tile_particles: self.tile,
                ..o
            }),
            other => other,
        }
    }
}

/// What most sweeps take alike: the solvers' tuning and the output directory.
#[derive(Args, Debug, Clone)]
pub struct Common {
    /// Options for particular solvers: Jacobi relaxation, Newton inner sweeps, seed, kernel.
    #[command(flatten)]
    pub tuning: Tuning,
    /// Output directory.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
}

/// Solver options that concern particular solvers (Jacobi family, Newton, random choices).
#[derive(Args, Debug, Clone)]
pub struct Tuning {
    /// Relaxation factor for the Jacobi family.
    #[arg(long, default_value_t = 1.0)]
    pub omega: f32,
    /// Inner sweeps per Newton iteration.
    #[arg(long, default_value_t = 4)]
    pub inner: usize,
    /// Seed for randomized choices (shuffled ordering, randomized coloring).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// `colored`'s distance kernel (one the CPU lacks is refused).
    #[arg(long, value_enum, default_value_t = KernelArg::Auto)]
    pub kernel: KernelArg,
}

impl Default for Tuning {
    fn default() -> Self {
        let d = SolverOptions::default();
        Tuning {
            omega: GaussNewtonOptions::DEFAULT.omega,
            inner: GaussNewtonOptions::DEFAULT.sweeps,
            seed: ColoredOptions::DEFAULT.seed,
            // The library's default kernel, as the value that names it.
            kernel: KernelArg::ALL
                .iter()
                .copied()
                .find(|k| k.kernel() == d.kernel)
                .unwrap_or(KernelArg::Auto),
        }
    }
}

impl Tuning {
    /// The library's shared options for `threads` threads (the library's defaults for the
    /// rest).
    pub fn options(&self, threads: usize) -> SolverOptions {
        SolverOptions {
            threads,
            kernel: self.kernel.kernel(),
            ..Default::default()
        }
    }

    /// `kind` with the tuning applied to the options it has: ω (Jacobi family and
    /// `gauss-newton-jacobi`), inner sweeps (Newton), seed (`gs-shuffled`, `colored`'s randomized
    /// coloring).
    pub fn tune(&self, kind: SolverKind) -> SolverKind {
        match kind {
            SolverKind::Gs => SolverKind::Gs,
            SolverKind::GsShuffled { .. } => SolverKind::GsShuffled { seed: self.seed },
            SolverKind::Colored(o) => SolverKind::Colored(ColoredOptions {
                seed: self.seed,
                ..o
            }),
            SolverKind::Jacobi(o) => SolverKind::Jacobi(JacobiOptions {
                omega: self.omega,
                ..o
            }),
            SolverKind::Chebyshev(o) => SolverKind::Chebyshev(ChebyshevOptions {
                jacobi: JacobiOptions {
                    omega: self.omega,
                    ..o.jacobi
                },
                ..o
            }),
            SolverKind::GaussNewton(inner, o) => SolverKind::GaussNewton(
                inner,
                GaussNewtonOptions {
                    sweeps: self.inner,
                    omega: self.omega,
                    ..o
                },
            ),
            SolverKind::Newton(o) => SolverKind::Newton(o),
            // A solver with none of these options runs as given.
            other => other,
        }
    }

    /// The solver of `kind`, tuned, on `threads` threads.
    pub fn build(&self, kind: SolverKind, threads: usize) -> Result<Box<dyn Solver>, Error> {
        build_solver(self.tune(kind), &self.options(threads))
    }

    /// The solver called `name` (the command line's spelling), tuned, on `threads` threads.
    pub fn build_named(&self, name: &str, threads: usize) -> Result<Box<dyn Solver>, Error> {
        self.build(name.parse()?, threads)
    }

    /// Checks the values.
    pub fn check(&self) -> Result<(), Error> {
        if !(self.omega.is_finite() && self.omega > 0.0) {
            return Err(Error::Arg(format!(
                "--omega = {} is invalid; it must be finite and > 0",
                self.omega
            )));
        }
        if self.inner == 0 {
            return Err(Error::Arg("--inner must be at least 1".into()));
        }
        Ok(())
    }
}

/// Builds the body of `scene` (size `n`, file `mesh`) and renumbers it with `ordering`.
pub fn build_body(
    scene: &str,
    n: usize,
    mesh: Option<PathBuf>,
    ordering: &str,
) -> Result<(Body, Ordering), Error> {
    build_body_with(scene, n, mesh, ordering, &MeshOptions::default())
}

/// [`build_body`] with mesh options: a mesh scene is repaired (a one-line warning with counts on
/// stderr) or, with `strict`, refused at its first defect.
pub fn build_body_with(
    scene: &str,
    n: usize,
    mesh: Option<PathBuf>,
    ordering: &str,
    options: &MeshOptions,
) -> Result<(Body, Ordering), Error> {
    if scene == "mesh" {
        if let Some(path) = &mesh {
            if !path.exists() {
                return Err(Error::Arg(format!(
                    "mesh file {} does not exist",
                    path.display()
                )));
            }
        }
    }
    let ordering: Ordering = ordering.parse()?;
    let mut body = match (scene, &mesh) {
        ("mesh", Some(path)) => {
            let (body, report) = mesh_scene_with(path, options)?;
            if !report.is_clean() {
                eprintln!("wobble: warning: {}: {report}", path.display());
            }
            let parts = part_count(&body);
            if parts > 1 && first_warning_for(path) {
                eprintln!(
                    "wobble: warning: {}: a mesh of {parts} parts stepped as one body, whose parts \
                     pass through each other (only `wobble step` on the CPU with the pbd model \
                     steps one body per part)",
                    path.display()
                );
            }
            body
        }
        _ => Scene::parse(scene, n, mesh)?.build()?,
    };
    apply_ordering(&mut body, ordering)?;
    Ok((body, ordering))
}

/// True the first time this process asks about `path`: a command that builds the body of one
/// mesh many times (`advise`, the sweeps) warns about it once.
fn first_warning_for(path: &Path) -> bool {
    static WARNED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
    if warned.iter().any(|p| p == path) {
        return false;
    }
    warned.push(path.to_path_buf());
    true
}

/// The connected parts of `body`'s surface (0 for a body without triangles).
fn part_count(body: &Body) -> usize {
    let surface = solver_core::mesh::TriMesh {
        positions: body.particles().x().iter().map(|x| x.xyz()).collect(),
        triangles: body.topology().triangles.clone(),
    };
    solver_core::mesh::parts::parts(&surface).len()
}

/// `kind` with `jacobi` as its Jacobi step (`jacobi`, `chebyshev`; the other kinds as they are).
pub fn with_jacobi(kind: SolverKind, jacobi: JacobiOptions) -> SolverKind {
    match kind {
        SolverKind::Jacobi(_) => SolverKind::Jacobi(jacobi),
        SolverKind::Chebyshev(o) => SolverKind::Chebyshev(ChebyshevOptions { jacobi, ..o }),
        other => other,
    }
}

/// Builds the solver of `kind` on `opts`.
pub fn build_solver(kind: SolverKind, opts: &SolverOptions) -> Result<Box<dyn Solver>, Error> {
    if opts.threads == 0 {
        return Err(Error::Arg("--threads must be at least 1".into()));
    }
    Ok(kind.build(opts)?)
}

/// The harness's error for a GPU backend error: what the GPU does not run (no adapter
/// included) is `unsupported`, as sweeps expect.
#[cfg(feature = "gpu")]
pub fn gpu_error(e: gpu::GpuError) -> Error {
    use solver_core::WobbleError;
    match e {
        gpu::GpuError::Wobble(e) => Error::Wobble(e),
        gpu::GpuError::NoAdapter(why) => {
            Error::Wobble(WobbleError::Unsupported(format!("no GPU adapter ({why})")))
        }
        gpu::GpuError::Unsupported(what) => Error::Wobble(WobbleError::Unsupported(format!(
            "{what}, on the GPU backend"
        ))),
        e @ gpu::GpuError::Device(_) => Error::Gpu(e.to_string()),
    }
}

/// Splits a library refusal from a harness failure: a library error becomes a note to record
/// ("unsupported here: ..." for what this build lacks, "failed: ..." otherwise) so a sweep goes
/// on; a bad argument or an I/O error stays an error.
pub fn or_note<T>(r: Result<T, Error>) -> Result<Result<T, String>, Error> {
    match r {
        Ok(v) => Ok(Ok(v)),
        Err(Error::Wobble(solver_core::WobbleError::Unsupported(m))) => {
            Ok(Err(format!("unsupported here: {m}")))
        }
        Err(Error::Wobble(e)) => Ok(Err(format!("failed: {e}"))),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_sizes_are_within_each_scene_range() {
        for s in SceneArg::ALL {
            assert!(check_size(s.name(), s.default_n()).is_ok(), "{s}");
        }
    }

    #[test]
    fn sizes_below_two_are_rejected_for_grids() {
        assert!(check_solvers(&[]).is_err());
        assert!(parse_sizes("16,1", "cloth").is_err());
        assert!(parse_sizes("0", "jelly").is_ok());
        assert!(parse_counts("1,0", "iters").is_err());
    }
}

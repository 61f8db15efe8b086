//! Scene, ordering and solver from command-line arguments.

pub use errors::Error;
use solver_core::{Body, Scene, Solver};
use sparse::{apply_ordering, make_solver, Ordering, SolverOptions};
use std::path::PathBuf;

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
    }
}

/// Builds the body of `scene` (size `n`, file `mesh`) and renumbers it with `ordering`.
pub fn build_body(
    scene: &str,
    n: usize,
    mesh: Option<PathBuf>,
    ordering: &str,
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
    let mut body = Scene::parse(scene, n, mesh)?.build()?;
    apply_ordering(&mut body, ordering)?;
    Ok((body, ordering))
}

/// Builds the solver called `name`.
pub fn build_solver(name: &str, opts: &SolverOptions) -> Result<Box<dyn Solver>, Error> {
    if opts.threads == 0 {
        return Err(Error::Arg("--threads must be at least 1".into()));
    }
    Ok(make_solver(name, opts)?)
}

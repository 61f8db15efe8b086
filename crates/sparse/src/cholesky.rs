//! The sparse Cholesky factor the direct solvers refactor every iteration: its symbolic
//! factorization once per topology, and numeric storage sized by it.

use nalgebra_sparse::factorization::{CscCholesky, CscSymbolicCholesky};
use nalgebra_sparse::pattern::SparsityPattern;
use solver_core::WobbleError;

/// A Cholesky factor of the symmetric `pattern`, its numeric storage made by factoring the
/// identity (`diagonal` lists the value index of every diagonal entry), ready for `refactor`.
pub(crate) fn factor_for(
    pattern: SparsityPattern,
    diagonal: impl IntoIterator<Item = usize>,
    what: &'static str,
) -> Result<CscCholesky<f64>, WobbleError> {
    let mut identity = vec![0.0; pattern.nnz()];
    for d in diagonal {
        identity[d] = 1.0;
    }
    let symbolic = CscSymbolicCholesky::factor(pattern);
    CscCholesky::factor_numerical(symbolic, &identity).map_err(|e| WobbleError::LinearSolve {
        what,
        detail: format!("{e:?}"),
    })
}

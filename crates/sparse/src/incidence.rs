//! Constraint -> particle incidence and its transpose, as compressed sparse rows with `u32`
//! offsets and indices.
//!
//! Theory: the incidence matrix `B` has one row per constraint (global numbering) and one column
//! per particle, with an entry where the constraint involves the particle; it is the sparsity
//! pattern of the constraint Jacobian `J` (3 columns per particle collapsed into one). Its
//! transpose `Bᵀ` lists, for each particle, the constraints acting on it: what a Jacobi solver
//! gathers corrections through, what a coloring checks conflicts with (two constraints conflict
//! iff they share a column of `B`, i.e. `B Bᵀ` has an off-diagonal entry), and what the pattern
//! of `A = J M⁻¹ Jᵀ` is built from.
//!
//! The rows of `B` keep the order in which each constraint lists its particles (the slot `k` of
//! `∇_k C`), so an entry index `e` of `B` names "constraint g, slot k" and a per-entry buffer can
//! hold per-slot corrections. The rows of `Bᵀ` are ascending in constraint id.
//!
//! Storage is `u32` (half of `usize`: at 1M particles the cloth's incidence is 6M entries), and
//! the pattern is kept apart from any values. [`CsrPattern::to_sparsity_pattern`] and
//! [`CsrPattern::from_sparsity_pattern`] convert to and from nalgebra-sparse's
//! `SparsityPattern`, which the Newton solvers build their matrices on.

use nalgebra_sparse::pattern::SparsityPattern;
use solver_core::{Constraints, WobbleError};
use std::ops::Range;

/// A sparsity pattern in compressed-row form: `u32` row offsets and column indices, no values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CsrPattern {
    offsets: Vec<u32>,
    indices: Vec<u32>,
    cols: usize,
}

fn too_many(what: &'static str, value: usize) -> WobbleError {
    WobbleError::BadCount {
        name: what,
        value: value as u64,
        max: u32::MAX as u64,
    }
}

impl CsrPattern {
    /// Builds a pattern from row offsets and column indices, checking both.
    pub fn new(offsets: Vec<u32>, indices: Vec<u32>, cols: usize) -> Result<Self, WobbleError> {
        if offsets.first() != Some(&0) || *offsets.last().unwrap() as usize != indices.len() {
            return Err(WobbleError::InvalidStructure {
                what: "CSR offsets",
                detail: "they must start at 0 and end at the number of entries".into(),
            });
        }
        if let Some(r) = offsets.windows(2).position(|w| w[1] < w[0]) {
            return Err(WobbleError::InvalidStructure {
                what: "CSR offsets",
                detail: format!("they decrease at row {r}"),
            });
        }
        if let Some(e) = indices.iter().position(|&c| c as usize >= cols) {
            return Err(WobbleError::IndexOutOfRange {
                what: "CSR entry",
                index: e,
                value: indices[e] as u64,
                len: cols,
            });
        }
        Ok(CsrPattern {
            offsets,
            indices,
            cols,
        })
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.indices.len()
    }

    /// The row offsets (`rows + 1` of them).
    pub fn offsets(&self) -> &[u32] {
        &self.offsets
    }

    /// The column index of every entry, row after row.
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    /// The entry indices of row `r`.
    #[inline]
    pub fn row_range(&self, r: usize) -> Range<usize> {
        self.offsets[r] as usize..self.offsets[r + 1] as usize
    }

    /// The column indices of row `r`.
    #[inline]
    pub fn row(&self, r: usize) -> &[u32] {
        &self.indices[self.row_range(r)]
    }

    /// The transpose (a counting sort over columns: its rows come out in ascending order).
    pub fn transpose(&self) -> CsrPattern {
        self.transpose_with_entries().0
    }

    /// The transpose, and for each of its entries the index of the same entry in `self`.
    ///
    /// A counting sort over columns: rows of the transpose come out in ascending order.
    pub fn transpose_with_entries(&self) -> (CsrPattern, Vec<u32>) {
        let mut offsets = vec![0u32; self.cols + 1];
        for &c in &self.indices {
            offsets[c as usize + 1] += 1;
        }
        for k in 0..self.cols {
            offsets[k + 1] += offsets[k];
        }
        let mut next = offsets.clone();
        let mut indices = vec![0u32; self.nnz()];
        let mut entries = vec![0u32; self.nnz()];
        for r in 0..self.rows() {
            for e in self.row_range(r) {
                let c = self.indices[e] as usize;
                let slot = next[c] as usize;
                next[c] += 1;
                indices[slot] = r as u32;
                entries[slot] = e as u32;
            }
        }
        (
            CsrPattern {
                offsets,
                indices,
                cols: self.rows(),
            },
            entries,
        )
    }

    /// The same pattern as nalgebra-sparse's `SparsityPattern` (rows as major lanes; each row's
    /// indices sorted, as nalgebra-sparse requires).
    pub fn to_sparsity_pattern(&self) -> Result<SparsityPattern, WobbleError> {
        let offsets: Vec<usize> = self.offsets.iter().map(|&o| o as usize).collect();
        let mut indices: Vec<usize> = self.indices.iter().map(|&c| c as usize).collect();
        for r in 0..self.rows() {
            indices[offsets[r]..offsets[r + 1]].sort_unstable();
        }
        SparsityPattern::try_from_offsets_and_indices(self.rows(), self.cols, offsets, indices)
            .map_err(|e| WobbleError::InvalidStructure {
                what: "sparsity pattern",
                detail: e.to_string(),
            })
    }

    /// A `u32` copy of a nalgebra-sparse pattern.
    pub fn from_sparsity_pattern(p: &SparsityPattern) -> Result<Self, WobbleError> {
        if p.nnz() > u32::MAX as usize {
            return Err(too_many("pattern entries", p.nnz()));
        }
        if p.minor_dim() > u32::MAX as usize {
            return Err(too_many("pattern columns", p.minor_dim()));
        }
        Ok(CsrPattern {
            offsets: p.major_offsets().iter().map(|&o| o as u32).collect(),
            indices: p.minor_indices().iter().map(|&c| c as u32).collect(),
            cols: p.minor_dim(),
        })
    }
}

/// The constraint -> particle incidence `B` (rows: global constraint ids) and its transpose.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Incidence {
    /// `B`: the particles of each constraint, in the constraint's slot order.
    pub constraint_particles: CsrPattern,
    /// `Bᵀ`: the constraints acting on each particle, ascending.
    pub particle_constraints: CsrPattern,
    /// For each entry of `Bᵀ`, the index of the same (constraint, particle) entry in `B` (empty
    /// when built with [`Incidence::without_entries`]).
    pub particle_entries: Vec<u32>,
}

impl Incidence {
    /// Builds the incidence of every constraint of every kind over `particles` particles.
    pub fn new(constraints: &Constraints, particles: usize) -> Result<Self, WobbleError> {
        let constraint_particles = Self::rows(constraints, usize::MAX, particles)?;
        let (particle_constraints, particle_entries) =
            constraint_particles.transpose_with_entries();
        Ok(Incidence {
            constraint_particles,
            particle_constraints,
            particle_entries,
        })
    }

    /// `B` and `Bᵀ` only, with `particle_entries` left empty: all a coloring needs, for less
    /// memory (4 bytes per entry less; 24 MB on the 1024 x 1024 cloth).
    pub fn without_entries(
        constraints: &Constraints,
        particles: usize,
    ) -> Result<Self, WobbleError> {
        let constraint_particles = Self::rows(constraints, usize::MAX, particles)?;
        let particle_constraints = constraint_particles.transpose();
        Ok(Incidence {
            constraint_particles,
            particle_constraints,
            particle_entries: Vec::new(),
        })
    }

    /// [`Incidence::new`] over the tables a solver sees ([`Constraints::solver_tables`]): the
    /// step-loop tables after them, whose sizes change without a prepare, get no row.
    pub fn of_solver_tables(
        constraints: &Constraints,
        particles: usize,
    ) -> Result<Self, WobbleError> {
        let constraint_particles = Self::rows(constraints, constraints.solver_tables(), particles)?;
        let (particle_constraints, particle_entries) =
            constraint_particles.transpose_with_entries();
        Ok(Incidence {
            constraint_particles,
            particle_constraints,
            particle_entries,
        })
    }

    /// [`Incidence::without_entries`] over the tables a solver sees, as
    /// [`Incidence::of_solver_tables`].
    pub fn of_solver_tables_without_entries(
        constraints: &Constraints,
        particles: usize,
    ) -> Result<Self, WobbleError> {
        let constraint_particles = Self::rows(constraints, constraints.solver_tables(), particles)?;
        let particle_constraints = constraint_particles.transpose();
        Ok(Incidence {
            constraint_particles,
            particle_constraints,
            particle_entries: Vec::new(),
        })
    }

    /// `B` alone, over the first `tables` tables (the distance table counted).
    fn rows(
        constraints: &Constraints,
        tables: usize,
        particles: usize,
    ) -> Result<CsrPattern, WobbleError> {
        let rows: usize = constraints.kinds().take(tables).map(|k| k.len()).sum();
        if rows >= u32::MAX as usize {
            return Err(too_many("constraints", rows));
        }
        if particles >= u32::MAX as usize {
            return Err(too_many("particles", particles));
        }
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0u32);
        let mut nnz = 0usize;
        for kind in constraints.kinds().take(tables) {
            // A kind the step loop projects (a surface volume, which couples every surface
            // particle; a grab's drag) gets an empty row, so coloring, Jacobi gathering and
            // Newton assembly leave it out; the step loop projects it after every iteration
            // (`solver_core::solver::project_step_loop_kinds`).
            let global = kind.projected_by_step_loop();
            for c in 0..kind.len() {
                if !global {
                    nnz += kind.particles(c).len();
                }
                if nnz > u32::MAX as usize {
                    return Err(too_many("incidence entries", nnz));
                }
                offsets.push(nnz as u32);
            }
        }
        let mut indices = Vec::with_capacity(nnz);
        for kind in constraints
            .kinds()
            .take(tables)
            .filter(|k| !k.projected_by_step_loop())
        {
            for c in 0..kind.len() {
                indices.extend_from_slice(kind.particles(c));
            }
        }
        CsrPattern::new(offsets, indices, particles)
    }

    /// Number of constraints (rows of `B`).
    pub fn constraints(&self) -> usize {
        self.constraint_particles.rows()
    }

    /// Number of particles (columns of `B`).
    pub fn particles(&self) -> usize {
        self.constraint_particles.cols()
    }
}

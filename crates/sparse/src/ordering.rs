//! Particle orderings: renumber a body's particles (and its constraints consistently) once.

use solver_core::{Body, WobbleError};
use std::str::FromStr;

/// A particle numbering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ordering {
    /// As the scene built it.
    Natural,
}

impl FromStr for Ordering {
    type Err = WobbleError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "natural" => Ok(Ordering::Natural),
            other => Err(WobbleError::Unsupported(format!(
                "unknown ordering '{other}'; expected natural"
            ))),
        }
    }
}

impl Ordering {
    /// The name the CLI uses.
    pub fn name(&self) -> &'static str {
        match self {
            Ordering::Natural => "natural",
        }
    }
}

/// Renumbers the body's particles; returns the permutation `new_index[old_index]`.
pub fn apply_ordering(body: &mut Body, ordering: Ordering) -> Result<Vec<u32>, WobbleError> {
    match ordering {
        Ordering::Natural => Ok((0..body.len() as u32).collect()),
    }
}

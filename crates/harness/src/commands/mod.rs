//! One module per subcommand: each checks its arguments, runs its measurements (from
//! [`crate::measure`]) and writes its figures (with [`crate::output`]). A subcommand imports
//! another only to run it whole: `report` runs `converge`, `scale`, `cache`, `substeps`,
//! `tethers`, `bodies`, `gpu`, `claims` and `render`; the claims reuse `cache`'s cachegrind runs and
//! `substeps`' splits. None of those imports `report` or `claims`, so there is no circle.

pub mod advise;
pub mod bodies;
pub mod cache;
pub mod claims;
pub mod converge;
pub mod gpu;
pub mod hitch;
pub mod render;
pub mod report;
pub mod scale;
pub mod step;
pub mod substeps;
pub mod tethers;
pub mod threads;

//! Measurement shared by the subcommands: statistics, interleaved timing, in-process runs, a
//! `wobble step` run, residual curves, sweeps of child processes, and the machine they ran on.
//! Nothing here imports a subcommand.

pub mod cachegrind;
pub mod child;
pub mod machine;
pub mod paired;
pub mod residuals;
pub mod sim;
pub mod split;
pub mod stats;
pub mod step;
pub mod sweep;

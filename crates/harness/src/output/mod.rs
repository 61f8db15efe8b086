//! What the subcommands write: CSV row by row, plots (SVG and PNG), JSON on stdout, report
//! sections, progress bars. Nothing here imports a subcommand or a measurement.

pub mod csv;
pub mod json;
pub mod plot;
pub mod progress;
pub mod section;

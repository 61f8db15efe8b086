//! JSON on stdout: what `wobble step`, `threads` and `hitch` print.

use crate::setup::Error;
use serde::Serialize;

/// Prints `report` as JSON: on one line when `compact`, else pretty-printed.
pub fn print_json(report: &impl Serialize, compact: bool) -> Result<(), Error> {
    let text = if compact {
        serde_json::to_string(report)
    } else {
        serde_json::to_string_pretty(report)
    };
    println!("{}", text.map_err(|e| Error::Io(e.to_string()))?);
    Ok(())
}

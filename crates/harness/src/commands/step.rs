//! `wobble step`: runs warmup + steps steps of one scene from rest, times the last `steps`
//! (each step timed whole) and prints one JSON object. The run itself is
//! [`crate::measure::step`], which the sweeps share.

pub use crate::measure::step::StepArgs;

use crate::measure::step::measure_repeated;
use crate::output::json::print_json;
use crate::setup::Error;

/// `wobble step`.
pub fn run(args: &StepArgs) -> Result<(), Error> {
    print_json(&measure_repeated(args)?, args.json)
}

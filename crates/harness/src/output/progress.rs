//! Progress bars on stderr for long sweeps (hidden when stderr is not a terminal) and notes
//! that are printed whether or not a bar is visible.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::HashSet;
use std::sync::Mutex;

static SAID: Mutex<Option<HashSet<String>>> = Mutex::new(None);

/// A bar of `len` steps titled `what`, drawn on stderr.
pub fn bar(len: usize, what: &str) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(Some(len as u64), ProgressDrawTarget::stderr());
    pb.set_style(
        ProgressStyle::with_template("{prefix:>10} [{bar:30}] {pos}/{len} {elapsed:>4} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_prefix(what.to_string());
    pb
}

/// Prints a note on stderr without tearing the bar.
pub fn note(pb: &ProgressBar, text: &str) {
    pb.suspend(|| eprintln!("wobble: {text}"));
}

/// Prints a note once per process, however often a sweep meets the same situation.
pub fn note_once(pb: &ProgressBar, text: &str) {
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    if said
        .get_or_insert_with(HashSet::new)
        .insert(text.to_string())
    {
        note(pb, text);
    }
}

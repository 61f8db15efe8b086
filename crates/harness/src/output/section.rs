//! What a subcommand hands to the report: a titled piece of Markdown and the files behind it.

use std::path::{Path, PathBuf};

/// One subcommand's contribution to REPORT.md.
#[derive(Debug, Clone, Default)]
pub struct Section {
    /// Heading.
    pub title: String,
    /// Markdown body (links relative to the output directory).
    pub body: String,
    /// Every file the subcommand wrote.
    pub files: Vec<PathBuf>,
}

impl Section {
    /// An empty section titled `title`.
    pub fn new(title: &str) -> Self {
        Section {
            title: title.to_string(),
            ..Default::default()
        }
    }

    /// Appends a line (or paragraph) of Markdown.
    pub fn line(&mut self, text: impl AsRef<str>) {
        self.body.push_str(text.as_ref());
        self.body.push('\n');
    }

    /// Records written files.
    pub fn add_files(&mut self, files: impl IntoIterator<Item = PathBuf>) {
        self.files.extend(files);
    }

    /// Prints the files written, one per line, for the command line user.
    pub fn print_files(&self) {
        for f in &self.files {
            println!("wrote {}", f.display());
        }
    }
}

/// `path` relative to `base` when it lies under it (for Markdown links), else as given.
pub fn rel(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// A Markdown link to `path` relative to `base`, named by its file name.
pub fn link(path: &Path, base: &Path) -> String {
    let r = rel(path, base);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| r.clone());
    format!("[{name}]({r})")
}

/// An image embed for a plot (PNG) with links to its SVG twin.
pub fn figure(stem: &Path, base: &Path, alt: &str) -> String {
    let png = stem.with_extension("png");
    let svg = stem.with_extension("svg");
    format!("![{alt}]({}) ({})", rel(&png, base), link(&svg, base))
}

//! Row-by-row CSV output: the header goes out when the file is created and every row is
//! flushed as soon as it is written (one `write` call per row), so a run killed halfway leaves
//! a file whose rows are all complete.

use crate::setup::{io_error, Error};
use serde::Serialize;
use std::fs::File;
use std::path::{Path, PathBuf};

/// A CSV file written one flushed row at a time.
pub struct RowWriter {
    path: PathBuf,
    wtr: csv::Writer<File>,
    columns: usize,
}

impl RowWriter {
    /// Creates (truncates) `path`, writes `header` and flushes it.
    pub fn create(path: &Path, header: &[&str]) -> Result<Self, Error> {
        if let Some(dir) = path.parent() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
            }
        }
        let file = File::create(path).map_err(|e| io_error(path, e))?;
        let mut wtr = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(file);
        wtr.write_record(header).map_err(|e| io_error(path, e))?;
        wtr.flush().map_err(|e| io_error(path, e))?;
        Ok(RowWriter {
            path: path.to_path_buf(),
            wtr,
            columns: header.len(),
        })
    }

    /// Writes one row (a struct whose fields are the header's columns, in order) and flushes.
    pub fn row<T: Serialize>(&mut self, row: &T) -> Result<(), Error> {
        self.wtr
            .serialize(row)
            .map_err(|e| io_error(&self.path, e))?;
        self.wtr.flush().map_err(|e| io_error(&self.path, e))
    }

    /// Writes one row of strings and flushes; the field count must match the header.
    pub fn record<S: AsRef<str>>(&mut self, fields: &[S]) -> Result<(), Error> {
        if fields.len() != self.columns {
            return Err(Error::Io(format!(
                "{}: row of {} fields under a header of {}",
                self.path.display(),
                fields.len(),
                self.columns
            )));
        }
        self.wtr
            .write_record(fields.iter().map(|f| f.as_ref()))
            .map_err(|e| io_error(&self.path, e))?;
        self.wtr.flush().map_err(|e| io_error(&self.path, e))
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The header a serde row struct produces, for checking it against a fixed layout.
#[cfg(test)]
pub fn header_of<T: Serialize>(row: &T) -> Vec<String> {
    let mut wtr = csv::WriterBuilder::new()
        .has_headers(true)
        .from_writer(Vec::new());
    let _ = wtr.serialize(row);
    let bytes = wtr.into_inner().unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    text.lines()
        .next()
        .unwrap_or("")
        .split(',')
        .map(|s| s.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Row {
        a: u32,
        b: f64,
    }

    #[test]
    fn header_then_rows_each_complete_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.csv");
        let mut w = RowWriter::create(&p, &["a", "b"]).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a,b\n");
        w.row(&Row { a: 1, b: 0.5 }).unwrap();
        // Read while the writer is still open: the row is already there.
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a,b\n1,0.5\n");
        assert!(w.record(&["1"]).is_err());
        assert_eq!(header_of(&Row { a: 0, b: 0.0 }), vec!["a", "b"]);
    }
}

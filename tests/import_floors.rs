//! The import graph of every crate's source files has no cycle: each file's imports point down.
//!
//! Read from the code's own `use` lines and the `crate::`/`super::` paths written inline (comments
//! left out), each path resolved to the file of the longest module it names. A `mod.rs` or
//! `lib.rs` naming its own submodules (declaring or re-exporting them) is the folder's face, not
//! an import, and draws no arrow; a submodule importing from its folder's face does. A cycle
//! fails the test with its files and the names that tie them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const CRATES: [&str; 6] = [
    "crates/solver-core",
    "crates/scenes",
    "crates/sparse",
    "crates/gpu",
    "crates/harness",
    "crates/bevy_wobble",
];

/// A crate's files by module path (`["constraints", "distance"]`), and back.
struct Crate {
    files: BTreeMap<Vec<String>, PathBuf>,
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

impl Crate {
    fn read(root: &Path) -> Crate {
        let src = root.join("src");
        let mut paths = Vec::new();
        rust_files(&src, &mut paths);
        let mut files = BTreeMap::new();
        for p in paths {
            let rel = p.strip_prefix(&src).unwrap();
            let mut module: Vec<String> = rel
                .with_extension("")
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            match module.last().map(String::as_str) {
                Some("lib") if module.len() == 1 => module.clear(),
                // A binary's root is a crate of its own; it imports the library by name.
                Some("main") if module.len() == 1 => continue,
                Some("mod") => {
                    module.pop();
                }
                _ => {}
            }
            files.insert(module, p);
        }
        Crate { files }
    }

    /// The file of the longest module `path` names.
    fn resolve(&self, path: &[String]) -> Option<&Vec<String>> {
        (0..=path.len())
            .rev()
            .find_map(|k| self.files.get_key_value(&path[..k]).map(|(m, _)| m))
    }
}

/// The source without comments (line comments, doc comments, block comments) and strings.
fn code_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// Expands one `use` tree (`a::{b, c::{d, e}}`) into its paths.
fn expand(tree: &str, prefix: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head = tree[..open].trim_end_matches("::");
        let inner = &tree[open + 1..tree.rfind('}').unwrap()];
        let mut depth = 0;
        let mut start = 0;
        let base = join(prefix, head);
        for (k, ch) in inner.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&inner[start..k], &base, out);
                    start = k + 1;
                }
                _ => {}
            }
        }
        expand(&inner[start..], &base, out);
    } else if !tree.is_empty() {
        let name = tree.split(" as ").next().unwrap().trim();
        out.push(join(prefix, name));
    }
}

fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}::{b}"),
    }
}

/// Every crate-relative path the file's code names: `use` trees and inline paths.
fn paths_in(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before = rest[..at].chars().last();
        let after = &rest[at + 4..];
        if before.is_none_or(|c| !(c.is_alphanumeric() || c == '_')) {
            if let Some(end) = after.find(';') {
                let tree = &after[..end];
                if tree.starts_with("crate::")
                    || tree.starts_with("super::")
                    || tree.starts_with("self::")
                {
                    expand(tree, "", &mut out);
                }
            }
        }
        rest = after;
    }
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
    for head in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(head) {
            let start = from + at;
            let prev = code[..start].chars().last();
            from = start + head.len();
            if prev.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let end = code[start..]
                .find(|c: char| !ident(c))
                .map_or(code.len(), |e| start + e);
            out.push(code[start..end].trim_end_matches(':').to_string());
        }
    }
    out
}

/// `path` as seen from `module` (`super::` and `self::` resolved), from the crate root.
fn absolute(module: &[String], path: &str) -> Vec<String> {
    let mut parts: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut base: Vec<String> = module.to_vec();
    match parts.first() {
        Some(&"crate") => {
            base.clear();
            parts.remove(0);
        }
        Some(&"self") => {
            parts.remove(0);
        }
        Some(&"super") => {
            while parts.first() == Some(&"super") {
                parts.remove(0);
                base.pop();
            }
        }
        _ => return Vec::new(),
    }
    base.extend(parts.iter().map(|s| s.to_string()));
    base
}

type Graph = BTreeMap<Vec<String>, BTreeMap<Vec<String>, BTreeSet<String>>>;

fn graph_of(krate: &Crate) -> Graph {
    let mut g: Graph = BTreeMap::new();
    for (module, file) in &krate.files {
        let text = std::fs::read_to_string(file).unwrap();
        let is_face = file
            .file_name()
            .is_some_and(|n| n == "mod.rs" || n == "lib.rs");
        let edges = g.entry(module.clone()).or_default();
        for p in paths_in(&code_of(&text)) {
            let abs = absolute(module, &p);
            let Some(target) = krate.resolve(&abs) else {
                continue;
            };
            let own_part = target.len() > module.len() && target[..module.len()] == module[..];
            if target == module || (is_face && own_part) {
                continue;
            }
            edges
                .entry(target.clone())
                .or_default()
                .insert(abs.last().cloned().unwrap_or_default());
        }
    }
    g
}

/// Strongly connected components of more than one file (Tarjan).
fn cycles(g: &Graph) -> Vec<Vec<Vec<String>>> {
    struct State<'a> {
        g: &'a Graph,
        index: BTreeMap<&'a Vec<String>, usize>,
        low: BTreeMap<&'a Vec<String>, usize>,
        stack: Vec<&'a Vec<String>>,
        on: BTreeSet<&'a Vec<String>>,
        out: Vec<Vec<Vec<String>>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a Vec<String>) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.g[v].keys() {
            if !s.g.contains_key(w) {
                continue;
            }
            let w = s.g.get_key_value(w).unwrap().0;
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on.remove(w);
                comp.push(w.clone());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

fn name(m: &[String]) -> String {
    if m.is_empty() {
        "lib".into()
    } else {
        m.join("::")
    }
}

#[test]
fn no_source_file_takes_part_in_an_import_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut report = String::new();
    for c in CRATES {
        let krate = Crate::read(&root.join(c));
        assert!(krate.files.len() > 1, "{c}: no source files found");
        let g = graph_of(&krate);
        for comp in cycles(&g) {
            report.push_str(&format!("{c}: a cycle of {} files:\n", comp.len()));
            let members: BTreeSet<_> = comp.iter().collect();
            for m in &comp {
                for (t, names) in &g[m] {
                    if members.contains(t) {
                        let names: Vec<_> = names.iter().cloned().collect();
                        report.push_str(&format!(
                            "  {} -> {}: {}\n",
                            name(m),
                            name(t),
                            names.join(", ")
                        ));
                    }
                }
            }
        }
    }
    assert!(report.is_empty(), "import cycles:\n{report}");
}

#[test]
fn the_reader_sees_a_cycle_when_there_is_one() {
    let mut g: Graph = BTreeMap::new();
    let (a, b, c) = (
        vec!["a".to_string()],
        vec!["b".to_string()],
        vec!["c".to_string()],
    );
    g.entry(a.clone())
        .or_default()
        .entry(b.clone())
        .or_default();
    g.entry(b.clone())
        .or_default()
        .entry(a.clone())
        .or_default();
    g.entry(c.clone())
        .or_default()
        .entry(a.clone())
        .or_default();
    let found = cycles(&g);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].len(), 2);
    let mut paths = paths_in(&code_of(
        "use crate::x::{y, z::{Q, R as S}};\n// use crate::nope;\nfn f() { super::w::g(); }",
    ));
    paths.sort();
    assert_eq!(
        paths,
        [
            "crate::x",
            "crate::x::y",
            "crate::x::z::Q",
            "crate::x::z::R",
            "super::w::g"
        ]
    );
}

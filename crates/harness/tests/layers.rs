//! The harness's files import in one direction: no file imports a file that imports it,
//! directly or through others, and the shared folders never import a command. An edge A -> B
//! is any path in A that names an item of B: `crate::...`, `super::...` or through a child
//! module A declares (`timing::Plan`), in `use` lines and in code alike; the file of a path is
//! the longest prefix of it that is a module file. A file's own inline `mod tests` counts as
//! the file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Module = Vec<String>;

/// Every module file under `src/` (lib.rs is the crate root; main.rs is left out: it only
/// calls the library).
fn modules(dir: &Path, prefix: &Module, out: &mut BTreeMap<Module, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if path.is_dir() {
            let mut p = prefix.clone();
            p.push(name);
            modules(&path, &p, out);
        } else if let Some(stem) = name.strip_suffix(".rs") {
            let mut m = prefix.clone();
            if !matches!(stem, "mod" | "lib" | "main") {
                m.push(stem.to_string());
            }
            if stem != "main" {
                out.insert(m, std::fs::read_to_string(&path).unwrap());
            }
        }
    }
}

/// The text without comments (line comments, and doc comments with them).
fn code(text: &str) -> String {
    text.lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The paths of `text` that start with one of `heads` (`crate`, `super`, `self`, a child
/// module), each as its segments; a brace group after `::` gives one path per item.
fn paths(text: &str, heads: &[String]) -> Vec<Vec<String>> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts = i == 0 || !(is_ident(chars[i - 1]) || chars[i - 1] == ':');
        if starts && is_ident(chars[i]) {
            let mut j = i;
            let mut segs = Vec::new();
            loop {
                let s = j;
                while j < chars.len() && is_ident(chars[j]) {
                    j += 1;
                }
                segs.push(chars[s..j].iter().collect::<String>());
                if chars[j..].starts_with(&[':', ':']) && j + 2 < chars.len() {
                    j += 2;
                    if chars[j] == '{' {
                        // One level of braces: the first segment of each item.
                        let close = chars[j..].iter().position(|&c| c == '}').unwrap() + j;
                        let inner: String = chars[j + 1..close].iter().collect();
                        for item in inner.split(',') {
                            let first: String =
                                item.trim().chars().take_while(|&c| is_ident(c)).collect();
                            if !first.is_empty() && heads.contains(&segs[0]) {
                                let mut p = segs.clone();
                                p.push(first);
                                out.push(p);
                            }
                        }
                        j = close;
                        break;
                    }
                    if !is_ident(chars[j]) {
                        break;
                    }
                } else {
                    break;
                }
            }
            if segs.len() > 1 && heads.contains(&segs[0]) {
                out.push(segs);
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// The import graph: for each module file, the module files it names.
fn graph(files: &BTreeMap<Module, String>) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut edges = BTreeMap::new();
    for (module, text) in files {
        let children: Vec<String> = files
            .keys()
            .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
            .map(|m| m.last().unwrap().clone())
            .collect();
        let mut heads: Vec<String> = ["crate", "super", "self"].map(String::from).to_vec();
        heads.extend(children);
        let text = code(text);
        // `super::` inside the file's inline `mod tests` is the file itself.
        let tests_at = text.find("mod tests {").unwrap_or(text.len());
        let mut to = BTreeSet::new();
        for (part, inline) in [(&text[..tests_at], 0), (&text[tests_at..], 1)] {
            for p in paths(part, &heads) {
                let mut abs: Module = match p[0].as_str() {
                    "crate" => p[1..].to_vec(),
                    "super" | "self" => {
                        let supers = p.iter().take_while(|s| *s == "super").count();
                        let up = supers.saturating_sub(inline);
                        let rest = p.iter().skip_while(|s| *s == "super" || *s == "self");
                        let mut m = module[..module.len() - up.min(module.len())].to_vec();
                        m.extend(rest.cloned());
                        m
                    }
                    _ => module.iter().chain(&p).cloned().collect(),
                };
                while !abs.is_empty() && !files.contains_key(&abs) {
                    abs.pop();
                }
                if &abs != module {
                    to.insert(abs);
                }
            }
        }
        edges.insert(module.clone(), to);
    }
    edges
}

fn name(m: &Module) -> String {
    if m.is_empty() {
        "lib.rs".into()
    } else {
        m.join("/")
    }
}

#[test]
fn no_file_imports_a_file_that_imports_it() {
    let mut files = BTreeMap::new();
    modules(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &Vec::new(),
        &mut files,
    );
    let edges = graph(&files);
    // The files each file reaches, by a depth-first walk from it.
    for start in edges.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&Module> = edges[start].iter().collect();
        while let Some(m) = stack.pop() {
            if m == start {
                panic!("{} imports itself through other files", name(start));
            }
            if seen.insert(m.clone()) {
                stack.extend(edges[m].iter());
            }
        }
    }
    // The shared folders import downwards only: measure -> output -> setup.
    fn layer(m: &Module) -> &str {
        m.first().map(String::as_str).unwrap_or("lib")
    }
    let rank = |l: &str| {
        ["setup", "output", "measure", "commands", "lib"]
            .iter()
            .position(|x| *x == l)
    };
    for (from, to) in &edges {
        for t in to {
            let (a, b) = (layer(from), layer(t));
            assert!(
                a == b || rank(a) > rank(b),
                "{} ({a}) imports {} ({b}), a layer above it",
                name(from),
                name(t)
            );
        }
    }
    // The known edges are found at all (a parser that sees nothing would pass the above).
    let step = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Module>();
    assert!(
        edges[&step(&["measure", "step", "world"])].contains(&step(&["measure", "step", "args"]))
    );
    assert!(edges[&step(&["commands", "claims", "behaviour"])]
        .contains(&step(&["commands", "claims", "claim"])));
}

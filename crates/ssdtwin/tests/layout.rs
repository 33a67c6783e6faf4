//! The repository's layout rules (issue 31), checked on the sources:
//!
//! - the rooms of the library (the top-level modules of
//!   `crates/ssdtwin/src`) import each other in one direction only:
//!   the leaves (`error`, `mem`, `fsio`, `units`, `perm`) import no room,
//!   `model` (the hardware) only leaves, `spec` (drive files) the model,
//!   `run` the model and spec, `study` all of them; and there is no
//!   circle at all;
//! - no source file under `crates/*/src` is over [`MAX_FILE_LINES`] lines.
//!
//! Imports are read from the text: every `crate::<room>` path and every
//! `super::` path that climbs out of its room, outside comments and
//! `#[cfg(test)]` items (unit tests use the library as a caller does).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Longest source file allowed, lines (`wc -l`).
const MAX_FILE_LINES: usize = 800;

/// Each room and the rooms it may import.
const ALLOWED: &[(&str, &[&str])] = &[
    ("error", &[]),
    ("mem", &[]),
    ("fsio", &[]),
    ("units", &[]),
    ("perm", &[]),
    ("model", &["error", "mem", "fsio", "units", "perm"]),
    ("spec", &["model", "error", "mem", "fsio", "units", "perm"]),
    ("run", &["spec", "model", "error", "mem", "fsio", "units", "perm"]),
    ("study", &["run", "spec", "model", "error", "mem", "fsio", "units", "perm"]),
];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a source file: `model/ftl/mod.rs` is
/// `["model", "ftl"]`, `model/drive.rs` is `["model", "drive"]`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

/// The code of each line with comments, string literals and
/// `#[cfg(test)]` items blanked (line numbers kept).
fn code_lines(text: &str) -> Vec<String> {
    // Blank comments and string contents first, over the whole text.
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !prev_is_ident(&chars, i) {
            // Raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            out.push_str("\"\"");
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                if chars[j] == '\n' {
                    out.push('\n');
                }
                j += 1;
            }
            i = j;
        } else if c == '"' {
            out.push_str("\"\"");
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if chars.get(i) == Some(&'\n') {
                    out.push('\n');
                }
                i += 1;
            }
            i += 1;
        } else if c == '\'' && next.is_some() && chars.get(i + 2) == Some(&'\'') {
            // A character literal such as '"' or '{'.
            out.push_str("' '");
            i += 3;
        } else if c == '\'' && next == Some('\\') {
            out.push_str("' '");
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    // Then blank #[cfg(test)] items: the next item after the attribute,
    // to its closing brace or semicolon.
    let mut lines: Vec<String> = out.split('\n').map(str::to_string).collect();
    let mut n = 0;
    while n < lines.len() {
        if lines[n].trim() == "#[cfg(test)]" {
            let mut depth = 0i32;
            let mut opened = false;
            let mut k = n;
            while k < lines.len() {
                for ch in lines[k].chars() {
                    match ch {
                        '{' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                let ends = (opened && depth == 0) || (!opened && k > n && lines[k].trim_end().ends_with(';'));
                lines[k].clear();
                k += 1;
                if ends {
                    break;
                }
            }
            n = k;
        } else {
            n += 1;
        }
    }
    lines
}

fn prev_is_ident(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

fn ident_at(s: &str) -> &str {
    let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len());
    &s[..end]
}

/// An import of one room by another: where it is written.
#[derive(Debug, Clone)]
struct Use {
    file: String,
    line: usize,
    text: String,
}

/// room -> room -> where.
type Graph = BTreeMap<String, BTreeMap<String, Vec<Use>>>;

fn room_graph() -> Graph {
    let src = src_dir();
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    let rooms: BTreeSet<String> = ALLOWED.iter().map(|(r, _)| r.to_string()).collect();
    let mut graph = Graph::new();
    for path in files {
        let rel = path.strip_prefix(&src).unwrap();
        if rel == Path::new("lib.rs") {
            continue; // the root declares and re-exports every room
        }
        let module = module_path(rel);
        let room = module[0].clone();
        assert!(rooms.contains(&room), "{}: room `{room}` is not in ALLOWED", rel.display());
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in code_lines(&text).iter().enumerate() {
            let mut targets = Vec::new();
            for (at, _) in line.match_indices("crate::") {
                if at > 0 && line[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$') {
                    continue; // `$crate::`, `ssdtwin_crate::`
                }
                targets.push(ident_at(&line[at + 7..]).to_string());
            }
            for (at, _) in line.match_indices("super::") {
                if at > 0 && line[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
                    continue; // counted with the first `super::` of a chain
                }
                let mut rest = &line[at..];
                let mut up = 0;
                while let Some(r) = rest.strip_prefix("super::") {
                    up += 1;
                    rest = r;
                }
                let base = &module[..module.len().saturating_sub(up)];
                let target = match base.first() {
                    Some(r) => r.clone(),
                    None => ident_at(rest).to_string(),
                };
                targets.push(target);
            }
            for t in targets {
                if t != room && rooms.contains(&t) {
                    graph.entry(room.clone()).or_default().entry(t).or_default().push(Use {
                        file: rel.display().to_string(),
                        line: n + 1,
                        text: text.lines().nth(n).unwrap_or("").trim().to_string(),
                    });
                }
            }
        }
    }
    graph
}

fn describe(uses: &[Use]) -> String {
    uses.iter().map(|u| format!("    {}:{}: {}\n", u.file, u.line, u.text)).collect()
}

#[test]
fn rooms_import_in_one_direction() {
    let graph = room_graph();
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut wrong = String::new();
    for (from, tos) in &graph {
        for (to, uses) in tos {
            if !allowed[from.as_str()].contains(&to.as_str()) {
                wrong += &format!("{from} imports {to}:\n{}", describe(uses));
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the rooms' direction:\n{wrong}");
}

#[test]
fn rooms_have_no_circle() {
    let graph = room_graph();
    // Depth-first search; a back edge closes a circle.
    fn visit(
        node: &str,
        graph: &Graph,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
        circles: &mut Vec<Vec<String>>,
    ) {
        if let Some(at) = stack.iter().position(|s| s == node) {
            let mut c = stack[at..].to_vec();
            c.push(node.to_string());
            circles.push(c);
            return;
        }
        if done.contains(node) {
            return;
        }
        stack.push(node.to_string());
        for next in graph.get(node).map(|m| m.keys().cloned().collect::<Vec<_>>()).unwrap_or_default() {
            visit(&next, graph, stack, done, circles);
        }
        stack.pop();
        done.insert(node.to_string());
    }
    let mut circles = Vec::new();
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        visit(node, &graph, &mut Vec::new(), &mut done, &mut circles);
    }
    let mut report = String::new();
    for c in &circles {
        report += &format!("circle: {}\n", c.join(" -> "));
        for w in c.windows(2) {
            report += &format!("  {} imports {}:\n{}", w[0], w[1], describe(&graph[&w[0]][&w[1]]));
        }
    }
    assert!(circles.is_empty(), "{report}");
}

#[test]
fn the_checker_sees_imports() {
    // The scanner itself: a known edge is found, comments are not.
    let graph = room_graph();
    assert!(graph.get("run").is_some_and(|m| m.contains_key("model")), "run -> model not seen");
    let lines = code_lines(
        "// crate::run\nlet a = \"crate::study\"; use crate::model::x;\n#[cfg(test)]\nmod t {\n crate::run\n}\n",
    );
    assert_eq!(lines[0], "");
    assert!(!lines[1].contains("study") && lines[1].contains("crate::model"));
    assert!(lines[4].is_empty());
}

#[test]
fn no_source_file_is_too_long() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut long = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(crates).unwrap().map(|e| e.unwrap().path().join("src")).collect();
    dirs.sort();
    for dir in dirs.into_iter().filter(|d| d.is_dir()) {
        let mut files = Vec::new();
        rs_files(&dir, &mut files);
        for f in files {
            let lines = std::fs::read_to_string(&f).unwrap().lines().count();
            if lines > MAX_FILE_LINES {
                long.push(format!("  {}: {lines} lines", f.strip_prefix(crates).unwrap().display()));
            }
        }
    }
    assert!(long.is_empty(), "source files over {MAX_FILE_LINES} lines:\n{}", long.join("\n"));
}

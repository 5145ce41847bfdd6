//! The layering of `crates/retx/src`: every module may use only the modules below it, so there
//! are no cycles and protocol code never reaches up into the network, the engine or the
//! scenario schema. Lowest first:
//!
//! sim < hw < transport < net < wire < nic < observe < stats < workload < world < config
//!
//! Checked on the source text: each `crate::name` outside comments and outside `#[cfg(test)]`
//! modules must name a lower layer.

use std::path::Path;

const ORDER: [&str; 11] = ["sim", "hw", "transport", "net", "wire", "nic", "observe", "stats", "workload", "world", "config"];

/// The file up to its test module (a `#[cfg(test)]` that opens a `mod`); a `#[cfg(test)]` on
/// a field or a statement does not end the checked code.
fn non_test_code(text: &str) -> &str {
    let mut from = 0;
    while let Some(i) = text[from..].find("#[cfg(test)]") {
        let at = from + i;
        let next = text[at + 12..].trim_start();
        if next.starts_with("mod ") || next.starts_with("pub mod ") {
            return &text[..at];
        }
        from = at + 12;
    }
    text
}

fn uses(text: &str) -> Vec<String> {
    let code = non_test_code(text);
    let mut out = Vec::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or("");
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            let name: String = rest[i + 7..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            out.push(name);
            rest = &rest[i + 7..];
        }
    }
    out
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_module_uses_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    for (rank, layer) in ORDER.iter().enumerate() {
        let mut paths = Vec::new();
        let dir = src.join(layer);
        if dir.is_dir() {
            files(&dir, &mut paths);
        }
        let file = src.join(format!("{layer}.rs"));
        if file.is_file() {
            paths.push(file);
        }
        assert!(!paths.is_empty(), "layer {layer} has no source");
        for p in paths {
            for used in uses(&std::fs::read_to_string(&p).unwrap()) {
                match ORDER.iter().position(|l| *l == used) {
                    Some(r) if r <= rank => {}
                    Some(_) => violations.push(format!("{} uses crate::{used}", p.strip_prefix(&src).unwrap().display())),
                    None => violations.push(format!("{} uses crate::{used}, which is no layer", p.strip_prefix(&src).unwrap().display())),
                }
            }
        }
    }
    assert!(violations.is_empty(), "layering broken:\n{}", violations.join("\n"));
}

#[test]
fn the_checker_sees_a_violation() {
    // A transport file reaching up into config must be caught.
    assert_eq!(uses("use crate::config::Dur;\n// crate::world in a comment\n"), vec!["config"]);
    assert!(uses("#[cfg(test)]\nmod tests { use crate::config; }").is_empty());
}

// ---------------------------------------------------------------------------------------------
// Import circles between files: within `transport/` and `net/`, no file may import (by `use` or
// by a path in its code, outside test modules) a file that imports it back, however long the
// way round. The registry (`transport/schemes.rs`) names every scheme and no scheme names it,
// so a scheme never reaches back through the enums it is stored in.

/// The module path a file is (`transport/loss/left/nic.rs` -> transport, loss, left, nic;
/// a `mod.rs` is its folder).
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

/// The file a module path names, or of the deepest module on it (the rest names items).
fn file_of(src: &Path, path: &[String]) -> Option<std::path::PathBuf> {
    let mut dir = src.to_path_buf();
    let mut found = None;
    for seg in path {
        let file = dir.join(format!("{seg}.rs"));
        let sub = dir.join(seg);
        if sub.join("mod.rs").is_file() {
            found = Some(sub.join("mod.rs"));
            dir = sub;
        } else if file.is_file() {
            found = Some(file);
            dir = sub;
        } else {
            break;
        }
    }
    found
}

/// Every path a piece of code names from `crate`, `super` or `self` (`$crate` counts as
/// `crate`), `use` trees expanded: `use super::{a::X, b::{Y, Z}}` names `super::a::X`,
/// `super::b::Y` and `super::b::Z`.
fn named_paths(code: &str) -> Vec<Vec<String>> {
    fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
        let tree = tree.trim();
        let Some(open) = tree.find('{') else {
            let joined = if prefix.is_empty() { tree.to_string() } else { format!("{prefix}::{tree}") };
            out.push(joined.split(" as ").next().unwrap_or("").trim().to_string());
            return;
        };
        let head = tree[..open].trim().trim_end_matches("::");
        let prefix = match (prefix.is_empty(), head.is_empty()) {
            (true, _) => head.to_string(),
            (false, true) => prefix.to_string(),
            (false, false) => format!("{prefix}::{head}"),
        };
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let (mut depth, mut start) = (0, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&prefix, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        if !inner[start..].trim().is_empty() {
            expand(&prefix, &inner[start..], out);
        }
    }
    let code: String = code.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n").replace("$crate", "crate");
    let mut paths = Vec::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("use ") {
        let before_ok = i == 0 || !rest.as_bytes()[i - 1].is_ascii_alphanumeric() && rest.as_bytes()[i - 1] != b'_';
        let end = rest[i..].find(';').map_or(rest.len(), |e| i + e);
        if before_ok {
            expand("", &rest[i + 4..end], &mut paths);
        }
        rest = &rest[(i + 4).min(end)..];
    }
    let mut i = 0;
    let bytes = code.as_bytes();
    while i < code.len() {
        let starts = ["crate::", "super::", "self::"].iter().find(|p| code[i..].starts_with(**p));
        let word_start = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] == b':');
        if let (Some(_), true) = (starts, word_start) {
            let len = code[i..].find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':')).unwrap_or(code.len() - i);
            paths.push(code[i..i + len].trim_end_matches(':').to_string());
            i += len.max(1);
        } else {
            i += 1;
        }
    }
    paths.into_iter().map(|p| p.split("::").map(str::to_string).filter(|s| !s.is_empty()).collect()).collect()
}

/// The files `rel` imports, as files under `src`.
fn imports(src: &Path, rel: &Path) -> Vec<std::path::PathBuf> {
    let text = std::fs::read_to_string(src.join(rel)).unwrap();
    let here = module_of(rel);
    let mut out = Vec::new();
    for path in named_paths(non_test_code(&text)) {
        let mut module = here.clone();
        let mut segs = path.as_slice();
        match segs.first().map(String::as_str) {
            Some("crate") => {
                module.clear();
                segs = &segs[1..];
            }
            Some("self") => segs = &segs[1..],
            Some("super") => {
                while segs.first().map(String::as_str) == Some("super") {
                    module.pop();
                    segs = &segs[1..];
                }
            }
            _ => continue,
        }
        module.extend(segs.iter().cloned());
        if let Some(f) = file_of(src, &module) {
            let f = f.strip_prefix(src).unwrap().to_path_buf();
            if f != rel {
                out.push(f);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Groups of files that import each other round a circle (strongly connected, more than one).
fn circles(src: &Path, under: &[&str]) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for d in under {
        files(&src.join(d), &mut found);
    }
    let rel: Vec<std::path::PathBuf> = found.iter().map(|f| f.strip_prefix(src).unwrap().to_path_buf()).collect();
    let index: std::collections::HashMap<&std::path::PathBuf, usize> = rel.iter().enumerate().map(|(i, r)| (r, i)).collect();
    let edges: Vec<Vec<usize>> = rel.iter().map(|r| imports(src, r).iter().filter_map(|f| index.get(f).copied()).collect()).collect();
    // Tarjan's strongly connected components.
    struct T<'a> {
        edges: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(t: &mut T, v: usize) {
        t.index[v] = Some(t.next);
        t.low[v] = t.next;
        t.next += 1;
        t.stack.push(v);
        t.on[v] = true;
        for &w in &t.edges[v].clone() {
            match t.index[w] {
                None => {
                    visit(t, w);
                    t.low[v] = t.low[v].min(t.low[w]);
                }
                Some(i) if t.on[w] => t.low[v] = t.low[v].min(i),
                _ => {}
            }
        }
        if Some(t.low[v]) == t.index[v] {
            let mut group = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on[w] = false;
                group.push(w);
                if w == v {
                    break;
                }
            }
            t.out.push(group);
        }
    }
    let n = rel.len();
    let mut t = T { edges: &edges, index: vec![None; n], low: vec![0; n], on: vec![false; n], stack: Vec::new(), next: 0, out: Vec::new() };
    for v in 0..n {
        if t.index[v].is_none() {
            visit(&mut t, v);
        }
    }
    let mut groups: Vec<Vec<String>> = t.out.into_iter().filter(|g| g.len() > 1).map(|g| {
        let mut names: Vec<String> = g.iter().map(|&i| rel[i].display().to_string()).collect();
        names.sort();
        names
    }).collect();
    groups.sort();
    groups
}

#[test]
fn no_file_of_transport_or_net_imports_one_that_imports_it_back() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = circles(&src, &["transport", "net"]);
    assert!(found.is_empty(), "import circles:\n{}", found.iter().map(|g| g.join(" <-> ")).collect::<Vec<_>>().join("\n"));
}

#[test]
fn the_circle_finder_sees_a_circle_and_resolves_paths() {
    // Use trees expand; comments and `$crate` are read as the compiler reads them.
    let p = named_paths("use super::{a::X, b::{Y, Z as W}};\n// crate::world::x\nlet v = $crate::transport::y::f();");
    let joined: Vec<String> = p.iter().map(|s| s.join("::")).collect();
    assert!(joined.contains(&"super::a::X".to_string()) && joined.contains(&"super::b::Z".to_string()), "{joined:?}");
    assert!(joined.contains(&"crate::transport::y::f".to_string()) && !joined.iter().any(|s| s.contains("world")), "{joined:?}");
    // A real file resolves to the files it imports.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let got = imports(&src, Path::new("transport/loss/left/ends.rs"));
    assert!(got.contains(&Path::new("transport/loss/left/nic.rs").to_path_buf()), "{got:?}");
    assert!(got.contains(&Path::new("transport/common/agent.rs").to_path_buf()), "{got:?}");
    // A circle is found: a temporary tree where a imports b and b imports a.
    let dir = std::env::temp_dir().join(format!("retx-circle-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("m")).unwrap();
    std::fs::write(dir.join("m/mod.rs"), "pub mod a;\npub mod b;\n").unwrap();
    std::fs::write(dir.join("m/a.rs"), "use super::b::B;\npub struct A;\n").unwrap();
    std::fs::write(dir.join("m/b.rs"), "pub struct B(crate::m::a::A);\n").unwrap();
    let found = circles(&dir, &["m"]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(found, vec![vec!["m/a.rs".to_string(), "m/b.rs".to_string()]]);
}

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

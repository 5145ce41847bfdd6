//! docs/ADDING_A_SCHEME.md quotes the tutorial scheme's files; this keeps the quotes true. A
//! fenced block whose preceding line names a file (`` `crates/.../tutorial.rs`: ``) must be
//! that file's text: split at its `// ...` lines, each piece appears verbatim in the file, in
//! order. Every Rust block must name its file, so no unchecked Rust reaches the page. The
//! tutorial's code itself compiles and runs in `cargo test --lib tutorial`.

use std::path::{Path, PathBuf};

const ELISION: &str = "// ...";

/// (line of the opening fence, named file if any, language, block text).
fn blocks(doc: &str) -> Vec<(usize, Option<String>, String, String)> {
    let lines: Vec<&str> = doc.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(lang) = lines[i].strip_prefix("```") else {
            i += 1;
            continue;
        };
        let named = i.checked_sub(1).and_then(|p| {
            let l = lines[p].trim_end().strip_suffix("`:")?;
            let start = l.rfind('`')?;
            Some(l[start + 1..].to_string())
        });
        let end = (i + 1..lines.len()).find(|&j| lines[j].starts_with("```")).unwrap_or_else(|| panic!("line {}: unclosed block", i + 1));
        out.push((i + 1, named, lang.trim().to_string(), lines[i + 1..end].join("\n")));
        i = end + 1;
    }
    out
}

#[test]
fn every_block_that_names_a_file_is_in_that_file_verbatim() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = std::fs::read_to_string(root.join("docs/ADDING_A_SCHEME.md")).unwrap();
    let mut checked = 0;
    for (line, named, lang, text) in blocks(&doc) {
        let Some(path) = named else {
            assert_ne!(lang, "rust", "line {line}: a Rust block must name the file it quotes");
            continue;
        };
        let file: PathBuf = root.join(&path);
        let source = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("line {line}: {path}: {e}"));
        let mut from = 0;
        for piece in text.split(&format!("\n{ELISION}\n")) {
            assert!(!piece.trim().is_empty() && !piece.contains(ELISION), "line {line}: an empty piece or a misplaced `{ELISION}`");
            let at = source[from..].find(piece).unwrap_or_else(|| panic!("line {line}: not in {path} (after byte {from}):\n{piece}"));
            from += at + piece.len();
        }
        checked += 1;
    }
    // The page quotes both tutorial files and every file of the registration.
    assert!(checked >= 11, "only {checked} quoted blocks found: is the marker still `path`:?");
}

#[test]
fn a_drifted_quote_is_caught() {
    let doc = "`crates/retx/src/transport/loss/tutorial.rs`:\n```rust\nfn missing() {}\n```\n```toml\na = 1\n```\n";
    let b = blocks(doc);
    assert_eq!(b.len(), 2);
    assert_eq!(b[0].1.as_deref(), Some("crates/retx/src/transport/loss/tutorial.rs"));
    assert_eq!((b[1].1.as_deref(), b[1].2.as_str()), (None, "toml"));
    let source = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/transport/loss/tutorial.rs")).unwrap();
    assert!(!source.contains(&b[0].3));
}

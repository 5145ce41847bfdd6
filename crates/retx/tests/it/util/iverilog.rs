//! Icarus Verilog for the co-simulation tests (`left_rtl_cosim.rs`, `left_gather_cosim.rs`):
//! whether it is installed, and one testbench run over a file of operations.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's `rtl/` folder.
pub fn rtl_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../rtl")
}

pub fn have_iverilog() -> bool {
    Command::new("iverilog").arg("-V").output().is_ok_and(|o| o.status.success())
}

/// Compiles `rtl/tb/{tb}.v` (its top module named `tb`) with `rtl/{module}.v`, the top's
/// `params` and the planted `defines`, runs it on `ops` (one operation a line) in a scratch
/// folder named by `tag`, and returns its output rows.
pub fn run_testbench(tag: &str, tb: &str, module: &str, params: &[(&str, i64)], defines: &[&str], ops: &str) -> Vec<Vec<i64>> {
    let dir = std::env::temp_dir().join(format!("retx-{tb}-sim-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("ops.txt"), ops).unwrap();
    let rtl = rtl_dir();
    let mut cmd = Command::new("iverilog");
    cmd.args(["-g2005", "-o"]).arg(dir.join("tb.vvp"));
    for (name, v) in params {
        cmd.arg(format!("-P{tb}.{name}={v}"));
    }
    for d in defines {
        cmd.arg(format!("-D{d}"));
    }
    cmd.arg(rtl.join(format!("tb/{tb}.v"))).arg(rtl.join(format!("{module}.v")));
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "iverilog: {}", String::from_utf8_lossy(&out.stderr));
    let out = Command::new("vvp").arg("-n").arg(dir.join("tb.vvp")).arg(format!("+ops={}", dir.join("ops.txt").display())).arg(format!("+out={}", dir.join("out.txt").display())).output().unwrap();
    assert!(out.status.success(), "vvp: {}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(dir.join("out.txt")).unwrap_or_else(|e| panic!("no testbench output ({e}): {}", String::from_utf8_lossy(&out.stdout)));
    std::fs::remove_dir_all(&dir).unwrap();
    text.lines().map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect()).collect()
}

//! `retx-bench` refuses bad input the way every retx entry point does: one line naming what
//! is wrong, exit 2, before any simulation runs. (Its timings are a benchmark, `make bench`,
//! never a test.)

use std::process::Command;

fn bench(args: &[&str], repeat: Option<&str>) -> (Option<i32>, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_retx-bench"));
    cmd.args(args).env_remove("RETX_BENCH_REPEAT");
    if let Some(r) = repeat {
        cmd.env("RETX_BENCH_REPEAT", r);
    }
    let out = cmd.output().expect("retx-bench runs");
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_repeat_count_that_is_not_one_to_a_hundred_is_one_line_and_exit_2() {
    for bad in ["x", "0", "101", "-1", ""] {
        let (code, stdout, stderr) = bench(&["fabric"], Some(bad));
        assert_eq!(code, Some(2), "RETX_BENCH_REPEAT={bad:?}");
        assert_eq!(stderr.lines().count(), 1, "one line for {bad:?}: {stderr}");
        assert!(stderr.starts_with("RETX_BENCH_REPEAT:") && stderr.contains("1..=100"), "{stderr}");
        assert!(!stdout.contains("bench fabric"), "nothing ran for {bad:?}");
    }
}

#[test]
fn an_unknown_bench_is_a_usage_line_and_exit_2() {
    let (code, _, stderr) = bench(&["fabirc"], None);
    assert_eq!(code, Some(2));
    assert_eq!(stderr.trim(), "usage: retx-bench fabric|hpcc|fabric-quick");
}

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
    assert_eq!(stderr.trim(), "usage: retx-bench fabric|hpcc|ndp|dragonfly|uet|parallel [ROW]|validate|fabric-quick|queue|file SCENARIO.toml");
}

/// The queue bench needs its feature (the tests build without it, as `make bench` does): one
/// line that says how to build it, exit 2, nothing run.
#[test]
fn the_queue_bench_without_its_feature_says_how_to_build_it() {
    if cfg!(feature = "queue-trace") {
        return; // built with it, the bench runs (a benchmark, never a test)
    }
    let (code, stdout, stderr) = bench(&["queue"], None);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--features queue-trace"), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
}

/// A scenario file of one's own: no path, a file that cannot be read and a scenario with a bad
/// field are each one line and exit 2 (no panic); a good one runs and prints its row.
#[test]
fn a_scenario_file_is_timed_or_refused_in_one_line() {
    let (code, _, stderr) = bench(&["file"], None);
    assert_eq!((code, stderr.trim()), (Some(2), "usage: retx-bench file SCENARIO.toml"));

    let dir = std::env::temp_dir().join(format!("retx-bench-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("missing.toml");
    let (code, _, stderr) = bench(&["file", missing.to_str().unwrap()], None);
    assert_eq!(code, Some(2));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with(missing.to_str().unwrap()), "{stderr}");

    let scenario = |duration: &str| {
        format!(
            "name = \"cli\"\nduration = \"{duration}\"\n[topology]\nkind = \"single-switch\"\nhosts = 2\n\
             [workload]\nkind = \"flow-list\"\nflows = [{{ src = \"h0\", dst = \"h1\", size = \"10KB\" }}]\n"
        )
    };
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, scenario("ten seconds")).unwrap();
    let (code, stdout, stderr) = bench(&["file", bad.to_str().unwrap()], None);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("duration") && !stderr.contains("panicked"), "{stderr}");
    assert!(!stdout.lines().any(|l| l.starts_with("file ")), "no row for a bad scenario: {stdout}");

    let good = dir.join("good.toml");
    std::fs::write(&good, scenario("1ms")).unwrap();
    let (code, stdout, stderr) = bench(&["file", good.to_str().unwrap()], Some("2"));
    assert_eq!(code, Some(0), "{stderr}");
    let row: Vec<&str> = stdout.lines().find(|l| l.starts_with("file ")).expect("a row").split_whitespace().collect();
    let (events, hops): (u64, u64) = (row[4].parse().unwrap(), row[5].parse().unwrap());
    // 10 KB in 1 KB packets and their ACKs, two links each way: at least 40 hops.
    assert!(hops >= 40 && events > hops, "events {events}, hops {hops}: {stdout}");
    std::fs::remove_dir_all(&dir).unwrap();
}

//! LEFT's dual-state bitmap pool in RTL (`rtl/left_pool.v`) against the model
//! (`retx::hw::left_pool::DualPool`), operation by operation.
//!
//! A real LEFT run records the receiving NIC's pool operations (`LeftParams::record_pool_ops`,
//! a switch no scenario file can set); an observer copies them out as the run goes (the NIC is
//! the engine's, so it is read at each endpoint step, the log being cumulative). The first few
//! thousand are written to a file, the testbench (`rtl/tb/left_pool_tb.v`) replays them through
//! the RTL under iverilog, and every output must equal the model's: the operation's result,
//! the pool cycles the model charges (recomputed by the RTL from its own state), the
//! connection's register, its list's length and end pointers (which blocks the priority
//! encoder handed out), the pool's blocks in use and a one-block digest of the bitmap. Bugs
//! planted in the RTL (`define`s) must be caught. Without iverilog the test says so and passes.

use retx::hw::left_pool_trace::{rows, PoolRecord, COLUMNS, INPUTS};
use retx::observe::{Observer, StepBefore};
use retx::transport::SchemeAgent;
use retx::transport::Endpoint;
use retx::transport::NicAgent;
use retx::Scenario;
use std::path::PathBuf;
use crate::util::iverilog::{have_iverilog, run_testbench};

const OPS: usize = 5_000;

/// Copies every host's newly recorded pool operations at each endpoint step.
#[derive(Default)]
struct PoolTap {
    logs: Vec<(usize, Vec<PoolRecord>)>,
}

impl Observer for PoolTap {
    fn wants_steps(&self) -> bool {
        true
    }
    fn endpoint_step(&mut self, host: usize, _flow: u32, _before: &StepBefore, _ep: &Endpoint, nic: &NicAgent) {
        let SchemeAgent::Left(l) = &nic.scheme else {
            return;
        };
        let Some(log) = l.bitmaps.op_log() else {
            return;
        };
        let i = match self.logs.iter().position(|(h, _)| *h == host) {
            Some(i) => i,
            None => {
                self.logs.push((host, Vec::new()));
                self.logs.len() - 1
            }
        };
        let seen = self.logs[i].1.len();
        self.logs[i].1.extend_from_slice(&log.records()[seen..]);
    }
}

/// h0 - s2 = {s4: 1 us | s5: 32 us} = s3 - h1, 200 Gbps everywhere (tests/left.rs's).
fn scenario(tag: &str, left: &str, flows: usize, size: &str) -> (Scenario, PathBuf) {
    let dir = std::env::temp_dir().join(format!("retx-left-rtl-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = "6 4 6\n2 3 4 5\n0 2 200Gbps 0ns 0\n1 3 200Gbps 0ns 0\n2 4 200Gbps 1000ns 0\n4 3 200Gbps 0ns 0\n2 5 200Gbps 32000ns 0\n5 3 200Gbps 0ns 0\n";
    std::fs::write(dir.join("two-paths.txt"), text).unwrap();
    let list: Vec<String> = (0..flows).map(|_| format!("{{ src = \"h0\", dst = \"h1\", size = \"{size}\" }}")).collect();
    let toml = format!(
        "name = \"left-rtl-{tag}\"\nseed = 3\nduration = \"20ms\"\n[topology]\nkind = \"hpcc-file\"\nfile = \"two-paths.txt\"\n[nic]\nmtu = 1000\n[routing]\npolicy = \"spray-random\"\nentropy = \"per-packet\"\n[transport]\nrecovery = \"left\"\ncc = \"none\"\n[recovery.left]\n{left}\n[workload]\nkind = \"flow-list\"\nflows = [{}]\n",
        list.join(", ")
    );
    let mut s = Scenario::from_toml(&toml).unwrap();
    s.base_dir = dir.clone();
    (s, dir)
}

/// The receiving NIC's first `OPS` pool operations in a run, as rows, and the connections.
fn record(tag: &str, left: &str, flows: usize, size: &str) -> (Vec<[i64; 12]>, usize) {
    let (mut s, dir) = scenario(tag, left, flows, size);
    s.recovery.left.record_pool_ops = OPS;
    let mut tap = PoolTap::default();
    let sim = retx::config::build_with_observer(s, &mut tap).unwrap();
    let out = sim.run(&mut |_, _| true).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.counters.bad_deliveries, 0, "{tag}");
    let busy: Vec<&(usize, Vec<PoolRecord>)> = tap.logs.iter().filter(|(_, l)| !l.is_empty()).collect();
    assert_eq!(busy.len(), 1, "{tag}: one receiving NIC");
    rows(&busy[0].1)
}

/// Pool geometry for the testbench's parameters.
#[derive(Clone, Copy)]
struct Geometry {
    pool_blocks: u32,
    regs: u32,
    reg_blocks: u32,
}

/// Runs the testbench on `rows`' inputs (with `defines` planted) and returns its rows: the
/// model's columns, then clocks.
fn simulate(tag: &str, g: Geometry, rows: &[[i64; 12]], defines: &[&str]) -> Vec<Vec<i64>> {
    let ops: String = rows.iter().map(|r| format!("{} {} {} {}\n", r[0], r[1], r[2], r[3])).collect();
    let params = [("POOL_BLOCKS", g.pool_blocks as i64), ("REGS", g.regs as i64), ("REG_BLOCKS", g.reg_blocks as i64), ("CONNS", 16), ("MAX_OPS", rows.len() as i64)];
    run_testbench(tag, "left_pool_tb", "left_pool", &params, defines, &ops)
}

/// The first operation whose RTL outputs differ from the model's: (op, column, model, RTL).
fn divergence(model: &[[i64; 12]], rtl: &[Vec<i64>]) -> Option<(usize, &'static str, i64, i64)> {
    for (i, (m, r)) in model.iter().zip(rtl).enumerate() {
        assert_eq!(&r[..INPUTS], &m[..INPUTS], "op {i}: the testbench read other inputs");
        if let Some(k) = (INPUTS..COLUMNS.len()).find(|&k| m[k] != r[k]) {
            return Some((i, COLUMNS[k], m[k], r[k]));
        }
    }
    assert_eq!(model.len(), rtl.len(), "the testbench answered {} of {} operations", rtl.len(), model.len());
    None
}

/// An operation's kind, from its row.
fn kind(r: &[i64]) -> &'static str {
    match (r[0], r[4], r[6] >= 0, r[5]) {
        (0, 0, _, _) => "update: no room",
        (0, _, true, _) => "update: in a register",
        (0, _, false, _) => "update: in the pool",
        (1, 0, _, _) => "bring_in: refused",
        (1, _, _, _) => "bring_in",
        (2, _, true, _) => "take_run: register",
        (2, _, false, 0) => "take_run: no bitmap",
        (2, _, false, _) => "take_run: list",
        _ => "release",
    }
}

/// Evictions: bring-ins that took a register another connection held.
fn evictions(rows: &[[i64; 12]]) -> usize {
    let mut holder: Vec<Option<i64>> = Vec::new();
    let mut n = 0;
    for r in rows {
        let (conn, reg) = (r[1], r[6]);
        for h in holder.iter_mut() {
            if *h == Some(conn) && reg < 0 {
                *h = None;
            }
        }
        if reg >= 0 {
            let reg = reg as usize;
            if holder.len() <= reg {
                holder.resize(reg + 1, None);
            }
            if holder[reg].is_some_and(|h| h != conn) {
                n += 1;
            }
            holder[reg] = Some(conn);
        }
    }
    n
}

/// Per kind: count, the model's charge (mean, max) and the RTL's clocks (mean, max).
fn report(tag: &str, rtl: &[Vec<i64>]) {
    let mut kinds: Vec<(&str, u64, i64, i64, i64, i64)> = Vec::new();
    for r in rtl {
        let k = kind(r);
        let i = kinds.iter().position(|x| x.0 == k).unwrap_or_else(|| {
            kinds.push((k, 0, 0, 0, 0, 0));
            kinds.len() - 1
        });
        let e = &mut kinds[i];
        (e.1, e.2, e.3, e.4, e.5) = (e.1 + 1, e.2 + r[5], e.3.max(r[5]), e.4 + r[12], e.5.max(r[12]));
    }
    kinds.sort();
    println!("{tag}: {} ops; model charge vs RTL clocks (mean / max)", rtl.len());
    for (k, n, cs, cm, ks, km) in kinds {
        println!("  {k:24} {n:6}   model {:6.2} / {cm:4}   rtl {:6.2} / {km:4}", cs as f64 / n as f64, ks as f64 / n as f64);
    }
    let (cs, ks): (i64, i64) = rtl.iter().fold((0, 0), |(a, b), r| (a + r[5], b + r[12]));
    println!("  {:24} {:6}   model {:6.2}          rtl {:6.2}", "all", rtl.len(), cs as f64 / rtl.len() as f64, ks as f64 / rtl.len() as f64);
}

fn cosim(tag: &str, g: Geometry, rows: &[[i64; 12]]) -> Vec<Vec<i64>> {
    let rtl = simulate(tag, g, rows, &[]);
    if let Some((i, col, m, r)) = divergence(rows, &rtl) {
        // Both sides kept for a look: the model's rows and the RTL's, one line per operation.
        let keep = std::env::temp_dir().join(format!("retx-left-rtl-diverged-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&keep).unwrap();
        let text = |rows: &mut dyn Iterator<Item = Vec<i64>>| rows.map(|r| r.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" ") + "\n").collect::<String>();
        std::fs::write(keep.join("model.txt"), text(&mut rows.iter().map(|r| r.to_vec()))).unwrap();
        std::fs::write(keep.join("rtl.txt"), text(&mut rtl.iter().cloned())).unwrap();
        panic!("{tag}: op {i} ({:?}): {col} is {r} in the RTL, {m} in the model\nmodel {:?}\nrtl   {:?}\n(both in {})", kind(&rows[i]), rows[i], rtl[i], keep.display());
    }
    report(tag, &rtl);
    rtl
}

#[test]
fn the_rtl_pool_matches_the_model_op_by_op_in_left_runs() {
    if !have_iverilog() {
        println!("iverilog not found: the RTL co-simulation is skipped");
        return;
    }
    let default = Geometry { pool_blocks: 256, regs: 3, reg_blocks: 100 };
    // LEFT (scheduler, gather FIFOs) and MELO+ (a bring-in at every miss): 8 connections over
    // 3 registers.
    let (left, conns) = record("left", "", 8, "2MB");
    assert!(conns <= 16 && left.len() == OPS, "{} ops over {conns} connections", left.len());
    let rtl = cosim("left", default, &left);
    let (plus, _) = record("plus", "variant = \"melo-plus\"", 8, "2MB");
    cosim("melo-plus", default, &plus);
    // A pool of 8 blocks and one 64-bit register: updates find no room and bring-ins evict.
    let small = Geometry { pool_blocks: 8, regs: 1, reg_blocks: 8 };
    let (stress, _) = record("stress", "pool_bits = 64\nregisters = 1\nregister_bits = 64\nvariant = \"melo-plus\"", 12, "300KB");
    cosim("stress", small, &stress);
    // Short flows: connections finish and release their registers and blocks.
    let (churn, conns) = record("churn", "", 16, "200KB");
    assert!(conns <= 16);
    cosim("churn", default, &churn);
    let count = |rows: &[[i64; 12]], k: &str| rows.iter().filter(|r| kind(&r[..]) == k).count();
    for (tag, rows) in [("left", &left), ("melo-plus", &plus), ("stress", &stress), ("churn", &churn)] {
        println!("{tag}: {} evictions, {} no-room updates, {} refused bring-ins", evictions(rows), count(rows, "update: no room"), count(rows, "bring_in: refused"));
    }
    // Not vacuous: every kind of operation, evictions, and a pool that runs out.
    for k in ["update: in a register", "update: in the pool", "bring_in", "take_run: register", "take_run: list", "release"] {
        assert!(count(&left, k) + count(&plus, k) + count(&stress, k) + count(&churn, k) > 0, "no {k}");
    }
    assert!(evictions(&plus) > 10 && evictions(&stress) > 10);
    assert!(count(&stress, "update: no room") > 10 && count(&stress, "bring_in: refused") > 0);
    // Planted bugs are caught: the priority encoder handing out the highest free block, the
    // most recently used register evicted.
    for (bug, rows) in [("LEFT_BUG_PRIORITY", &left), ("LEFT_BUG_LRU", &plus)] {
        let bad = simulate(&format!("bug-{bug}"), default, rows, &[bug]);
        let (i, col, m, r) = divergence(rows, &bad).unwrap_or_else(|| panic!("{bug} not caught"));
        println!("{bug} caught at op {i}: {col} {r} (model {m})");
    }
    assert!(!rtl.is_empty());
}

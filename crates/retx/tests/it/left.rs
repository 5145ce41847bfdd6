//! LEFT (APNet'24) on a network: two servers joined by two paths of unequal delay, every
//! packet sprayed over both (the slides' throughput setup). Pure reordering must cost no
//! retransmission and no loss notification; real loss is found by the hole timer and resent
//! selectively; a bitmap that is slow to update slows the NIC.

use crate::util::nets::{s, Flow, Net};
use retx::{RunOutput, Scenario, Simulation};
use std::path::PathBuf;

/// h0 - s2 = {s4: 1 us | s5: `slow_us`} = s3 - h1, 200 Gbps everywhere; `loss` on the slow
/// path's first link.
fn topology(dir: &PathBuf, slow_us: u32, loss: f64) {
    std::fs::create_dir_all(dir).unwrap();
    let text = format!(
        "6 4 6\n2 3 4 5\n0 2 200Gbps 0ns 0\n1 3 200Gbps 0ns 0\n2 4 200Gbps 1000ns 0\n4 3 200Gbps 0ns 0\n2 5 200Gbps {}ns {loss}\n5 3 200Gbps 0ns 0\n",
        slow_us * 1000
    );
    std::fs::write(dir.join("two-paths.txt"), text).unwrap();
}

/// `flows` flows of `size` from h0 to h1 under `recovery` (with `left` as its section).
fn run(tag: &str, slow_us: u32, loss: f64, recovery: &str, left: &str, flows: usize, size: &str) -> RunOutput {
    let dir = std::env::temp_dir().join(format!("retx-left-{tag}-{}", std::process::id()));
    topology(&dir, slow_us, loss);
    let text = Net::custom(&[("kind", s("hpcc-file")), ("file", s("two-paths.txt"))])
        .named(&format!("left-{tag}"), "20ms")
        .top("seed", 3)
        .nic("mtu", 1000)
        .routing("policy", s("spray-random"))
        .routing("entropy", s("per-packet"))
        .transport(recovery, "none")
        .with(&format!("[recovery.left]\n{left}"))
        .with_flows(&vec![Flow::new(0, 1, size, 0); flows]);
    let mut s = Scenario::from_toml(&text).unwrap();
    s.base_dir = dir.clone();
    let out = Simulation::new(s).unwrap().run(&mut |_, _| true).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.counters.bad_deliveries, 0, "{tag}");
    out
}

fn report(out: &RunOutput, name: &str) -> f64 {
    out.scheme_report.iter().find(|(n, _)| *n == name).map(|(_, v)| *v).unwrap_or_else(|| panic!("no {name}"))
}

/// When the last flow finished.
fn last_finish(out: &RunOutput) -> f64 {
    out.flows.iter().map(|f| f.finish.expect("finished").ps() as f64).fold(0.0, f64::max)
}

#[test]
fn pure_reordering_retransmits_nothing_and_notifies_no_loss() {
    let out = run("reorder", 32, 0.0, "left", "", 8, "2MB");
    for f in &out.flows {
        assert!(f.finish.is_some());
        assert_eq!((f.retx_bytes, f.notifications.total(), f.timeouts), (0, 0, 0), "flow {}", f.flow_id);
    }
    assert_eq!(out.counters.drops_loss + out.counters.drops_buffer, 0);
    // Not vacuous: half the packets overtook others, through both paths of the scheduler.
    assert!(report(&out, "left_gathered") > 1_000.0 && report(&out, "left_fast_path") > 1_000.0);
    assert_eq!(report(&out, "left_blocks_in_use_at_end"), 0.0);
    // IRN takes the same reordering for loss.
    let irn = run("reorder-irn", 32, 0.0, "irn", "", 8, "2MB");
    assert!(irn.flows.iter().map(|f| f.retx_bytes).sum::<u64>() > 1_000_000);
    assert!(irn.flows.iter().map(|f| f.notifications.total()).sum::<u64>() > 1_000);
}

#[test]
fn losses_are_found_by_the_hole_timer_and_resent_selectively() {
    // 0.2 % of the slow path's packets are lost.
    let out = run("loss", 8, 0.002, "left", "", 4, "2MB");
    assert!(out.counters.drops_loss > 0);
    let retx: u64 = out.flows.iter().map(|f| f.retx_bytes).sum();
    let nacks: u64 = out.flows.iter().map(|f| f.notifications.total()).sum();
    assert!(nacks > 0, "the hole timer reported the holes");
    // Selective: far fewer packets resent than go-back-N's windows would be (a few per loss).
    assert!(retx > 0 && retx < out.counters.drops_loss * 1_000 * 8, "{retx} B resent for {} drops", out.counters.drops_loss);
    assert!(out.flows.iter().all(|f| f.finish.is_some() && f.delivered_bytes == f.size_bytes));
}

#[test]
fn a_bitmap_that_swaps_on_every_miss_slows_the_nic() {
    // 8 connections through 3 registers: MELO+ brings a bitmap in for every out-of-order
    // packet of an uncached connection; LEFT gathers them and swaps once per batch.
    let left = run("speed-left", 32, 0.0, "left", "", 8, "4MB");
    let plus = run("speed-plus", 32, 0.0, "left", "variant = \"melo-plus\"", 8, "4MB");
    assert!(report(&plus, "left_swaps") > 3.0 * report(&left, "left_swaps"));
    assert!(report(&plus, "left_pool_cycles") > 2.0 * report(&left, "left_pool_cycles"));
    assert!(last_finish(&plus) > 1.1 * last_finish(&left), "MELO+ {} vs LEFT {}", last_finish(&plus), last_finish(&left));
    // The same MELO+ with a bitmap ten times faster keeps up with the line.
    let fast = run("speed-fast", 32, 0.0, "left", "variant = \"melo-plus\"\ncycle = \"500ps\"", 8, "4MB");
    assert!(last_finish(&fast) < 1.03 * last_finish(&left), "fast MELO+ {} vs LEFT {}", last_finish(&fast), last_finish(&left));
}

#[test]
fn left_minus_gathers_every_packet_and_still_delivers_every_byte_in_order() {
    // `run` checks no delivery was out of order, duplicated or wrong.
    let minus = run("minus", 32, 0.0, "left", "variant = \"left-minus\"", 4, "1MB");
    let left = run("minus-left", 32, 0.0, "left", "", 4, "1MB");
    assert!(minus.flows.iter().all(|f| f.finish.is_some() && f.delivered_bytes == f.size_bytes && f.retx_bytes == 0));
    // Every data packet went through a FIFO (4 MB in 1,000 B payloads): in-order ones too.
    let packets = 4.0 * 1_000.0;
    assert!(report(&minus, "left_gathered") >= packets && report(&minus, "left_fast_path") == 0.0);
    assert!(report(&left, "left_gathered") < 0.6 * packets && report(&left, "left_fast_path") > 0.0);
}

#[test]
fn a_calm_connection_threshold_sends_everything_down_the_fast_path() {
    // 32x apart the degree of 8 sprayed connections is far above 0 and below 1,000: with the
    // threshold at 1,000 every out-of-order packet takes the fast path; at 1 the far ones are
    // gathered as without it.
    let calm = run("calm", 32, 0.0, "left", "connection_threshold = 1000", 8, "1MB");
    let strict = run("strict", 32, 0.0, "left", "connection_threshold = 1", 8, "1MB");
    assert_eq!(report(&calm, "left_gathered"), 0.0);
    assert!(report(&strict, "left_gathered") > 500.0);
}

#[test]
fn bad_left_settings_are_refused_naming_the_field() {
    let base = "[topology]\nkind = \"leaf-spine\"\n[transport]\nrecovery = \"left\"\n[workload]\nkind = \"flow-list\"\nflows = [{ src = \"h0\", dst = \"h1\", size = \"1MB\" }]\n[recovery.left]\n";
    for (setting, field) in [
        ("hole_timeout = \"1us\"", "recovery.left.hole_timeout"),
        ("rto = \"50us\"", "recovery.left.rto"),
        ("register_bits = 801", "recovery.left.register_bits"),
        ("fifos = 0", "recovery.left.fifos"),
        ("connection_threshold = 2000000", "recovery.left.connection_threshold"),
        ("cycle = \"0ns\"", "recovery.left.cycle"),
        ("variant = \"left-plus\"", "variant"),
    ] {
        let text = format!("name = \"bad\"\nduration = \"1ms\"\n{base}{setting}\n");
        let err = Scenario::from_toml(&text).and_then(|s| Simulation::new(s).map(drop)).expect_err(setting);
        assert!(err.to_string().contains(field), "{setting}: {err}");
    }
}

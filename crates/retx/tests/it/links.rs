//! Fabric statistics (`[output] links`): per link direction over the run, per tier and per
//! busiest port every interval, per switch. They find a hot link, show where a collective's
//! traffic crosses the fabric, add up to the run's counters, and are off by default.

use retx::stats::links::LinkReport;
use retx::RunOutput;

fn run(text: &str) -> RunOutput {
    retx::run_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn error(text: &str) -> retx::ScenarioError {
    match retx::run_toml(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

/// 2 spines, 2 leaves of 4 hosts (h0..h3 on leaf0, h4..h7 on leaf1), 100 Gbps everywhere.
fn leaf_spine(workload: &str, output: &str, extra: &str) -> String {
    format!(
        r#"
name = "links"
seed = 3
duration = "2ms"
[topology]
kind = "leaf-spine"
spines = 2
leaves = 2
hosts_per_leaf = 4
host_link = "100Gbps"
fabric_link = "100Gbps"
link_delay = "1us"
[transport]
recovery = "irn"
cc = "dcqcn"
{extra}
[workload]
{workload}
[output]
sample_interval = "20us"
{output}
"#
    )
}

fn report(out: &RunOutput) -> &LinkReport {
    out.links.as_ref().expect("[output] links asked for")
}

/// The row of link "A->B".
fn link<'a>(r: &'a LinkReport, name: &str) -> &'a retx::stats::links::LinkRecord {
    r.links.iter().find(|l| r.names.links[l.link as usize].name == name).unwrap_or_else(|| panic!("no row for {name}"))
}

fn tier_bytes(r: &LinkReport, tier: &str) -> u64 {
    let t = r.names.tiers.iter().position(|n| n == tier).unwrap_or_else(|| panic!("no tier {tier}: {:?}", r.names.tiers)) as u16;
    r.links.iter().filter(|l| r.names.links[l.link as usize].tier == t).map(|l| l.tx_bytes).sum()
}

#[test]
fn a_poisson_hotspot_is_the_busiest_link_over_the_run_and_most_often_per_interval() {
    // Poisson arrivals from five hosts into h0 and from one pair elsewhere: leaf0's port
    // toward h0 carries five senders' data.
    let workload = r#"kind = "poisson"
cdf = "websearch_hpcc"
load = 0.15
pairs = [["h1", "h0"], ["h2", "h0"], ["h4", "h0"], ["h5", "h0"], ["h6", "h0"], ["h3", "h7"]]
flows = 60"#;
    let out = run(&leaf_spine(workload, "links = \"all\"\nlink_series = 3", ""));
    let r = report(&out);
    assert_eq!(r.links.len(), 2 * (2 * 2 + 8), "every direction of every link");
    assert_eq!(r.names.tiers, ["leaf-spine", "spine-leaf", "host-up", "host-down"]);
    let busiest = r.links.iter().max_by_key(|l| l.tx_bytes).unwrap();
    assert_eq!(r.names.links[busiest.link as usize].name, "leaf0->h0");
    let hot = link(r, "leaf0->h0");
    assert!(hot.utilisation > 0.2, "{hot:?}");
    assert!(hot.max_queue > 0);
    // Per interval the three busiest ports: the hot one is among them more often than any other.
    let times: std::collections::BTreeSet<_> = r.link_samples.iter().map(|s| s.time).collect();
    assert!(times.len() > 10, "{} intervals with traffic", times.len());
    for t in &times {
        assert!(r.link_samples.iter().filter(|s| s.time == *t).count() <= 3);
    }
    let mut seen = vec![0; r.links.len()];
    for s in &r.link_samples {
        seen[s.link as usize] += 1;
    }
    let most = (0..seen.len()).max_by_key(|&i| seen[i]).unwrap();
    assert_eq!(most as u32, busiest.link, "{seen:?}");
    // The host-down tier's busiest port runs near line rate in some interval.
    let down = r.names.tiers.iter().position(|t| t == "host-down").unwrap() as u16;
    let peak = r.tier_samples.iter().filter(|s| s.tier == down).map(|s| s.max_utilisation).fold(0.0, f64::max);
    assert!(peak > 0.9, "host-down peak utilisation {peak}");
    // Per-switch totals: the leaf of h0 sent the most.
    let leaf0 = r.switches.iter().find(|s| s.switch == "leaf0").unwrap();
    assert!(r.switches.iter().all(|s| s.tx_bytes <= leaf0.tx_bytes), "{:?}", r.switches);
    assert_eq!(r.switches.len(), 4);
    assert_eq!(leaf0.ports, 6, "4 hosts and 2 spines");
}

#[test]
fn a_ring_all_reduce_crosses_the_spines_twice_per_step() {
    // Ranks h0..h7 in a ring: of its 8 sends per step, h3 -> h4 and h7 -> h0 cross the
    // spines (and their ACKs back), so the leaf-spine tier carries a quarter of what the
    // hosts send, and so does the spine-leaf tier.
    let workload = r#"kind = "collective"
[workload.collective]
op = "all-reduce"
ranks = 8
size = "4MB""#;
    let out = run(&leaf_spine(workload, "links = \"all\"", "[nic]\nack_interval = 16"));
    assert!(out.collectives[0].cct().is_some(), "finished");
    let r = report(&out);
    let hosts = tier_bytes(r, "host-up");
    for tier in ["leaf-spine", "spine-leaf"] {
        let share = tier_bytes(r, tier) as f64 / hosts as f64;
        assert!((0.24..0.26).contains(&share), "{tier}: {share}");
    }
    // Every host sends the same (one chunk per step and the ACKs of the one it receives).
    let up: Vec<u64> = (0..8).map(|h| link(r, &format!("h{h}->leaf{}", h / 4)).tx_bytes).collect();
    let (lo, hi) = (*up.iter().min().unwrap() as f64, *up.iter().max().unwrap() as f64);
    assert!(hi / lo < 1.01, "{up:?}");
    // The crossing sends leave leaf0 toward a spine and arrive at h4 by leaf1.
    assert!(link(r, "leaf1->h4").tx_bytes > 0);
    let to_spines: u64 = ["leaf0->spine0", "leaf0->spine1"].iter().map(|n| link(r, n).tx_bytes).sum();
    assert!((to_spines as f64 / up[3] as f64 - 1.0).abs() < 0.01, "{to_spines} vs h3's {}", up[3]);
}

#[test]
fn the_links_add_up_to_the_runs_counters() {
    // A small buffer without PFC: drops and ECN marks; trimming counted at its port.
    let workload = r#"kind = "poisson"
cdf = "websearch_hpcc"
load = 0.6
pairing = "random"
flows = 80"#;
    let out = run(&leaf_spine(workload, "links = \"all\"", "[switch]\nbuffer = \"300KB\"\npfc = { enabled = false }"));
    let r = report(&out);
    let c = &out.counters;
    let drops: u64 = r.links.iter().map(|l| l.counts.drops.total() + l.counts.drops_background).sum();
    assert!(drops > 0, "the scenario drops");
    assert_eq!(drops, c.drops_loss + c.drops_buffer + c.drops_unroutable);
    let kinds = |f: fn(&retx::stats::DropKinds) -> u64| r.links.iter().map(|l| f(&l.counts.drops)).sum::<u64>();
    assert_eq!(kinds(|d| d.scheduled_data), c.drops_by_kind.scheduled_data);
    assert_eq!(kinds(|d| d.control), c.drops_by_kind.control);
    assert_eq!(r.links.iter().map(|l| l.ecn_marks).sum::<u64>(), c.ecn_marks);
    assert_eq!(r.links.iter().map(|l| l.tx_packets).sum::<u64>(), c.packet_hops);
    // Per interval, the tiers add up to the run's figures (the last partial interval too).
    assert_eq!(r.tier_samples.iter().map(|s| s.tx_bytes).sum::<u64>(), r.links.iter().map(|l| l.tx_bytes).sum::<u64>());
    assert_eq!(r.tier_samples.iter().map(|s| s.drops).sum::<u64>(), drops);
    // A switch's totals are its ports'.
    for s in &r.switches {
        let ports: Vec<_> = r.links.iter().filter(|l| r.names.links[l.link as usize].node == s.switch).collect();
        assert_eq!(s.ports as usize, ports.len());
        assert_eq!(s.tx_bytes, ports.iter().map(|l| l.tx_bytes).sum::<u64>());
        assert_eq!(s.max_queue, ports.iter().map(|l| l.max_queue).max().unwrap());
    }

    // Trimming: NDP's switches cut what does not fit, counted at the port that cut it.
    let ndp = leaf_spine(
        "kind = \"flow-list\"\nflows = [{ src = \"h1\", dst = \"h0\", size = \"500KB\" }, { src = \"h2\", dst = \"h0\", size = \"500KB\" }, { src = \"h5\", dst = \"h0\", size = \"500KB\" }]",
        "links = [\"tier:host-down\"]",
        "[switch]\nbuffer = \"20KB\"\npfc = { enabled = false }\ntrim = { queue = 0 }",
    )
    .replace("recovery = \"irn\"\ncc = \"dcqcn\"", "recovery = \"ndp\"\ncc = \"none\"");
    let out = run(&ndp);
    let r = report(&out);
    assert_eq!(r.links.len(), 8, "the host-down tier only");
    assert!(out.counters.packets_trimmed > 0);
    assert_eq!(link(r, "leaf0->h0").counts.trims, out.counters.packets_trimmed);
}

#[test]
fn pause_time_is_counted_at_the_paused_port() {
    // Lossless incast into h0: leaf0 pauses the spines and the hosts that feed it.
    let workload = r#"kind = "flow-list"
flows = [{ src = "h1", dst = "h0", size = "2MB" }, { src = "h2", dst = "h0", size = "2MB" }, { src = "h4", dst = "h0", size = "2MB" }, { src = "h5", dst = "h0", size = "2MB" }]"#;
    let text = leaf_spine(workload, "links = [\"tier:host-up\", \"spine0->leaf0\", \"spine1->leaf0\"]", "[switch]\nbuffer = \"400KB\"\npfc = { enabled = true, xoff = \"40KB\", xon = \"30KB\" }");
    let out = run(&text.replace("cc = \"dcqcn\"", "cc = \"none\""));
    assert!(out.counters.pfc_pauses > 0, "the scenario pauses");
    let r = report(&out);
    assert_eq!(r.links.len(), 10);
    let paused: f64 = r.links.iter().map(|l| l.counts.paused.as_us_f64()).sum();
    assert!(paused > 0.0);
    // Only ports whose peer paused them: senders' host ports and the spines toward leaf0.
    assert_eq!(link(r, "h3->leaf0").counts.paused.0, 0, "h3 sends nothing");
    let sampled: f64 = r.tier_samples.iter().map(|s| s.paused.as_us_f64()).sum();
    assert!((sampled - paused).abs() < 1e-6, "{sampled} vs {paused}");
    // Switches are the leaf's peers here only through the spines' selected ports.
    assert_eq!(r.switches.iter().map(|s| s.switch.as_str()).collect::<Vec<_>>(), ["spine0", "spine1"]);
    assert!(r.switches.iter().all(|s| s.ports == 1));
}

#[test]
fn off_by_default_and_the_tiers_of_every_kind_of_network() {
    let plain = run(&leaf_spine("kind = \"flow-list\"\nflows = [{ src = \"h0\", dst = \"h5\", size = \"100KB\" }]", "", ""));
    assert!(plain.links.is_none());
    let none = run(&leaf_spine("kind = \"flow-list\"\nflows = [{ src = \"h0\", dst = \"h5\", size = \"100KB\" }]", "links = \"none\"", ""));
    assert!(none.links.is_none());
    let tiers = |topology: &str| {
        let text = format!("name = \"t\"\nduration = \"100us\"\n[topology]\n{topology}\n[workload]\nkind = \"flow-list\"\nflows = [{{ src = \"h0\", dst = \"h1\", size = \"10KB\" }}]\n[output]\nlinks = \"all\"\nlink_series = 0\n");
        let out = run(&text);
        let r = out.links.unwrap();
        assert!(r.link_samples.is_empty(), "link_series = 0");
        r.names.tiers
    };
    assert_eq!(tiers("kind = \"fat-tree\"\nk = 4"), ["host-up", "host-down", "tor-agg", "agg-tor", "agg-core", "core-agg"]);
    assert_eq!(tiers("kind = \"single-switch\""), ["host-up", "host-down"]);
    assert_eq!(tiers("kind = \"dragonfly\"\nh = 2"), ["host-up", "host-down", "local", "global"]);
}

#[test]
fn bad_selections_are_refused_naming_the_field() {
    let flow = "kind = \"flow-list\"\nflows = [{ src = \"h0\", dst = \"h5\", size = \"100KB\" }]";
    for (output, field, words) in [
        ("links = \"al\"", "output.links", "is not \"all\", \"none\" or a list"),
        ("links = [\"tier:core\"]", "output.links[0]", "not a tier of this network (its tiers: leaf-spine, spine-leaf, host-up, host-down)"),
        ("links = [\"h0->h1\"]", "output.links[0]", "no link between"),
        ("links = [\"tier:host-up\", \"leaf0\"]", "output.links[1]", "write \"tier:NAME\""),
        ("links = [\"x->leaf0\"]", "output.links[0]", "no node named \"x\""),
        ("link_series = 4", "output.link_series", "needs output.links"),
        ("links = \"all\"\nlink_series = 100001", "output.link_series", "rows (at most 10000000)"),
        ("links = 3", "output.links", "expected \"all\", \"none\" or a list of selectors"),
        ("links = [\"tier:host-up\", 3]", "output.links", "expected a string"),
    ] {
        let e = error(&leaf_spine(flow, output, ""));
        assert!(e.field.starts_with(field) && e.message.contains(words), "{output}: {e}");
        assert!(!e.to_string().contains('\n'), "{e}");
    }
    // Left out, link_series is written in when links are asked for, and only then.
    let mut s = retx::Scenario::from_toml(&leaf_spine(flow, "links = [\"tier:host-up\"]", "")).unwrap();
    retx::config::validate(&mut s).unwrap();
    assert!(s.to_toml().contains("link_series = 16"), "{}", s.to_toml());
    let mut s = retx::Scenario::from_toml(&leaf_spine(flow, "", "")).unwrap();
    retx::config::validate(&mut s).unwrap();
    assert!(!s.to_toml().contains("links =") && !s.to_toml().contains("link_series"), "{}", s.to_toml());
}

/// The 16k-host dragonfly (h = 8: 16,512 hosts, 2,064 routers, 80,496 ports) with every link
/// selected: what the statistics add to the run's peak heap, against the budget's charges for
/// them. `cargo test --profile mutants -p retx --test it links::memory -- --nocapture` prints
/// the figures docs/BENCHMARKS.md quotes.
#[test]
fn memory_on_the_16k_host_dragonfly_is_bounded_by_the_network() {
    use crate::util::alloc::measure;
    let text = |links: &str| {
        format!(
            "name = \"m\"\nduration = \"50us\"\n[topology]\nkind = \"dragonfly\"\nh = 8\nhost_link = \"200Gbps\"\nfabric_link = \"400Gbps\"\n\
             [transport]\nrecovery = \"irn\"\ncc = \"dcqcn\"\n[workload]\nkind = \"flow-list\"\nflows = [{{ src = \"h0\", dst = \"h16511\", size = \"100KB\" }}]\n[output]\n{links}\n"
        )
    };
    let peak = |t: &str| {
        measure(|| {
            let sim = retx::config::build(retx::Scenario::from_toml(t).unwrap()).unwrap();
            let out = sim.run(&mut |_, _| true).unwrap();
            out.links.map(|l| (l.links.len(), l.tier_samples.len(), l.link_samples.len()))
        })
    };
    let (without, none) = peak(&text(""));
    assert!(none.is_none());
    let (with, rows) = peak(&text("links = \"all\""));
    let (links, tier_rows, link_rows) = rows.unwrap();
    assert_eq!(links, 80_496);
    let mut s = retx::Scenario::from_toml(&text("links = \"all\"")).unwrap();
    let topo = retx::config::validate(&mut s).unwrap();
    let charged: u64 = retx::config::budget::estimate(&s, &topo, 1).charges.iter().filter(|c| c.field.starts_with("output.link")).map(|c| c.bytes).sum();
    let extra = with.saturating_sub(without);
    println!(
        "h = 8 dragonfly, links = \"all\": {links} rows, {tier_rows} tier rows, {link_rows} link rows; peak heap {:.1} MB without, {:.1} MB with (+{:.1} MB, {:.0} B a port); budget charges {:.1} MB",
        without as f64 / 1e6,
        with as f64 / 1e6,
        extra as f64 / 1e6,
        extra as f64 / links as f64,
        charged as f64 / 1e6
    );
    assert!(extra as f64 <= 2.0 * charged as f64 && charged as f64 <= 2.0 * extra as f64, "extra {extra} B, charged {charged} B");
}

#[test]
fn the_default_series_shrinks_to_fit_the_rows_allowed() {
    let series = |duration: &str, interval: &str| {
        let text = format!(
            "name = \"t\"\nduration = \"{duration}\"\n[topology]\nkind = \"single-switch\"\n[workload]\nkind = \"flow-list\"\nflows = [{{ src = \"h0\", dst = \"h1\", size = \"10KB\" }}]\n[output]\nsample_interval = \"{interval}\"\nlinks = \"all\"\n"
        );
        let mut s = retx::Scenario::from_toml(&text).unwrap();
        retx::config::validate(&mut s).unwrap();
        s.output.link_series.unwrap()
    };
    assert_eq!(series("1ms", "1us"), 16);
    assert_eq!(series("1000ms", "1us"), 10, "10^6 samples: 10^7 rows");
}

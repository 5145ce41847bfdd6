//! The memory budget (issue 41 item 1): the estimate made before the run
//! (`retx::config::budget`) against the peak heap measured by the counting allocator, within
//! 2x either way, for runs dominated by each charge: flows, the network, flowlet tables, the
//! time series; and a setting legal per switch but not in total refused naming its field.
//! `cargo test --profile mutants -p retx --test it budget -- --nocapture` prints the figures
//! docs/SCENARIO.md ("Memory budget") quotes.

use crate::util::alloc::measure;
use retx::config::budget::{self, estimate};
use retx::config::{validate, workload, Scenario};

/// Runs measure one at a time (their counts are per thread, but not their memory).
static MEASURING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn cm(n: usize) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("budget");
    std::fs::create_dir_all(&dir).unwrap();
    let mut text = format!("Nodes 16\nConnections {n}\n");
    for i in 0..n {
        text += &format!("{}->{} id {} start {} size 4000\n", i % 16, (i + 1) % 16, i + 1, (i as u64) * 1_000_000);
    }
    let p = dir.join(format!("flows-{n}.cm"));
    std::fs::write(&p, text).unwrap();
    p
}

/// (estimate, measured peak) of a scenario's validation, build and run.
fn estimate_and_peak(text: &str) -> (u64, usize) {
    let _one = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let mut s = Scenario::from_toml(text).unwrap();
    let topo = validate(&mut s).unwrap();
    let known = workload::known_flow_count(&s.workload[0], &s.base_dir).unwrap();
    let flows = workload::flow_estimate(&s.workload[0], &topo, &s.base_dir, known).unwrap();
    let e = estimate(&s, &topo, flows);
    let (peak, ()) = measure(|| {
        let sim = retx::config::build(Scenario::from_toml(text).unwrap()).unwrap();
        sim.run(&mut |_, _| true).unwrap();
    });
    (e.total(), peak)
}

fn within_twice(what: &str, text: &str) {
    let (estimate, peak) = estimate_and_peak(text);
    eprintln!("{what}: estimated {estimate} B, measured peak {peak} B ({:.2}x)", estimate as f64 / peak as f64);
    assert!(estimate as f64 <= 2.0 * peak as f64 && peak as f64 <= 2.0 * estimate as f64, "{what}: estimated {estimate} B, measured {peak} B");
}

#[test]
fn the_estimate_is_within_twice_the_measured_peak() {
    for (recovery, pfc) in [("gbn", true), ("ndp", false)] {
        let file = cm(50_000);
        within_twice(
            &format!("50,000 flows ({recovery})"),
            &format!(
                "name = \"b\"\nduration = \"100ms\"\n[topology]\nkind = \"fat-tree\"\nk = 4\nhost_link = \"100Gbps\"\n[switch]\npfc = {{ enabled = {pfc} }}\n\
                 [transport]\nrecovery = \"{recovery}\"\ncc = \"none\"\n[workload]\nkind = \"htsim-cm\"\nfile = \"{}\"\n",
                file.display()
            ),
        );
    }
    for (leaves, policy) in [(200, "ecmp"), (50, "flowlet"), (50, "spray-permutation")] {
        within_twice(
            &format!("{leaves} leaves, {policy}"),
            &format!(
                "name = \"b\"\nduration = \"10us\"\n[topology]\nkind = \"leaf-spine\"\nspines = 8\nleaves = {leaves}\nhosts_per_leaf = 4\n\
                 [routing]\npolicy = \"{policy}\"\nflowlet_entries = 65536\n[workload]\nkind = \"flow-list\"\nflows = [{{ src = \"h0\", dst = \"h5\", size = \"1KB\" }}]\n"
            ),
        );
    }
    // UET with 32,768 entropy values: a penalty byte per value in every sender.
    let file = cm(20_000);
    within_twice(
        "20,000 UET flows of 32,768 paths",
        &format!(
            "name = \"b\"\nduration = \"100ms\"\n[topology]\nkind = \"fat-tree\"\nk = 4\nhost_link = \"100Gbps\"\n[nic]\nmtu = 4000\n\
             [switch]\npfc = {{ enabled = false }}\ntrim = {{ queue = 0, header = \"64B\" }}\n[transport]\nrecovery = \"uet\"\ncc = \"none\"\n\
             [recovery.uet]\npaths = 32768\n[workload]\nkind = \"htsim-cm\"\nfile = \"{}\"\n",
            file.display()
        ),
    );
    // Many spines: each leaf's uplinks toward every other leaf, once (they were a copy per
    // leaf, 4 B x spines x leaves^2, beyond the estimate: 1,000 x 1,000 peaked at 6.2 GB
    // against 1.4 GB estimated).
    within_twice(
        "400 spines x 400 leaves",
        "name = \"b\"\nduration = \"10us\"\n[topology]\nkind = \"leaf-spine\"\nspines = 400\nleaves = 400\nhosts_per_leaf = 1\n\
         [workload]\nkind = \"flow-list\"\nflows = [{ src = \"h0\", dst = \"h5\", size = \"1KB\" }]\n",
    );
    within_twice(
        "4 long flows sampled every us for 10 ms",
        "name = \"b\"\nduration = \"10ms\"\n[topology]\nkind = \"single-switch\"\nhosts = 16\n[output]\nsample_interval = \"1us\"\n\
         [workload]\nkind = \"long-flows\"\npairs = [[\"h0\", \"h1\"], [\"h2\", \"h3\"], [\"h4\", \"h5\"], [\"h6\", \"h7\"]]\n",
    );
}

#[test]
fn a_table_legal_per_switch_is_refused_in_total_naming_its_field() {
    // 2^24 flowlet slots are allowed per switch: on 64 switches that is 17 GB.
    let text = "name = \"b\"\nduration = \"10us\"\n[topology]\nkind = \"leaf-spine\"\nspines = 8\nleaves = 56\nhosts_per_leaf = 1\n\
                [routing]\npolicy = \"flowlet\"\nflowlet_entries = 16777216\n[workload]\nkind = \"flow-list\"\nflows = [{ src = \"h0\", dst = \"h5\", size = \"1KB\" }]\n";
    let mut s = Scenario::from_toml(text).unwrap();
    // Validation without the budget: the topology and tables are legal item by item.
    let topo = retx::config::topology::build(&{ let mut t = s.topology.clone(); retx::config::topology::resolve(&mut t).unwrap(); t }, &s.base_dir).unwrap();
    let e = estimate(&s, &topo, 1);
    assert!(e.total() > 17_000_000_000, "{}", e.total());
    let err = budget::check(&e, 12 << 30).unwrap_err();
    assert_eq!(err.field, "routing.flowlet_entries");
    assert!(err.message.contains("64 switches x 1 x 16777216 slots") && err.message.contains("above the memory budget of 12.9 GB"), "{err}");
    assert!(!err.to_string().contains('\n'));
    // validate() charges it against the machine's budget (half its memory by default).
    if budget::budget().unwrap() < 17_000_000_000 {
        assert_eq!(validate(&mut s).unwrap_err().field, "routing.flowlet_entries");
    }
}

#[test]
fn pools_per_nic_are_charged_on_every_nic() {
    let text = "name = \"b\"\nduration = \"10us\"\n[topology]\nkind = \"single-switch\"\nhosts = 1000\n[transport]\nrecovery = \"melo\"\n\
                [recovery.melo]\npool_bits = 480000\nblock_bits = 8\n[workload]\nkind = \"flow-list\"\nflows = [{ src = \"h0\", dst = \"h5\", size = \"1KB\" }]\n";
    let mut s = Scenario::from_toml(text).unwrap();
    let topo = validate(&mut s).unwrap();
    let e = estimate(&s, &topo, 1);
    let pools = e.charges.iter().find(|c| c.field == "recovery.melo.pool_bits").unwrap();
    assert_eq!(pools.bytes, 1000 * 2 * 60_000 * 12);
}

#[test]
fn watched_queues_senders_and_pools_are_charged_a_row_per_sample() {
    // 1 s at 1 us: 10^6 samples for each watched port, sender and NIC.
    let text = "name = \"b\"\nduration = \"1s\"\n[topology]\nkind = \"single-switch\"\nhosts = 4\n[transport]\nrecovery = \"melo\"\n\
                [output]\nsample_interval = \"1us\"\nqueues = [\"sw0->h1\", \"sw0->h2\"]\ncc_flows = [0]\npools = [\"h1\"]\n\
                [workload]\nkind = \"flow-list\"\nflows = [{ src = \"h0\", dst = \"h1\", size = \"1KB\" }]\n";
    let mut s = Scenario::from_toml(text).unwrap();
    let topo = validate(&mut s).unwrap();
    let e = estimate(&s, &topo, 1);
    let charged = |field: &str| e.charges.iter().find(|c| c.field == field).map(|c| c.bytes);
    let row = budget::BYTES_PER_SAMPLE_ROW;
    assert_eq!((charged("output.queues"), charged("output.cc_flows"), charged("output.pools")), (Some(2 * 1_000_000 * row), Some(1_000_000 * row), Some(1_000_000 * row)));
    // Without them, no such charge.
    let plain = text.replace("queues = [\"sw0->h1\", \"sw0->h2\"]\ncc_flows = [0]\npools = [\"h1\"]\n", "");
    let mut p = Scenario::from_toml(&plain).unwrap();
    let topo = validate(&mut p).unwrap();
    assert!(estimate(&p, &topo, 1).charges.iter().all(|c| !c.field.starts_with("output.queues") && c.field != "output.cc_flows" && c.field != "output.pools"));
}

#[test]
fn threads_are_charged_for_the_partitions_the_network_splits_into() {
    // A k = 4 fat-tree splits into its 4 pods whatever the threads asked: 3 more copies, not
    // 1,023 (which refused a 200,000-flow run as 210 GB).
    let text = |threads: u32| {
        format!(
            "name = \"b\"\nduration = \"10us\"\n[topology]\nkind = \"fat-tree\"\nk = 4\n[run]\nthreads = {threads}\nmin_hosts_per_thread = 1\n\
             [workload]\nkind = \"flow-list\"\nflows = [{{ src = \"h0\", dst = \"h5\", size = \"1KB\" }}]\n"
        )
    };
    let charged = |threads: u32| {
        let mut s = Scenario::from_toml(&text(threads)).unwrap();
        let topo = validate(&mut s).unwrap();
        estimate(&s, &topo, 200_000).charges.iter().find(|c| c.field == "run.threads").map(|c| c.what.clone())
    };
    assert_eq!(charged(1), None);
    for threads in [4, 1024] {
        assert!(charged(threads).unwrap().starts_with("3 more threads"), "{threads}: {:?}", charged(threads));
    }
    assert!(charged(2).unwrap().starts_with("1 more threads"));
}

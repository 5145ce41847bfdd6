//! Several jobs on one fabric (`[[workload]]`): each job named and placed on its hosts, its
//! flows from random streams of its own (adding a job moves no other job's flows), merged in
//! start order; every flow and collective row carries its job; a lone `[workload]` runs
//! exactly as before; errors name the job by its position.

use retx::config::{jobs, validate, Scenario};
use retx::workload::FlowDef;
use std::path::Path;

const FAT_TREE: &str = "[topology]\nkind = \"fat-tree\"\nk = 4\nhost_link = \"100Gbps\"\nlink_delay = \"1us\"\n";

fn text(workloads: &str) -> String {
    format!("name = \"jobs\"\nseed = 7\nduration = \"50ms\"\n{FAT_TREE}[transport]\nrecovery = \"irn\"\ncc = \"dcqcn\"\n{workloads}")
}

const POISSON: &str = "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.3\nflows = 60\n";
const ALLREDUCE: &str = "kind = \"collective\"\nhosts = \"0..8\"\n[workload.collective]\nop = \"all-reduce\"\nranks = 8\nsize = \"1MB\"\n";
const INCAST: &str = "kind = \"incast\"\nreceiver = \"h12\"\nfan_in = 3\nsize = \"50KB\"\nhosts = [\"h12\", \"h13\", \"h14\", \"h15\"]\nstart = \"10us\"\n";

/// The scenario's flows (validated and generated) with its topology's host names.
fn flows(text: &str) -> Vec<(String, String, u64, u64, u32)> {
    let mut s = Scenario::from_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let topo = validate(&mut s).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let w = jobs::flows(&s.workload, &topo, s.seed, Path::new(".")).unwrap();
    let name = |n: usize| topo.nodes[n].name.clone();
    w.flows.iter().map(|f: &FlowDef| (name(f.src), name(f.dst), f.size, f.start.0, f.job)).collect()
}

fn refused(text: &str) -> String {
    match Scenario::from_toml(text) {
        Err(e) => e.to_string(),
        Ok(mut s) => validate(&mut s).map(|_| String::new()).unwrap_or_else(|e| e.to_string()),
    }
}

#[test]
fn a_ring_all_reduce_and_a_poisson_tenant_share_a_fat_tree_with_results_per_job() {
    let t = text(&format!("[[workload]]\nname = \"tenant\"\n{POISSON}\n[[workload]]\nname = \"ar\"\n{ALLREDUCE}"));
    let out = retx::run_toml(&t).unwrap();
    let tenant: Vec<_> = out.flows.iter().filter(|f| f.job == "tenant").collect();
    let ar: Vec<_> = out.flows.iter().filter(|f| f.job == "ar").collect();
    assert_eq!(tenant.len(), 60);
    assert_eq!(ar.len(), 8 * 14, "8 ranks x 2(n - 1) steps");
    assert_eq!(tenant.len() + ar.len(), out.flows.len());
    assert!(out.flows.iter().all(|f| f.finish.is_some()), "every flow finishes");
    // The all-reduce stays on its hosts, h0..h7.
    let on = |h: &str| h[1..].parse::<u32>().unwrap() < 8;
    assert!(ar.iter().all(|f| on(&f.src) && on(&f.dst)));
    // The collective's rows carry its job and its flows only.
    assert_eq!(out.collectives.len(), 1);
    assert_eq!(out.collectives[0].job, "ar");
    assert!(out.collectives[0].cct().is_some());
    assert_eq!(out.collective_steps.len(), 14);
    assert!(out.collective_steps.iter().all(|s| s.job == "ar" && s.flows == 8));
    assert!(out.collective_steps.iter().all(|s| out.flows[s.slowest_flow as usize].job == "ar"));
}

#[test]
fn adding_a_job_moves_no_other_jobs_flows() {
    let one = flows(&text(&format!("[[workload]]\n{POISSON}")));
    let two = flows(&text(&format!("[[workload]]\n{POISSON}\n[[workload]]\n{INCAST}")));
    let three = flows(&text(&format!("[[workload]]\n{POISSON}\n[[workload]]\n{INCAST}\n[[workload]]\n{POISSON}")));
    let job = |v: &[(String, String, u64, u64, u32)], j: u32| v.iter().filter(|f| f.4 == j).cloned().collect::<Vec<_>>();
    assert_eq!(job(&two, 0), one);
    assert_eq!(job(&three, 0), one);
    assert_eq!(job(&three, 1), job(&two, 1));
    assert_eq!(job(&two, 1).len(), 3);
    // The third job is the first one's kind with streams of its own: other flows.
    let third: Vec<_> = job(&three, 2).into_iter().map(|f| (f.0, f.1, f.2, f.3, 0)).collect();
    assert_eq!(third.len(), one.len());
    assert_ne!(third, one);
    // Merged in start order, ties by job position.
    assert!(three.windows(2).all(|w| (w[0].3, w[0].4) <= (w[1].3, w[1].4)), "{three:?}");
}

#[test]
fn one_workload_table_runs_exactly_as_before() {
    // A lone [workload] is the job it always was: the same flows as the job generator alone,
    // and as a one-element [[workload]] array; its resolved scenario writes it back as a table.
    let table = text(&format!("[workload]\n{POISSON}"));
    let array = text(&format!("[[workload]]\n{POISSON}"));
    let mut s = Scenario::from_toml(&table).unwrap();
    let topo = validate(&mut s).unwrap();
    let alone = retx::config::workload::flows(&s.workload[0], &topo, s.seed, Path::new(".")).unwrap().flows;
    assert_eq!(jobs::flows(&s.workload, &topo, s.seed, Path::new(".")).unwrap().flows, alone);
    assert_eq!(flows(&table), flows(&array));
    let resolved = s.to_toml();
    assert!(resolved.contains("\n[workload]\n") && !resolved.contains("[[workload]]"), "{resolved}");
    assert!(!resolved.contains("name = \"job0\""), "defaults stay out of the resolved scenario: {resolved}");
    let a = retx::run_toml(&table).unwrap();
    let b = retx::run_toml(&array).unwrap();
    assert_eq!(a.flows, b.flows);
    assert!(a.flows.iter().all(|f| f.job == "job0"));
    // An array writes back as an array, and reads back to the same jobs.
    let mut two = Scenario::from_toml(&text(&format!("[[workload]]\n{POISSON}\n[[workload]]\n{INCAST}"))).unwrap();
    validate(&mut two).unwrap();
    let again = Scenario::from_toml(&two.to_toml()).unwrap();
    assert_eq!((again.workload.len(), again.workload.array), (2, true));
}

#[test]
fn hosts_place_a_job_by_names_or_positions() {
    // Poisson among h4..h7 only; a .cm's node N is the job's N-th host.
    let t = text("[[workload]]\nkind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.3\nflows = 50\nhosts = \"4..8\"\n[[workload]]\nkind = \"flow-list\"\nhosts = [\"h9\", \"h2\"]\nflows = [{ src = \"h9\", dst = \"h2\", size = \"1KB\" }]\n");
    let v = flows(&t);
    let placed = |h: &str| (4..8).contains(&h[1..].parse::<u32>().unwrap());
    assert!(v.iter().filter(|f| f.4 == 0).all(|f| placed(&f.0) && placed(&f.1)), "{v:?}");
    assert_eq!(v.iter().filter(|f| f.4 == 1).count(), 1);
    // A collective's ranks on the listed hosts, in their order.
    let t = text("[[workload]]\nkind = \"collective\"\nhosts = [\"h15\", \"h3\", \"h9\"]\n[workload.collective]\nop = \"all-reduce\"\nranks = 3\nsize = \"3KB\"\n[[workload]]\nkind = \"flow-list\"\nflows = [{ src = \"h0\", dst = \"h1\", size = \"1KB\" }]\n");
    let v = flows(&t);
    let first: Vec<_> = v.iter().filter(|f| f.4 == 0).take(3).map(|f| (f.0.as_str(), f.1.as_str())).collect();
    assert_eq!(first, [("h15", "h3"), ("h3", "h9"), ("h9", "h15")]);
}

#[test]
fn job_errors_name_the_job_by_position() {
    let cases = [
        (format!("[[workload]]\n{POISSON}\n[[workload]]\nkind = \"incast\"\nreceiver = \"h0\"\nsize = \"1KB\"\n"), "workload[1].senders: incast needs senders"),
        (format!("[[workload]]\n{POISSON}\n[[workload]]\nkind = \"poisson\"\nload = 0.5\nflows = 3\ncdf = \"websearch_hpcc\"\nbogus = 1\n"), "workload[1].bogus: unknown field `bogus`"),
        (format!("[[workload]]\n{POISSON}\n[[workload]]\nkind = \"nope\"\n"), "workload[1].kind: unknown variant `nope`"),
        (format!("[[workload]]\nname = \"a\"\n{POISSON}\n[[workload]]\nname = \"a\"\n{POISSON}"), "workload[1].name: \"a\" is also job 0's: names are unique"),
        (format!("[[workload]]\n{POISSON}\n[[workload]]\nname = \"job0\"\n{POISSON}"), "workload[1].name: \"job0\" is also job 0's"),
        (format!("[[workload]]\nname = \"a b\"\n{POISSON}"), "workload[0].name: \"a b\" is not a plain name"),
        (format!("[[workload]]\n{POISSON}hosts = \"8..4\"\n"), "workload[0].hosts: \"8..4\" is not a range of host positions"),
        (format!("[[workload]]\n{POISSON}hosts = \"0..17\"\n"), "workload[0].hosts: \"0..17\" is not a range"),
        (format!("[[workload]]\n{POISSON}hosts = [\"h1\"]\n"), "workload[0].hosts: 1 host(s): a job needs at least two"),
        (format!("[[workload]]\n{POISSON}hosts = [\"h1\", \"h99\"]\n"), "workload[0].hosts[1]: unknown host \"h99\""),
        (format!("[[workload]]\n{POISSON}hosts = [\"h1\", \"h1\"]\n"), "workload[0].hosts[1]: \"h1\" is listed twice"),
        (format!("[[workload]]\n{POISSON}hosts = 3\n"), "workload[0].hosts: invalid type: integer `3`, expected a list of host names"),
        (format!("[[workload]]\n{POISSON}\n[[workload]]\n{INCAST}receiver = \"h0\"\n").replace("receiver = \"h12\"\n", ""), "workload[1].receiver: \"h0\" is not among the job's hosts (workload[1].hosts)"),
        (format!("[[workload]]\n{POISSON}\n[[workload]]\nhosts = \"0..4\"\n[workload.collective]\nop = \"all-reduce\"\nranks = 8\nsize = \"1MB\"\n").replace("hosts = \"0..4\"\n", "kind = \"collective\"\nhosts = \"0..4\"\n"), "workload[1].collective.ranks: 1 groups of 8 ranks need 8 hosts; workload[1].hosts gives 4"),
        ("[workload]\nkind = \"flow-list\"\nhosts = [\"h0\", \"h1\"]\nflows = [{ src = \"h0\", dst = \"h2\", size = \"1KB\" }]\n".to_string(), "workload.flows[0].dst: \"h2\" is not among the job's hosts (workload.hosts)"),
    ];
    for (w, want) in cases {
        let got = refused(&text(&w));
        assert!(got.starts_with(want), "{w}\n  got:  {got}\n  want: {want}...");
    }
    let empty = format!("name = \"jobs\"\nduration = \"1ms\"\nworkload = []\n{FAT_TREE}");
    assert!(refused(&empty).starts_with("workload: holds no job"), "{}", refused(&empty));
}

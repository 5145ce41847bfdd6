//! MELO's on-chip QP cache (§3.2.5): connections swapped out return their blocks to the pool
//! and get them back when they return.

fn scenario(qp_cache: u32) -> String {
    format!(
        r#"
name = "qp-cache"
seed = 3
duration = "50ms"
[topology]
kind = "single-switch"
hosts = 5
[transport]
recovery = "melo"
[recovery.melo]
qp_cache = {qp_cache}
[[loss]]
at = "switch:sw0"
rate = 0.01
[workload]
kind = "flow-list"
flows = [
  {{ src = "h1", dst = "h0", size = "300KB" }},
  {{ src = "h2", dst = "h0", size = "300KB" }},
  {{ src = "h3", dst = "h0", size = "300KB" }},
  {{ src = "h4", dst = "h0", size = "300KB" }},
]
"#
    )
}

#[test]
fn four_connections_through_a_cache_of_two_all_finish_and_free_the_pool() {
    let out = retx::run_toml(&scenario(2)).unwrap();
    assert!(out.flows.iter().all(|f| f.finish.is_some()), "{:?}", out.flows);
    assert_eq!(out.counters.bad_deliveries, 0);
    // Four interleaved senders into a cache of two: connections keep getting swapped.
    assert!(out.counters.qp_swaps > 10, "swaps = {}", out.counters.qp_swaps);
    assert_eq!((out.scheme_figure("melo_blocks_in_use_at_end").unwrap() as u64), 0);
}

#[test]
fn without_a_cache_limit_nothing_is_swapped() {
    let out = retx::run_toml(&scenario(0)).unwrap();
    assert!(out.flows.iter().all(|f| f.finish.is_some()));
    assert_eq!(out.counters.qp_swaps, 0);
    assert_eq!((out.scheme_figure("melo_blocks_in_use_at_end").unwrap() as u64), 0);
}

//! Every integration test, as modules of one binary: each links the crate as users get it
//! (without `cfg(test)`), and one binary links it once (58 binaries each linked it in release
//! mode, most of a fresh clone's `make test`). Shared fixtures are in `util/` (the two-endpoint
//! harness, scenario builders, the per-thread counting allocator) and `schema/` (the scenario
//! schema's fields for the fuzzers).

#[global_allocator]
static ALLOCATOR: util::alloc::Counting = util::alloc::Counting;

mod schema;
mod util;

mod adding_a_scheme_doc;
mod background;
mod bench_cli;
mod boundaries;
mod budget;
mod cc_dynamics;
mod cm_fuzz;
mod collectives;
mod dcqcn_exchange;
mod dcqcn_presets;
mod dcqcn_trajectory;
mod delivery_check;
mod delivery_props;
mod delivery_props_hw;
mod dragonfly;
mod ecn_marking;
mod efficiency_props;
mod every_scheme;
mod flow_dependencies;
mod flow_memory;
mod gbn_exchange;
mod gbone_exchange;
mod golden;
mod homa;
mod hpcc;
mod hpcc_inputs;
mod htsim_cm;
mod hw_trace;
mod input_fuzz;
mod int_telemetry;
mod irn_exchange;
mod jobs;
mod layers;
mod left;
mod left_gather_cosim;
mod left_rtl_cosim;
mod melo_exchange;
mod ndp;
mod network_features;
mod nic_pipeline;
mod pair_harness;
mod parallel;
mod pcap;
mod pfc_lossless;
mod pool_samples;
mod props_generator;
mod qp_cache;
mod links;
mod queue_samples;
mod scale;
mod scenario_fuzz;
mod simulation;
mod stride_exchange;
mod stride_scenarios;
mod switch_mmu;
mod tcp_delivery;
mod tcp_scenarios;
mod time_series;
mod timely;
mod topologies;
mod trimming;
mod uet;
mod wire_props;
mod xpass;

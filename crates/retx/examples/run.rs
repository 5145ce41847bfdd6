//! Runs a scenario file with the Rust library alone and prints the flow table:
//! `cargo run --release -p retx --example run -- scenario.toml`.

fn main() {
    let path = std::env::args().nth(1).expect("usage: run SCENARIO.toml");
    let text = std::fs::read_to_string(&path).expect("readable scenario file");
    let wall = std::time::Instant::now();
    let out = match retx::run_toml(&text) {
        Ok(out) => out,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    println!("{:>5} {:>6} {:>6} {:>12} {:>10} {:>10} {:>9} {:>10} {:>8} {:>6} {:>6}", "flow", "src", "dst", "size", "fct_us", "ideal_us", "slowdown", "gbps", "retx_MB", "notes", "rto");
    for f in &out.flows {
        println!(
            "{:>5} {:>6} {:>6} {:>12} {:>10.3} {:>10.1} {:>9.2} {:>10.3} {:>8.3} {:>6} {:>6}",
            f.flow_id,
            f.src,
            f.dst,
            f.size_bytes,
            f.fct().map_or(f64::NAN, |t| t.as_us_f64()),
            f.ideal_fct.as_us_f64(),
            f.slowdown().unwrap_or(f64::NAN),
            f.goodput_bps / 1e9,
            f.retx_bytes as f64 / 1e6,
            f.notifications.total(),
            f.timeouts
        );
    }
    let c = &out.counters;
    let secs = wall.elapsed().as_secs_f64();
    println!(
        "end {:.1} us, {} events ({:.1} M/s), {} packet-hops, drops loss {} buffer {}, ecn {}, pauses {}, background sent {} dropped {} delivered {}, bad deliveries {}, wall {:.2}s",
        out.end.as_us_f64(),
        c.events,
        c.events as f64 / secs / 1e6,
        c.packet_hops,
        c.drops_loss,
        c.drops_buffer,
        c.ecn_marks,
        c.pfc_pauses,
        c.background_sent,
        c.background_dropped,
        c.background_delivered,
        c.bad_deliveries,
        secs
    );
    let fcts: Vec<f64> = out.flows.iter().filter_map(|f| f.fct()).map(|t| t.as_us_f64()).collect();
    if !fcts.is_empty() {
        let timeouts: u64 = out.flows.iter().map(|f| f.timeouts).sum();
        println!("mean fct {:.1} us over {} flows, timeouts {}", fcts.iter().sum::<f64>() / fcts.len() as f64, fcts.len(), timeouts);
    }
    for (name, v) in out.scheme_report.iter().filter(|(n, _)| n.starts_with("xpass_") || n.starts_with("left_") || n.starts_with("uet_")) {
        println!("{name} {v}");
    }
}

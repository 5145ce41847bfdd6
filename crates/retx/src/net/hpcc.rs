//! Inputs in the formats of the HPCC ns-3 simulator (alibaba-edu/High-Precision-Congestion-
//! Control, `simulation/mix/`), so retx runs what its users already have.
//!
//! Topology: line 1 `nodes switches links`; line 2 the switch ids; then one line per link
//! `src dst rate delay error_rate` (e.g. `0 320 100Gbps 1000ns 0.000000`). Hosts are the ids
//! that are not switches. Flows: line 1 the count; then `src dst priority_group dst_port
//! size_bytes start_seconds` per line. Node ids are kept: host n is `h{n}`, switch n `sw{n}`.

use super::topology::{LinkSpec, NodeKind, NodeSpec, Topology, MAX_HOSTS, MAX_LINKS, MAX_LINK_DELAY, MAX_LINK_RATE, MAX_NODES, MIN_LINK_RATE};
use crate::transport::FlowSpec;
use crate::sim::units::{parse_rate, parse_time, Time};

fn fields<'a>(line: &'a str, n: usize, what: &str, lineno: usize) -> Result<Vec<&'a str>, String> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() < n {
        return Err(format!("line {lineno}: expected {n} fields ({what}), found {}", f.len()));
    }
    Ok(f)
}

fn number<T: std::str::FromStr>(s: &str, what: &str, lineno: usize) -> Result<T, String> {
    s.parse().map_err(|_| format!("line {lineno}: {what} {s:?} is not a number"))
}

/// Parses an HPCC ns-3 topology file. Counts are checked against the limits of
/// [`super::topology`] before anything is allocated for them, and links as strictly as a
/// scenario's: a rate of at least [`MIN_LINK_RATE`], a delay of at most [`MAX_LINK_DELAY`].
pub fn parse_topology(text: &str) -> Result<Topology, String> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l)).filter(|(_, l)| !l.trim().is_empty());
    let (n1, head) = lines.next().ok_or("the file is empty")?;
    let h = fields(head, 3, "nodes switches links", n1)?;
    let (nodes, switches, links): (usize, usize, usize) =
        (number(h[0], "node count", n1)?, number(h[1], "switch count", n1)?, number(h[2], "link count", n1)?);
    if nodes > MAX_NODES {
        return Err(format!("line {n1}: node count {nodes} is out of range (allowed 2..={MAX_NODES})"));
    }
    if switches > nodes {
        return Err(format!("line {n1}: switch count {switches} is above the node count {nodes}"));
    }
    if nodes - switches > MAX_HOSTS {
        return Err(format!("line {n1}: {} hosts (nodes - switches) is out of range (allowed 2..={MAX_HOSTS})", nodes - switches));
    }
    if links > MAX_LINKS {
        return Err(format!("line {n1}: link count {links} is out of range (allowed 1..={MAX_LINKS})"));
    }
    let mut kind = vec![NodeKind::Host; nodes];
    if switches > 0 {
        let (n2, ids) = lines.next().ok_or("missing the line of switch ids")?;
        let ids = fields(ids, switches, "switch ids", n2)?;
        for id in &ids[..switches] {
            let id: usize = number(id, "switch id", n2)?;
            let k = kind.get_mut(id).ok_or_else(|| format!("line {n2}: switch id {id} is not below the node count {nodes}"))?;
            if *k == NodeKind::Switch {
                return Err(format!("line {n2}: switch id {id} is listed twice"));
            }
            *k = NodeKind::Switch;
        }
    }
    let mut topo = Topology::default();
    topo.nodes = (0..nodes)
        .map(|i| NodeSpec {
            name: if kind[i] == NodeKind::Host { format!("h{i}") } else { format!("sw{i}") },
            kind: kind[i],
        })
        .collect();
    for (n, line) in lines.by_ref().take(links) {
        let f = fields(line, 5, "src dst rate delay error_rate", n)?;
        let (a, b): (usize, usize) = (number(f[0], "src", n)?, number(f[1], "dst", n)?);
        if a >= nodes || b >= nodes || a == b {
            return Err(format!("line {n}: link {a} - {b} does not join two different nodes below {nodes}"));
        }
        let rate = parse_rate(f[2]).ok_or_else(|| format!("line {n}: {:?} is not a rate such as \"100Gbps\"", f[2]))?;
        if rate < MIN_LINK_RATE {
            return Err(format!("line {n}: rate {rate} is too slow (at least {MIN_LINK_RATE})"));
        }
        if rate > MAX_LINK_RATE {
            return Err(format!("line {n}: rate {rate} is too fast (at most {MAX_LINK_RATE})"));
        }
        let delay = parse_time(f[3]).ok_or_else(|| format!("line {n}: {:?} is not a delay such as \"1000ns\"", f[3]))?;
        if delay > MAX_LINK_DELAY {
            return Err(format!("line {n}: delay {delay} is out of range (allowed 0ns..={MAX_LINK_DELAY})"));
        }
        let loss: f64 = number(f[4], "error rate", n)?;
        if !(0.0..=1.0).contains(&loss) {
            return Err(format!("line {n}: error rate {loss} is not in 0..=1"));
        }
        topo.links.push(LinkSpec { a, b, rate, delay, loss });
    }
    if topo.links.len() != links {
        return Err(format!("the header announces {links} links, the file has {}", topo.links.len()));
    }
    if let Some((n, _)) = lines.next() {
        return Err(format!("line {n}: more lines than the {links} links the header announces"));
    }
    let mut degree = vec![0u32; nodes];
    for l in &topo.links {
        degree[l.a] += 1;
        degree[l.b] += 1;
    }
    for (i, node) in topo.nodes.iter().enumerate() {
        if node.kind == NodeKind::Host && degree[i] != 1 {
            return Err(format!("host {i} must have exactly one link (a NIC with one port), it has {}", degree[i]));
        }
    }
    Ok(topo)
}

/// One flow of an HPCC flow file: node ids, destination port, bytes, start time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HpccFlow {
    pub src: usize,
    pub dst: usize,
    /// Written back in the simulator's `fct.txt`.
    pub dport: u32,
    pub size: u64,
    pub start: Time,
}

/// A start time as ns-3 reads it: `Seconds(double)` is whole nanoseconds, the exact value of
/// the double times 1e9 truncated (2.000063546 is 2000063545 ns, the double being just below).
pub fn ns3_seconds(seconds: f64) -> Time {
    let bits = seconds.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let mantissa = (bits & ((1 << 52) - 1)) as u128 | if exp == 0 { 0 } else { 1 << 52 };
    // seconds = mantissa x 2^(exp - 1075), exactly.
    let shift = exp.max(1) - 1075;
    let ns = mantissa * 1_000_000_000;
    let ns = if shift >= 0 { ns << shift.min(40) } else if shift > -128 { ns >> -shift } else { 0 };
    Time::from_ns(ns.min(u64::MAX as u128 / 1000) as u64)
}

/// Latest start time in a flow file, in seconds (the longest `duration` a scenario may have).
pub const MAX_START_SECONDS: f64 = 1e6;

/// Most flows a flow file may hold (the most any workload may generate).
pub const MAX_FLOWS: usize = 10_000_000;

/// Parses an HPCC ns-3 flow file; sizes are at most [`FlowSpec::MAX_SIZE`].
pub fn parse_flows(text: &str) -> Result<Vec<HpccFlow>, String> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l)).filter(|(_, l)| !l.trim().is_empty());
    let (n1, head) = lines.next().ok_or("the file is empty")?;
    let count: usize = number(head.trim(), "flow count", n1)?;
    if !(1..=MAX_FLOWS).contains(&count) {
        return Err(format!("line {n1}: flow count {count} is out of range (allowed 1..={MAX_FLOWS})"));
    }
    let mut flows = Vec::new();
    for (n, line) in lines.by_ref().take(count) {
        let f = fields(line, 6, "src dst priority_group dst_port size start_seconds", n)?;
        let seconds: f64 = number(f[5], "start time", n)?;
        if !(0.0..=MAX_START_SECONDS).contains(&seconds) {
            return Err(format!("line {n}: start time {seconds} is out of range (allowed 0..={MAX_START_SECONDS} seconds)"));
        }
        let size: u64 = number(f[4], "size", n)?;
        if size == 0 {
            return Err(format!("line {n}: a flow of 0 bytes"));
        }
        if size > FlowSpec::MAX_SIZE {
            return Err(format!("line {n}: size {size} is out of range (allowed 1..={} bytes)", FlowSpec::MAX_SIZE));
        }
        flows.push(HpccFlow {
            src: number(f[0], "src", n)?,
            dst: number(f[1], "dst", n)?,
            dport: number(f[3], "dst_port", n)?,
            size,
            start: ns3_seconds(seconds),
        });
    }
    if flows.len() != count {
        return Err(format!("the header announces {count} flows, the file has {}", flows.len()));
    }
    if let Some((n, _)) = lines.next() {
        return Err(format!("line {n}: more lines than the {count} flows the header announces"));
    }
    Ok(flows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_topology_and_its_flows() {
        let topo = parse_topology("4 2 3\n2 3\n0 2 100Gbps 1000ns 0\n1 3 100Gbps 1000ns 0.01\n2 3 400Gbps 1us 0\n").unwrap();
        let names: Vec<&str> = topo.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["h0", "h1", "sw2", "sw3"]);
        assert_eq!(topo.links[1].loss, 0.01);
        assert_eq!(topo.links[2].delay, Time::from_us(1));
        let flows = parse_flows("2\n0 1 3 100 1437685 2.000001074\n1 0 3 100 5000 2.5\n").unwrap();
        assert_eq!(flows[0], HpccFlow { src: 0, dst: 1, dport: 100, size: 1_437_685, start: ns3_seconds(2.000001074) });
        assert_eq!(flows[1].start, Time::from_ms(2500));
        // Whole nanoseconds, truncated from the double's exact value, as ns-3's fct.txt shows.
        assert_eq!((ns3_seconds(2.000063546), ns3_seconds(2.000001074)), (Time::from_ns(2_000_063_545), Time::from_ns(2_000_001_074)));
        assert_eq!((ns3_seconds(0.0), ns3_seconds(2.5)), (Time::ZERO, Time::from_ms(2500)));
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(parse_topology("3 1 2\n2\n0 2 100Gbs 1000ns 0\n").unwrap_err(), "line 3: \"100Gbs\" is not a rate such as \"100Gbps\"");
        assert!(parse_topology("3 1 2\n2\n0 2 100Gbps 1000ns 0\n").unwrap_err().contains("announces 2 links"));
        assert!(parse_flows("1\n0 1 3 100 x 2.0\n").unwrap_err().starts_with("line 2: size"));
    }
}

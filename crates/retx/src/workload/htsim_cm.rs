//! htsim's connection matrices (`.cm`), the traffic files of the htsim simulator
//! (Broadcom/csg-htsim, `sim/datacenter/connection_matrix.cpp` reads them), so retx runs what
//! htsim users already have. Sans-IO: text in, a [`ConnectionMatrix`] out.
//!
//! ```text
//! # a comment line
//! Nodes 4
//! Connections 3
//! Triggers 1
//! 0->1 id 1 start 0 size 100000 send_done_trigger 1
//! 1->2 id 2 trigger 1 size 100000
//! 2->3 id 3 start 5000000 size 2000 prio 3
//! trigger id 1 oneshot
//! ```
//!
//! Headers first: `Nodes N`, `Connections C` (the flow count), optionally `Triggers T` (the
//! count of trigger lines) and `Failures 0`. Then a line per flow, `SRC->DST` and, in any order,
//! `id ID` (htsim's flow id, optional, unique), `start T` (picoseconds) or `trigger TID` (start
//! when that trigger fires), `size BYTES`, optionally `send_done_trigger TID` (signal TID when
//! every byte is acknowledged), `recv_done_trigger TID` (when the receiver has every byte),
//! `prio P` and `addon` (both read and ignored). And a line per trigger: `trigger id TID` and
//! `oneshot` (fires its flows at the first signal), `multishot` (starts its next flow, in file
//! order, at each signal) or `barrier count N` (fires its flows at the N-th signal; `barrier N`
//! is read too).
//!
//! Checked as htsim checks, and more strictly where htsim would crash, hang or silently read
//! garbage: counts that disagree with the headers, unknown tokens, a flow with both or neither
//! of `start` and `trigger`, id 0, duplicate flow or trigger ids, a trigger used but not
//! defined, a barrier fewer signals reach than it needs, flows that wait for each other in a
//! cycle, and (not in htsim) node ids outside `Nodes`, a flow from a node to itself, size 0.
//! Every error is one line, `line N: what is wrong`. Counts are bounded before anything is
//! stored for them ([`MAX_FLOWS`]), so no file makes the reader grow without bound.

use super::{Dependencies, DependencyError, Done, FlowDef, Signal, Trigger, TriggerKind};
use crate::sim::units::{Time, MAX_TIME};
use crate::transport::FlowSpec;
use std::collections::HashMap;

/// The most flows (and trigger lines) a matrix may have: the most a workload may start.
pub const MAX_FLOWS: usize = 10_000_000;
/// The largest `Nodes`: the most hosts a network may have.
pub const MAX_NODES: usize = crate::net::topology::MAX_HOSTS;

/// How a flow starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// At this time.
    At(Time),
    /// When trigger `triggers[i]` fires (`i`, an index into [`ConnectionMatrix::triggers`]).
    Trigger(usize),
}

/// One flow line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CmFlow {
    /// Its line in the file, from 1.
    pub line: usize,
    /// htsim's flow id (`id`), if the line gives one.
    pub id: Option<u32>,
    /// htsim node ids.
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: Start,
    /// The triggers it signals (indices into [`ConnectionMatrix::triggers`]) when every byte is
    /// acknowledged / when its receiver has every byte.
    pub send_done: Option<usize>,
    pub recv_done: Option<usize>,
}

/// One trigger line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CmTrigger {
    pub line: usize,
    /// htsim's trigger id.
    pub id: u32,
    pub kind: TriggerKind,
}

/// A parsed, self-consistent connection matrix: flows and triggers in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectionMatrix {
    /// The `Nodes` header: every node id is below it.
    pub nodes: u32,
    pub flows: Vec<CmFlow>,
    pub triggers: Vec<CmTrigger>,
}

const FLOW_TOKENS: &str = "start, trigger, size, id, send_done_trigger, recv_done_trigger, prio, addon";

/// A header line's value and the line it is on.
#[derive(Default)]
struct Headers {
    nodes: Option<(u32, usize)>,
    connections: Option<(usize, usize)>,
    triggers: Option<(usize, usize)>,
}

/// A flow line as written: trigger references are htsim trigger ids until resolved.
struct RawFlow {
    flow: CmFlow,
    trigger: Option<u32>,
    send_done: Option<u32>,
    recv_done: Option<u32>,
}

fn value<'a, I: Iterator<Item = &'a str> + ?Sized>(tokens: &mut I, key: &str, n: usize) -> Result<&'a str, String> {
    tokens.next().ok_or_else(|| format!("line {n}: `{key}` needs a value"))
}

fn number<T: std::str::FromStr>(s: &str, what: &str, n: usize) -> Result<T, String> {
    s.parse().map_err(|_| {
        // A whole number too wide for its field is out of range, not "not a number" (the
        // .cm fuzzer, issue 41).
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            let bits = std::mem::size_of::<T>() * 8;
            format!("line {n}: {what} {s} is out of range (at most 2^{bits} - 1)")
        } else {
            format!("line {n}: {what} {s:?} is not a number")
        }
    })
}

/// A trigger id: a number from 1 (htsim reads 0 as "no trigger").
fn trigger_id(s: &str, n: usize) -> Result<u32, String> {
    match number::<u32>(s, "trigger id", n)? {
        0 => Err(format!("line {n}: trigger id 0 is not allowed (ids start at 1; htsim reads 0 as no trigger)")),
        t => Ok(t),
    }
}

/// What a `start` number counts: htsim_ndp reads picoseconds (`NdpSrc::connect(.., start)`);
/// uet-htsim's htsim_uec reads whole microseconds (`timeFromUs((uint32_t)crt->start)`,
/// main_uec.cpp:913, 986), though connection_matrix.cpp's comment says picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StartUnit {
    #[default]
    Ps,
    Us,
}

/// `start T` in `unit`: picoseconds, a whole number or a decimal one (htsim reads a float),
/// rounded to the picosecond; or microseconds, a float cast to a 32-bit whole number as
/// htsim_uec casts it (40.7 starts at 40 us).
fn start_in(s: &str, n: usize, unit: StartUnit) -> Result<Time, String> {
    if unit == StartUnit::Us {
        let us: f64 = s.parse().map_err(|_| format!("line {n}: start {s:?} is not a time in microseconds"))?;
        if !(0.0..=u32::MAX as f64).contains(&us) || Time::from_us(us as u64) > MAX_TIME {
            return Err(format!("line {n}: start {s:?} is out of range (allowed 0..={} us: htsim_uec casts it to 32 bits)", u32::MAX));
        }
        return Ok(Time::from_us(us as u32 as u64));
    }
    start_time(s, n)
}

/// `start T`: picoseconds, a whole number or a decimal one (htsim reads a float), rounded to
/// the picosecond.
fn start_time(s: &str, n: usize) -> Result<Time, String> {
    let range = || format!("line {n}: start {s:?} is out of range (allowed 0..={} ps)", MAX_TIME.0);
    if let Ok(ps) = s.parse::<u64>() {
        return if ps <= MAX_TIME.0 { Ok(Time(ps)) } else { Err(range()) };
    }
    let ps: f64 = s.parse().map_err(|_| format!("line {n}: start {s:?} is not a time in picoseconds"))?;
    if !(0.0..=MAX_TIME.0 as f64).contains(&ps) {
        return Err(range());
    }
    Ok(Time(ps.round() as u64))
}

/// Sets a field given once per line.
fn once<T>(slot: &mut Option<T>, v: T, key: &str, n: usize) -> Result<(), String> {
    if slot.is_some() {
        return Err(format!("line {n}: `{key}` is given twice"));
    }
    *slot = Some(v);
    Ok(())
}

fn parse_flow(first: &str, rest: &mut dyn Iterator<Item = &str>, nodes: u32, n: usize, unit: StartUnit) -> Result<RawFlow, String> {
    let (s, d) = first.split_once("->").expect("a flow line has ->");
    let node = |x: &str| -> Result<u32, String> {
        let id: u32 = x.parse().map_err(|_| format!("line {n}: {x:?} is not a node id (a flow line starts SRC->DST, e.g. 0->1)"))?;
        if id >= nodes {
            return Err(format!("line {n}: node {id} is out of range (the file says Nodes {nodes}: 0..={})", nodes - 1));
        }
        Ok(id)
    };
    let (src, dst) = (node(s)?, node(d)?);
    if src == dst {
        return Err(format!("line {n}: a flow from node {src} to itself"));
    }
    let (mut start, mut size, mut id, mut trigger, mut send_done, mut recv_done, mut prio, mut addon) = (None, None, None, None, None, None, None, None);
    while let Some(key) = rest.next() {
        match key {
            "start" => once(&mut start, start_in(value(rest, key, n)?, n, unit)?, key, n)?,
            "size" => {
                let v: u64 = number(value(rest, key, n)?, "size", n)?;
                if v == 0 || v > FlowSpec::MAX_SIZE {
                    return Err(format!("line {n}: size {v} is out of range (allowed 1..={} bytes; htsim runs a size 0 flow without end, retx's long-flows does that)", FlowSpec::MAX_SIZE));
                }
                once(&mut size, v, key, n)?
            }
            "id" => {
                let v: u32 = number(value(rest, key, n)?, "flow id", n)?;
                if v == 0 {
                    return Err(format!("line {n}: flow id 0 is not allowed (ids start at 1)"));
                }
                once(&mut id, v, key, n)?
            }
            "trigger" => once(&mut trigger, trigger_id(value(rest, key, n)?, n)?, key, n)?,
            "send_done_trigger" => once(&mut send_done, trigger_id(value(rest, key, n)?, n)?, key, n)?,
            "recv_done_trigger" => once(&mut recv_done, trigger_id(value(rest, key, n)?, n)?, key, n)?,
            "prio" => once(&mut prio, number::<i32>(value(rest, key, n)?, "prio", n)?, key, n)?,
            "addon" => once(&mut addon, (), key, n)?,
            _ => return Err(format!("line {n}: unknown token {key:?} in a flow line (known: {FLOW_TOKENS})")),
        }
    }
    let size = size.ok_or_else(|| format!("line {n}: a flow without `size BYTES`"))?;
    let start = match (start, trigger) {
        (Some(_), Some(_)) => return Err(format!("line {n}: a flow with both `start` and `trigger`; give one")),
        (None, None) => return Err(format!("line {n}: a flow with neither `start T` nor `trigger TID`")),
        (Some(t), None) => Start::At(t),
        (None, Some(_)) => Start::Trigger(usize::MAX), // resolved once every trigger is read
    };
    Ok(RawFlow { flow: CmFlow { line: n, id, src, dst, size, start, send_done: None, recv_done: None }, trigger, send_done, recv_done })
}

fn parse_trigger(rest: &mut dyn Iterator<Item = &str>, n: usize) -> Result<CmTrigger, String> {
    let mut rest = rest.peekable();
    let (mut id, mut kind, mut count): (Option<u32>, Option<&str>, Option<u32>) = (None, None, None);
    while let Some(key) = rest.next() {
        match key {
            "id" => once(&mut id, trigger_id(value(&mut rest, key, n)?, n)?, key, n)?,
            "oneshot" | "multishot" | "barrier" => {
                if let Some(k) = kind {
                    return Err(format!("line {n}: a trigger is {k} and {key}; give one kind"));
                }
                kind = Some(key);
                // `barrier N`, as well as htsim's `barrier count N`.
                if let Some(c) = rest.next_if(|t| key == "barrier" && t.parse::<u32>().is_ok()) {
                    once(&mut count, number(c, "count", n)?, "count", n)?;
                }
            }
            "count" => once(&mut count, number(value(&mut rest, key, n)?, "count", n)?, key, n)?,
            _ => return Err(format!("line {n}: unknown token {key:?} in a trigger line (known: id, oneshot, multishot, barrier, count)")),
        }
    }
    let id = id.ok_or_else(|| format!("line {n}: a trigger without `id TID`"))?;
    let kind = match (kind, count) {
        (None, _) => return Err(format!("line {n}: trigger {id} has no kind (oneshot, multishot or barrier)")),
        (Some("oneshot"), _) => TriggerKind::OneShot,
        (Some("multishot"), _) => TriggerKind::MultiShot,
        (_, None | Some(0)) => return Err(format!("line {n}: barrier {id} needs `count N` (N >= 1: the signals it waits for)")),
        (_, Some(c)) => TriggerKind::Barrier(c),
    };
    Ok(CmTrigger { line: n, id, kind })
}

/// Parses a connection matrix; the error is one line, `line N: what is wrong`.
pub fn parse(text: &str) -> Result<ConnectionMatrix, String> {
    parse_in(text, StartUnit::Ps)
}

/// [`parse`] with `start` counted in `unit`.
pub fn parse_in(text: &str, unit: StartUnit) -> Result<ConnectionMatrix, String> {
    let mut h = Headers::default();
    let mut raw: Vec<RawFlow> = Vec::new();
    let mut triggers: Vec<CmTrigger> = Vec::new();
    // Trigger id -> its line, so a duplicate is found in O(1), not by a walk over the earlier
    // triggers (quadratic in a file of millions of trigger lines).
    let mut trigger_lines: HashMap<u32, usize> = HashMap::new();
    let mut lines = 0;
    for (i, line) in crate::sim::input::strip_bom(text).lines().enumerate() {
        let n = i + 1;
        lines = n;
        let mut tokens = line.split_whitespace();
        let Some(first) = tokens.next() else { continue };
        if first.starts_with('#') {
            continue;
        }
        let body = !raw.is_empty() || !triggers.is_empty();
        match first {
            "Nodes" | "Connections" | "Triggers" | "Failures" => {
                if body {
                    return Err(format!("line {n}: the `{first}` header after flows or triggers (headers come first)"));
                }
                let v = value(&mut tokens, first, n)?;
                if let Some(t) = tokens.next() {
                    return Err(format!("line {n}: {t:?} after `{first} {v}` (a header is one number)"));
                }
                let count = |max: usize| -> Result<usize, String> {
                    let c: usize = number(v, first, n)?;
                    if c > max {
                        return Err(format!("line {n}: {first} {c} is out of range (allowed 0..={max})"));
                    }
                    Ok(c)
                };
                let twice = || format!("line {n}: a second `{first}` header");
                match first {
                    "Nodes" => {
                        let c = count(MAX_NODES)?;
                        if c == 0 {
                            return Err(format!("line {n}: Nodes 0 (a flow needs two nodes)"));
                        }
                        h.nodes.replace((c as u32, n)).map_or(Ok(()), |_| Err(twice()))?;
                    }
                    "Connections" => h.connections.replace((count(MAX_FLOWS)?, n)).map_or(Ok(()), |_| Err(twice()))?,
                    "Triggers" => h.triggers.replace((count(MAX_FLOWS)?, n)).map_or(Ok(()), |_| Err(twice()))?,
                    _ => {
                        if count(usize::MAX)? != 0 {
                            return Err(format!("line {n}: Failures {v}: htsim's link failures (fat-tree switch and link ids) are not supported; give Failures 0 or leave the line out"));
                        }
                    }
                }
            }
            "failure" => return Err(format!("line {n}: htsim's link failures are not supported")),
            "trigger" => {
                let declared = h.triggers.map_or(0, |(c, _)| c);
                if triggers.len() == declared {
                    let what = h.triggers.map_or("no `Triggers T` header".to_string(), |(c, l)| format!("line {l} announces {c}"));
                    return Err(format!("line {n}: more trigger lines than announced ({what})"));
                }
                let t = parse_trigger(&mut tokens, n)?;
                if let Some(other) = trigger_lines.insert(t.id, n) {
                    return Err(format!("line {n}: trigger {} is also defined on line {other}", t.id));
                }
                triggers.push(t);
            }
            _ if first.contains("->") => {
                let (Some((nodes, _)), Some((declared, at))) = (h.nodes, h.connections) else {
                    let missing = if h.nodes.is_none() { "Nodes N" } else { "Connections C" };
                    return Err(format!("line {n}: a flow before the `{missing}` header (headers come first)"));
                };
                if raw.len() == declared {
                    return Err(format!("line {n}: more flows than the {declared} that line {at} (Connections) announces"));
                }
                raw.push(parse_flow(first, &mut tokens, nodes, n, unit)?);
            }
            _ => return Err(format!("line {n}: unknown line starting {first:?} (expected a header, a flow SRC->DST ... or a trigger line)")),
        }
    }
    let Some((nodes, _)) = h.nodes else { return Err(format!("line {}: no `Nodes N` header", lines.max(1))) };
    let Some((declared, at)) = h.connections else { return Err(format!("line {}: no `Connections C` header", lines.max(1))) };
    if raw.len() != declared {
        return Err(format!("line {at}: Connections {declared}, but the file has {} flows", raw.len()));
    }
    if declared == 0 {
        return Err(format!("line {at}: Connections 0 (a workload needs at least one flow)"));
    }
    if let Some((c, l)) = h.triggers.filter(|&(c, _)| c != triggers.len()) {
        return Err(format!("line {l}: Triggers {c}, but the file has {} trigger lines", triggers.len()));
    }
    resolve(nodes, raw, triggers)
}

/// Trigger ids to indices, and what needs the whole file: unique flow ids, every trigger used
/// defined, every barrier reachable.
fn resolve(nodes: u32, raw: Vec<RawFlow>, triggers: Vec<CmTrigger>) -> Result<ConnectionMatrix, String> {
    let index: HashMap<u32, usize> = triggers.iter().enumerate().map(|(i, t)| (t.id, i)).collect();
    let mut ids: HashMap<u32, usize> = HashMap::new();
    let mut signals = vec![0u64; triggers.len()];
    let mut flows = Vec::with_capacity(raw.len());
    for RawFlow { mut flow, trigger, send_done, recv_done } in raw {
        let n = flow.line;
        if let Some(id) = flow.id {
            if let Some(l) = ids.insert(id, n) {
                return Err(format!("line {n}: flow id {id} is also on line {l}"));
            }
        }
        let find = |t: u32| index.get(&t).copied().ok_or_else(|| format!("line {n}: trigger {t} is never defined (no `trigger id {t} ...` line)"));
        if let Some(t) = trigger {
            flow.start = Start::Trigger(find(t)?);
        }
        flow.send_done = send_done.map(find).transpose()?;
        flow.recv_done = recv_done.map(find).transpose()?;
        for t in [flow.send_done, flow.recv_done].into_iter().flatten() {
            signals[t] += 1;
        }
        flows.push(flow);
    }
    for (t, s) in triggers.iter().zip(&signals) {
        if let TriggerKind::Barrier(c) = t.kind {
            if (c as u64) > *s {
                return Err(format!("line {}: trigger {} is a barrier of {c} but only {s} flows signal it (send_done_trigger, recv_done_trigger), so it would never fire", t.line, t.id));
            }
        }
    }
    Ok(ConnectionMatrix { nodes, flows, triggers })
}

/// A matrix of `flows` flows in two steps joined by one barrier, as htsim's collective
/// generators write them: the first half starts at 0 and each signals trigger 1 when sent,
/// the second half starts when trigger 1, a barrier of the first half's count, fires. Node of
/// flow `i`: `i mod nodes` sends to the next node. For scale tests and `retx-bench validate`.
pub fn two_steps_with_barrier(nodes: u32, flows: usize, size: u64) -> String {
    use std::fmt::Write as _;
    let first = flows / 2;
    let mut text = String::with_capacity(flows * 48);
    let _ = writeln!(text, "Nodes {nodes}\nConnections {flows}\nTriggers 1");
    for i in 0..flows {
        let (src, dst) = ((i as u64 % nodes as u64) as u32, ((i as u64 + 1) % nodes as u64) as u32);
        let how = if i < first { "start 0".to_string() } else { "trigger 1".to_string() };
        let signal = if i < first { " send_done_trigger 1" } else { "" };
        let _ = writeln!(text, "{src}->{dst} id {} {how} size {size}{signal}", i + 1);
    }
    let _ = writeln!(text, "trigger id 1 barrier count {first}");
    text
}

impl ConnectionMatrix {
    /// The flows in file order, node `n` being `hosts[n]`; a flow a trigger starts has start 0
    /// (it starts when its trigger fires). Refuses a node id the topology has no host for.
    pub fn flow_defs(&self, hosts: &[usize]) -> Result<Vec<FlowDef>, String> {
        self.flows
            .iter()
            .map(|f| {
                let host = |x: u32| {
                    hosts.get(x as usize).copied().ok_or_else(|| format!("line {}: node {x}, but the topology has {} hosts (nodes 0..={})", f.line, hosts.len(), hosts.len().saturating_sub(1)))
                };
                let start = match f.start {
                    Start::At(t) => t,
                    Start::Trigger(_) => Time::ZERO,
                };
                Ok(FlowDef::new(host(f.src)?, host(f.dst)?, f.size, start))
            })
            .collect()
    }

    /// The triggers as the engine runs them, flow `i` of the file being the run's flow
    /// `id[i]`. A multi-shot trigger starts its flows in file order (htsim adds them to it in
    /// that order). Refuses flows that wait for each other in a cycle, naming their lines.
    pub fn dependencies(&self, id: &[usize]) -> Result<Dependencies, String> {
        let n = self.flows.len();
        assert_eq!(id.len(), n, "a run index per flow");
        let mut triggers: Vec<Trigger> = self.triggers.iter().map(|t| Trigger { kind: t.kind, targets: Vec::new() }).collect();
        let mut signals = Vec::new();
        for (i, f) in self.flows.iter().enumerate() {
            if let Start::Trigger(t) = f.start {
                triggers[t].targets.push(id[i]);
            }
            let signal = |t: Option<usize>, on| t.map(|trigger| Signal { flow: id[i], on, trigger });
            signals.extend(signal(f.send_done, Done::Sent));
            signals.extend(signal(f.recv_done, Done::Received));
        }
        Dependencies::with_triggers(n, &triggers, &signals, &[]).map_err(|e| match e {
            DependencyError::Cycle { cycle, .. } => {
                let mut file = vec![0; n];
                for (i, &r) in id.iter().enumerate() {
                    file[r] = i;
                }
                let lines: Vec<String> = cycle.iter().chain(cycle.first()).map(|&r| self.flows[file[r]].line.to_string()).collect();
                format!("line {}: flows wait for each other in a cycle (lines {}), so none would ever start", lines[0], lines.join(" -> "))
            }
            e => format!("line 1: {e}"),
        })
    }

    /// Checks what depends on the network: every node has a host (`hosts` of them), and no
    /// flows wait for each other in a cycle.
    pub fn check(&self, hosts: usize) -> Result<(), String> {
        let dummy: Vec<usize> = (0..hosts).collect();
        self.flow_defs(&dummy)?;
        self.dependencies(&(0..self.flows.len()).collect::<Vec<_>>()).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHAIN: &str = "# a ring step\nNodes 4\nConnections 3\nTriggers 2\n\
        0->1 id 1 start 1000000 size 100 send_done_trigger 1\n\
        1->2 id 2 trigger 1 size 200 recv_done_trigger 2 prio 3 addon\n\
        2->3 id 7 trigger 2 size 300\n\
        trigger id 1 oneshot\ntrigger id 2 barrier count 1\n";

    #[test]
    fn reads_flows_and_triggers() {
        let m = parse(CHAIN).unwrap();
        assert_eq!(m.nodes, 4);
        assert_eq!(
            m.flows[0],
            CmFlow { line: 5, id: Some(1), src: 0, dst: 1, size: 100, start: Start::At(Time::from_us(1)), send_done: Some(0), recv_done: None }
        );
        assert_eq!((m.flows[1].start, m.flows[1].recv_done, m.flows[1].send_done), (Start::Trigger(0), Some(1), None));
        assert_eq!((m.flows[2].id, m.flows[2].start), (Some(7), Start::Trigger(1)));
        assert_eq!(m.triggers, [CmTrigger { line: 8, id: 1, kind: TriggerKind::OneShot }, CmTrigger { line: 9, id: 2, kind: TriggerKind::Barrier(1) }]);
        let defs = m.flow_defs(&[10, 11, 12, 13]).unwrap();
        assert_eq!(defs.iter().map(|f| (f.src, f.dst, f.size, f.start)).collect::<Vec<_>>(), [(10, 11, 100, Time::from_us(1)), (11, 12, 200, Time::ZERO), (12, 13, 300, Time::ZERO)]);
    }

    #[test]
    fn starts_count_picoseconds_for_htsim_ndp_and_whole_microseconds_for_htsim_uec() {
        let text = "Nodes 2\nConnections 2\n0->1 start 40 size 10\n1->0 start 40.7 size 10\n";
        let starts = |unit| parse_in(text, unit).unwrap().flows.iter().map(|f| f.start).collect::<Vec<_>>();
        assert_eq!(starts(StartUnit::Ps), [Start::At(Time(40)), Start::At(Time(41))]);
        // main_uec.cpp: timeFromUs((uint32_t)start): 40.7 us starts at 40 us.
        assert_eq!(starts(StartUnit::Us), [Start::At(Time::from_us(40)), Start::At(Time::from_us(40))]);
        for bad in ["-1", "4294967296", "1e300", "nan", "x"] {
            let e = parse_in(&format!("Nodes 2\nConnections 1\n0->1 start {bad} size 10\n"), StartUnit::Us).unwrap_err();
            assert!(e.starts_with("line 3: start") && !e.contains('\n'), "{bad}: {e}");
        }
    }

    #[test]
    fn accepts_htsim_s_variants() {
        // No ids, no Triggers header, decimal picoseconds, `barrier N`, CRLF, a BOM, tabs.
        let m = parse("\u{feff}Nodes 2\r\nConnections 1\r\n0->1\tstart 1.5e6 size 10\r\n").unwrap();
        assert_eq!((m.flows[0].id, m.flows[0].start), (None, Start::At(Time::from_us(1) + Time::from_ns(500))));
        let m = parse("Nodes 3\nConnections 3\nTriggers 1\n0->1 start 0 size 1 send_done_trigger 5\n1->2 start 0 size 1 send_done_trigger 5\n2->0 trigger 5 size 1\ntrigger barrier 2 id 5\n").unwrap();
        assert_eq!(m.triggers[0].kind, TriggerKind::Barrier(2));
        assert!(parse("Nodes 2\nConnections 1\nFailures 0\n0->1 start 0 size 1\n").is_ok());
    }

    #[test]
    fn multishot_targets_follow_file_order_through_renumbering() {
        let m = parse("Nodes 3\nConnections 3\nTriggers 1\n0->1 start 5 size 1 send_done_trigger 1\n1->2 trigger 1 size 1\n2->0 trigger 1 size 1\ntrigger id 1 multishot\n").unwrap();
        // The run numbers the file's flows 2, 0, 1.
        let mut d = m.dependencies(&[2, 0, 1]).unwrap();
        let mut started = Vec::new();
        d.done(2, Done::Sent, Time::from_us(3), |g, at| started.push((g, at)));
        assert_eq!(started, [(0, Time::from_us(3))], "the first flow that names the trigger, now run flow 0");
        assert!(d.waits(0) && d.waits(1) && !d.waits(2));
    }

    #[test]
    fn every_error_is_one_line_naming_the_line() {
        let head = "Nodes 4\nConnections 1\n";
        let cases: &[(&str, &str)] = &[
            ("", "line 1: no `Nodes N` header"),
            ("Nodes 4\n", "line 1: no `Connections C` header"),
            ("Nodes 4\nConnections 2\n0->1 start 0 size 1\n", "line 2: Connections 2, but the file has 1 flows"),
            ("Nodes 4\nConnections 1\n0->1 start 0 size 1\n1->0 start 0 size 1\n", "line 4: more flows than the 1 that line 2 (Connections) announces"),
            ("Nodes 4\nConnections 0\n", "line 2: Connections 0 (a workload needs at least one flow)"),
            ("Nodes 4\nConnections 99999999999\n", "line 2: Connections 99999999999 is out of range (allowed 0..=10000000)"),
            ("Nodes 4\nConnections x\n", "line 2: Connections \"x\" is not a number"),
            ("Nodes 4\nConnections 1\n0->1 id 4294967296 start 0 size 1\n", "line 3: flow id 4294967296 is out of range (at most 2^32 - 1)"),
            ("Nodes 4 5\n", "line 1: \"5\" after `Nodes 4` (a header is one number)"),
            ("Nodes\n", "line 1: `Nodes` needs a value"),
            ("Nodes 0\n", "line 1: Nodes 0 (a flow needs two nodes)"),
            ("Nodes 4\nNodes 4\n", "line 2: a second `Nodes` header"),
            ("Nodes 4\nFailures 2\n", "line 2: Failures 2: htsim's link failures (fat-tree switch and link ids) are not supported; give Failures 0 or leave the line out"),
            ("Nodes 4\nConnections 1\nfailure switch_type TOR switch_id 0 link_id 0\n", "line 3: htsim's link failures are not supported"),
            ("0->1 start 0 size 1\n", "line 1: a flow before the `Nodes N` header (headers come first)"),
            ("Nodes 4\n0->1 start 0 size 1\n", "line 2: a flow before the `Connections C` header (headers come first)"),
            ("Nodes 4\nConnections 1\n0->1 start 0 size 1\nTriggers 0\n", "line 4: the `Triggers` header after flows or triggers (headers come first)"),
            ("Nodes 4\nConnections 1\nfoo 3\n", "line 3: unknown line starting \"foo\" (expected a header, a flow SRC->DST ... or a trigger line)"),
            ("Nodes 4\nConnections 1\n0->1 start 0 size 1 colour 2\n", "line 3: unknown token \"colour\" in a flow line (known: start, trigger, size, id, send_done_trigger, recv_done_trigger, prio, addon)"),
            ("Nodes 4\nConnections 1\n0-> start 0 size 1\n", "line 3: \"\" is not a node id (a flow line starts SRC->DST, e.g. 0->1)"),
            ("Nodes 4\nConnections 1\n0->x1 start 0 size 1\n", "line 3: \"x1\" is not a node id (a flow line starts SRC->DST, e.g. 0->1)"),
            ("Nodes 4\nConnections 1\n0->4 start 0 size 1\n", "line 3: node 4 is out of range (the file says Nodes 4: 0..=3)"),
            ("Nodes 4\nConnections 1\n2->2 start 0 size 1\n", "line 3: a flow from node 2 to itself"),
            ("Nodes 4\nConnections 1\n0->1 start 0\n", "line 3: a flow without `size BYTES`"),
            ("Nodes 4\nConnections 1\n0->1 start 0 size 0\n", "line 3: size 0 is out of range (allowed 1..=1000000000000000 bytes; htsim runs a size 0 flow without end, retx's long-flows does that)"),
            ("Nodes 4\nConnections 1\n0->1 start 0 size 1 size 2\n", "line 3: `size` is given twice"),
            ("Nodes 4\nConnections 1\n0->1 start 0 size\n", "line 3: `size` needs a value"),
            ("Nodes 4\nConnections 1\n0->1 start -5 size 1\n", "line 3: start \"-5\" is out of range (allowed 0..=1000000000000000000 ps)"),
            ("Nodes 4\nConnections 1\n0->1 start 1ms size 1\n", "line 3: start \"1ms\" is not a time in picoseconds"),
            ("Nodes 4\nConnections 1\n0->1 start NaN size 1\n", "line 3: start \"NaN\" is out of range (allowed 0..=1000000000000000000 ps)"),
            ("Nodes 4\nConnections 1\n0->1 size 1\n", "line 3: a flow with neither `start T` nor `trigger TID`"),
            ("Nodes 4\nConnections 1\nTriggers 1\n0->1 start 0 trigger 1 size 1\ntrigger id 1 oneshot\n", "line 4: a flow with both `start` and `trigger`; give one"),
            ("Nodes 4\nConnections 1\n0->1 id 0 start 0 size 1\n", "line 3: flow id 0 is not allowed (ids start at 1)"),
            ("Nodes 4\nConnections 2\n0->1 id 3 start 0 size 1\n1->0 id 3 start 0 size 1\n", "line 4: flow id 3 is also on line 3"),
            ("Nodes 4\nConnections 1\n0->1 start 0 size 1 send_done_trigger 0\n", "line 3: trigger id 0 is not allowed (ids start at 1; htsim reads 0 as no trigger)"),
            ("Nodes 4\nConnections 1\n0->1 start 0 size 1 prio high\n", "line 3: prio \"high\" is not a number"),
            ("Nodes 4\nConnections 1\n0->1 start 0 size 1 send_done_trigger 3\n", "line 3: trigger 3 is never defined (no `trigger id 3 ...` line)"),
            ("Nodes 4\nConnections 1\nTriggers 1\n0->1 trigger 3 size 1\ntrigger id 2 oneshot\n", "line 4: trigger 3 is never defined (no `trigger id 3 ...` line)"),
            ("Nodes 4\nConnections 1\n0->1 start 0 size 1\ntrigger id 1 oneshot\n", "line 4: more trigger lines than announced (no `Triggers T` header)"),
            ("Nodes 4\nConnections 1\nTriggers 2\n0->1 start 0 size 1\ntrigger id 1 oneshot\n", "line 3: Triggers 2, but the file has 1 trigger lines"),
            ("Nodes 4\nConnections 1\nTriggers 1\n0->1 start 0 size 1\ntrigger id 1 oneshot\ntrigger id 2 oneshot\n", "line 6: more trigger lines than announced (line 3 announces 1)"),
            ("Nodes 4\nConnections 1\nTriggers 2\n0->1 start 0 size 1\ntrigger id 1 oneshot\ntrigger id 1 multishot\n", "line 6: trigger 1 is also defined on line 5"),
            ("Nodes 4\nConnections 1\nTriggers 1\n0->1 start 0 size 1\ntrigger oneshot\n", "line 5: a trigger without `id TID`"),
            ("Nodes 4\nConnections 1\nTriggers 1\n0->1 start 0 size 1\ntrigger id 0 oneshot\n", "line 5: trigger id 0 is not allowed (ids start at 1; htsim reads 0 as no trigger)"),
            ("Nodes 4\nConnections 1\nTriggers 1\n0->1 start 0 size 1\ntrigger id 1\n", "line 5: trigger 1 has no kind (oneshot, multishot or barrier)"),
            ("Nodes 4\nConnections 1\nTriggers 1\n0->1 start 0 size 1\ntrigger id 1 oneshot barrier\n", "line 5: a trigger is oneshot and barrier; give one kind"),
            ("Nodes 4\nConnections 1\nTriggers 1\n0->1 start 0 size 1\ntrigger id 1 barrier\n", "line 5: barrier 1 needs `count N` (N >= 1: the signals it waits for)"),
            ("Nodes 4\nConnections 1\nTriggers 1\n0->1 start 0 size 1\ntrigger id 1 barrier count 0\n", "line 5: barrier 1 needs `count N` (N >= 1: the signals it waits for)"),
            ("Nodes 4\nConnections 1\nTriggers 1\n0->1 start 0 size 1\ntrigger id 1 once\n", "line 5: unknown token \"once\" in a trigger line (known: id, oneshot, multishot, barrier, count)"),
            ("Nodes 4\nConnections 1\nTriggers 1\n0->1 start 0 size 1 send_done_trigger 1\ntrigger id 1 barrier count 2\n", "line 5: trigger 1 is a barrier of 2 but only 1 flows signal it (send_done_trigger, recv_done_trigger), so it would never fire"),
        ];
        for (text, want) in cases {
            let got = parse(text).map(|_| ()).unwrap_err();
            assert_eq!(&got, want, "{text:?}");
            assert!(!got.contains('\n'));
        }
        assert!(parse(&format!("{head}0->1 start 0 size 1\n")).is_ok(), "the cases differ from a good file only where they say");
    }

    #[test]
    fn cycles_and_missing_hosts_are_refused_naming_lines() {
        let m = parse("Nodes 4\nConnections 3\nTriggers 2\n0->1 start 0 size 1\n1->2 trigger 1 size 1 send_done_trigger 2\n2->3 trigger 2 size 1 recv_done_trigger 1\ntrigger id 1 oneshot\ntrigger id 2 oneshot\n").unwrap();
        assert_eq!(m.check(4).unwrap_err(), "line 5: flows wait for each other in a cycle (lines 5 -> 6 -> 5), so none would ever start");
        let m = parse("Nodes 8\nConnections 1\n# comment\n0->5 start 0 size 1\n").unwrap();
        assert_eq!(m.check(4).unwrap_err(), "line 4: node 5, but the topology has 4 hosts (nodes 0..=3)");
        assert!(m.check(6).is_ok());
    }

    #[test]
    fn the_peers_permutation_parses() {
        let path = std::path::Path::new("/work/shared/peers/htsim/perm_432_2MB.cm");
        let Ok(text) = std::fs::read_to_string(path) else {
            eprintln!("skipped: {} is absent", path.display());
            return;
        };
        let m = parse(&text).unwrap();
        assert_eq!((m.nodes, m.flows.len(), m.triggers.len()), (432, 432, 0));
        assert!(m.flows.iter().all(|f| f.size == 2_000_000 && f.start == Start::At(Time::ZERO)));
        assert_eq!(m.flows.iter().map(|f| f.id).collect::<Vec<_>>(), (1..=432).map(Some).collect::<Vec<_>>());
        // A permutation: every node sends once and receives once.
        let mut dsts: Vec<u32> = m.flows.iter().map(|f| f.dst).collect();
        dsts.sort_unstable();
        assert_eq!(dsts, (0..432).collect::<Vec<_>>());
    }
}

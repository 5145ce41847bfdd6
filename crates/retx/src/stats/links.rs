//! Fabric statistics (`[output] links`): per link direction (an egress port) over the run, per
//! tier and per busiest port every sample interval, and per switch.
//!
//! The engine's hot path is untouched: bytes, packets, CE marks and PFC frames sent are the
//! port's own counters, and the most bytes it queued is its own peak ([`Port::take_peak`]).
//! What this module counts happens off the per-packet path: a drop, a trim, a PFC pause
//! starting or ending. Sampling visits the selected ports once per interval.
//!
//! Memory is bounded by the network and the sampling, never by the traffic: a
//! [`PortCounts`] per port of the network (48 B), a [`Snapshot`] per selected port, a row per
//! selected port at the end, `tiers x samples` tier rows and at most `link_series x samples`
//! port rows (checked before the run: `config::output::MAX_LINK_SERIES_ROWS`).

use super::DropKinds;
use crate::net::port::Port;
use crate::sim::units::{Rate, Time};
use crate::transport::common::segment::Segment;

/// What is counted at a port besides its own counters, for every port of the network.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortCounts {
    /// Transport packets dropped at this port (its egress queue's buffer, a loss model on its
    /// wire; a packet no switch could route counts at the port it arrived over), by kind.
    pub drops: DropKinds,
    /// Background packets dropped at its egress queue.
    pub drops_background: u64,
    /// Data packets trimmed to their header at its egress queue.
    pub trims: u64,
    /// Time its data queues were held paused by its peer (any class), and since when they are.
    pub paused: Time,
    pub paused_since: Option<Time>,
}

impl PortCounts {
    fn drops_total(&self) -> u64 {
        self.drops.total() + self.drops_background
    }

    /// Paused time up to `now`, the open pause included.
    fn paused_until(&self, now: Time) -> Time {
        self.paused + self.paused_since.map_or(Time::ZERO, |s| now - s)
    }
}

/// A selected port's counters at the last sample.
#[derive(Clone, Copy, Debug, Default)]
struct Snapshot {
    tx_bytes: u64,
    drops: u64,
    trims: u64,
    ecn_marks: u64,
    paused: Time,
    /// The most bytes queued in the interval that ended at the last sample.
    peak: u64,
    /// The most bytes queued over the run, up to the last sample.
    run_peak: u64,
}

/// What the run's output needs to name a selected port.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkName {
    pub port: u32,
    /// "A->B": node A's port toward node B.
    pub name: String,
    pub node: String,
    pub peer: String,
    pub tier: u16,
    pub rate: Rate,
}

/// The names the link tables refer to: the selected ports (rows index them) and the tiers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkNames {
    pub links: Vec<LinkName>,
    pub tiers: Vec<String>,
}

/// One selected port over the run (`links.parquet`).
#[derive(Clone, Debug, PartialEq)]
pub struct LinkRecord {
    /// Index into [`LinkNames::links`].
    pub link: u32,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    /// Bytes sent over what the link could carry from `start` to the run's end.
    pub utilisation: f64,
    pub counts: PortCounts,
    pub ecn_marks: u64,
    pub pauses_sent: u64,
    pub max_queue: u64,
}

/// One interval of one selected port (`link_samples.parquet`): those that sent the most.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSample {
    pub time: Time,
    pub link: u32,
    pub tx_bytes: u64,
    pub utilisation: f64,
    pub drops: u64,
    pub trims: u64,
    pub ecn_marks: u64,
    pub paused: Time,
    pub peak: u64,
    pub queue_bytes: u64,
}

/// One interval of one tier's selected ports (`tier_samples.parquet`).
#[derive(Clone, Debug, PartialEq)]
pub struct TierSample {
    pub time: Time,
    pub tier: u16,
    pub links: u32,
    pub tx_bytes: u64,
    /// Bytes over what the tier's selected ports could carry in the interval.
    pub utilisation: f64,
    /// The busiest port's share of its own link.
    pub max_utilisation: f64,
    pub drops: u64,
    pub trims: u64,
    pub ecn_marks: u64,
    /// Paused time summed over its ports.
    pub paused: Time,
    /// The most bytes any of its ports queued in the interval.
    pub max_queue: u64,
}

/// A switch's selected ports over the run (summary.json's `"switches"`).
#[derive(Clone, Debug, PartialEq)]
pub struct SwitchTotals {
    pub switch: String,
    pub ports: u32,
    pub tx_bytes: u64,
    /// Bytes over what its selected ports could carry from `start` to the run's end.
    pub utilisation: f64,
    pub drops: DropKinds,
    pub drops_background: u64,
    pub trims: u64,
    pub ecn_marks: u64,
    pub pauses_sent: u64,
    pub paused: Time,
    pub max_queue: u64,
}

/// Everything `[output] links` gives a run's output.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkReport {
    pub names: LinkNames,
    /// When the statistics start (the sampling grid's first point) and end.
    pub start: Time,
    pub end: Time,
    pub links: Vec<LinkRecord>,
    pub link_samples: Vec<LinkSample>,
    pub tier_samples: Vec<TierSample>,
    pub switches: Vec<SwitchTotals>,
}

/// The engine's side: counts at every port, snapshots of the selected ones, the rows so far.
pub struct LinkWatch {
    /// Per port of the network.
    pub counts: Vec<PortCounts>,
    /// The selected ports, in port order, and their snapshots.
    selected: Vec<u32>,
    last: Vec<Snapshot>,
    tier_of: Vec<u16>,
    tiers: Vec<String>,
    /// Busiest ports per interval in `link_samples`.
    series: usize,
    start: Time,
    link_samples: Vec<LinkSample>,
    tier_samples: Vec<TierSample>,
    /// Per tier, this interval's sums (reused every sample).
    tier_scratch: Vec<TierSample>,
    /// (bytes this interval, index into `selected`), reused every sample.
    busiest: Vec<(u64, u32)>,
}

impl LinkWatch {
    /// Watches `selected` (port ids in order) of a network of `ports` ports whose tiers are
    /// `tiers` (names, and per port its tier).
    pub fn new(ports: usize, selected: Vec<u32>, tiers: (Vec<String>, Vec<u16>), series: usize) -> LinkWatch {
        let (tiers, tier_of) = tiers;
        LinkWatch {
            counts: vec![PortCounts::default(); ports],
            last: vec![Snapshot::default(); selected.len()],
            selected,
            tier_of,
            tier_scratch: Vec::with_capacity(tiers.len()),
            tiers,
            series,
            start: Time::ZERO,
            link_samples: Vec::new(),
            tier_samples: Vec::new(),
            busiest: Vec::new(),
        }
    }

    /// Statistics start at `t` (the sampling grid point at or before the first flow).
    pub fn start_at(&mut self, t: Time) {
        self.start = t;
    }

    /// A transport packet (`Some(segment)`) or a background one (`None`) was dropped at `port`.
    #[inline]
    pub fn drop_at(&mut self, port: usize, seg: Option<&Segment>) {
        let c = &mut self.counts[port];
        match seg {
            Some(s) => c.drops.count(s),
            None => c.drops_background += 1,
        }
    }

    #[inline]
    pub fn trim_at(&mut self, port: usize) {
        self.counts[port].trims += 1;
    }

    /// `port`'s data queues were paused (any class) or all resumed at `now`.
    pub fn pause_changed(&mut self, port: usize, now: Time, paused: bool) {
        let c = &mut self.counts[port];
        match (paused, c.paused_since) {
            (true, None) => c.paused_since = Some(now),
            (false, Some(s)) => {
                c.paused += now - s;
                c.paused_since = None;
            }
            _ => {}
        }
    }

    /// The most bytes `port` queued in the interval that ended at the last sample, if it is
    /// selected (its peak was taken then: `[output] queues` reads it here).
    pub fn interval_peak(&self, port: usize) -> Option<u64> {
        self.selected.binary_search(&(port as u32)).ok().map(|i| self.last[i].peak)
    }

    /// The interval of `dt` ending `now`: a row per tier and for the busiest ports.
    pub fn sample(&mut self, now: Time, dt: Time, ports: &mut [Port]) {
        let secs = dt.as_secs_f64();
        self.tier_scratch.clear();
        self.tier_scratch.extend((0..self.tiers.len()).map(|t| TierSample {
            time: now,
            tier: t as u16,
            links: 0,
            tx_bytes: 0,
            utilisation: 0.0,
            max_utilisation: 0.0,
            drops: 0,
            trims: 0,
            ecn_marks: 0,
            paused: Time::ZERO,
            max_queue: 0,
        }));
        let mut capacity = vec![0f64; self.tiers.len()];
        self.busiest.clear();
        for (i, &p) in self.selected.iter().enumerate() {
            let port = &mut ports[p as usize];
            let c = &self.counts[p as usize];
            let last = &mut self.last[i];
            let peak = port.take_peak();
            let paused = c.paused_until(now);
            let bytes = port.tx_bytes - last.tx_bytes;
            let t = &mut self.tier_scratch[self.tier_of[p as usize] as usize];
            t.links += 1;
            t.tx_bytes += bytes;
            t.drops += c.drops_total() - last.drops;
            t.trims += c.trims - last.trims;
            t.ecn_marks += port.ecn_marks - last.ecn_marks;
            t.paused += paused - last.paused;
            t.max_queue = t.max_queue.max(peak);
            let cap = port.rate.bps() as f64 * secs;
            if cap > 0.0 {
                t.max_utilisation = t.max_utilisation.max(bytes as f64 * 8.0 / cap);
            }
            capacity[self.tier_of[p as usize] as usize] += cap;
            if self.series > 0 && bytes > 0 {
                self.busiest.push((bytes, i as u32));
            }
            // The snapshot moves on after the port's row is written (below).
            last.peak = peak;
            last.run_peak = last.run_peak.max(peak);
        }
        for (t, cap) in self.tier_scratch.iter_mut().zip(&capacity) {
            if t.links > 0 {
                t.utilisation = if *cap > 0.0 { t.tx_bytes as f64 * 8.0 / cap } else { 0.0 };
                self.tier_samples.push(t.clone());
            }
        }
        if self.busiest.len() > self.series {
            // The most bytes first; ties by port order.
            self.busiest.select_nth_unstable_by(self.series - 1, |a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            self.busiest.truncate(self.series);
        }
        self.busiest.sort_unstable_by_key(|&(_, i)| i);
        for &(bytes, i) in &self.busiest {
            let p = self.selected[i as usize] as usize;
            let (port, c, last) = (&ports[p], &self.counts[p], &self.last[i as usize]);
            let cap = port.rate.bps() as f64 * secs;
            self.link_samples.push(LinkSample {
                time: now,
                link: i,
                tx_bytes: bytes,
                utilisation: if cap > 0.0 { bytes as f64 * 8.0 / cap } else { 0.0 },
                drops: c.drops_total() - last.drops,
                trims: c.trims - last.trims,
                ecn_marks: port.ecn_marks - last.ecn_marks,
                paused: c.paused_until(now) - last.paused,
                peak: last.peak,
                queue_bytes: port.held_bytes,
            });
        }
        for (i, &p) in self.selected.iter().enumerate() {
            let (port, c, last) = (&ports[p as usize], &self.counts[p as usize], &mut self.last[i]);
            last.tx_bytes = port.tx_bytes;
            last.drops = c.drops_total();
            last.trims = c.trims;
            last.ecn_marks = port.ecn_marks;
            last.paused = c.paused_until(now);
        }
    }

    /// The run's statistics at its end `end`; `nodes` names the nodes, `is_switch` says which
    /// are switches.
    pub fn finish(self, end: Time, ports: &[Port], nodes: &[String], is_switch: &[bool]) -> LinkReport {
        let span = end.saturating_sub(self.start).as_secs_f64();
        let share = |bytes: u64, bps: f64| if bps * span > 0.0 { bytes as f64 * 8.0 / (bps * span) } else { 0.0 };
        let mut names = Vec::with_capacity(self.selected.len());
        let mut links = Vec::with_capacity(self.selected.len());
        // Per switch node: index into `switches`.
        let mut switch_row = vec![u32::MAX; nodes.len()];
        let mut switches: Vec<SwitchTotals> = Vec::new();
        let mut switch_capacity: Vec<f64> = Vec::new();
        let mut switch_node: Vec<usize> = Vec::new();
        for (i, &p) in self.selected.iter().enumerate() {
            let port = &ports[p as usize];
            let mut counts = self.counts[p as usize];
            counts.paused = counts.paused_until(end);
            counts.paused_since = None;
            let max_queue = self.last[i].run_peak.max(port.peak());
            names.push(LinkName {
                port: p,
                name: format!("{}->{}", nodes[port.node], nodes[port.peer_node]),
                node: nodes[port.node].clone(),
                peer: nodes[port.peer_node].clone(),
                tier: self.tier_of[p as usize],
                rate: port.rate,
            });
            links.push(LinkRecord {
                link: i as u32,
                tx_bytes: port.tx_bytes,
                tx_packets: port.tx_packets,
                utilisation: share(port.tx_bytes, port.rate.bps() as f64),
                counts,
                ecn_marks: port.ecn_marks,
                pauses_sent: port.pauses_sent,
                max_queue,
            });
            if !is_switch[port.node] {
                continue;
            }
            if switch_row[port.node] == u32::MAX {
                switch_row[port.node] = switches.len() as u32;
                switch_capacity.push(0.0);
                switch_node.push(port.node);
                switches.push(SwitchTotals {
                    switch: nodes[port.node].clone(),
                    ports: 0,
                    tx_bytes: 0,
                    utilisation: 0.0,
                    drops: DropKinds::default(),
                    drops_background: 0,
                    trims: 0,
                    ecn_marks: 0,
                    pauses_sent: 0,
                    paused: Time::ZERO,
                    max_queue: 0,
                });
            }
            let row = switch_row[port.node] as usize;
            let s = &mut switches[row];
            switch_capacity[row] += port.rate.bps() as f64;
            s.ports += 1;
            s.tx_bytes += port.tx_bytes;
            s.drops.scheduled_data += counts.drops.scheduled_data;
            s.drops.unscheduled_data += counts.drops.unscheduled_data;
            s.drops.grants += counts.drops.grants;
            s.drops.control += counts.drops.control;
            s.drops_background += counts.drops_background;
            s.trims += counts.trims;
            s.ecn_marks += port.ecn_marks;
            s.pauses_sent += port.pauses_sent;
            s.paused += counts.paused;
            s.max_queue = s.max_queue.max(max_queue);
        }
        for (s, bps) in switches.iter_mut().zip(switch_capacity) {
            s.utilisation = share(s.tx_bytes, bps);
        }
        // In node order.
        let mut order: Vec<(usize, SwitchTotals)> = switch_node.into_iter().zip(switches).collect();
        order.sort_by_key(|(n, _)| *n);
        let switches = order.into_iter().map(|(_, s)| s).collect();
        LinkReport {
            names: LinkNames { links: names, tiers: self.tiers },
            start: self.start,
            end,
            links,
            link_samples: self.link_samples,
            tier_samples: self.tier_samples,
            switches,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::loss::PortLoss;
    use crate::net::port::Discipline;
    use crate::sim::rng::{self, Stream};

    fn port(rate_gbps: u64) -> Port {
        let loss = PortLoss::new(rng::stream(1, Stream::LinkLoss, 0), rng::stream(1, Stream::BurstLoss, 0));
        let mut p = Port::new(0, Rate(rate_gbps * 1_000_000_000), Time::from_us(1), 2, Discipline::StrictPriority, loss);
        p.peer_node = 0;
        p
    }

    #[test]
    fn what_every_port_counts_is_72_bytes() {
        // The budget's BYTES_PER_PORT_COUNTS.
        assert_eq!(std::mem::size_of::<PortCounts>(), 72);
    }

    #[test]
    fn pauses_add_up_to_the_end_and_nested_changes_count_once() {
        let mut w = LinkWatch::new(2, vec![0, 1], (vec!["t".into()], vec![0, 0]), 1);
        w.pause_changed(1, Time::from_us(10), true);
        w.pause_changed(1, Time::from_us(12), true);
        w.pause_changed(1, Time::from_us(15), false);
        w.pause_changed(1, Time::from_us(20), true);
        let mut ports = vec![port(100), port(100)];
        w.sample(Time::from_us(30), Time::from_us(30), &mut ports);
        assert_eq!(w.tier_samples[0].paused, Time::from_us(15), "5 us closed and 10 us open");
        let names: Vec<String> = vec!["a".into()];
        let r = w.finish(Time::from_us(40), &ports, &names, &[false]);
        assert_eq!(r.links[1].counts.paused, Time::from_us(25));
        assert_eq!(r.links[0].counts.paused, Time::ZERO);
    }

    #[test]
    fn the_busiest_ports_of_an_interval_are_kept_in_port_order() {
        let mut w = LinkWatch::new(3, vec![0, 1, 2], (vec!["t".into()], vec![0, 0, 0]), 2);
        let mut ports = vec![port(100), port(100), port(100)];
        for (p, bytes) in [(0, 100), (1, 300), (2, 200)] {
            ports[p].tx_bytes = bytes;
        }
        w.sample(Time::from_us(1), Time::from_us(1), &mut ports);
        assert_eq!(w.link_samples.iter().map(|s| (s.link, s.tx_bytes)).collect::<Vec<_>>(), [(1, 300), (2, 200)]);
        // The next interval counts from the last sample; an idle port gets no row.
        ports[0].tx_bytes += 1_000;
        w.sample(Time::from_us(2), Time::from_us(1), &mut ports);
        assert_eq!(w.link_samples[2..].iter().map(|s| (s.link, s.tx_bytes)).collect::<Vec<_>>(), [(0, 1_000)]);
        assert!((w.link_samples[2].utilisation - 1_000.0 * 8.0 / 100_000.0).abs() < 1e-12);
        assert_eq!(w.tier_samples[1].tx_bytes, 1_000);
    }
}

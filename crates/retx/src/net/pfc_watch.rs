//! The PFC watchdog: pause storms and PFC deadlocks, judged off the hot path.
//!
//! The engine tells the watchdog only when a port's paused state changes (a PAUSE or RESUME
//! arrives), and the watchdog asks for a tick every `storm_window` while some port is paused;
//! an idle or unpaused network costs nothing.
//!
//! - A **pause storm**: a port whose data queues were paused for at least `storm_fraction` of
//!   a window (a port paused without a break is at 1.0).
//! - A **deadlock**: a cycle in the wait-for graph of egress ports that have been paused
//!   without a break for `deadlock_timeout` and hold data. Port P (switch S toward switch D)
//!   waits for every such port of D: what P holds can only leave once D resumes S, and D's
//!   ingress from S drains only through D's egress ports. The graph over-approximates (the
//!   packets D holds from S may sit behind an unpaused port), which is why every port of the
//!   cycle must also have made no progress, paused throughout, for the timeout.

use crate::sim::units::Time;

/// The watchdog's settings (`[switch] pfc`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WatchParams {
    pub deadlock_timeout: Time,
    pub storm_window: Time,
    pub storm_fraction: f64,
}

/// A port found in a pause storm: when first, in how many windows, the worst fraction.
#[derive(Clone, Debug, PartialEq)]
pub struct Storm {
    pub port: usize,
    pub first_at: Time,
    pub windows: u32,
    pub max_fraction: f64,
}

/// A deadlock: when it was detected and the ports of its cycle, in wait-for order (each port's
/// peer switch owns the next).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deadlock {
    pub at: Time,
    pub ports: Vec<usize>,
}

/// The shape of the network the wait-for graph is drawn on.
#[derive(Clone, Debug)]
pub struct PortGraph {
    /// Per port: the node at its far end, if that node is a switch.
    pub peer_switch: Vec<Option<u32>>,
    /// Per node: its ports.
    pub ports_of: Vec<Vec<u32>>,
}

pub struct PfcWatch {
    p: WatchParams,
    graph: PortGraph,
    /// Per port: since when its data queues have been paused without a break (None: not).
    paused_since: Vec<Option<Time>>,
    /// Per port: paused time in the current window before `paused_since`.
    paused_in_window: Vec<Time>,
    window_start: Time,
    paused_ports: usize,
    /// A tick is pending.
    armed: bool,
    /// Per port: 1 + its index in `storms`, or 0.
    storm_of: Vec<u32>,
    pub storms: Vec<Storm>,
    pub deadlock: Option<Deadlock>,
}

impl PfcWatch {
    pub fn new(p: WatchParams, graph: PortGraph) -> PfcWatch {
        let n = graph.peer_switch.len();
        PfcWatch {
            p,
            graph,
            paused_since: vec![None; n],
            paused_in_window: vec![Time::ZERO; n],
            window_start: Time::ZERO,
            paused_ports: 0,
            armed: false,
            storm_of: vec![0; n],
            storms: Vec::new(),
            deadlock: None,
        }
    }

    /// How often it ticks while some port is paused.
    pub fn window(&self) -> Time {
        self.p.storm_window
    }

    /// Port `port`'s data queues became paused (some) or unpaused (none) at `now`. Returns
    /// when to tick, if a tick must now be scheduled.
    pub fn on_change(&mut self, now: Time, port: usize, paused: bool) -> Option<Time> {
        match (self.paused_since[port], paused) {
            (None, true) => {
                self.paused_since[port] = Some(now);
                self.paused_ports += 1;
            }
            (Some(since), false) => {
                self.paused_in_window[port] += now - since.max(self.window_start);
                self.paused_since[port] = None;
                self.paused_ports -= 1;
            }
            _ => return None,
        }
        if self.armed || self.paused_ports == 0 {
            return None;
        }
        self.armed = true;
        self.window_start = now;
        Some(now + self.p.storm_window)
    }

    /// The tick: judges the window that ends now (storms) and the ports paused for the
    /// deadlock timeout (`holds_paused_data(port)`: whether the port's paused queues hold
    /// data). Returns when to tick next, or None when no port is paused (or a deadlock was
    /// found: the run ends).
    pub fn tick(&mut self, now: Time, holds_paused_data: impl Fn(usize) -> bool) -> Option<Time> {
        let window = now - self.window_start;
        for port in 0..self.paused_since.len() {
            let open = self.paused_since[port].map_or(Time::ZERO, |since| now - since.max(self.window_start));
            let paused = self.paused_in_window[port] + open;
            self.paused_in_window[port] = Time::ZERO;
            if window.0 == 0 || paused.0 == 0 {
                continue;
            }
            let fraction = paused.0 as f64 / window.0 as f64;
            if fraction >= self.p.storm_fraction {
                self.note_storm(port, now, fraction);
            }
        }
        self.window_start = now;
        if self.paused_ports > 0 {
            if let Some(ports) = self.find_cycle(now, &holds_paused_data) {
                self.deadlock = Some(Deadlock { at: now, ports });
                self.armed = false;
                return None;
            }
        }
        self.armed = self.paused_ports > 0;
        self.armed.then(|| now + self.p.storm_window)
    }

    fn note_storm(&mut self, port: usize, now: Time, fraction: f64) {
        match self.storm_of[port] {
            0 => {
                self.storms.push(Storm { port, first_at: now, windows: 1, max_fraction: fraction });
                self.storm_of[port] = self.storms.len() as u32;
            }
            i => {
                let s = &mut self.storms[i as usize - 1];
                s.windows += 1;
                s.max_fraction = s.max_fraction.max(fraction);
            }
        }
    }

    /// A port stuck for the deadlock timeout: paused throughout, holding data, toward a switch.
    fn stuck(&self, port: usize, now: Time, holds_paused_data: &impl Fn(usize) -> bool) -> bool {
        self.graph.peer_switch[port].is_some()
            && self.paused_since[port].is_some_and(|since| now - since >= self.p.deadlock_timeout)
            && holds_paused_data(port)
    }

    /// The first cycle of stuck ports (depth-first, in port order: deterministic), as ports in
    /// wait-for order.
    fn find_cycle(&self, now: Time, holds_paused_data: &impl Fn(usize) -> bool) -> Option<Vec<usize>> {
        const NEW: u8 = 0;
        const ON_PATH: u8 = 1;
        const DONE: u8 = 2;
        let n = self.paused_since.len();
        let mut state = vec![NEW; n];
        let mut path: Vec<(usize, usize)> = Vec::new(); // (port, next neighbour to try)
        for root in 0..n {
            if state[root] != NEW || !self.stuck(root, now, holds_paused_data) {
                continue;
            }
            state[root] = ON_PATH;
            path.push((root, 0));
            while let Some(&mut (port, ref mut next)) = path.last_mut() {
                let peer = self.graph.peer_switch[port].expect("stuck ports lead to a switch") as usize;
                let neighbours = &self.graph.ports_of[peer];
                if let Some(&q) = neighbours.get(*next) {
                    *next += 1;
                    let q = q as usize;
                    if !self.stuck(q, now, holds_paused_data) {
                        continue;
                    }
                    match state[q] {
                        ON_PATH => {
                            let from = path.iter().position(|&(p, _)| p == q).expect("on the path");
                            return Some(path[from..].iter().map(|&(p, _)| p).collect());
                        }
                        NEW => {
                            state[q] = ON_PATH;
                            path.push((q, 0));
                        }
                        _ => {}
                    }
                } else {
                    state[port] = DONE;
                    path.pop();
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three switches in a ring (0 -> 1 -> 2 -> 0), one port each way per pair, and a host
    /// on switch 0. Ports: 0: s0->s1, 1: s1->s0, 2: s1->s2, 3: s2->s1, 4: s2->s0, 5: s0->s2,
    /// 6: s0->h, 7: h->s0 (node 3 is the host).
    fn ring() -> PortGraph {
        PortGraph {
            peer_switch: vec![Some(1), Some(0), Some(2), Some(1), Some(0), Some(2), None, Some(0)],
            ports_of: vec![vec![0, 5, 6], vec![1, 2], vec![3, 4], vec![7]],
        }
    }

    fn params() -> WatchParams {
        WatchParams { deadlock_timeout: Time::from_ms(2), storm_window: Time::from_ms(1), storm_fraction: 0.9 }
    }

    #[test]
    fn a_cycle_of_ports_paused_for_the_timeout_is_a_deadlock_with_its_ports() {
        let mut w = PfcWatch::new(params(), ring());
        let t0 = Time::from_us(10);
        assert_eq!(w.on_change(t0, 0, true), Some(t0 + Time::from_ms(1)), "the first pause arms a tick");
        assert_eq!(w.on_change(t0, 2, true), None, "one tick at a time");
        assert_eq!(w.on_change(t0, 4, true), None);
        let all = |_: usize| true;
        // 1 ms in: paused throughout (storms), not yet for the 2 ms timeout.
        assert_eq!(w.tick(t0 + Time::from_ms(1), all), Some(t0 + Time::from_ms(2)));
        assert!(w.deadlock.is_none());
        assert_eq!(w.storms.iter().map(|s| (s.port, s.max_fraction)).collect::<Vec<_>>(), vec![(0, 1.0), (2, 1.0), (4, 1.0)]);
        // A cycle whose ports hold no data blocks nothing.
        assert_eq!(w.tick(t0 + Time::from_ms(2), |p| p != 2), Some(t0 + Time::from_ms(3)));
        assert!(w.deadlock.is_none());
        assert_eq!(w.tick(t0 + Time::from_ms(3), all), None, "found: the run ends");
        assert_eq!(w.deadlock, Some(Deadlock { at: t0 + Time::from_ms(3), ports: vec![0, 2, 4] }));
        assert_eq!(w.storms[0].windows, 3);
    }

    #[test]
    fn a_chain_of_paused_ports_or_a_broken_pause_is_no_deadlock() {
        let mut w = PfcWatch::new(params(), ring());
        // s0->s1 and s1->s2 paused, s2->s0 not: a chain, no cycle.
        w.on_change(Time::ZERO, 0, true);
        w.on_change(Time::ZERO, 2, true);
        w.on_change(Time::ZERO, 7, true); // the host's port: never in a cycle
        for ms in 1..=5 {
            w.tick(Time::from_ms(ms), |_| true);
        }
        assert!(w.deadlock.is_none());
        // The third port paused, but resumed for a moment 1.5 ms ago: not stuck for 2 ms.
        w.on_change(Time::from_us(5_000), 4, true);
        w.on_change(Time::from_us(5_400), 4, false);
        w.on_change(Time::from_us(5_500), 4, true);
        assert_eq!(w.tick(Time::from_ms(7), |_| true), Some(Time::from_ms(8)));
        assert!(w.deadlock.is_none());
        w.tick(Time::from_ms(8), |_| true);
        assert_eq!(w.deadlock.as_ref().map(|d| d.at), Some(Time::from_ms(8)), "stuck for 2.5 ms");
    }

    #[test]
    fn a_storm_is_a_port_paused_for_the_fraction_of_a_window() {
        let mut w = PfcWatch::new(params(), ring());
        // Port 0 paused 0.85 ms of the first window: under 0.9, no storm; port 2 0.95 ms.
        assert!(w.on_change(Time::ZERO, 0, true).is_some());
        w.on_change(Time::from_us(850), 0, false);
        w.on_change(Time::from_us(50), 2, true);
        assert_eq!(w.tick(Time::from_ms(1), |_| true), Some(Time::from_ms(2)));
        assert_eq!(w.storms.len(), 1);
        let s = &w.storms[0];
        assert_eq!((s.port, s.first_at, s.windows), (2, Time::from_ms(1), 1));
        assert!((s.max_fraction - 0.95).abs() < 1e-12);
        // Resumed: the next tick finds nothing paused and disarms; a new pause re-arms.
        w.on_change(Time::from_us(1_100), 2, false);
        assert_eq!(w.tick(Time::from_ms(2), |_| true), None);
        assert_eq!(w.on_change(Time::from_ms(9), 0, true), Some(Time::from_ms(10)));
    }
}

//! One run across threads, bit-identical to the serial run.
//!
//! # How
//! Every partition ([`super::partition`]) is a whole [`Simulation`] assembled from the same
//! parts, of which it runs only its own nodes: their ports, switches, NICs and the ends of
//! connections on its hosts. What the run itself schedules (flow starts, samples) every
//! partition schedules alike and handles for its own elements. A packet put on a link into
//! another partition travels as a [`Crossing`] (its arrival time, the wire, the packet and its
//! INT records) and joins that partition's copy of the wire at the next window.
//!
//! Partitions run in windows as long as the lookahead (the shortest delay of a link between
//! two partitions): nothing one sends in a window arrives before the window ends. After each
//! window a barrier; then every partition takes its mail and all start the next window at the
//! earliest event anywhere (idle stretches cost one window).
//!
//! # Why it is the serial run, bit for bit
//! The event queue keys events by (time, origin, the origin's own sequence) and never by
//! who pushed them or when ([`crate::sim::queue`]). A node's events are pushed only by that
//! node's own handlers, so its partition numbers them as the serial run does; a wire's
//! arrivals are keyed by (time, wire) alone; the run's own events are pushed identically by
//! every partition. So each partition handles its events in the serial order, with the same
//! inputs: by induction it does exactly what the serial run does with them. What is counted
//! everywhere (counters, a flow's drops) is summed at the end; everything else is taken from
//! the partition that owns it, into one simulation that then finishes as the serial one does.
//!
//! When every finite flow is done the serial run stops after that event; a partition whose
//! own flows are all done therefore pauses at that event's key, and once every partition has,
//! each runs on to the latest of those keys, and no further.
//!
//! The PFC watchdog judges the whole fabric at once: every partition keeps a copy of it, told
//! at each window's end of every partition's pauses and resumes in time order; windows end at
//! its ticks, where the partitions say which of their ports hold paused data.
//!
//! Not (yet) split, run serially with a reason: flows that wait for others (a finished flow may start one elsewhere at once: no
//! lookahead), `[output] links`, `cc_flows` and `pools`, observers (pcap, traces).

use super::partition::Plan;
use super::{Event, Simulation, RunOutput, Aborted, Parts};
use crate::net::packet::Packet;
use crate::observe::Quiet;
use crate::sim::units::Time;
use crate::transport::common::int::IntHops;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// What a partition of a parallel run knows of the others.
pub(super) struct Shard {
    pub(super) me: u16,
    /// Per node: its partition.
    pub(super) owner: Arc<Vec<u16>>,
    /// Packets for each partition, sent this window.
    outbox: Vec<Vec<Crossing>>,
    /// The earliest arrival sent this window.
    sent_first: Option<Time>,
    /// Its ports' pauses and resumes this window (time, port, paused), for the watchdog.
    pub(super) pauses: Vec<(Time, u32, bool)>,
}

impl Shard {
    pub(super) fn owns(&self, node: usize) -> bool {
        self.owner[node] == self.me
    }
}

/// A packet on a link between two partitions.
pub(super) struct Crossing {
    arrival: Time,
    port: u32,
    pkt: Packet,
    int: IntHops,
}

/// How a parallel run went: its partitions and where their threads' time went.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParallelReport {
    /// Threads the run used (1: it ran serially).
    pub threads: usize,
    /// Why it ran serially although more threads were asked for.
    pub serial_because: Option<String>,
    pub lookahead: Time,
    pub windows: u64,
    /// Per partition: its link ends (the balance it was planned by), the events it handled,
    /// the wall time it worked and the wall time it waited at barriers (seconds).
    pub weight: Vec<u64>,
    pub events: Vec<u64>,
    pub busy_s: Vec<f64>,
    pub wait_s: Vec<f64>,
}

/// Why these parts cannot run split (None: they can).
pub fn obstacle(p: &Parts) -> Option<String> {
    let why = if !p.dependencies.is_empty() || p.collectives.is_some() {
        "flows wait for others (a finished flow may start another anywhere at once)"
    } else if p.links.is_some() {
        "[output] links is asked for"
    } else if !p.watched_flows.is_empty() || !p.watched_pools.is_empty() {
        "[output] cc_flows or pools is asked for"
    } else if p.flows.is_empty() {
        "it has no flows"
    } else {
        return None;
    };
    Some(why.to_string())
}

/// A reusable barrier for a fixed party that spins briefly and then yields (windows are short:
/// a sleeping barrier's wake-up would cost more than many windows' work), and that a
/// partition that failed can break, so the others return instead of waiting forever.
struct Gate {
    parties: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
    broken: AtomicBool,
}

impl Gate {
    fn new(parties: usize) -> Gate {
        Gate { parties, arrived: AtomicUsize::new(0), generation: AtomicUsize::new(0), broken: AtomicBool::new(false) }
    }

    /// Waits for every party; false if the gate was broken.
    fn wait(&self) -> bool {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.parties {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return !self.broken.load(Ordering::Acquire);
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            if self.broken.load(Ordering::Acquire) {
                return false;
            }
            spins += 1;
            if spins < 2_000 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        !self.broken.load(Ordering::Acquire)
    }

    fn brk(&self) {
        self.broken.store(true, Ordering::Release);
    }
}

/// What a partition tells the others at a barrier.
#[derive(Clone, Copy, Debug, Default)]
struct Note {
    /// Its earliest event, or earliest arrival it sent (None: nothing).
    next: Option<Time>,
    /// Its finite flows not done.
    left: usize,
    /// The key of the event after which its last finite flow was done, if that was in this
    /// window (it paused there).
    paused: Option<(Time, u64)>,
    abort: bool,
}

/// What the partitions share.
struct Exchange {
    parts: usize,
    gate: Gate,
    /// Per barrier round's parity and partition: its note.
    notes: [Vec<Mutex<Note>>; 2],
    /// Per window's parity, sender and receiver: packets.
    mail: [Vec<Mutex<Vec<Crossing>>>; 2],
    /// Per window's parity and partition: its ports' pauses and resumes (time, port, paused),
    /// and at a tick its ports holding paused data.
    pauses: [Vec<Mutex<PauseLog>>; 2],
}

type PauseLog = (Vec<(Time, u32, bool)>, Vec<u32>);

impl Exchange {
    fn note(&self, round: u64, me: usize, note: Note) {
        *self.notes[(round & 1) as usize][me].lock().expect("no partition panics holding a note") = note;
    }

    fn read(&self, round: u64) -> Vec<Note> {
        self.notes[(round & 1) as usize].iter().map(|m| *m.lock().expect("no partition panics holding a note")).collect()
    }
}

impl Simulation<Quiet> {
    /// Runs `parts` split by `plan`, one thread per partition; the output is the serial run's.
    pub fn run_parallel(parts: Parts, plan: &Plan, memory: &dyn Fn(&Simulation<Quiet>) -> crate::hw::memory::MemoryReport, progress: &mut dyn FnMut(Time, Time) -> bool) -> (Result<RunOutput, Aborted>, ParallelReport) {
        let owner = Arc::new(plan.owner.clone());
        let n = plan.parts;
        let mut sims: Vec<Simulation<Quiet>> = std::thread::scope(|s| {
            let handles: Vec<_> = (1..n)
                .map(|me| {
                    let (parts, owner) = (parts.clone(), owner.clone());
                    s.spawn(move || Simulation::assemble_part(parts, me as u16, owner, n))
                })
                .collect();
            let first = Simulation::assemble_part(parts, 0, owner.clone(), n);
            std::iter::once(first).chain(handles.into_iter().map(|h| h.join().expect("assembly does not panic"))).collect()
        });
        let report0 = memory(&sims[0]);
        sims[0].set_memory_report(report0);
        let ex = Exchange {
            parts: n,
            gate: Gate::new(n),
            notes: [(0..n).map(|_| Mutex::new(Note::default())).collect(), (0..n).map(|_| Mutex::new(Note::default())).collect()],
            mail: [(0..n * n).map(|_| Mutex::new(Vec::new())).collect(), (0..n * n).map(|_| Mutex::new(Vec::new())).collect()],
            pauses: [(0..n).map(|_| Mutex::new(PauseLog::default())).collect(), (0..n).map(|_| Mutex::new(PauseLog::default())).collect()],
        };
        let lookahead = plan.lookahead;
        let mut report = ParallelReport { threads: n, lookahead, weight: plan.weight.clone(), ..Default::default() };
        let (first, rest) = sims.split_first_mut().expect("two partitions");
        let outcomes: Vec<Option<Outcome>> = std::thread::scope(|s| {
            let ex = &ex;
            let handles: Vec<_> = rest
                .iter_mut()
                .map(|sim| {
                    s.spawn(move || {
                        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sim.drive(ex, lookahead, &mut |_, _| true)));
                        out.unwrap_or_else(|_| {
                            ex.gate.brk();
                            None
                        })
                    })
                })
                .collect();
            let mine = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| first.drive(ex, lookahead, progress))).unwrap_or_else(|_| {
                ex.gate.brk();
                None
            });
            std::iter::once(mine).chain(handles.into_iter().map(|h| h.join().unwrap_or(None))).collect()
        });
        for o in &outcomes {
            let o = o.as_ref();
            report.events.push(o.map_or(0, |o| o.events));
            report.busy_s.push(o.map_or(0.0, |o| o.busy_s));
            report.wait_s.push(o.map_or(0.0, |o| o.wait_s));
            report.windows = report.windows.max(o.map_or(0, |o| o.windows));
        }
        let stopped = match outcomes.iter().map(|o| o.as_ref().map(|o| o.stopped)).collect::<Option<Vec<_>>>() {
            Some(s) => s,
            None => panic!("a partition of a parallel run failed"),
        };
        if stopped.iter().any(Option::is_none) {
            return (Err(Aborted), report);
        }
        let stopped_at = stopped[0].expect("checked");
        debug_assert!(stopped.iter().all(|&s| s == Some(stopped_at)), "partitions agree where the run stopped");
        // Packets still between partitions: mail not yet taken, and what was sent since.
        let mut crossing: Vec<Crossing> = ex.mail.into_iter().flatten().flat_map(|m| m.into_inner().unwrap_or_default()).collect();
        for sim in sims.iter_mut() {
            let shard = sim.shard.as_mut().expect("a partition");
            crossing.extend(shard.outbox.iter_mut().flat_map(std::mem::take));
        }
        let mut sims = sims.into_iter();
        let mut merged = sims.next().expect("partition 0");
        merged.absorb(sims.collect(), crossing);
        progress(stopped_at, merged.end);
        merged.now = stopped_at;
        if stopped_at > merged.last_sample {
            merged.record_sample();
        }
        (Ok(merged.finish(stopped_at)), report)
    }

    /// A partition: the whole simulation assembled, running `owner`'s nodes of partition `me`.
    fn assemble_part(parts: Parts, me: u16, owner: Arc<Vec<u16>>, n: usize) -> Simulation<Quiet> {
        let shard = Shard { me, owner, outbox: (0..n).map(|_| Vec::new()).collect(), sent_first: None, pauses: Vec::new() };
        Simulation::with_observer_in(parts, Quiet, Some(Box::new(shard)))
    }

    /// This partition's side of the run: windows until the run's end (None: another partition
    /// failed).
    fn drive(&mut self, ex: &Exchange, lookahead: Time, progress: &mut dyn FnMut(Time, Time) -> bool) -> Option<Outcome> {
        let me = self.shard.as_ref().expect("a partition").me as usize;
        let pause = self.stop_when_done && self.endless == 0;
        let end = self.end;
        // The watchdog's first tick comes a window after the pause that arms it: windows no
        // longer than that never pass a tick.
        let lookahead = self.pfc_watch.as_ref().map_or(lookahead, |w| lookahead.min(w.window()));
        // Every partition keeps the whole run's watchdog alike: when it ticks next.
        let mut tick_at: Option<Time> = None;
        let mut out = Outcome { stopped: None, events: 0, busy_s: 0.0, wait_s: 0.0, windows: 0 };
        let (mut round, mut window) = (0u64, 0u64);
        let mut last_report = std::time::Instant::now();
        let wait = |ex: &Exchange, out: &mut Outcome| {
            let t = std::time::Instant::now();
            let ok = ex.gate.wait();
            out.wait_s += t.elapsed().as_secs_f64();
            ok
        };
        ex.note(round, me, Note { next: self.events.peek_time(), left: self.finite_left, ..Note::default() });
        if !wait(ex, &mut out) {
            return None;
        }
        let mut start = ex.read(round).iter().filter_map(|n| n.next).min();
        round += 1;
        loop {
            let Some(from) = start.filter(|&t| t <= end) else {
                out.stopped = Some(end);
                return Some(out);
            };
            let until = (from + lookahead).min(end + Time::from_ps(1));
            // A tick is judged at the end of a window, after the run's own events at its time
            // (flow starts and samples come before it at one time) and before the nodes'.
            let (until, at_tick) = match tick_at {
                Some(t) if t <= until => (t, true),
                _ => (until, false),
            };
            self.shard.as_mut().expect("a partition").sent_first = None;
            let busy = std::time::Instant::now();
            let mut paused = self.run_window(from, until, pause, me, &mut out.events);
            if paused.is_none() && at_tick {
                paused = self.run_before_tick(until, pause, me, &mut out.events);
            }
            out.busy_s += busy.elapsed().as_secs_f64();
            out.windows += 1;
            self.post(ex, window);
            if paused.is_none() {
                self.post_pauses(ex, window, at_tick);
            }
            let mut abort = false;
            if me == 0 && last_report.elapsed().as_millis() >= 200 {
                last_report = std::time::Instant::now();
                abort = !progress(from, end);
            }
            ex.note(round, me, Note { next: self.next_time(), left: self.finite_left, paused, abort });
            if !wait(ex, &mut out) {
                return None;
            }
            let mut notes = ex.read(round);
            round += 1;
            if notes.iter().any(|n| n.abort) {
                return Some(out);
            }
            if pause && notes.iter().all(|n| n.left == 0) {
                // The serial run stops after the last of the pauses' events.
                let last = notes.iter().filter_map(|n| n.paused).max().expect("the last flow finished in this window");
                let busy = std::time::Instant::now();
                self.run_through(last, me, &mut out.events);
                out.busy_s += busy.elapsed().as_secs_f64();
                out.stopped = Some(last.0);
                return Some(out);
            }
            if notes.iter().any(|n| n.paused.is_some()) {
                // Partitions that paused for nothing finish the window.
                if paused.is_some() {
                    let busy = std::time::Instant::now();
                    self.run_window(from, until, false, me, &mut out.events);
                    if at_tick {
                        self.run_before_tick(until, false, me, &mut out.events);
                    }
                    out.busy_s += busy.elapsed().as_secs_f64();
                    self.post(ex, window);
                    self.post_pauses(ex, window, at_tick);
                }
                ex.note(round, me, Note { next: self.next_time(), left: self.finite_left, paused: None, abort: false });
                if !wait(ex, &mut out) {
                    return None;
                }
                notes = ex.read(round);
                round += 1;
            }
            if self.pfc_watch.is_some() {
                // The whole run's pauses and resumes of the window, then the tick at its end.
                let (next, deadlock) = self.hear_pauses(ex, window, at_tick.then_some(until), me);
                if at_tick || next.is_some() {
                    tick_at = next;
                }
                if deadlock {
                    out.stopped = Some(until);
                    return Some(out);
                }
            }
            start = notes.iter().filter_map(|n| n.next).chain(tick_at).min();
            self.take_mail(ex, window);
            window += 1;
        }
    }

    /// At a tick's time `t`: the run's own events due then, which come before the tick.
    fn run_before_tick(&mut self, t: Time, pause: bool, me: usize, events: &mut u64) -> Option<(Time, u64)> {
        self.run_to((t, crate::sim::queue::first_key(super::PFC_TICKS) - 1), pause, me, events)
    }

    /// Leaves this window's pauses and resumes (and at a tick, which of its ports hold paused
    /// data) for every partition's watchdog.
    fn post_pauses(&mut self, ex: &Exchange, window: u64, at_tick: bool) {
        if self.pfc_watch.is_none() {
            return;
        }
        let holding: Vec<u32> = if at_tick {
            (0..self.ports.len()).filter(|&p| self.owns(self.ports[p].node) && super::holds_paused_data(&self.ports[p])).map(|p| p as u32).collect()
        } else {
            Vec::new()
        };
        let shard = self.shard.as_mut().expect("a partition");
        let mut slot = ex.pauses[(window & 1) as usize][shard.me as usize].lock().expect("no partition panics holding its pauses");
        // Everyone read the slot's last contents (two windows ago) before the last barrier.
        slot.0.clear();
        slot.0.append(&mut shard.pauses);
        slot.1 = holding;
    }

    /// Every partition's pauses and resumes of window `window`, in time order, told to this
    /// partition's copy of the run's watchdog, then its tick at `tick` if one is due: when it
    /// ticks next if that changed (armed, or the tick's next), and whether it found a deadlock.
    fn hear_pauses(&mut self, ex: &Exchange, window: u64, tick: Option<Time>, me: usize) -> (Option<Time>, bool) {
        let slots = &ex.pauses[(window & 1) as usize];
        let mut changes: Vec<(Time, u32, bool)> = Vec::new();
        let mut holding: Vec<u32> = Vec::new();
        for slot in slots {
            let s = slot.lock().expect("no partition panics holding its pauses");
            changes.extend_from_slice(&s.0);
            holding.extend_from_slice(&s.1);
        }
        changes.sort_unstable_by_key(|&(t, p, _)| (t, p));
        holding.sort_unstable();
        let w = self.pfc_watch.as_mut().expect("PFC is on");
        let mut next = None;
        for (t, p, paused) in changes {
            if let Some(at) = w.on_change(t, p as usize, paused) {
                next = Some(at);
            }
        }
        let mut deadlock = false;
        if let Some(t) = tick {
            next = w.tick(t, |p| holding.binary_search(&(p as u32)).is_ok());
            deadlock = w.deadlock.is_some();
            if me == 0 {
                self.c.events += 1; // the tick is an event of the serial run
            }
        }
        (next, deadlock)
    }

    /// Handles this partition's events due before `until`; with `pause`, stops after the
    /// event that finished its last finite flow and returns that event's key.
    fn run_window(&mut self, from: Time, until: Time, pause: bool, me: usize, events: &mut u64) -> Option<(Time, u64)> {
        if pause && self.finite_left == 0 {
            // Done before the window: paused ahead of its first event.
            return Some((from, 0));
        }
        self.run_to((until - Time::from_ps(1), u64::MAX), pause, me, events)
    }

    /// Handles this partition's events up to and including key `last`.
    fn run_through(&mut self, last: (Time, u64), me: usize, events: &mut u64) {
        self.run_to(last, false, me, events);
    }

    /// The partitions' event loop: this partition's events up to and including key `last`;
    /// with `pause`, it stops after the event that finished its last finite flow and returns
    /// that event's key.
    fn run_to(&mut self, last: (Time, u64), pause: bool, me: usize, events: &mut u64) -> Option<(Time, u64)> {
        while let Some((t, key, ev)) = self.events.pop_through(last.0, last.1) {
            self.now = t;
            self.count(&ev, me, events);
            self.handle(ev);
            if pause && self.finite_left == 0 {
                return Some((t, key));
            }
        }
        None
    }

    /// Counts an event once for the whole run: the run's own events, which every partition
    /// handles, only in partition 0.
    fn count(&mut self, ev: &Event, me: usize, events: &mut u64) {
        *events += 1;
        if me == 0 || !matches!(ev, Event::FlowStart(_) | Event::Sample) {
            self.c.events += 1;
        }
    }

    /// This partition's earliest event or arrival sent this window.
    fn next_time(&mut self) -> Option<Time> {
        let sent = self.shard.as_ref().expect("a partition").sent_first;
        match (self.events.peek_time(), sent) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Leaves this window's packets for their partitions.
    fn post(&mut self, ex: &Exchange, window: u64) {
        let shard = self.shard.as_mut().expect("a partition");
        let me = shard.me as usize;
        for (to, out) in shard.outbox.iter_mut().enumerate() {
            if out.is_empty() {
                continue;
            }
            let mut slot = ex.mail[(window & 1) as usize][me * ex.parts + to].lock().expect("no partition panics holding mail");
            if slot.is_empty() {
                std::mem::swap(&mut *slot, out);
            } else {
                slot.append(out);
            }
        }
    }

    /// Takes the packets the other partitions sent this one in the window: each joins its wire.
    fn take_mail(&mut self, ex: &Exchange, window: u64) {
        let me = self.shard.as_ref().expect("a partition").me as usize;
        for from in 0..ex.parts {
            let mut slot = ex.mail[(window & 1) as usize][from * ex.parts + me].lock().expect("no partition panics holding mail");
            for c in slot.drain(..) {
                let mut pkt = c.pkt;
                if pkt.int != crate::net::int::NO_INT {
                    pkt.int = self.int.alloc();
                    for hop in c.int.as_slice() {
                        self.int.stamp(pkt.int, *hop);
                    }
                }
                let port = &mut self.ports[c.port as usize];
                debug_assert!(port.pipe.back().is_none_or(|&(t, _)| t < c.arrival));
                port.pipe.push_back((c.arrival, pkt));
                if port.pipe.len() == 1 {
                    self.events.push_unique(c.arrival, self.wire_origins + c.port, Event::Arrive(c.port));
                }
            }
        }
    }

    /// Takes into this simulation (partition 0) what the other partitions own, and the packets
    /// still between partitions onto their wires: the serial run's state at its end.
    fn absorb(&mut self, others: Vec<Simulation<Quiet>>, crossing: Vec<Crossing>) {
        let owner = self.shard.as_ref().expect("a partition").owner.clone();
        let remote: Vec<usize> = (0..self.ports.len()).filter(|&p| self.ports[p].remote).collect();
        // A wire into another partition is that partition's copy of it.
        let mut pipes: Vec<(usize, std::collections::VecDeque<(Time, Packet)>)> = Vec::new();
        let take_pipes = |sim: &mut Simulation<Quiet>, q: u16, pipes: &mut Vec<_>| {
            for &p in &remote {
                if owner[sim.ports[p].peer_node] == q {
                    pipes.push((p, std::mem::take(&mut sim.ports[p].pipe)));
                }
            }
        };
        take_pipes(self, 0, &mut pipes);
        for other in others {
            let q = other.shard.as_ref().expect("a partition").me;
            let mut other = other;
            take_pipes(&mut other, q, &mut pipes);
            let Simulation { ports, switches, nics, conns, c, samples, queue_samples, sampled, watched_last, live, live_high_water, .. } = other;
            for (id, port) in ports.into_iter().enumerate() {
                if owner[port.node] == q {
                    self.ports[id] = port;
                }
            }
            for (node, sw) in switches.into_iter().enumerate() {
                if owner[node] == q {
                    self.switches[node] = sw;
                }
            }
            for (i, nic) in nics.into_iter().enumerate() {
                if owner[self.nic_node(i)] == q {
                    self.nics[i] = nic;
                }
            }
            for (f, theirs) in conns.into_iter().enumerate() {
                let mine = &mut self.conns[f];
                for side in 0..2 {
                    let node = if side == 0 { mine.def.src } else { mine.def.dst };
                    if owner[node] == q {
                        mine.ends[side] = theirs.ends[side];
                    }
                }
                if owner[mine.def.src] == q {
                    mine.ideal_fct = theirs.ideal_fct;
                }
                if owner[mine.def.dst] == q {
                    mine.first_arrival = theirs.first_arrival;
                    mine.received = theirs.received;
                }
                mine.drops += theirs.drops;
                mine.drops_by_kind.add(&theirs.drops_by_kind);
            }
            self.c.add(&c);
            self.samples.extend(samples);
            self.queue_samples.extend(queue_samples);
            for (i, s) in sampled.into_iter().enumerate() {
                if owner[s.1] == q {
                    self.sampled[i] = s;
                }
            }
            for (i, last) in watched_last.into_iter().enumerate() {
                if owner[self.ports[self.watched[i]].node] == q {
                    self.watched_last[i] = last;
                }
            }
            self.live += live;
            // An upper bound: the partitions' peaks need not coincide.
            self.live_high_water += live_high_water;
        }
        for (p, pipe) in pipes {
            self.ports[p].pipe = pipe;
        }
        let mut crossing = crossing;
        crossing.sort_by_key(|c| (c.port, c.arrival));
        for c in crossing {
            self.ports[c.port as usize].pipe.push_back((c.arrival, c.pkt));
        }
        // Samples in the serial order: by time, then host or watched port.
        self.samples.sort_by_key(|s| (s.time, s.host));
        self.queue_samples.sort_by_key(|s| (s.time, s.link));
        self.shard = None;
    }
}

impl<O: crate::observe::Observer> Simulation<O> {
    /// A packet put on wire `p` into another partition: sent there.
    pub(super) fn cross(&mut self, p: usize, arrival: Time, pkt: Packet) {
        let int = self.int.get(pkt.int);
        self.int.free(pkt.int);
        let to = self.ports[p].peer_node;
        let shard = self.shard.as_mut().expect("a remote port is in a partition");
        let dest = shard.owner[to] as usize;
        shard.outbox[dest].push(Crossing { arrival, port: p as u32, pkt, int });
        shard.sent_first = Some(shard.sent_first.map_or(arrival, |t| t.min(arrival)));
    }
}

/// How one partition's thread went.
struct Outcome {
    /// Where the run stopped (None: aborted).
    stopped: Option<Time>,
    events: u64,
    busy_s: f64,
    wait_s: f64,
    windows: u64,
}

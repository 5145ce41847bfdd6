//! Flows that start when others are done: htsim's connection-matrix triggers, a flow list's
//! `after`, and the steps of a collective. A *trigger* starts its target flows when it fires;
//! flows *signal* triggers when they are done sending (every byte acknowledged: htsim's
//! `send_done_trigger`) or receiving (every byte delivered in order: `recv_done_trigger`). A
//! one-shot trigger fires all its targets at its first signal (later signals do nothing), a
//! multi-shot one starts its next target at each signal, a barrier of `n` fires all its targets
//! at its `n`-th signal (htsim's `sim/trigger.cpp`). A started flow waits its `gap` (compute
//! time) and starts no earlier than its own start time.
//!
//! This is workload state, not transport state: the engine reports each flow's two ends
//! ([`Dependencies::done`]) and the workload answers with the flows that may start now and
//! when; nothing in the engine knows why a flow waited.

use crate::sim::units::Time;

/// Which end of a flow a signal waits for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Done {
    /// The sender saw every byte acknowledged (the flow's completion time).
    #[default]
    Sent,
    /// The receiver delivered every byte in order.
    Received,
}

/// How a trigger fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriggerKind {
    /// All targets at the first signal.
    OneShot,
    /// The next target (in the order given) at each signal.
    MultiShot,
    /// All targets at the `n`-th signal.
    Barrier(u32),
}

/// A trigger and the flows it starts, by flow index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trigger {
    pub kind: TriggerKind,
    pub targets: Vec<usize>,
}

/// Flow `flow` signals trigger `trigger` when its `on` end is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Signal {
    pub flow: usize,
    pub on: Done,
    pub trigger: usize,
}

/// How long a started flow waits, and its earliest start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delay {
    pub flow: usize,
    pub gap: Time,
    pub not_before: Time,
}

/// One flow's barrier wait (a flow list's `after`): `flow` starts `gap` after every flow in
/// `after` is done (`on`), and not before `not_before`, its own start time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wait {
    pub flow: usize,
    pub after: Vec<usize>,
    pub on: Done,
    pub gap: Time,
    pub not_before: Time,
}

/// Why a set of triggers cannot run: what it names and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DependencyError {
    /// `flow` names a flow index that does not exist (there are `flows`).
    Dangling { flow: usize, after: usize, flows: usize },
    /// `flow` waits for itself, through others: the cycle of flows, starting at `flow`.
    Cycle { flow: usize, cycle: Vec<usize> },
    /// A signal or target names a trigger that does not exist.
    NoTrigger { trigger: usize, triggers: usize },
    /// `flow` is a target of two triggers.
    TwoTriggers { flow: usize, first: usize, second: usize },
    /// A barrier needs more signals than flows give it, so it would never fire.
    NeverFires { trigger: usize, needs: u32, signals: u32 },
}

impl std::fmt::Display for DependencyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DependencyError::Dangling { after, flows, .. } => write!(f, "waits for flow {after}, which does not exist (flows are 0..{})", flows.saturating_sub(1)),
            DependencyError::Cycle { cycle, .. } => {
                let path: Vec<String> = cycle.iter().chain(cycle.first()).map(|i| i.to_string()).collect();
                write!(f, "flows wait for each other in a cycle ({}), so none would ever start", path.join(" -> "))
            }
            DependencyError::NoTrigger { trigger, triggers } => write!(f, "names trigger {trigger}, which does not exist ({triggers} triggers)"),
            DependencyError::TwoTriggers { flow, first, second } => write!(f, "flow {flow} is started by two triggers ({first} and {second}); a flow has one"),
            DependencyError::NeverFires { trigger, needs, signals } => write!(f, "trigger {trigger} is a barrier of {needs} but only {signals} signals reach it, so it would never fire"),
        }
    }
}

const NONE: u32 = u32::MAX;

/// Compressed lists: item `i`'s entries are `items[first[i]..first[i + 1]]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Lists {
    first: Vec<u32>,
    items: Vec<u32>,
}

impl Lists {
    /// From (owner, entry) pairs, entries kept in the order given per owner.
    fn new(owners: usize, pairs: &[(u32, u32)]) -> Lists {
        let mut first = vec![0u32; owners + 1];
        for &(o, _) in pairs {
            first[o as usize + 1] += 1;
        }
        for i in 0..owners {
            first[i + 1] += first[i];
        }
        let mut at = first.clone();
        let mut items = vec![0u32; pairs.len()];
        for &(o, e) in pairs {
            items[at[o as usize] as usize] = e;
            at[o as usize] += 1;
        }
        Lists { first, items }
    }

    fn of(&self, i: usize) -> &[u32] {
        if self.first.is_empty() {
            return &[];
        }
        &self.items[self.first[i] as usize..self.first[i + 1] as usize]
    }
}

/// Which flows wait for which, by flow index (the order of the run's flow list).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dependencies {
    /// Per flow: the trigger that starts it ([`NONE`]: it starts at its own start time).
    started_by: Vec<u32>,
    /// Per flow: the time from its trigger firing to its start, and its earliest start.
    gap: Vec<Time>,
    not_before: Vec<Time>,
    kind: Vec<TriggerKind>,
    /// Per trigger: signals still needed (barrier), next target (multi-shot), 0 once fired
    /// (one-shot: 1 before).
    state: Vec<u32>,
    targets: Lists,
    /// Per flow and [`Done`] (index `2 * flow + on`): the triggers it signals.
    signals: Lists,
    /// Per flow and [`Done`]: already reported (each end counts once).
    reported: Vec<bool>,
}

fn slot(flow: usize, on: Done) -> usize {
    2 * flow + (on == Done::Received) as usize
}

impl Dependencies {
    /// Whether no flow waits for another.
    pub fn is_empty(&self) -> bool {
        self.state.is_empty()
    }

    /// `flows` flows, none waiting: every flow starts at its own time.
    pub fn none(flows: usize) -> Dependencies {
        Dependencies { started_by: vec![NONE; flows], reported: vec![false; 2 * flows], ..Default::default() }
    }

    /// A barrier per wait (a flow list's `after`); a prerequisite named twice counts once.
    pub fn new(flows: usize, waits: &[Wait]) -> Result<Dependencies, DependencyError> {
        let (mut triggers, mut signals, mut delays) = (Vec::new(), Vec::new(), Vec::new());
        for w in waits {
            if let Some(&a) = w.after.iter().find(|&&a| a >= flows) {
                return Err(DependencyError::Dangling { flow: w.flow, after: a, flows });
            }
            let mut after = w.after.clone();
            after.sort_unstable();
            after.dedup();
            let t = triggers.len();
            triggers.push(Trigger { kind: TriggerKind::Barrier(after.len() as u32), targets: vec![w.flow] });
            signals.extend(after.iter().map(|&a| Signal { flow: a, on: w.on, trigger: t }));
            delays.push(Delay { flow: w.flow, gap: w.gap, not_before: w.not_before });
        }
        Dependencies::with_triggers(flows, &triggers, &signals, &delays)
    }

    /// `flows` flows started by `triggers`, which `signals` fire; `delays` give the started
    /// flows' gaps and earliest starts (default none). Refuses what names a flow or trigger
    /// that does not exist, a flow two triggers start, a barrier that would never fire, and
    /// flows that wait for themselves, naming the first concerned.
    pub fn with_triggers(flows: usize, triggers: &[Trigger], signals: &[Signal], delays: &[Delay]) -> Result<Dependencies, DependencyError> {
        let mut d = Dependencies::none(flows);
        if triggers.is_empty() && signals.is_empty() {
            return Ok(d);
        }
        let no_trigger = |trigger| DependencyError::NoTrigger { trigger, triggers: triggers.len() };
        let mut target_pairs = Vec::new();
        let mut received = vec![0u32; triggers.len()];
        for (t, trig) in triggers.iter().enumerate() {
            for &f in &trig.targets {
                if f >= flows {
                    return Err(DependencyError::Dangling { flow: f, after: f, flows });
                }
                if d.started_by[f] != NONE {
                    return Err(DependencyError::TwoTriggers { flow: f, first: d.started_by[f] as usize, second: t });
                }
                d.started_by[f] = t as u32;
                target_pairs.push((t as u32, f as u32));
            }
        }
        let mut signal_pairs = Vec::new();
        for s in signals {
            if s.flow >= flows {
                return Err(DependencyError::Dangling { flow: s.flow, after: s.flow, flows });
            }
            if s.trigger >= triggers.len() {
                return Err(no_trigger(s.trigger));
            }
            received[s.trigger] += 1;
            signal_pairs.push((slot(s.flow, s.on) as u32, s.trigger as u32));
        }
        for (t, trig) in triggers.iter().enumerate() {
            if let TriggerKind::Barrier(n) = trig.kind {
                if received[t] < n {
                    return Err(DependencyError::NeverFires { trigger: t, needs: n, signals: received[t] });
                }
            }
        }
        d.gap = vec![Time::ZERO; flows];
        d.not_before = vec![Time::ZERO; flows];
        for x in delays {
            if x.flow >= flows {
                return Err(DependencyError::Dangling { flow: x.flow, after: x.flow, flows });
            }
            d.gap[x.flow] = x.gap;
            d.not_before[x.flow] = x.not_before;
        }
        d.kind = triggers.iter().map(|t| t.kind).collect();
        d.state = triggers
            .iter()
            .map(|t| match t.kind {
                TriggerKind::OneShot => 1,
                TriggerKind::MultiShot => 0,
                TriggerKind::Barrier(n) => n,
            })
            .collect();
        d.targets = Lists::new(triggers.len(), &target_pairs);
        d.signals = Lists::new(2 * flows, &signal_pairs);
        if let Some(cycle) = d.find_cycle() {
            return Err(DependencyError::Cycle { flow: cycle[0], cycle });
        }
        Ok(d)
    }

    /// Several workloads' dependencies in one index space of `flows` flows: each part with
    /// the new index of each of its flows (its triggers follow the previous parts'). The
    /// triggers, their targets and each flow's signals keep their order.
    pub fn merge(flows: usize, parts: &[(&Dependencies, &[usize])]) -> Result<Dependencies, DependencyError> {
        let (mut triggers, mut signals, mut delays) = (Vec::new(), Vec::new(), Vec::new());
        for &(d, id) in parts {
            let base = triggers.len();
            for t in 0..d.kind.len() {
                triggers.push(Trigger { kind: d.kind[t], targets: d.targets.of(t).iter().map(|&f| id[f as usize]).collect() });
            }
            for f in 0..d.started_by.len() {
                for on in [Done::Sent, Done::Received] {
                    signals.extend(d.signals.of(slot(f, on)).iter().map(|&t| Signal { flow: id[f], on, trigger: base + t as usize }));
                }
                if d.started_by[f] != NONE {
                    delays.push(Delay { flow: id[f], gap: d.gap[f], not_before: d.not_before[f] });
                }
            }
        }
        Dependencies::with_triggers(flows, &triggers, &signals, &delays)
    }

    /// A cycle of waits, if any, starting at its smallest flow index. The search runs over
    /// the graph whose nodes are the flows and the triggers (a flow's edges lead to the
    /// triggers its ends signal, a trigger's to the flows it starts), so a barrier between two
    /// steps of N flows costs 2N edges, not the N^2 of listing every flow's dependants: O(V +
    /// E) in the input's size. Iterative depth-first search (a workload may have millions of
    /// flows), each node's edges walked by an index, last first.
    fn find_cycle(&self) -> Option<Vec<usize>> {
        const NEW: u8 = 0;
        const OPEN: u8 = 1;
        const CLOSED: u8 = 2;
        let flows = self.started_by.len();
        let nodes = flows + self.kind.len();
        // A node's edges: a flow's signals (both ends), a trigger's targets; nodes >= flows
        // are triggers.
        let edges = |v: usize| -> (&[u32], &[u32], usize) {
            if v < flows {
                (self.signals.of(slot(v, Done::Sent)), self.signals.of(slot(v, Done::Received)), flows)
            } else {
                (self.targets.of(v - flows), &[], 0)
            }
        };
        let edge_count = |v: usize| {
            let (a, b, _) = edges(v);
            a.len() + b.len()
        };
        let edge = |v: usize, k: usize| -> usize {
            let (a, b, offset) = edges(v);
            let e = if k < a.len() { a[k] } else { b[k - a.len()] };
            e as usize + offset
        };
        let mut state = vec![NEW; nodes];
        // (node, edges left to walk: the next one is at index `left - 1`).
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for root in 0..flows {
            if state[root] != NEW {
                continue;
            }
            state[root] = OPEN;
            stack.push((root, edge_count(root)));
            while let Some((v, left)) = stack.last_mut() {
                if *left == 0 {
                    state[*v] = CLOSED;
                    stack.pop();
                    continue;
                }
                *left -= 1;
                let w = edge(*v, *left);
                match state[w] {
                    NEW => {
                        state[w] = OPEN;
                        stack.push((w, edge_count(w)));
                    }
                    OPEN => {
                        let at = stack.iter().position(|&(h, _)| h == w).expect("an open node is on the stack");
                        let mut cycle: Vec<usize> = stack[at..].iter().map(|&(h, _)| h).filter(|&h| h < flows).collect();
                        let min = (0..cycle.len()).min_by_key(|&i| cycle[i]).expect("a cycle passes through a flow");
                        cycle.rotate_left(min);
                        return Some(cycle);
                    }
                    _ => {}
                }
            }
        }
        None
    }

    /// Flow `f` waits for a trigger before it may start.
    pub fn waits(&self, f: usize) -> bool {
        self.started_by[f] != NONE
    }

    /// Flow `f`'s `on` end is done at `now`: the triggers it signals fire as their kind says,
    /// and each flow they start starts its `gap` later (not before its own start time):
    /// `start(flow, at)` for each, in the triggers' order. An end reported twice counts once.
    pub fn done(&mut self, f: usize, on: Done, now: Time, mut start: impl FnMut(usize, Time)) {
        let s = slot(f, on);
        match self.reported.get_mut(s) {
            Some(reported) if !*reported => *reported = true,
            _ => return,
        }
        for i in 0..self.signals.of(s).len() {
            let t = self.signals.of(s)[i] as usize;
            let targets = self.targets.of(t);
            let fire: &[u32] = match self.kind[t] {
                TriggerKind::OneShot if self.state[t] == 1 => {
                    self.state[t] = 0;
                    targets
                }
                TriggerKind::MultiShot if (self.state[t] as usize) < targets.len() => {
                    self.state[t] += 1;
                    &targets[self.state[t] as usize - 1..self.state[t] as usize]
                }
                TriggerKind::Barrier(_) if self.state[t] > 0 => {
                    self.state[t] -= 1;
                    if self.state[t] == 0 { targets } else { &[] }
                }
                _ => &[],
            };
            for &g in fire {
                let g = g as usize;
                start(g, (now + self.gap[g]).max(self.not_before[g]));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait(flow: usize, after: &[usize], gap_us: u64) -> Wait {
        Wait { flow, after: after.to_vec(), on: Done::Sent, gap: Time::from_us(gap_us), not_before: Time::ZERO }
    }

    fn report(d: &mut Dependencies, f: usize, on: Done, now_us: u64) -> Vec<(usize, u64)> {
        let mut started = Vec::new();
        d.done(f, on, Time::from_us(now_us), |g, at| started.push((g, at.0 / 1_000_000)));
        started
    }

    fn finish(d: &mut Dependencies, f: usize, now_us: u64) -> Vec<(usize, u64)> {
        report(d, f, Done::Sent, now_us)
    }

    /// Two jobs' waits merged into one numbering behave as each did alone, renumbered: a
    /// barrier (flow list) and a multi-shot trigger with gaps; a job without waits adds none.
    #[test]
    fn merged_jobs_wait_as_they_did_alone_renumbered() {
        let a = Dependencies::new(3, &[Wait { not_before: Time::from_us(50), ..wait(2, &[0, 1], 5) }]).unwrap();
        let trig = [Trigger { kind: TriggerKind::MultiShot, targets: vec![1, 2] }];
        let b = Dependencies::with_triggers(3, &trig, &[Signal { flow: 0, on: Done::Received, trigger: 0 }], &[Delay { flow: 2, gap: Time::from_us(3), not_before: Time::ZERO }]).unwrap();
        let none = Dependencies::none(2);
        // a's flows at 0, 2, 4; b's at 1, 5, 6; none's at 3, 7.
        let (ia, ib, inone) = ([0, 2, 4], [1, 5, 6], [3, 7]);
        let mut m = Dependencies::merge(8, &[(&a, &ia), (&none, &inone), (&b, &ib)]).unwrap();
        assert!(m.waits(4) && m.waits(5) && m.waits(6));
        assert!(!(0..4).any(|f| m.waits(f)) && !m.waits(7));
        assert_eq!(finish(&mut m, 0, 10), vec![]);
        assert_eq!(finish(&mut m, 2, 20), vec![(4, 50)], "a's barrier, not before its start");
        assert_eq!(report(&mut m, 1, Done::Received, 30), vec![(5, 30)], "b's first shot");
        assert_eq!(report(&mut m, 1, Done::Received, 40), vec![], "each end counts once");
        // Parts without waits merge to none.
        let bad = Dependencies::merge(2, &[(&Dependencies::none(2), &[0, 1])]).unwrap();
        assert_eq!(bad, Dependencies::none(2));
    }

    #[test]
    fn a_barrier_starts_its_flow_a_gap_after_the_last_prerequisite_and_once() {
        // 2 waits for 0 and 1 (and names 0 twice); 3 waits for 2; 4 for nothing.
        let mut d = Dependencies::new(5, &[wait(2, &[0, 1, 0], 5), wait(3, &[2], 0)]).unwrap();
        assert_eq!((0..5).map(|f| d.waits(f)).collect::<Vec<_>>(), [false, false, true, true, false]);
        assert_eq!(finish(&mut d, 1, 10), []);
        assert_eq!(finish(&mut d, 1, 12), [], "a second report of the same flow counts once");
        assert_eq!(report(&mut d, 0, Done::Received, 15), [], "the waits are for sending");
        assert_eq!(finish(&mut d, 0, 20), [(2, 25)], "the last prerequisite, plus the gap");
        assert_eq!(finish(&mut d, 2, 30), [(3, 30)]);
        assert_eq!(finish(&mut d, 4, 40), []);
    }

    #[test]
    fn a_dependant_starts_no_earlier_than_its_own_start_time() {
        let w = |not_before| Wait { flow: 1, after: vec![0], on: Done::Sent, gap: Time::from_us(1), not_before: Time::from_us(not_before) };
        let mut d = Dependencies::new(2, &[w(50)]).unwrap();
        assert_eq!(finish(&mut d, 0, 10), [(1, 50)]);
        let mut d = Dependencies::new(2, &[w(5)]).unwrap();
        assert_eq!(finish(&mut d, 0, 10), [(1, 11)]);
    }

    #[test]
    fn several_dependants_start_in_index_order() {
        let mut d = Dependencies::new(4, &[wait(1, &[0], 0), wait(2, &[0], 2), wait(3, &[0], 0)]).unwrap();
        assert_eq!(finish(&mut d, 0, 1), [(1, 1), (2, 3), (3, 1)]);
    }

    #[test]
    fn triggers_fire_as_htsim_s_one_shot_multi_shot_and_barrier() {
        // 0 one-shot -> {1, 2}; 1 multi-shot -> [3, 4] in that order; 2 barrier of 2 -> 5.
        let triggers = [
            Trigger { kind: TriggerKind::OneShot, targets: vec![1, 2] },
            Trigger { kind: TriggerKind::MultiShot, targets: vec![4, 3] },
            Trigger { kind: TriggerKind::Barrier(2), targets: vec![5] },
        ];
        let signals = [
            Signal { flow: 0, on: Done::Received, trigger: 0 },
            Signal { flow: 6, on: Done::Sent, trigger: 0 },
            Signal { flow: 1, on: Done::Sent, trigger: 1 },
            Signal { flow: 2, on: Done::Received, trigger: 1 },
            Signal { flow: 6, on: Done::Received, trigger: 1 },
            Signal { flow: 3, on: Done::Sent, trigger: 2 },
            Signal { flow: 4, on: Done::Sent, trigger: 2 },
        ];
        let mut d = Dependencies::with_triggers(7, &triggers, &signals, &[Delay { flow: 3, gap: Time::from_us(2), not_before: Time::ZERO }]).unwrap();
        assert_eq!(report(&mut d, 0, Done::Sent, 1), [], "0 signals when received");
        assert_eq!(report(&mut d, 0, Done::Received, 2), [(1, 2), (2, 2)]);
        assert_eq!(report(&mut d, 6, Done::Sent, 3), [], "a one-shot fires once");
        assert_eq!(report(&mut d, 2, Done::Received, 4), [(4, 4)], "the multi-shot's first target");
        assert_eq!(report(&mut d, 1, Done::Sent, 5), [(3, 7)], "its second, after its gap");
        assert_eq!(report(&mut d, 6, Done::Received, 6), [], "none left");
        assert_eq!(report(&mut d, 4, Done::Sent, 8), [], "one of two");
        assert_eq!(report(&mut d, 3, Done::Sent, 9), [(5, 9)]);
    }

    #[test]
    fn bad_waits_and_triggers_are_refused_naming_what_is_wrong() {
        assert_eq!(Dependencies::new(3, &[wait(1, &[3], 0)]), Err(DependencyError::Dangling { flow: 1, after: 3, flows: 3 }));
        let e = Dependencies::new(4, &[wait(1, &[3], 0), wait(3, &[2], 0), wait(2, &[1], 0), wait(0, &[1], 0)]).unwrap_err();
        assert_eq!(e, DependencyError::Cycle { flow: 1, cycle: vec![1, 2, 3] });
        assert_eq!(e.to_string(), "flows wait for each other in a cycle (1 -> 2 -> 3 -> 1), so none would ever start");
        assert_eq!(Dependencies::new(2, &[wait(1, &[1], 0)]).unwrap_err(), DependencyError::Cycle { flow: 1, cycle: vec![1] });
        // A diamond is not a cycle.
        assert!(Dependencies::new(4, &[wait(1, &[0], 0), wait(2, &[0], 0), wait(3, &[1, 2], 0)]).is_ok());
        let one = |targets: Vec<usize>| Trigger { kind: TriggerKind::OneShot, targets };
        let sig = |flow, trigger| Signal { flow, on: Done::Sent, trigger };
        assert_eq!(Dependencies::with_triggers(3, &[one(vec![1])], &[sig(0, 1)], &[]), Err(DependencyError::NoTrigger { trigger: 1, triggers: 1 }));
        assert_eq!(Dependencies::with_triggers(3, &[one(vec![1]), one(vec![1])], &[], &[]), Err(DependencyError::TwoTriggers { flow: 1, first: 0, second: 1 }));
        let barrier = Trigger { kind: TriggerKind::Barrier(3), targets: vec![2] };
        let e = Dependencies::with_triggers(3, &[barrier], &[sig(0, 0), sig(1, 0)], &[]).unwrap_err();
        assert_eq!(e.to_string(), "trigger 0 is a barrier of 3 but only 2 signals reach it, so it would never fire");
    }

    #[test]
    fn a_long_chain_needs_no_deep_recursion() {
        let n = 200_000;
        let waits: Vec<Wait> = (1..n).map(|f| wait(f, &[f - 1], 0)).collect();
        let mut d = Dependencies::new(n, &waits).unwrap();
        assert_eq!(finish(&mut d, 0, 1), [(1, 1)]);
        let mut back = waits;
        back.push(wait(0, &[n - 1], 0));
        assert!(matches!(Dependencies::new(n, &back), Err(DependencyError::Cycle { flow: 0, .. })));
    }
}

//! Flows that start when others finish: a flow may wait for a set of flows (barrier
//! semantics, as htsim's connection-matrix triggers and the steps of a collective), then a gap
//! (compute time) before it starts. This is workload state, not transport state: the engine
//! tells [`Dependencies::finished`] about every finished flow, and the workload answers with the
//! flows that may start now and when; nothing in the engine knows why a flow waited.

use crate::sim::units::Time;

/// Which flows wait for which, by flow index (the order of the run's flow list).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dependencies {
    /// Per flow: prerequisites not yet finished (0: it starts at its own start time).
    waiting: Vec<u32>,
    /// Per flow: the time from its last prerequisite's finish to its start.
    gap: Vec<Time>,
    /// Per flow: its earliest start (a dependant starts no earlier than its own start time).
    not_before: Vec<Time>,
    /// Flow `f`'s dependants are `dependants[first[f]..first[f + 1]]` (empty without edges).
    first: Vec<u32>,
    dependants: Vec<u32>,
    /// Per flow: it has finished (a flow counts once, whichever end judged it complete).
    done: Vec<bool>,
}

/// One flow's wait: `flow` starts `gap` after every flow in `after` has finished (and not before
/// `not_before`, its own start time).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wait {
    pub flow: usize,
    pub after: Vec<usize>,
    pub gap: Time,
    pub not_before: Time,
}

/// Why a set of waits cannot run: the flow it names (by index) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DependencyError {
    /// `flow` waits for a flow index that does not exist (there are `flows`).
    Dangling { flow: usize, after: usize, flows: usize },
    /// `flow` waits for itself, directly or through others: the cycle, starting at `flow`.
    Cycle { flow: usize, cycle: Vec<usize> },
}

impl std::fmt::Display for DependencyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DependencyError::Dangling { after, flows, .. } => write!(f, "waits for flow {after}, which does not exist (flows are 0..{})", flows.saturating_sub(1)),
            DependencyError::Cycle { cycle, .. } => {
                let path: Vec<String> = cycle.iter().chain(cycle.first()).map(|i| i.to_string()).collect();
                write!(f, "flows wait for each other in a cycle ({}), so none would ever start", path.join(" -> "))
            }
        }
    }
}

impl Dependencies {
    /// `flows` flows, none waiting: every flow starts at its own time.
    pub fn none(flows: usize) -> Dependencies {
        Dependencies { waiting: vec![0; flows], gap: Vec::new(), not_before: Vec::new(), first: Vec::new(), dependants: Vec::new(), done: vec![false; flows] }
    }

    /// `flows` flows, some waiting as `waits` say. Refuses a wait for a flow that does not
    /// exist and waits in a cycle (which would never start), naming the first flow concerned.
    pub fn new(flows: usize, waits: &[Wait]) -> Result<Dependencies, DependencyError> {
        let mut d = Dependencies::none(flows);
        if waits.is_empty() {
            return Ok(d);
        }
        d.gap = vec![Time::ZERO; flows];
        d.not_before = vec![Time::ZERO; flows];
        let mut edges: Vec<(u32, u32)> = Vec::new(); // (prerequisite, dependant)
        for w in waits {
            for &a in &w.after {
                if a >= flows {
                    return Err(DependencyError::Dangling { flow: w.flow, after: a, flows });
                }
                edges.push((a as u32, w.flow as u32));
            }
            d.gap[w.flow] = w.gap;
            d.not_before[w.flow] = w.not_before;
        }
        // A prerequisite named twice counts once.
        edges.sort_unstable();
        edges.dedup();
        for &(_, b) in &edges {
            d.waiting[b as usize] += 1;
        }
        d.first = vec![0; flows + 1];
        for &(a, _) in &edges {
            d.first[a as usize + 1] += 1;
        }
        for f in 0..flows {
            d.first[f + 1] += d.first[f];
        }
        d.dependants = edges.iter().map(|&(_, b)| b).collect();
        if let Some(cycle) = d.find_cycle() {
            return Err(DependencyError::Cycle { flow: cycle[0], cycle });
        }
        Ok(d)
    }

    fn dependants_of(&self, f: usize) -> &[u32] {
        if self.first.is_empty() {
            return &[];
        }
        &self.dependants[self.first[f] as usize..self.first[f + 1] as usize]
    }

    /// A cycle of waits, if any, starting at its smallest flow index (iterative depth-first
    /// search: a workload may have millions of flows).
    fn find_cycle(&self) -> Option<Vec<usize>> {
        const NEW: u8 = 0;
        const OPEN: u8 = 1;
        const CLOSED: u8 = 2;
        let n = self.waiting.len();
        let mut state = vec![NEW; n];
        let mut stack: Vec<(usize, usize)> = Vec::new(); // (flow, next dependant to visit)
        for root in 0..n {
            if state[root] != NEW {
                continue;
            }
            state[root] = OPEN;
            stack.push((root, 0));
            while let Some(&mut (f, ref mut next)) = stack.last_mut() {
                let deps = self.dependants_of(f);
                if *next == deps.len() {
                    state[f] = CLOSED;
                    stack.pop();
                    continue;
                }
                let g = deps[*next] as usize;
                *next += 1;
                match state[g] {
                    NEW => {
                        state[g] = OPEN;
                        stack.push((g, 0));
                    }
                    OPEN => {
                        let at = stack.iter().position(|&(h, _)| h == g).expect("an open flow is on the stack");
                        let mut cycle: Vec<usize> = stack[at..].iter().map(|&(h, _)| h).collect();
                        let min = (0..cycle.len()).min_by_key(|&i| cycle[i]).expect("a cycle has a flow");
                        cycle.rotate_left(min);
                        return Some(cycle);
                    }
                    _ => {}
                }
            }
        }
        None
    }

    /// Flow `f` waits for others before it may start.
    pub fn waits(&self, f: usize) -> bool {
        self.waiting[f] > 0
    }

    /// Flow `f` finished at `now`: every dependant whose last prerequisite this was starts
    /// `gap` later (not before its own start time): `start(flow, at)` for each, in index
    /// order. A flow reported twice counts once.
    pub fn finished(&mut self, f: usize, now: Time, mut start: impl FnMut(usize, Time)) {
        if std::mem::replace(&mut self.done[f], true) {
            return;
        }
        for i in 0..self.dependants_of(f).len() {
            let g = self.dependants_of(f)[i] as usize;
            self.waiting[g] -= 1;
            if self.waiting[g] == 0 {
                start(g, (now + self.gap[g]).max(self.not_before[g]));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait(flow: usize, after: &[usize], gap_us: u64) -> Wait {
        Wait { flow, after: after.to_vec(), gap: Time::from_us(gap_us), not_before: Time::ZERO }
    }

    fn finish(d: &mut Dependencies, f: usize, now_us: u64) -> Vec<(usize, u64)> {
        let mut started = Vec::new();
        d.finished(f, Time::from_us(now_us), |g, at| started.push((g, at.0 / 1_000_000)));
        started
    }

    #[test]
    fn a_barrier_starts_its_flow_a_gap_after_the_last_prerequisite_and_once() {
        // 2 waits for 0 and 1 (and names 0 twice); 3 waits for 2; 4 for nothing.
        let mut d = Dependencies::new(5, &[wait(2, &[0, 1, 0], 5), wait(3, &[2], 0)]).unwrap();
        assert_eq!((0..5).map(|f| d.waits(f)).collect::<Vec<_>>(), [false, false, true, true, false]);
        assert_eq!(finish(&mut d, 1, 10), []);
        assert_eq!(finish(&mut d, 1, 12), [], "a second report of the same flow counts once");
        assert_eq!(finish(&mut d, 0, 20), [(2, 25)], "the last prerequisite, plus the gap");
        assert_eq!(finish(&mut d, 2, 30), [(3, 30)]);
        assert_eq!(finish(&mut d, 4, 40), []);
    }

    #[test]
    fn a_dependant_starts_no_earlier_than_its_own_start_time() {
        let mut d = Dependencies::new(2, &[Wait { flow: 1, after: vec![0], gap: Time::from_us(1), not_before: Time::from_us(50) }]).unwrap();
        assert_eq!(finish(&mut d, 0, 10), [(1, 50)]);
        let mut d = Dependencies::new(2, &[Wait { flow: 1, after: vec![0], gap: Time::from_us(1), not_before: Time::from_us(5) }]).unwrap();
        assert_eq!(finish(&mut d, 0, 10), [(1, 11)]);
    }

    #[test]
    fn several_dependants_start_in_index_order() {
        let mut d = Dependencies::new(4, &[wait(3, &[0], 0), wait(1, &[0], 0), wait(2, &[0], 2)]).unwrap();
        assert_eq!(finish(&mut d, 0, 1), [(1, 1), (2, 3), (3, 1)]);
    }

    #[test]
    fn dangling_waits_and_cycles_are_refused_naming_the_flow() {
        assert_eq!(Dependencies::new(3, &[wait(1, &[3], 0)]), Err(DependencyError::Dangling { flow: 1, after: 3, flows: 3 }));
        let e = Dependencies::new(4, &[wait(1, &[3], 0), wait(3, &[2], 0), wait(2, &[1], 0), wait(0, &[1], 0)]).unwrap_err();
        assert_eq!(e, DependencyError::Cycle { flow: 1, cycle: vec![1, 2, 3] });
        assert_eq!(e.to_string(), "flows wait for each other in a cycle (1 -> 2 -> 3 -> 1), so none would ever start");
        assert_eq!(Dependencies::new(2, &[wait(1, &[1], 0)]).unwrap_err(), DependencyError::Cycle { flow: 1, cycle: vec![1] });
        // A diamond is not a cycle.
        assert!(Dependencies::new(4, &[wait(1, &[0], 0), wait(2, &[0], 0), wait(3, &[1, 2], 0)]).is_ok());
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

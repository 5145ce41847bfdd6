//! Aeolus's sender-side loss recovery for pre-credit ("unscheduled") packets (Hu et al.,
//! SIGCOMM 2020, §3.3; the project's seed `002`), shared by the schemes it augments: Homa
//! ([`crate::transport::proactive::homa`]), ExpressPass ([`crate::transport::proactive::xpass::ends`])
//! and NDP ([`crate::transport::proactive::ndp`]).
//!
//! Each unscheduled packet is unsent, sent once, found lost, or resent. A loss is found when
//! a later unscheduled packet is SACKed (they leave in order) or when the probe that follows
//! the last one is ACKed (everything still unacknowledged is lost). Each scheduled
//! transmission (a grant's, a credit's) then carries, in order: a loss-detected unscheduled
//! packet, an unsent scheduled packet, an unscheduled packet sent but unacknowledged; each is
//! resent once this way. Whether a packet is acknowledged is the scheme's (its SACK
//! bookkeeping), so the calls take it as a function.

/// An unscheduled packet's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unscheduled {
    Unsent,
    /// Sent once, not known lost.
    Sent,
    /// Its loss detected (a later one SACKed, or the probe ACKed): resent first.
    Lost,
    /// Resent on a grant or credit (or queued by a timeout).
    Resent,
}

/// The tail probe: not yet due, due (the last unscheduled packet just left), sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    NotYet,
    Due,
    Sent,
}

/// Bytes of the probe on the wire: "of minimal Ethernet packet size, e.g., 64 bytes" (the seed).
pub const PROBE_BYTES: u32 = 64;

/// The state of each of a message's unscheduled packets (empty without Aeolus).
#[derive(Clone, Debug, Default)]
pub struct UnscheduledPackets {
    states: Vec<Unscheduled>,
}

impl UnscheduledPackets {
    /// `n` unscheduled packets, none sent.
    pub fn new(n: u64) -> Self {
        UnscheduledPackets { states: vec![Unscheduled::Unsent; n as usize] }
    }

    /// Packet `i`'s state, if it is unscheduled.
    pub fn get(&self, i: u64) -> Option<Unscheduled> {
        self.states.get(i as usize).copied()
    }

    /// Sets packet `i`'s state, if it is unscheduled.
    pub fn set(&mut self, i: u64, s: Unscheduled) {
        if let Some(x) = self.states.get_mut(i as usize) {
            *x = s;
        }
    }

    /// The first unscheduled packet in `state` that `acked` does not call acknowledged.
    pub fn first(&self, state: Unscheduled, acked: impl Fn(u64) -> bool) -> Option<u64> {
        (0..self.states.len() as u64).find(|&i| self.states[i as usize] == state && !acked(i))
    }

    /// Marks lost every unscheduled packet below `end` sent once and unacknowledged: how many.
    pub fn detect(&mut self, end: u64, acked: impl Fn(u64) -> bool) -> u64 {
        self.detect_range(0, end, acked, |_| {})
    }

    /// Marks lost every unscheduled packet in `from..end` sent once and unacknowledged, handing
    /// each to `lost`: how many. A caller that starts each call where the last ended looks at
    /// each packet once, however many SACKs arrive (NDP's initial window may be large).
    pub fn detect_range(&mut self, from: u64, end: u64, acked: impl Fn(u64) -> bool, mut lost: impl FnMut(u64)) -> u64 {
        let mut found = 0;
        for i in from..end.min(self.states.len() as u64) {
            if self.states[i as usize] == Unscheduled::Sent && !acked(i) {
                self.states[i as usize] = Unscheduled::Lost;
                lost(i);
                found += 1;
            }
        }
        found
    }

    /// How many packets are tracked (0 without Aeolus).
    pub fn len(&self) -> u64 {
        self.states.len() as u64
    }

    /// The message is acknowledged: the states go.
    pub fn release(&mut self) {
        self.states = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn losses_are_the_packets_sent_once_below_the_one_sacked_and_go_lowest_first() {
        let mut u = UnscheduledPackets::new(5);
        for i in 0..4 {
            u.set(i, Unscheduled::Sent);
        }
        u.set(9, Unscheduled::Sent); // not unscheduled: ignored
        let acked = |i: u64| i == 2;
        // 2 SACKed: 0 and 1 are lost, 3 is not yet known, 4 was never sent.
        assert_eq!(u.detect(2, acked), 2);
        assert_eq!(u.detect(2, acked), 0, "found once");
        assert_eq!(u.first(Unscheduled::Lost, acked), Some(0));
        u.set(0, Unscheduled::Resent);
        assert_eq!(u.first(Unscheduled::Lost, acked), Some(1));
        assert_eq!(u.first(Unscheduled::Sent, acked), Some(3));
        // The probe's ACK: everything still unacknowledged.
        assert_eq!(u.detect(5, acked), 1);
        assert_eq!((u.get(3), u.get(4), u.get(5)), (Some(Unscheduled::Lost), Some(Unscheduled::Unsent), None));
        u.release();
        assert_eq!(u.first(Unscheduled::Lost, acked), None);
    }

    #[test]
    fn a_range_detection_marks_only_its_range_and_reports_each_loss() {
        let mut u = UnscheduledPackets::new(6);
        for i in 0..6 {
            u.set(i, Unscheduled::Sent);
        }
        u.set(1, Unscheduled::Resent);
        let acked = |i: u64| i == 3;
        let mut seen = Vec::new();
        assert_eq!(u.detect_range(0, 4, acked, |i| seen.push(i)), 2);
        assert_eq!(seen, vec![0, 2], "1 is not sent once, 3 is acknowledged");
        seen.clear();
        assert_eq!(u.detect_range(4, 99, acked, |i| seen.push(i)), 2, "the end is clamped");
        assert_eq!(seen, vec![4, 5]);
        assert_eq!((u.get(0), u.get(3), u.len()), (Some(Unscheduled::Lost), Some(Unscheduled::Sent), 6));
    }
}

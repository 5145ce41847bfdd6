//! UUD at the receiver (UEC 1.0's unreliable unordered delivery; uet-htsim has RUD only): every
//! packet goes to the application as it arrives, at most once; nothing is acknowledged or
//! NACKed. With nothing coming back the sender cannot know when a message is over, so the
//! receiver judges it: once every packet arrived or was heard lost (a trimmed header), or
//! `rto` after the last it heard of the message (or after the flow began, if it heard
//! nothing), the packets it has not heard of being lost. That judgement is the flow's
//! completion (its FCT); what arrives after it is counted and dropped.

use crate::sim::units::Time;

/// One bit per packet.
#[derive(Clone, Debug, Default)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: u64) -> Self {
        Bits(vec![0; n.div_ceil(64) as usize])
    }

    /// Sets bit `i` (growing for an endless flow); whether it was clear.
    fn set(&mut self, i: u64) -> bool {
        let word = (i / 64) as usize;
        if word >= self.0.len() {
            self.0.resize(word + 1, 0);
        }
        let w = &mut self.0[word];
        let bit = 1u64 << (i % 64);
        let fresh = *w & bit == 0;
        *w |= bit;
        fresh
    }
}

/// What became of an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Take {
    /// Its first copy: hand it to the application.
    Deliver,
    /// A copy of one delivered, or one arriving after the message was judged over: dropped.
    Drop,
}

#[derive(Clone, Debug)]
pub struct UudState {
    npkts: u64,
    rto: Time,
    /// Packets delivered, and packets heard of (delivered or trimmed).
    delivered: Bits,
    heard: Bits,
    heard_count: u64,
    /// When the flow began here (the first wake-up) and when its last packet or header came.
    began: Option<Time>,
    last_heard: Option<Time>,
    over: bool,
    /// Packets dropped as copies or as late.
    pub dropped: u64,
}

impl UudState {
    pub fn new(npkts: u64, rto: Time) -> Self {
        // An endless flow is never judged over; its delivered bitmap grows as it goes.
        let n = if npkts == u64::MAX { 0 } else { npkts };
        UudState { npkts, rto, delivered: Bits::new(n), heard: Bits::new(n), heard_count: 0, began: None, last_heard: None, over: false, dropped: 0 }
    }

    pub fn is_over(&self) -> bool {
        self.over
    }

    fn hear(&mut self, now: Time, index: u64) {
        if self.npkts == u64::MAX {
            return; // an endless flow is never judged over: what was heard is never read
        }
        if self.heard.set(index) {
            self.heard_count += 1;
        }
        self.last_heard = Some(now);
        if self.heard_count >= self.npkts {
            self.over = true;
        }
    }

    /// A data packet arrived.
    pub fn on_data(&mut self, now: Time, index: u64) -> Take {
        if self.over || index >= self.npkts || !self.delivered.set(index) {
            self.dropped += 1;
            return Take::Drop;
        }
        self.hear(now, index);
        Take::Deliver
    }

    /// A trimmed header arrived: its packet is lost (nobody will send it again).
    pub fn on_trimmed(&mut self, now: Time, index: u64) {
        if !self.over && index < self.npkts {
            self.hear(now, index);
        }
    }

    /// When to be woken: at once to learn when the flow began, then `rto` after the last
    /// packet or header heard (or the beginning); never once over or for an endless flow.
    pub fn deadline(&self) -> Option<Time> {
        if self.over || self.npkts == u64::MAX {
            return None;
        }
        match self.began {
            None => Some(Time::ZERO),
            Some(b) => Some(self.last_heard.unwrap_or(b).max(b) + self.rto),
        }
    }

    /// Woken: notes the beginning, or judges the message over when its deadline passed.
    /// Whether it is over now.
    pub fn on_wake(&mut self, now: Time) -> bool {
        if self.began.is_none() {
            self.began = Some(now);
            return false;
        }
        if self.deadline().is_some_and(|d| now >= d) {
            self.over = true;
        }
        self.over
    }

    /// The message is over: the bitmaps go (later arrivals are dropped by `over` alone).
    pub fn release(&mut self) {
        self.delivered = Bits::default();
        self.heard = Bits::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Time {
        Time::from_us(n)
    }

    #[test]
    fn over_once_every_packet_is_heard_of() {
        let mut u = UudState::new(3, us(100));
        assert_eq!(u.deadline(), Some(Time::ZERO), "woken at once to learn the beginning");
        assert!(!u.on_wake(us(1)));
        assert_eq!(u.deadline(), Some(us(101)));
        assert_eq!(u.on_data(us(5), 2), Take::Deliver);
        assert_eq!(u.deadline(), Some(us(105)), "rto after the last heard");
        u.on_trimmed(us(6), 0);
        assert!(!u.is_over());
        assert_eq!(u.on_data(us(7), 2), Take::Drop, "a copy");
        assert_eq!(u.dropped, 1);
        assert_eq!(u.on_data(us(8), 1), Take::Deliver);
        assert!(u.is_over(), "1 and 2 arrived, 0 was trimmed");
        assert_eq!(u.deadline(), None);
        assert_eq!(u.on_data(us(9), 0), Take::Drop, "late");
        assert_eq!(u.dropped, 2);
    }

    #[test]
    fn over_after_rto_of_silence() {
        let mut u = UudState::new(4, us(100));
        u.on_wake(us(10));
        assert_eq!(u.on_data(us(20), 0), Take::Deliver);
        assert!(!u.on_wake(us(119)), "an early wake changes nothing");
        assert!(!u.is_over());
        assert!(u.on_wake(us(120)));
        assert_eq!(u.on_data(us(121), 1), Take::Drop);
    }

    #[test]
    fn nothing_heard_is_over_rto_after_the_beginning() {
        let mut u = UudState::new(2, us(50));
        u.on_wake(us(3));
        assert_eq!(u.deadline(), Some(us(53)));
        assert!(u.on_wake(us(53)));
    }

    #[test]
    fn a_trimmed_header_and_its_data_copy_deliver_once() {
        // The network duplicated a packet and trimmed one copy: the other is delivered.
        let mut u = UudState::new(2, us(50));
        u.on_wake(us(0));
        u.on_trimmed(us(1), 0);
        assert_eq!(u.on_data(us(2), 0), Take::Deliver);
        assert!(!u.is_over());
        assert_eq!(u.on_data(us(3), 5), Take::Drop, "beyond the message");
        assert_eq!(u.on_data(us(4), 1), Take::Deliver);
        assert!(u.is_over());
    }

    #[test]
    fn an_endless_flow_delivers_and_never_ends() {
        let mut u = UudState::new(u64::MAX, us(50));
        assert_eq!(u.deadline(), None);
        assert_eq!(u.on_data(us(1), 7), Take::Deliver);
        assert_eq!(u.on_data(us(2), 7), Take::Drop, "a copy");
        assert!(!u.is_over());
    }
}

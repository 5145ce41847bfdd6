//! The NIC's queue-pair scheduler: strict priority across bands (0 first), round robin within
//! a band over the queue pairs that have something to send. A queue pair the transport holds
//! back (pacing, window) is skipped, and the scheduler reports the earliest time one of them may
//! send; one that has nothing at all leaves its list until the transport wakes it again.

use crate::sim::units::Time;

/// What a connection answers when the scheduler offers it the transmitter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer<P> {
    /// It sends this.
    Send(P),
    /// It has data but may not send before then.
    WaitUntil(Time),
    /// Nothing to send until a packet or a timer arrives.
    Idle,
}

/// Scheduling bands, as many as a port has queues at most.
pub const BANDS: usize = 8;

/// Strict priority across bands, round robin within one, over active queue pairs (by their
/// index in the NIC).
#[derive(Clone, Debug, Default)]
pub struct QpScheduler {
    bands: [RoundRobin; BANDS],
    /// Active queue pairs in all bands.
    len: usize,
}

#[derive(Clone, Debug, Default)]
struct RoundRobin {
    active: Vec<u32>,
    next: usize,
}

impl QpScheduler {
    /// Adds queue pair `qp` to band `band` (0 is served first; higher bands are clamped).
    pub fn push(&mut self, qp: u32, band: u8) {
        self.bands[(band as usize).min(BANDS - 1)].active.push(qp);
        self.len += 1;
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Offers the transmitter band by band, highest priority first: the first queue pair
    /// that sends wins; held-back ones of every band count for the earliest wake-up.
    pub fn pull<P>(&mut self, mut offer: impl FnMut(u32) -> Offer<P>) -> Result<(u32, P), Option<Time>> {
        let mut earliest: Option<Time> = None;
        for band in self.bands.iter_mut() {
            if band.active.is_empty() {
                continue;
            }
            let before = band.active.len();
            let r = band.pull(&mut offer);
            self.len -= before - band.active.len();
            match r {
                Ok(sent) => return Ok(sent),
                Err(Some(t)) => earliest = Some(earliest.map_or(t, |e| e.min(t))),
                Err(None) => {}
            }
        }
        Err(earliest)
    }
}

impl RoundRobin {
    /// Offers the transmitter to each active connection in turn until one sends:
    /// `Ok((conn, packet))`, or `Err(earliest)` when none can now (`earliest`: when the first
    /// held-back one may). `offer(conn)` asks the transport; a connection that answers
    /// [`Offer::Idle`] leaves the list.
    fn pull<P>(&mut self, offer: &mut impl FnMut(u32) -> Offer<P>) -> Result<(u32, P), Option<Time>> {
        let mut earliest: Option<Time> = None;
        let mut checked = 0;
        while checked < self.active.len() {
            if self.next >= self.active.len() {
                self.next = 0;
            }
            let conn = self.active[self.next];
            match offer(conn) {
                Offer::Send(p) => {
                    self.next += 1;
                    return Ok((conn, p));
                }
                Offer::WaitUntil(t) => {
                    earliest = Some(earliest.map_or(t, |e| e.min(t)));
                    self.next += 1;
                    checked += 1;
                }
                Offer::Idle => {
                    self.active.swap_remove(self.next);
                }
            }
        }
        Err(earliest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serves_in_turn_skips_the_held_back_and_drops_the_idle() {
        let mut s = QpScheduler::default();
        for c in [1, 2, 3] {
            s.push(c, 0);
        }
        let mut asked = Vec::new();
        // 1 sends; next turn starts at 2, which waits; 3 is idle and leaves; 1 sends again.
        assert_eq!(s.pull(|c| if c == 1 { Offer::Send(10) } else { Offer::Idle::<u32> }).unwrap(), (1, 10));
        let r = s.pull(|c| {
            asked.push(c);
            match c {
                2 => Offer::WaitUntil(Time(50)),
                3 => Offer::Idle,
                _ => Offer::Send(c * 10),
            }
        });
        assert_eq!(r.unwrap(), (1, 10));
        assert_eq!(asked, vec![2, 3, 1]);
        // 3 has left: only 1 and 2 are asked now.
        let mut asked = Vec::new();
        let r = s.pull(|c| {
            asked.push(c);
            Offer::<u32>::WaitUntil(Time(100 - c as u64))
        });
        assert_eq!(r, Err(Some(Time(98))));
        asked.sort();
        assert_eq!(asked, vec![1, 2]);
    }

    #[test]
    fn a_higher_band_is_served_first_and_a_held_back_one_lets_lower_ones_send() {
        let mut s = QpScheduler::default();
        s.push(10, 3);
        s.push(20, 0);
        s.push(21, 0);
        // Both band-0 pairs send, in turn, before band 3 is asked.
        let send = |c: u32| Offer::Send(c);
        assert_eq!(s.pull(send).unwrap().0, 20);
        assert_eq!(s.pull(send).unwrap().0, 21);
        assert_eq!(s.pull(send).unwrap().0, 20);
        // Band 0 held back until 70 and 80: band 3 sends meanwhile.
        let r = s.pull(|c| if c < 10 { Offer::Send(c) } else if c >= 20 { Offer::WaitUntil(Time(c as u64 * 3 + 10)) } else { Offer::Send(c) });
        assert_eq!(r.unwrap().0, 10);
        // Nobody can send: the earliest wake-up over all bands.
        let r = s.pull(|c| Offer::<u32>::WaitUntil(Time(100 + c as u64)));
        assert_eq!(r, Err(Some(Time(110))));
        // Idle pairs leave: the scheduler empties.
        assert!(s.pull(|_| Offer::<u32>::Idle).is_err());
        assert!(s.is_empty());
    }
}

//! The NIC's queue-pair scheduler: round robin over the connections that have something to
//! send. A connection the transport holds back (pacing, window) is skipped, and the scheduler
//! reports the earliest time one of them may send; one that has nothing at all leaves the list
//! until the transport wakes it again.

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

/// Round robin over active queue pairs (by their index in the NIC).
#[derive(Clone, Debug, Default)]
pub struct QpScheduler {
    active: Vec<u32>,
    next: usize,
}

impl QpScheduler {
    pub fn push(&mut self, conn: u32) {
        self.active.push(conn);
    }

    pub fn is_empty(&self) -> bool {
        self.active.is_empty()
    }

    /// Offers the transmitter to each active connection in turn until one sends:
    /// `Ok((conn, packet))`, or `Err(earliest)` when none can now (`earliest`: when the first
    /// held-back one may). `offer(conn)` asks the transport; a connection that answers
    /// [`Offer::Idle`] leaves the list.
    pub fn pull<P>(&mut self, mut offer: impl FnMut(u32) -> Offer<P>) -> Result<(u32, P), Option<Time>> {
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
            s.push(c);
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
}

//! 24-bit wrapping packet sequence numbers, as carried in the RoCEv2 BTH.
//!
//! Endpoints count packets with 64-bit absolute indices and put only the low 24 bits (offset
//! by the QP's initial PSN) on the wire; a receiver turns a wire PSN back into an absolute
//! index relative to a reference it knows, which is valid while the two are less than 2^23
//! apart (the BTH window rule).

/// A PSN as carried on the wire (24 bits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Psn(u32);

pub const PSN_BITS: u32 = 24;
pub const PSN_MASK: u32 = (1 << PSN_BITS) - 1;
const HALF: i64 = 1 << (PSN_BITS - 1);

impl Psn {
    pub fn new(v: u32) -> Psn {
        Psn(v & PSN_MASK)
    }
    pub fn value(self) -> u32 {
        self.0
    }
    pub fn wrapping_prev(self) -> Psn {
        Psn::new(self.0.wrapping_sub(1))
    }
    /// Signed distance `self - other` in (-2^23, 2^23].
    pub fn diff(self, other: Psn) -> i64 {
        let d = (self.0.wrapping_sub(other.0) & PSN_MASK) as i64;
        if d > HALF { d - (1 << PSN_BITS) } else { d }
    }
}

/// Maps absolute packet indices of one QP to wire PSNs and back.
#[derive(Clone, Copy, Debug)]
pub struct PsnSpace {
    initial: u32,
}

impl PsnSpace {
    pub fn new(initial: u32) -> Self {
        PsnSpace { initial: initial & PSN_MASK }
    }
    pub fn wire(&self, index: u64) -> Psn {
        Psn::new(self.initial.wrapping_add(index as u32))
    }
    /// The absolute index of `psn`, taken as the one closest to `reference`.
    /// Returns None if that would be negative (a PSN from before the QP started).
    pub fn unwrap(&self, psn: Psn, reference: u64) -> Option<u64> {
        let d = psn.diff(self.wire(reference));
        let abs = reference as i64 + d;
        (abs >= 0).then_some(abs as u64)
    }
}

/// Reads wire PSNs of one QP as absolute indices near a reference (the sender's snd_una when
/// a notification arrives): what each loss recovery scheme uses to parse its notifications.
#[derive(Clone, Copy, Debug)]
pub struct PsnReader {
    pub space: PsnSpace,
    pub reference: u64,
}

impl PsnReader {
    pub fn index(&self, psn: Psn) -> Option<u64> {
        self.space.unwrap(psn, self.reference)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwraps_across_the_24_bit_boundary() {
        let s = PsnSpace::new(PSN_MASK - 2); // index 3 wraps to PSN 0
        assert_eq!(s.wire(3), Psn::new(0));
        assert_eq!(s.unwrap(Psn::new(1), 2), Some(4));
        assert_eq!(s.unwrap(Psn::new(PSN_MASK), 5), Some(2));
        assert_eq!(Psn::new(2).diff(Psn::new(PSN_MASK)), 3);
        assert_eq!(Psn::new(PSN_MASK).diff(Psn::new(2)), -3);
        assert_eq!(s.unwrap(s.wire(0), 0), Some(0));
        assert_eq!(s.unwrap(s.wire(0).wrapping_prev(), 0), None);
    }
}

//! Loss models: elements a port owns and consults for every packet it puts on its wire.
//!
//! - **Bernoulli**: each packet is lost independently with a fixed probability. Rules that
//!   target the same packet kind on one port combine (P(lost) = 1 - prod(1 - p_i)) into a
//!   single threshold, so one random draw decides, whatever the number of rules.
//! - **Gilbert-Elliott**: a two-state Markov chain (Good, Bad) stepped once per packet the rule
//!   targets: from Good to Bad with probability `p`, from Bad to Good with `r`; in each state a
//!   packet is lost with that state's probability (classic Gilbert: 0 in Good, 1 in Bad). Mean
//!   burst length is 1/r packets and the stationary loss rate is
//!   `(r * loss_good + p * loss_bad) / (p + r)`. Burst rules draw from their own stream, so
//!   adding one leaves every Bernoulli loss pattern as it was.
//!
//! A rule targets packet kinds separately: data, ACK, NAK (go-back-N NAK, IRN/MELO NACK,
//! Go-Back-ONE RACK), CNP, connection set-up and tear-down (SYN, SYN-ACK, FIN,
//! FIN-ACK). PFC frames are never lost.

use crate::sim::rng::Rng;

/// Kinds of packet a loss rule can target, as bits of a [`KindMask`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum LossKind {
    Data = 0,
    Ack = 1,
    Nak = 2,
    Cnp = 3,
    /// Connection set-up and tear-down: SYN, SYN-ACK, FIN, FIN-ACK (STRIDE).
    Conn = 4,
}

impl LossKind {
    pub const ALL: [LossKind; 5] = [LossKind::Data, LossKind::Ack, LossKind::Nak, LossKind::Cnp, LossKind::Conn];
    pub const COUNT: usize = 5;
}

/// A set of [`LossKind`]s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KindMask(pub u8);

impl KindMask {
    pub const DATA: KindMask = KindMask(1 << LossKind::Data as u8);
    pub const CONTROL: KindMask = KindMask(!(1 << LossKind::Data as u8) & 0x1F);
    pub const ALL: KindMask = KindMask(0x1F);

    pub fn with(self, k: LossKind) -> KindMask {
        KindMask(self.0 | 1 << k as u8)
    }
    pub fn contains(self, k: LossKind) -> bool {
        self.0 >> k as u8 & 1 == 1
    }
}

/// A two-state burst loss chain, its probabilities as 64-bit thresholds (see
/// [`crate::sim::rng::threshold`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GilbertElliott {
    pub to_bad: u64,
    pub to_good: u64,
    pub loss_good: u64,
    pub loss_bad: u64,
    pub kinds: KindMask,
    bad: bool,
}

impl GilbertElliott {
    pub fn new(to_bad: u64, to_good: u64, loss_good: u64, loss_bad: u64, kinds: KindMask) -> Self {
        GilbertElliott { to_bad, to_good, loss_good, loss_bad, kinds, bad: false }
    }

    /// Steps the chain for one packet and says whether the packet is lost.
    pub fn step(&mut self, rng: &mut Rng) -> bool {
        self.bad = if self.bad { !rng.chance(self.to_good) } else { rng.chance(self.to_bad) };
        rng.chance(if self.bad { self.loss_bad } else { self.loss_good })
    }

    pub fn is_bad(&self) -> bool {
        self.bad
    }
}

/// Everything that can drop a packet on one port's wire.
#[derive(Clone)]
pub struct PortLoss {
    /// Combined Bernoulli threshold per [`LossKind`].
    bernoulli: [u64; LossKind::COUNT],
    rng: Rng,
    bursts: Vec<GilbertElliott>,
    burst_rng: Rng,
}

impl PortLoss {
    pub fn new(rng: Rng, burst_rng: Rng) -> Self {
        PortLoss { bernoulli: [0; LossKind::COUNT], rng, bursts: Vec::new(), burst_rng }
    }

    /// Adds an independent Bernoulli rule of probability `p` for the kinds in `kinds`.
    pub fn add_bernoulli(&mut self, p: f64, kinds: KindMask) {
        for k in LossKind::ALL {
            if kinds.contains(k) {
                let t = &mut self.bernoulli[k as usize];
                let old = *t as f64 / 18_446_744_073_709_551_616.0;
                *t = crate::sim::rng::threshold(1.0 - (1.0 - old) * (1.0 - p));
            }
        }
    }

    pub fn add_burst(&mut self, chain: GilbertElliott) {
        self.bursts.push(chain);
    }

    /// Sets the Bernoulli probability of every kind in `kinds`, replacing what was there (a
    /// link's own error rate, as HPCC topology files give it).
    pub fn set_bernoulli(&mut self, p: f64, kinds: KindMask) {
        for k in LossKind::ALL {
            if kinds.contains(k) {
                self.bernoulli[k as usize] = crate::sim::rng::threshold(p);
            }
        }
    }

    /// The combined Bernoulli threshold for a kind (0: never).
    pub fn bernoulli_threshold(&self, k: LossKind) -> u64 {
        self.bernoulli[k as usize]
    }

    /// Whether a packet of kind `k` is lost on this wire. Every burst chain that targets the
    /// kind steps, even when an earlier rule already dropped the packet, so a chain's state
    /// does not depend on the other rules.
    pub fn drops(&mut self, k: LossKind) -> bool {
        let mut lost = self.rng.chance(self.bernoulli[k as usize]);
        for chain in self.bursts.iter_mut() {
            if chain.kinds.contains(k) {
                lost |= chain.step(&mut self.burst_rng);
            }
        }
        lost
    }
}

/// Where a loss rule applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossTarget {
    Everywhere,
    /// Every egress link of a switch.
    Switch(usize),
    /// One direction of one link: from node a to node b.
    Link(usize, usize),
}

impl LossTarget {
    /// Whether the rule applies to the port of `node` whose link leads to `peer`.
    pub fn applies(&self, node: usize, peer: usize) -> bool {
        match *self {
            LossTarget::Everywhere => true,
            LossTarget::Switch(sw) => node == sw,
            LossTarget::Link(a, b) => node == a && peer == b,
        }
    }
}

/// A loss model before it is placed on ports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LossModel {
    Bernoulli { rate: f64 },
    /// See the module doc; probabilities per packet.
    GilbertElliott { p: f64, r: f64, loss_good: f64, loss_bad: f64 },
}

/// One rule of a scenario: where, which packets, which model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossRule {
    pub target: LossTarget,
    pub kinds: KindMask,
    pub model: LossModel,
}

impl LossRule {
    /// Puts the rule on a port's loss element.
    pub fn install(&self, loss: &mut PortLoss) {
        use crate::sim::rng::threshold;
        match self.model {
            LossModel::Bernoulli { rate } => loss.add_bernoulli(rate, self.kinds),
            LossModel::GilbertElliott { p, r, loss_good, loss_bad } => {
                loss.add_burst(GilbertElliott::new(threshold(p), threshold(r), threshold(loss_good), threshold(loss_bad), self.kinds))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::{stream, threshold, Stream};

    #[test]
    fn gilbert_elliott_loses_at_its_stationary_rate_in_bursts_of_mean_one_over_r() {
        let (p, r) = (0.01, 0.25);
        let mut loss = PortLoss::new(stream(1, Stream::LinkLoss, 0), stream(1, Stream::BurstLoss, 0));
        loss.add_burst(GilbertElliott::new(threshold(p), threshold(r), 0, u64::MAX, KindMask::DATA));
        let n = 2_000_000;
        let (mut lost, mut bursts, mut prev) = (0u64, 0u64, false);
        for _ in 0..n {
            let l = loss.drops(LossKind::Data);
            lost += l as u64;
            bursts += (l && !prev) as u64;
            prev = l;
        }
        // Stationary P(bad) = p / (p + r) = 0.03846; sd of the estimate is about
        // sqrt(pi (1 - pi) n) x sqrt((1 + (1 - p - r)) / (p + r)) ~ 1.7e3 packets: 5 % is > 4 sd.
        let rate = lost as f64 / n as f64;
        assert!((rate - p / (p + r)).abs() < 0.05 * p / (p + r), "loss rate {rate}");
        let mean_burst = lost as f64 / bursts as f64;
        assert!((mean_burst - 1.0 / r).abs() < 0.1 * (1.0 / r), "mean burst {mean_burst}");
        // Control packets are not targeted: they never step the chain or get lost.
        assert!(!(0..10_000).any(|_| loss.drops(LossKind::Ack)));
    }

    #[test]
    fn bernoulli_rules_combine_per_kind_and_a_burst_rule_leaves_their_draws_alone() {
        let mut a = PortLoss::new(stream(3, Stream::LinkLoss, 7), stream(3, Stream::BurstLoss, 7));
        a.add_bernoulli(0.1, KindMask::DATA);
        a.add_bernoulli(0.1, KindMask::ALL);
        assert_eq!(a.bernoulli_threshold(LossKind::Data), threshold(1.0 - 0.9 * 0.9));
        // From zero the rule goes through the same product (1 - (1 - 0) x 0.9), as rules always
        // have: a threshold from 1 - 0.9, a few ulps away from one from 0.1.
        assert_eq!(a.bernoulli_threshold(LossKind::Cnp), threshold(1.0 - 0.9));
        let mut b = a.clone();
        b.add_burst(GilbertElliott::new(threshold(0.5), threshold(0.5), 0, 0, KindMask::DATA));
        // A burst chain that never loses changes nothing: same Bernoulli draws, same drops.
        let da: Vec<bool> = (0..5_000).map(|_| a.drops(LossKind::Data)).collect();
        let db: Vec<bool> = (0..5_000).map(|_| b.drops(LossKind::Data)).collect();
        assert_eq!(da, db);
        assert!(da.iter().filter(|&&x| x).count() > 800);
    }
}

//! Loss notifications by kind: what a sender's per-flow counters report.

use super::segment::SegKind;

/// Loss notifications a sender received and acted on, one counter per kind, so that a column
/// means the same thing whatever the scheme (IRN's SACKs and go-back-N's NAKs are not the same
/// event: one per out-of-order packet against one per gap).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Notifications {
    /// NAKs naming a PSN: go-back-N's and STRIDE's (PSN sequence error), NDP's (a trimmed
    /// packet).
    pub naks: u64,
    /// MELO's NACKs (cumulative ACK plus up to three holes).
    pub nacks: u64,
    /// IRN's NACKs, each SACKing one out-of-order packet.
    pub sacks: u64,
    /// Go-Back-ONE's RACKs, each naming one out-of-order packet.
    pub racks: u64,
    /// TCP fast retransmits (a third duplicate ACK).
    pub fast_retransmits: u64,
    /// Aeolus: unscheduled packets an ACK's SACK showed lost (a later unscheduled packet
    /// acknowledged): Homa's and ExpressPass's with `aeolus`, NDP's with `aeolus`.
    pub aeolus_sack_losses: u64,
    /// Aeolus: unscheduled packets the probe's ACK showed lost (still unacknowledged when the
    /// probe that follows the last one was answered).
    pub aeolus_probe_losses: u64,
    /// Homa's RESENDs: the receiver's timeout on a granted message whose grant stopped moving
    /// (`testbed = true`).
    pub resends: u64,
}

impl Notifications {
    /// Counts a feedback packet of `kind` that made the sender recover a loss. An ACK does so
    /// only in TCP (its third duplicate).
    pub fn count(&mut self, kind: SegKind) {
        match kind {
            SegKind::Nak => self.naks += 1,
            SegKind::MeloNack => self.nacks += 1,
            SegKind::Sack => self.sacks += 1,
            SegKind::Rack => self.racks += 1,
            _ => self.fast_retransmits += 1,
        }
    }

    /// Every kind together: what a scheme-independent "did the receiver report loss" asks.
    pub fn total(&self) -> u64 {
        self.naks + self.nacks + self.sacks + self.racks + self.fast_retransmits + self.aeolus_sack_losses + self.aeolus_probe_losses + self.resends
    }

    pub fn merge(self, o: Notifications) -> Notifications {
        Notifications {
            naks: self.naks + o.naks,
            nacks: self.nacks + o.nacks,
            sacks: self.sacks + o.sacks,
            racks: self.racks + o.racks,
            fast_retransmits: self.fast_retransmits + o.fast_retransmits,
            aeolus_sack_losses: self.aeolus_sack_losses + o.aeolus_sack_losses,
            aeolus_probe_losses: self.aeolus_probe_losses + o.aeolus_probe_losses,
            resends: self.resends + o.resends,
        }
    }
}

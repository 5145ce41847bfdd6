//! The receiver's application-side delivery check (`RxCtx::deliver`, counted in
//! `ctx.bad_deliveries`), driven directly: data segments are built by hand and fed to a
//! `Receiver` of every recovery scheme, with no sender and no network in between. Correct data
//! must count nothing; a wrong payload digest (`tag`), a wrong payload size, a repeated or an
//! out-of-order delivery must each count exactly once — including, for the schemes that buffer
//! out-of-order data (IRN, Go-Back-ONE, MELO), a bad packet that waited in the reorder buffer.


use retx::sim::units::{Rate, Time};
use retx::transport::common::psn::{PsnSpace, PSN_MASK};
use retx::transport::Receiver;
use retx::transport::common::poll::{Transmit, Want};
use retx::transport::common::segment::{payload_tag, Segment};
use retx::transport::{FlowSpec, NicAgent};
use crate::util::scenario;

/// Every scheme, by its receiver's configuration (GBN's three NAK policies share one receiver
/// logic but differ in when they NAK, so all three are driven).
const SCHEMES: [(&str, &str); 6] = [
    ("gbn", "nak_policy = \"per-psn\"\n"),
    ("gbn", "nak_policy = \"strict\"\n"),
    ("gbn", "nak_policy = \"once-per-gap\"\n"),
    ("irn", ""),
    ("melo", ""),
    ("gbone", ""),
];

/// Schemes whose receiver keeps out-of-order packets and delivers them when the hole fills.
const BUFFERING: [&str; 3] = ["irn", "melo", "gbone"];

/// 7 packets: six of 1000 bytes and a last one of 300, starting 3 PSNs below the 24-bit wrap.
fn flow() -> FlowSpec {
    FlowSpec { size: 6_300, mtu: 1_000, initial_psn: PSN_MASK - 2, key: 0xDE1_1CE, marking: Default::default() }
}

struct Rx {
    rx: Receiver,
    nic: NicAgent,
    spec: FlowSpec,
    now: Time,
}

impl Rx {
    fn new(recovery: &str, extra: &str) -> Rx {
        let s = scenario(recovery, extra);
        let spec = flow();
        // A 16-packet bitmap for IRN and Go-Back-ONE (the BDP argument).
        let template = retx::config::template::transport(&s);
        let (_, mut rx) = template.endpoints(spec, Rate::gbps(40), 16, Default::default());
        rx.ctx.log = Some(Vec::new());
        Rx { rx, nic: NicAgent::new(&template), spec, now: Time::ZERO }
    }

    /// Packet `index` exactly as a correct sender builds it.
    fn good(&self, index: u64) -> Segment {
        let psn = PsnSpace::new(self.spec.initial_psn).wire(index);
        let mut seg = Segment::data(psn, self.spec.payload(index), payload_tag(self.spec.key, index), self.now);
        seg.last = index + 1 == self.spec.npkts();
        seg
    }

    fn feed(&mut self, seg: Segment) {
        self.now += Time::from_ns(300);
        self.rx.handle_packet(self.now, &seg, &mut self.nic.call(0));
        while let Transmit::Send(_) = self.rx.poll_transmit(self.now, &mut self.nic.call(0), Want::Responses) {}
    }

    fn send(&mut self, index: u64) {
        let seg = self.good(index);
        self.feed(seg);
    }

    fn bad(&self) -> u64 {
        self.rx.ctx.bad_deliveries
    }

    fn log(&self) -> Vec<u64> {
        self.rx.ctx.log.clone().unwrap()
    }
}

fn label(recovery: &str, extra: &str) -> String {
    format!("{recovery} {}", extra.trim())
}

/// Catches a check that flags correct data (or a wrong byte count for a short last packet):
/// in-order correct segments across the PSN wrap count nothing and deliver every byte.
#[test]
fn correct_in_order_data_counts_nothing() {
    for (rec, extra) in SCHEMES {
        let mut r = Rx::new(rec, extra);
        for i in 0..7 {
            r.send(i);
        }
        let l = label(rec, extra);
        assert_eq!(r.bad(), 0, "{l}");
        assert_eq!(r.rx.ctx.delivered_bytes, 6_300, "{l}");
        assert_eq!(r.log(), (0..7).collect::<Vec<_>>(), "{l}");
        assert!(r.rx.is_done(), "{l}");
    }
}

/// Catches "receiver skips the payload-tag check": an in-order packet carrying another
/// packet's digest (or a corrupted one) is delivered but counted, in every scheme.
#[test]
fn wrong_tag_in_order_is_counted_by_every_scheme() {
    for wrong in [payload_tag(flow().key, 4), payload_tag(flow().key ^ 1, 3), 0] {
        for (rec, extra) in SCHEMES {
            let mut r = Rx::new(rec, extra);
            for i in 0..7 {
                let mut seg = r.good(i);
                if i == 3 {
                    seg.tag = wrong;
                }
                r.feed(seg);
            }
            let l = label(rec, extra);
            assert_eq!(r.bad(), 1, "{l}: tag {wrong:#x}");
            assert_eq!(r.log(), (0..7).collect::<Vec<_>>(), "{l}");
        }
    }
}

/// Catches a check that ignores the payload size: a full packet delivered with one byte
/// missing, and the short last packet delivered as a full MTU, are each counted once.
#[test]
fn wrong_payload_size_is_counted_by_every_scheme() {
    for (rec, extra) in SCHEMES {
        let l = label(rec, extra);
        let mut r = Rx::new(rec, extra);
        for i in 0..7 {
            let mut seg = r.good(i);
            if i == 2 {
                seg.payload = 999;
            }
            r.feed(seg);
        }
        assert_eq!(r.bad(), 1, "{l}: short packet");
        let mut r = Rx::new(rec, extra);
        for i in 0..7 {
            let mut seg = r.good(i);
            if i == 6 {
                seg.payload = 1_000;
            }
            r.feed(seg);
        }
        assert_eq!(r.bad(), 1, "{l}: padded last packet");
    }
}

/// Catches "receiver skips the payload-tag check" on the reorder-buffer path: a bad packet
/// that arrives out of order, waits in the buffer and is handed over when the hole fills is
/// counted (IRN and Go-Back-ONE share the bitmap receiver; MELO has its own).
#[test]
fn wrong_tag_buffered_out_of_order_is_counted_when_delivered() {
    for rec in BUFFERING {
        for bad_at in [2u64, 3, 6] {
            let mut r = Rx::new(rec, "");
            r.send(0);
            // Packet 1 is "lost"; 2..=6 arrive out of order, one with a foreign digest.
            for i in 2..7 {
                let mut seg = r.good(i);
                if i == bad_at {
                    seg.tag ^= 0x8000_0001;
                }
                r.feed(seg);
            }
            assert_eq!(r.bad(), 0, "{rec}: nothing delivered out of order yet");
            assert_eq!(r.log(), vec![0], "{rec}");
            // The retransmission of 1 fills the hole and the buffer drains.
            r.send(1);
            assert_eq!(r.log(), (0..7).collect::<Vec<_>>(), "{rec}");
            assert_eq!(r.bad(), 1, "{rec}: bad tag at {bad_at} waited in the buffer");
            assert_eq!(r.rx.ctx.delivered_bytes, 6_300, "{rec}");
        }
    }
}

/// Catches a buffering receiver that hands over the digest of the wrong slot: with every
/// packet correct and two holes filled in reverse order, nothing is counted.
#[test]
fn correct_data_through_the_reorder_buffer_counts_nothing() {
    for rec in BUFFERING {
        let mut r = Rx::new(rec, "");
        for i in [0, 2, 4, 5, 6, 3, 1] {
            r.send(i);
        }
        assert_eq!(r.log(), (0..7).collect::<Vec<_>>(), "{rec}");
        assert_eq!(r.bad(), 0, "{rec}");
        assert_eq!(r.rx.ctx.delivered_bytes, 6_300, "{rec}");
    }
}

/// Catches a scheme that delivers duplicates: a repeated segment (of a delivered packet, or
/// of one waiting in the buffer) is not delivered again, so nothing is counted.
#[test]
fn duplicate_segments_are_not_delivered_twice() {
    for (rec, extra) in SCHEMES {
        let l = label(rec, extra);
        let mut r = Rx::new(rec, extra);
        for i in [0, 1, 1, 0, 2, 4, 4, 3, 3, 4, 5, 6, 6] {
            r.send(i);
        }
        assert_eq!(r.log(), (0..7).collect::<Vec<_>>(), "{l}");
        assert_eq!(r.bad(), 0, "{l}");
        assert_eq!(r.rx.ctx.delivered_bytes, 6_300, "{l}");
    }
}

/// Catches a check that misses repeated or skipped deliveries: handing packets to the
/// application twice, or past a gap, counts each such delivery (the recovery schemes never
/// do this, so the check is driven directly).
#[test]
fn repeated_and_out_of_order_deliveries_are_counted() {
    let mut r = Rx::new("gbn", "");
    let key = r.spec.key;
    let ctx = &mut r.rx.ctx;
    let t = Time::from_us(1);
    ctx.deliver(t, 0, payload_tag(key, 0), 1_000);
    ctx.deliver(t, 1, payload_tag(key, 1), 1_000);
    assert_eq!(ctx.bad_deliveries, 0);
    ctx.deliver(t, 1, payload_tag(key, 1), 1_000); // repeated
    assert_eq!(ctx.bad_deliveries, 1);
    ctx.deliver(t, 3, payload_tag(key, 3), 1_000); // skips 2
    assert_eq!(ctx.bad_deliveries, 2);
    ctx.deliver(t, 2, payload_tag(key, 2), 1_000); // behind: out of order
    assert_eq!(ctx.bad_deliveries, 3);
    // Every check at once on one delivery still counts one bad delivery.
    ctx.deliver(t, 5, 0, 1);
    assert_eq!(ctx.bad_deliveries, 4);
    assert_eq!(ctx.log.as_deref(), Some(&[0, 1, 1, 3, 2, 5][..]));
}

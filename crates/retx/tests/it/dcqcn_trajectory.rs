//! DCQCN reaction point (`transport::dcqcn::DcqcnRp`) driven by scripted events, checked
//! against exact rates, targets and alphas. Expected values come from a reference model
//! written here from the DCQCN paper's equations (Zhu et al., SIGCOMM 2015, §3.1 and Fig. 8),
//! and the key checkpoints are also spelled out as literal numbers:
//! - CNP: Rt = Rc; Rc = Rc (1 - alpha/2); alpha = (1 - g) alpha + g; both counters reset;
//! - alpha timer (K) without CNP: alpha = (1 - g) alpha;
//! - each increase event (timer T or byte counter B) bumps its counter, then:
//!   max(T, BC) < F: fast recovery; min(T, BC) > F: hyper increase, Rt += i R_HAI with
//!   i = min(T, BC) - F; otherwise additive increase, Rt += R_AI; then Rc = (Rt + Rc) / 2;
//! - Rc never below min_rate, Rt and Rc never above the line rate.
//!
//! Every rate used is a whole number of bits per second (halvings of 40 Gbps and sums of
//! 40 Mbps / 400 Mbps steps), so rates compare exactly; alphas compare within 1e-12.


use retx::config::{Bw, Dur, Size};
use retx::sim::units::{Rate, Time};
use retx::transport::cc::dcqcn::{DcqcnParams, DcqcnRp};

const LINE: f64 = 40e9;

/// The paper's reaction point, state only (the test says when events happen).
#[derive(Clone, Debug)]
struct Ref {
    rc: f64,
    rt: f64,
    alpha: f64,
    t: u32,
    bc: u32,
    g: f64,
    f: u32,
    ai: f64,
    hai: f64,
    min: f64,
}

impl Ref {
    fn new(p: &DcqcnParams) -> Ref {
        Ref {
            rc: LINE,
            rt: LINE,
            alpha: 1.0,
            t: 0,
            bc: 0,
            g: p.g,
            f: p.fast_recovery_steps,
            ai: p.rate_ai.0 .0 as f64,
            hai: p.rate_hai.0 .0 as f64,
            min: p.min_rate.0 .0 as f64,
        }
    }
    fn cnp(&mut self) {
        self.rt = self.rc;
        self.rc = f64::max(self.rc * (1.0 - self.alpha / 2.0), self.min);
        self.alpha = (1.0 - self.g) * self.alpha + self.g;
        self.t = 0;
        self.bc = 0;
    }
    fn decay(&mut self) {
        self.alpha *= 1.0 - self.g;
    }
    fn timer(&mut self) {
        self.t += 1;
        self.raise();
    }
    fn bytes(&mut self) {
        self.bc += 1;
        self.raise();
    }
    fn raise(&mut self) {
        let (hi, lo) = (self.t.max(self.bc), self.t.min(self.bc));
        if hi < self.f {
            // fast recovery
        } else if lo > self.f {
            self.rt += (lo - self.f) as f64 * self.hai;
        } else {
            self.rt += self.ai;
        }
        self.rt = self.rt.min(LINE);
        self.rc = ((self.rt + self.rc) / 2.0).min(LINE);
    }
}

fn params() -> DcqcnParams {
    DcqcnParams::default()
}

fn us(x: u64) -> Time {
    Time::from_us(x)
}

fn assert_same(rp: &DcqcnRp, m: &Ref, what: &str) {
    assert_eq!(rp.rate(), Rate(m.rc as u64), "{what}: rate");
    assert_eq!(rp.target(), Rate(m.rt as u64), "{what}: target");
    assert!((rp.alpha() - m.alpha).abs() < 1e-12, "{what}: alpha {} vs {}", rp.alpha(), m.alpha);
}

/// Three CNPs 4 us apart (the decrease interval) from line rate with alpha = 1:
/// Rc 40 -> 20 -> 10 -> 5 Gbps, Rt = 10 Gbps, well below line so that increases are visible.
fn cut_to_5g(p: DcqcnParams) -> (DcqcnRp, Ref) {
    let mut rp = DcqcnRp::new(p, Rate::gbps(40));
    let mut m = Ref::new(&p);
    for k in 0..3 {
        rp.on_cnp(us(4 * k));
        m.cnp();
    }
    assert_eq!(rp.rate(), Rate::gbps(5));
    assert_eq!(rp.target(), Rate::gbps(10));
    assert_same(&rp, &m, "after three CNPs");
    (rp, m)
}

/// Catches a disabled byte counter (and a byte counter that steps early or late): with no
/// timer event, every B bytes sent is one increase step, fast recovery halving the gap.
#[test]
fn byte_counter_alone_drives_the_increase_steps() {
    let p = params();
    let b = p.byte_counter.0;
    let (mut rp, mut m) = cut_to_5g(p);
    // Literal trajectory: four fast-recovery steps, then additive increase (the 5th event
    // makes max(T, BC) = F) by 40 Mbps per step.
    let expected_rc = [7.5e9, 8.75e9, 9.375e9, 9.6875e9, 9.86375e9, 9.971875e9, 10.0459375e9];
    let expected_rt = [10e9, 10e9, 10e9, 10e9, 10.04e9, 10.08e9, 10.12e9];
    for (k, (&rc, &rt)) in expected_rc.iter().zip(&expected_rt).enumerate() {
        // One byte short of B: no step yet.
        let before = rp.rate();
        rp.on_sent(b - 1);
        assert_eq!(rp.rate(), before, "step {} came early", k + 1);
        rp.on_sent(1);
        m.bytes();
        assert_eq!(rp.rate(), Rate(rc as u64), "byte step {}", k + 1);
        assert_eq!(rp.target(), Rate(rt as u64), "byte step {}", k + 1);
        assert_same(&rp, &m, "byte step");
        // No timer was due: the first increase deadline is still the one the last CNP set.
        assert_eq!(rp.poll_timeout(), Some(us(8 + 55)));
    }
}

/// Catches a broken timer stage machine: timer-only events give fast recovery for F - 1
/// steps, then additive increase (Rt rises by exactly R_AI per step), never hyper increase
/// while the byte counter stays at 0.
#[test]
fn timer_alone_gives_fast_recovery_then_additive_increase() {
    let p = params();
    let (mut rp, mut m) = cut_to_5g(p);
    let mut t = us(8);
    for step in 1..=20u32 {
        t += p.increase_interval.0;
        assert_eq!(rp.poll_timeout(), Some(t));
        let rt_before = rp.target().0;
        rp.handle_timeout(t);
        m.timer();
        m.decay();
        assert_same(&rp, &m, &format!("timer step {step}"));
        let rise = rp.target().0 - rt_before;
        if step < 5 {
            assert_eq!(rise, 0, "fast recovery moves Rt at step {step}");
        } else {
            assert_eq!(rise, 40_000_000, "additive step {step}");
        }
    }
    // 16 additive steps: Rt = 10 + 16 x 0.04 = 10.64 Gbps.
    assert_eq!(rp.target(), Rate(10_640_000_000));
}

/// Catches "no hyper increase": once both counters exceed F, Rt rises by i x R_HAI with
/// i = min(T, BC) - F (400 Mbps while the smaller counter is 6, 800 Mbps at 7, ...).
#[test]
fn both_counters_past_f_give_hyper_increase() {
    let p = params();
    let b = p.byte_counter.0;
    let (mut rp, mut m) = cut_to_5g(p);
    // Six byte steps: BC = 1..4 fast recovery, 5 and 6 additive: Rt = 10.08 Gbps.
    for _ in 0..6 {
        rp.on_sent(b);
        m.bytes();
    }
    assert_eq!(rp.target(), Rate(10_080_000_000));
    assert_same(&rp, &m, "six byte steps");
    // Timer steps T = 1..5: additive (min = T <= F): Rt = 10.28 Gbps.
    let mut t = us(8);
    let mut expected_rt = [10_120_000_000u64, 10_160_000_000, 10_200_000_000, 10_240_000_000, 10_280_000_000]
        .to_vec();
    // T = 6 and 7 with BC = 6: hyper, i = min(T, BC) - F = 1: +400 Mbps each.
    expected_rt.extend([10_680_000_000, 11_080_000_000]);
    for (k, &rt) in expected_rt.iter().enumerate() {
        t += p.increase_interval.0;
        rp.handle_timeout(t);
        m.timer();
        m.decay();
        assert_eq!(rp.target(), Rate(rt), "timer step {}", k + 1);
        assert_same(&rp, &m, "timer step");
    }
    // A byte step makes T = BC = 7: hyper, i = 2: +800 Mbps, Rt = 11.88 Gbps.
    rp.on_sent(b);
    m.bytes();
    assert_eq!(rp.target(), Rate(11_880_000_000));
    assert_same(&rp, &m, "hyper byte step");
    // Keep going until Rt reaches the line rate; the model must agree at every step, and Rt
    // never exceeds the line.
    for k in 0..20 {
        t += p.increase_interval.0;
        rp.handle_timeout(t);
        m.timer();
        m.decay();
        rp.on_sent(b);
        m.bytes();
        assert_same(&rp, &m, &format!("late step {k}"));
        assert!(rp.target() <= Rate::gbps(40) && rp.rate() <= Rate::gbps(40));
    }
    assert_eq!(rp.target(), Rate::gbps(40));
}

/// Catches "(1 - g) applied twice" in the CNP update or in the decay: after a CNP,
/// alpha' = (1 - g) alpha + g once, and each alpha interval without a CNP multiplies alpha by
/// (1 - g) exactly once, so after k intervals alpha = (1 - g)^k alpha'.
#[test]
fn alpha_follows_the_ewma_exactly() {
    // A large gain makes every error large; alpha and increase timers differ (50 / 55 us)
    // so that each fires on its own.
    let g = 0.25;
    let p = DcqcnParams { g, alpha_interval: Dur(us(50)), ..params() };
    let mut rp = DcqcnRp::new(p, Rate::gbps(40));
    rp.on_cnp(Time::ZERO);
    // From alpha = 1: (1 - g) 1 + g = 1.
    assert!((rp.alpha() - 1.0).abs() < 1e-12, "{}", rp.alpha());
    // Decay for k = 1..=10 alpha intervals (at 50, 100, ... us); the increase timer fires at
    // 55, 110, ... us in between and must not touch alpha.
    let mut t_alpha = Time::ZERO;
    for k in 1..=10 {
        t_alpha += us(50);
        while rp.poll_timeout().is_some_and(|d| d < t_alpha) {
            let d = rp.poll_timeout().unwrap();
            rp.handle_timeout(d);
            assert!((rp.alpha() - 0.75f64.powi(k - 1)).abs() < 1e-12, "increase timer moved alpha");
        }
        assert_eq!(rp.poll_timeout(), Some(t_alpha));
        rp.handle_timeout(t_alpha);
        assert!((rp.alpha() - 0.75f64.powi(k)).abs() < 1e-12, "after {k} intervals: {}", rp.alpha());
    }
    // A CNP now: alpha' = 0.75 a + 0.25, and the cut uses the alpha from before the update.
    let a = 0.75f64.powi(10);
    let rc = rp.rate().0 as f64;
    let t_cnp = t_alpha + us(1);
    rp.on_cnp(t_cnp);
    let a1 = 0.75 * a + 0.25;
    assert!((rp.alpha() - a1).abs() < 1e-12, "CNP update: {} vs {a1}", rp.alpha());
    assert!((rp.rate().0 as f64 - (rc * (1.0 - a / 2.0)).floor()).abs() <= 1.0);
    // The CNP restarted the alpha timer: decay resumes 50 us after it.
    for k in 1..=5 {
        let due = t_cnp + Time(us(50).0 * k);
        while rp.poll_timeout().is_some_and(|d| d < due) {
            let d = rp.poll_timeout().unwrap();
            rp.handle_timeout(d);
        }
        rp.handle_timeout(due);
        let want = 0.75f64.powi(k as i32) * a1;
        assert!((rp.alpha() - want).abs() < 1e-12, "{k} intervals after the CNP: {} vs {want}", rp.alpha());
    }
    // The paper's default gain over many periods: (1 - 1/256)^k exactly as well.
    let p = params();
    let mut rp = DcqcnRp::new(p, Rate::gbps(40));
    rp.on_cnp(Time::ZERO);
    let mut m = Ref::new(&p);
    m.cnp();
    for k in 1..=200u64 {
        rp.handle_timeout(Time(us(55).0 * k));
        m.decay();
    }
    assert!((rp.alpha() - (1.0 - 1.0 / 256.0f64).powi(200)).abs() < 1e-12);
    assert!((rp.alpha() - m.alpha).abs() < 1e-12);
}

/// Catches a missing min_rate floor and a broken decrease-interval gate: CNPs at least 4 us
/// apart halve Rc (alpha stays 1) down to the 100 Mbps floor and no further; a CNP inside
/// the interval is ignored entirely (no cut, no alpha update, timers not restarted) but still
/// counted.
#[test]
fn min_rate_floor_and_decrease_interval() {
    let p = DcqcnParams { min_rate: Bw(Rate::mbps(100)), ..params() };
    let mut rp = DcqcnRp::new(p, Rate::gbps(40));
    let mut m = Ref::new(&p);
    let mut t = Time::ZERO;
    // 40 Gbps halves to 78.125 Mbps after 9 cuts: the 9th lands on the floor.
    let mut rates = Vec::new();
    for _ in 0..12 {
        rp.on_cnp(t);
        m.cnp();
        assert_same(&rp, &m, "cut");
        rates.push(rp.rate().0);
        t += us(4);
    }
    let expected: Vec<u64> = [20_000.0, 10_000.0, 5_000.0, 2_500.0, 1_250.0, 625.0, 312.5, 156.25, 100.0, 100.0, 100.0, 100.0]
        .iter()
        .map(|&mbps: &f64| (mbps * 1e6) as u64)
        .collect();
    assert_eq!(rates, expected);
    assert_eq!(rp.target(), Rate::mbps(100), "Rt takes Rc at each cut");
    // Gate: the last accepted CNP was at t - 4 us. A CNP 3.999 us after it is ignored.
    let last = t - us(4);
    let mut rp = {
        let mut fresh = DcqcnRp::new(p, Rate::gbps(40));
        fresh.on_cnp(last);
        fresh
    };
    let (rate, alpha, deadline) = (rp.rate(), rp.alpha(), rp.poll_timeout());
    rp.handle_timeout(last + us(1)); // nothing due
    rp.on_cnp(last + Time::from_ns(3_999));
    assert_eq!((rp.rate(), rp.alpha(), rp.poll_timeout()), (rate, alpha, deadline));
    assert_eq!(rp.cnps, 2);
    // Exactly 4 us after it the cut applies: 20 -> 10 Gbps, timers restart from there.
    rp.on_cnp(last + us(4));
    assert_eq!(rp.rate(), Rate::gbps(10));
    assert_eq!(rp.target(), Rate::gbps(20));
    assert_eq!(rp.poll_timeout(), Some(last + us(4) + us(55)));
    assert_eq!(rp.cnps, 3);
}

/// Catches a reaction point that counts bytes or runs timers at line rate: before any CNP
/// nothing is scheduled and sending changes nothing.
#[test]
fn at_line_rate_nothing_moves() {
    let p = DcqcnParams { byte_counter: Size(1_000), ..params() };
    let mut rp = DcqcnRp::new(p, Rate::gbps(40));
    assert_eq!(rp.poll_timeout(), None);
    for _ in 0..100 {
        rp.on_sent(1_000);
    }
    assert_eq!((rp.rate(), rp.target(), rp.alpha()), (Rate::gbps(40), Rate::gbps(40), 1.0));
    // After a cut, a 1 KB byte counter steps once per KB.
    rp.on_cnp(Time::ZERO);
    rp.on_sent(1_000);
    assert_eq!(rp.rate(), Rate::gbps(30));
}

/// Catches a sender that does not feed its byte counter (or feeds it the payload instead of
/// the wire bytes), end to end on the two-endpoint harness: go-back-N under DCQCN with a
/// byte counter of exactly 10 packets on the wire (10 x 1048 B). One CNP (for marked data
/// index 3) reaches the sender at 2_850_400 ps and cuts it to 20 Gbps; from packet 14 on,
/// every 10 packets sent is one fast-recovery step, 20 -> 30 -> 35 -> 37.5 -> 38.75 Gbps, and
/// each packet's pacing gap uses the rate before its own bytes were counted. The whole flow
/// ends long before the 55 us timer, so only the byte counter moves the rate.
#[test]
fn sender_feeds_the_byte_counter_with_wire_bytes() {
    use retx::transport::common::segment::SegKind;
    use crate::util::exact::{MTU, SER};
    use crate::util::{scenario_toml, transport_toml, Pair, Rule};
    let wire = (MTU + retx::transport::DATA_HEADER_BYTES) as u64;
    let sections = format!("{}\n[cc.dcqcn]\nbyte_counter = \"{}B\"\n", transport_toml("gbn", "dcqcn", ""), 10 * wire);
    let n = 54;
    let mut p = Pair::packets(&scenario_toml(&sections), n, 0);
    p.script(Rule::mark_ecn(3));
    p.run();
    assert_eq!(p.ctrl_of(SegKind::Cnp).len(), 1);
    assert_eq!(p.sender.stats.cnps, 1);
    let sent: Vec<u64> = p.data.iter().map(|w| w.sent.0).collect();
    // Line rate up to packet 14 (as in dcqcn_exchange.rs).
    assert!(sent[..=14].iter().enumerate().all(|(k, &s)| s == k as u64 * SER));
    let gap = |gbps_x10: u64| Rate(gbps_x10 * 100_000_000).serialization(wire).0;
    for k in 14..(n as usize - 1) {
        let want = match k {
            14..=23 => gap(200),
            24..=33 => gap(300),
            34..=43 => gap(350),
            _ => gap(375),
        };
        assert_eq!(sent[k + 1] - sent[k], want, "gap after packet {k}");
    }
    assert_eq!(p.sender.rate(), Rate(38_750_000_000));
    assert!(p.now < Time::from_us(50), "the increase timer must not have fired");
    assert_eq!(p.receiver.ctx.bad_deliveries, 0);
}

//! `[switch] pfc` as the switches run it, and whether it can be lossless: the headroom each
//! port reserves, and the warnings a scenario gets when its thresholds, headroom and buffer
//! cannot guarantee that no data packet is dropped (a warning, not an error: a lossy PFC
//! configuration is a legitimate thing to study).

use super::{PfcHeadroom, PfcMode, Scenario};
use crate::net::headroom::{self, Headroom};
use crate::net::switch::{DynamicPfc, Pfc, PfcThresholds};
use crate::net::topology::{NodeKind, Topology};

/// The largest frame that can be on a link: a full data packet, a response, or a background
/// source's frame (what a PAUSE may wait behind, and what an upstream port may be sending
/// when it arrives).
pub fn max_frame(s: &Scenario) -> u64 {
    let t = super::template::transport(s);
    let data = (s.nic.mtu + t.data_header()) as u64;
    let background = s.background.iter().map(|b| b.size.0).max().unwrap_or(0);
    data.max(t.response_bytes() as u64).max(background)
}

/// The headroom rule of the scenario's PFC mode (None: fixed PFC without headroom).
pub fn headroom(s: &Scenario) -> Option<Headroom> {
    let p = &s.switch.pfc;
    match (p.mode, p.headroom) {
        (PfcMode::Fixed, None | Some(PfcHeadroom::Off)) => None,
        (PfcMode::Dynamic, None) => Some(Headroom::Ns3),
        (_, Some(PfcHeadroom::Auto)) => Some(Headroom::Auto { max_frame: max_frame(s) }),
        (_, Some(PfcHeadroom::Off)) => Some(Headroom::Bytes(0)),
        (_, Some(PfcHeadroom::Bytes(b))) => Some(Headroom::Bytes(b.0)),
    }
}

/// The switches' PFC model, if PFC is on.
pub fn pfc(s: &Scenario) -> Option<Pfc> {
    let p = &s.switch.pfc;
    if !p.enabled {
        return None;
    }
    let thresholds = PfcThresholds { xoff: p.xoff.0, xon: p.xon.0 };
    Some(match (p.mode, headroom(s)) {
        (PfcMode::Fixed, None) => Pfc::Fixed(thresholds),
        (PfcMode::Fixed, Some(h)) => Pfc::FixedHeadroom(thresholds, h),
        (PfcMode::Dynamic, h) => Pfc::Dynamic(DynamicPfc { reserve: p.reserve.0, resume_offset: p.resume_offset.0, headroom: h.unwrap_or(Headroom::Ns3), shift: p.shift }),
    })
}

/// Data queues PFC protects per port: every data queue but the shaped one.
fn lossless_queues(s: &Scenario) -> u64 {
    let data = s.switch.queues.saturating_sub(1) as u64;
    let shaped = s.switch.shaped.as_ref().is_some_and(|x| (1..s.switch.queues).contains(&x.queue));
    data - shaped as u64
}

/// One line per way the scenario's PFC cannot be lossless, naming the field to change and the
/// first switch (or port) concerned. Empty when PFC is off or can be lossless.
pub fn warnings(s: &Scenario, topo: &Topology) -> Vec<String> {
    let p = &s.switch.pfc;
    if !p.enabled {
        return Vec::new();
    }
    let (buffer, frame, queues) = (s.switch.buffer.0, max_frame(s), lossless_queues(s));
    let rule = headroom(s);
    let mut out = Vec::new();
    let (mut over, mut first_over) = (0, None);
    let (mut short, mut first_short) = (0, None);
    for (n, node) in topo.nodes.iter().enumerate() {
        if node.kind != NodeKind::Switch {
            continue;
        }
        let links = topo.links_of(n).iter().map(|&i| &topo.links[i]);
        let (mut need, mut set_aside) = (0u64, 0u64);
        for l in links {
            let needed = headroom::needed(l.rate, l.delay, frame);
            match rule {
                // Saturating: sizes near the largest must not wrap into a small sum.
                None => need = need.saturating_add(queues.saturating_mul(p.xoff.0.saturating_add(needed))),
                Some(h) => {
                    let given = h.for_link(l.rate, l.delay);
                    set_aside = set_aside.saturating_add(queues.saturating_mul(given));
                    if given < needed {
                        short += 1;
                        let peer = &topo.nodes[if l.a == n { l.b } else { l.a }].name;
                        first_short.get_or_insert(format!("{}->{peer} has {given} B, its {} link of {} needs {needed} B", node.name, l.rate, l.delay));
                    }
                }
            }
        }
        if need > buffer || set_aside >= buffer {
            over += 1;
            first_over.get_or_insert((node.name.clone(), need.max(set_aside)));
        }
    }
    let others = |k: usize, what: &str| if k > 1 { format!(" (and {} more {what})", k - 1) } else { String::new() };
    if let Some((name, bytes)) = first_over {
        out.push(match rule {
            None => format!(
                "switch.pfc: cannot be lossless: switch {name:?} may have to hold {bytes} B (every lossless ingress queue at xoff = {} B plus what arrives after its PAUSE) in switch.buffer = {buffer} B{}; set switch.pfc.headroom = \"auto\"",
                p.xoff.0,
                others(over, "switches")
            ),
            Some(_) => format!(
                "switch.pfc.headroom: cannot be lossless: switch {name:?} sets aside {bytes} B of headroom, not less than switch.buffer = {buffer} B{}",
                others(over, "switches")
            ),
        });
    }
    if let Some(what) = first_short {
        out.push(format!("switch.pfc.headroom: cannot be lossless: port {what} (2 x rate x delay + 4 frames of {frame} B + a PFC frame){}", others(short, "ports")));
    }
    out
}

//! Topologies: named nodes and full-duplex links, built from a scenario's `[topology]`.

use crate::sim::units::{Rate, Time};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Switch,
}

#[derive(Clone, Debug)]
pub struct NodeSpec {
    pub name: String,
    pub kind: NodeKind,
}

/// A full-duplex link between nodes `a` and `b`, the same rate, delay and random loss (of
/// every packet, as HPCC ns-3's per-link error rate) both ways.
#[derive(Clone, Copy, Debug)]
pub struct LinkSpec {
    pub a: usize,
    pub b: usize,
    pub rate: Rate,
    pub delay: Time,
    pub loss: f64,
}

#[derive(Clone, Debug, Default)]
pub struct Topology {
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
}

impl Topology {
    fn add(&mut self, name: String, kind: NodeKind) -> usize {
        self.nodes.push(NodeSpec { name, kind });
        self.nodes.len() - 1
    }

    fn link(&mut self, a: usize, b: usize, rate: Rate, delay: Time) {
        self.links.push(LinkSpec { a, b, rate, delay, loss: 0.0 });
    }

    pub fn find(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    pub fn hosts(&self) -> impl Iterator<Item = usize> + '_ {
        self.nodes.iter().enumerate().filter(|(_, n)| n.kind == NodeKind::Host).map(|(i, _)| i)
    }

    /// N hosts h0..h{N-1} on one switch sw0.
    pub fn single_switch(hosts: u32, link: Rate, delay: Time) -> Topology {
        let mut t = Topology::default();
        let sw = t.add("sw0".into(), NodeKind::Switch);
        for h in 0..hosts {
            let id = t.add(format!("h{h}"), NodeKind::Host);
            t.link(id, sw, link, delay);
        }
        t
    }

    /// Leaves leaf0.. each with `hosts_per_leaf` hosts (h0.. numbered leaf by leaf), every leaf
    /// wired to every spine spine0...
    pub fn leaf_spine(spines: u32, leaves: u32, hosts_per_leaf: u32, host_link: Rate, fabric: Rate, delay: Time) -> Topology {
        let mut t = Topology::default();
        let spine_ids: Vec<usize> = (0..spines).map(|s| t.add(format!("spine{s}"), NodeKind::Switch)).collect();
        for l in 0..leaves {
            let leaf = t.add(format!("leaf{l}"), NodeKind::Switch);
            for &s in &spine_ids {
                t.link(leaf, s, fabric, delay);
            }
            for h in 0..hosts_per_leaf {
                let id = t.add(format!("h{}", l * hosts_per_leaf + h), NodeKind::Host);
                t.link(id, leaf, host_link, delay);
            }
        }
        t
    }
}


//! Shortest-path ECMP forwarding tables.

use crate::sim::rng::mix64;
use std::collections::VecDeque;

/// For every (node, destination host): the egress ports on a shortest path.
pub struct Routes {
    hosts: usize,
    /// Index of each node's host number, or usize::MAX for switches.
    host_index: Vec<usize>,
    /// (start, len) into `ports`, per node x destination host.
    spans: Vec<(u32, u32)>,
    ports: Vec<u32>,
}

impl Routes {
    /// `node_ports[n]` lists node n's ports; `peer_node[p]` is the node at the far end of port p.
    pub fn build(node_ports: &[Vec<usize>], peer_node: &[usize], is_host: &[bool]) -> Routes {
        let nodes = node_ports.len();
        let mut host_index = vec![usize::MAX; nodes];
        let host_ids: Vec<usize> = (0..nodes).filter(|&n| is_host[n]).collect();
        for (i, &h) in host_ids.iter().enumerate() {
            host_index[h] = i;
        }
        let mut spans = vec![(0u32, 0u32); nodes * host_ids.len()];
        let mut ports = Vec::new();
        let mut dist = vec![u32::MAX; nodes];
        let mut queue = VecDeque::new();
        for (hi, &h) in host_ids.iter().enumerate() {
            dist.fill(u32::MAX);
            dist[h] = 0;
            queue.push_back(h);
            while let Some(n) = queue.pop_front() {
                // Hosts do not forward: paths may end at a host but not pass through one.
                if n != h && is_host[n] {
                    continue;
                }
                for &p in &node_ports[n] {
                    let m = peer_node[p];
                    if dist[m] == u32::MAX {
                        dist[m] = dist[n] + 1;
                        queue.push_back(m);
                    }
                }
            }
            for n in 0..nodes {
                if n == h || dist[n] == u32::MAX {
                    continue;
                }
                let start = ports.len() as u32;
                for &p in &node_ports[n] {
                    let m = peer_node[p];
                    if dist[m] != u32::MAX && dist[m] + 1 == dist[n] && (m == h || !is_host[m]) {
                        ports.push(p as u32);
                    }
                }
                spans[n * host_ids.len() + hi] = (start, ports.len() as u32 - start);
            }
        }
        Routes { hosts: host_ids.len(), host_index, spans, ports }
    }

    /// The egress port at `node` towards host node `dst`, chosen by ECMP on `flow_hash`.
    /// None if `dst` is unreachable.
    pub fn next_port(&self, node: usize, dst: usize, flow_hash: u64, salt: u64) -> Option<usize> {
        let (start, len) = self.spans[node * self.hosts + self.host_index[dst]];
        match len {
            0 => None,
            1 => Some(self.ports[start as usize] as usize),
            _ => {
                let pick = mix64(flow_hash ^ salt) % len as u64;
                Some(self.ports[(start as u64 + pick) as usize] as usize)
            }
        }
    }

    /// Number of equal-cost egress ports at `node` towards `dst`.
    pub fn width(&self, node: usize, dst: usize) -> usize {
        self.spans[node * self.hosts + self.host_index[dst]].1 as usize
    }
}

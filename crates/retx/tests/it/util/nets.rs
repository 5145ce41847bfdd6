//! Scenario builders for the networks whole-run tests use: a single switch (incasts), a k-ary
//! fat-tree (paths, spraying, loss everywhere), each with the switch, NIC and transport
//! settings a test sets on top, rendered as scenario text. Tests say what differs from the
//! network, not the whole file.

/// One flow of a flow list.
#[derive(Clone, Debug)]
pub struct Flow {
    pub src: u32,
    pub dst: u32,
    /// Size with its unit, as a scenario writes it ("30KB").
    pub size: String,
    pub start_us: u32,
}

impl Flow {
    pub fn new(src: u32, dst: u32, size: &str, start_us: u32) -> Flow {
        Flow { src, dst, size: size.to_string(), start_us }
    }
}

/// Flows of `(src, dst, size in KB, start in us)`.
pub fn flows_kb(flows: &[(u32, u32, u32, u32)]) -> Vec<Flow> {
    flows.iter().map(|&(s, d, kb, at)| Flow::new(s, d, &format!("{kb}KB"), at)).collect()
}

/// h1..hn to h0, all at once.
pub fn incast(n: u32, size: &str) -> Vec<Flow> {
    (1..=n).map(|h| Flow::new(h, 0, size, 0)).collect()
}

/// A network and its settings, rendered with a flow list by [`Net::with_flows`].
#[derive(Clone, Debug)]
pub struct Net {
    name: String,
    duration: String,
    /// Top-level fields beyond the name and duration (`seed`).
    top: Vec<(String, String)>,
    topology: Vec<(String, String)>,
    nic: Vec<(String, String)>,
    switch: Vec<(String, String)>,
    routing: Vec<(String, String)>,
    recovery: String,
    cc: String,
    /// Whole sections and array tables after the rest (`[recovery.x]`, `[[loss]]`, ...).
    tail: Vec<String>,
}

fn kv(k: &str, v: impl ToString) -> (String, String) {
    (k.to_string(), v.to_string())
}

/// A TOML string.
pub fn s(v: &str) -> String {
    format!("\"{v}\"")
}

impl Net {
    fn new(topology: Vec<(String, String)>) -> Net {
        Net {
            name: "net".into(),
            duration: "1s".into(),
            top: Vec::new(),
            topology,
            nic: Vec::new(),
            switch: Vec::new(),
            routing: Vec::new(),
            recovery: "gbn".into(),
            cc: "none".into(),
            tail: Vec::new(),
        }
    }

    /// `hosts` hosts on one switch, links of `link` and `delay`, PFC off.
    pub fn single_switch(hosts: u32, link: &str, delay: &str) -> Net {
        Net::new(vec![kv("kind", s("single-switch")), kv("hosts", hosts), kv("host_link", s(link)), kv("link_delay", s(delay))]).switch("pfc", "{ enabled = false }")
    }

    /// A k-ary fat-tree whose hosts link at `link`, PFC off.
    pub fn fat_tree(k: u32, link: &str) -> Net {
        Net::new(vec![kv("kind", s("fat-tree")), kv("k", k), kv("host_link", s(link))]).switch("pfc", "{ enabled = false }")
    }

    /// Any `[topology]`: its fields as (key, TOML value); the switches' defaults.
    pub fn custom(topology: &[(&str, String)]) -> Net {
        Net::new(topology.iter().map(|(k, v)| kv(k, v)).collect())
    }

    /// A top-level field (its value as TOML): `seed`.
    pub fn top(mut self, key: &str, value: impl ToString) -> Net {
        Net::set(&mut self.top, key, value.to_string());
        self
    }

    pub fn named(mut self, name: &str, duration: &str) -> Net {
        (self.name, self.duration) = (name.into(), duration.into());
        self
    }

    fn set(list: &mut Vec<(String, String)>, key: &str, value: String) {
        match list.iter_mut().find(|(k, _)| k == key) {
            Some(e) => e.1 = value,
            None => list.push((key.into(), value)),
        }
    }

    /// A `[nic]` field (its value as TOML).
    pub fn nic(mut self, key: &str, value: impl ToString) -> Net {
        Net::set(&mut self.nic, key, value.to_string());
        self
    }

    /// A `[switch]` field (its value as TOML).
    pub fn switch(mut self, key: &str, value: impl ToString) -> Net {
        Net::set(&mut self.switch, key, value.to_string());
        self
    }

    /// A `[routing]` field (its value as TOML).
    pub fn routing(mut self, key: &str, value: impl ToString) -> Net {
        Net::set(&mut self.routing, key, value.to_string());
        self
    }

    /// `[transport]`: the recovery scheme and controller.
    pub fn transport(mut self, recovery: &str, cc: &str) -> Net {
        (self.recovery, self.cc) = (recovery.into(), cc.into());
        self
    }

    /// Whole sections or array tables, as written (`[recovery.homa]\naeolus = true`).
    pub fn with(mut self, text: &str) -> Net {
        if !text.trim().is_empty() {
            self.tail.push(text.to_string());
        }
        self
    }

    /// Random loss of `rate` on every link, every packet kind.
    pub fn lossy(self, rate: f64) -> Net {
        self.with(&format!("[[loss]]\nat = \"everywhere\"\nrate = {rate}"))
    }

    /// The scenario with `flows` as its flow list.
    pub fn with_flows(&self, flows: &[Flow]) -> String {
        let table = |name: &str, list: &[(String, String)]| {
            let body: String = list.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
            if list.is_empty() { String::new() } else { format!("[{name}]\n{body}") }
        };
        let flows: Vec<String> = flows.iter().map(|f| format!("{{ src = \"h{}\", dst = \"h{}\", size = \"{}\", start = \"{}us\" }}", f.src, f.dst, f.size, f.start_us)).collect();
        let top: String = self.top.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
        format!(
            "name = \"{}\"\nduration = \"{}\"\n{top}{}{}{}{}[transport]\nrecovery = \"{}\"\ncc = \"{}\"\n{}\n[workload]\nkind = \"flow-list\"\nflows = [{}]\n",
            self.name,
            self.duration,
            table("topology", &self.topology),
            table("nic", &self.nic),
            table("switch", &self.switch),
            table("routing", &self.routing),
            self.recovery,
            self.cc,
            self.tail.join("\n"),
            flows.join(", ")
        )
    }
}

#[test]
fn a_net_renders_a_scenario_that_runs() {
    let text = Net::single_switch(3, "10Gbps", "1us").named("nets", "10ms").nic("mtu", 1000).switch("buffer", s("1MB")).lossy(0.0).with_flows(&incast(2, "10KB"));
    let out = retx::run_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(out.flows.len(), 2);
    assert!(out.unfinished().is_none());
    assert!(out.flows.iter().all(|f| f.delivered_bytes == 10_000));
}

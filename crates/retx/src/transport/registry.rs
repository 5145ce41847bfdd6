//! The macros behind the registry (`transport/schemes.rs`): from one list of parameter types,
//! every type a run stores a scheme in and every `match` over them. A line per scheme there
//! gives:
//!
//! - the kind (`[transport] recovery = "name"`, read and written by the scheme's
//!   [`Scheme::NAME`]), the config (one `[recovery.name]` section per scheme) and its checks;
//! - the run's parameters (the chosen scheme's section), with one dispatch per question the
//!   run asks a scheme ([`Scheme`]'s methods);
//! - the sender, receiver and NIC-agent enums with their trait dispatch (`TxRecovery`,
//!   `RxRecovery`, `SchemeAgent`: static, one `match` per call) and typed access to what
//!   they hold (`get::<T>()`).
//!
//! The same for congestion controllers ([`Controller`]: `CcKind`, `CcCfg`, `CcParams`, `Cc`).
//!
//! [`Scheme`]: super::common::scheme::Scheme
//! [`Scheme::NAME`]: super::common::scheme::Scheme::NAME
//! [`Controller`]: super::common::scheme::Controller

/// Loss recovery schemes and receiver-driven transports. Each line:
/// `[#[cfg(..)]] /// doc... [#[serde(..)]] field: Variant(ParamsType),`
/// where `field` is the scheme's name with `_` for `-` (checked against [`Scheme::NAME`] at
/// compile time).
///
/// [`Scheme::NAME`]: super::common::scheme::Scheme::NAME
macro_rules! recovery_registry {
    ($( $(#[cfg($cfg:meta)])? $(#[doc = $doc:literal])* $(#[serde($serde:meta)])* $field:ident : $V:ident ($P:ty) ),* $(,)?) => {
        use $crate::sim::check::{Checked, FieldError};
        use $crate::sim::units::{Rate, Time};
        use $crate::transport::common::agent::{AgentTransmit, HostAgent, NoAgent};
        use $crate::transport::common::flow::PoolOccupancy;
        use $crate::transport::common::poll::Transmit;
        use $crate::transport::common::psn::{PsnReader, PsnSpace};
        use $crate::transport::common::recovery::{ReceiveRecovery, SendRecovery};
        use $crate::transport::common::rx_ctx::RxCtx;
        use $crate::transport::common::scheme::{NetworkScale, RunFacts, Scheme, Setup};
        use $crate::transport::common::segment::Segment;
        use $crate::transport::common::agent::NicCall;
        use std::any::Any;

        $( $(#[cfg($cfg)])? const _: () = assert!(
            $crate::transport::common::scheme::same_name(stringify!($field), <$P as Scheme>::NAME),
            concat!("the registry's field `", stringify!($field), "` is not its scheme's NAME"),
        ); )*

        /// Which loss recovery every connection runs (`[transport] recovery`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum RecoveryKind {
            $( $(#[cfg($cfg)])? $(#[doc = $doc])* $V, )*
        }

        impl RecoveryKind {
            /// Every registered scheme, in the registry's order.
            pub fn all() -> Vec<RecoveryKind> {
                let mut all = Vec::new();
                $( $(#[cfg($cfg)])? all.push(RecoveryKind::$V); )*
                all
            }

            /// Its name in a scenario.
            pub fn name(self) -> &'static str {
                match self { $( $(#[cfg($cfg)])? RecoveryKind::$V => <$P as Scheme>::NAME, )* }
            }

            /// Every name, for the error that names an unknown one.
            pub fn names() -> &'static [&'static str] {
                static NAMES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
                NAMES.get_or_init(|| RecoveryKind::all().into_iter().map(RecoveryKind::name).collect())
            }

            /// Whether a window controller may run over it.
            pub fn takes_window_cc(self) -> bool {
                match self { $( $(#[cfg($cfg)])? RecoveryKind::$V => <$P as Scheme>::TAKES_WINDOW_CC, )* }
            }

            /// Whether it runs its own congestion control (no `[transport] cc` over it).
            pub fn own_cc(self) -> bool {
                match self { $( $(#[cfg($cfg)])? RecoveryKind::$V => <$P as Scheme>::OWN_CC, )* }
            }

            /// The spread of its hosts' clock drift unless `[nic]` sets one, in ppm.
            pub fn clock_spread_ppm(self) -> f64 {
                match self { $( $(#[cfg($cfg)])? RecoveryKind::$V => <$P as Scheme>::CLOCK_SPREAD_PPM, )* }
            }
        }

        impl serde::Serialize for RecoveryKind {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> serde::Deserialize<'de> for RecoveryKind {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                RecoveryKind::all().into_iter().find(|k| k.name() == s)
                    .ok_or_else(|| serde::de::Error::unknown_variant(&s, RecoveryKind::names()))
            }
        }

        /// Every scheme's section (`[recovery.<name>]`), chosen or not.
        #[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct RecoveryCfg {
            $( $(#[cfg($cfg)] #[serde(skip)])? $(#[serde($serde)])* pub $field: $P, )*
        }

        impl RecoveryCfg {
            /// Every scheme's section, chosen or not (a value set for a scheme not run is still
            /// read back by `retx validate`, so it must be one the scheme could run).
            pub fn check(&self) -> Checked {
                $( $(#[cfg($cfg)])? Scheme::check(&self.$field).map_err(|e| e.within(&format!("recovery.{}", <$P as Scheme>::NAME)))?; )*
                Ok(())
            }

            /// The section of scheme `kind`, as its connections run.
            pub fn params(&self, kind: RecoveryKind) -> RecoveryParams {
                match kind { $( $(#[cfg($cfg)])? RecoveryKind::$V => RecoveryParams::$V(self.$field.clone()), )* }
            }
        }

        /// The run's loss recovery and its parameters.
        #[derive(Clone, Debug, PartialEq)]
        pub enum RecoveryParams {
            $( $(#[cfg($cfg)])? $V($P), )*
        }

        /// Hands a question to whichever scheme's parameters a `RecoveryParams` holds.
        macro_rules! each_params {
            ($r:expr, $p:ident => $e:expr) => {
                match $r { $( $(#[cfg($cfg)])? RecoveryParams::$V($p) => $e, )* }
            };
        }

        impl RecoveryParams {
            pub fn kind(&self) -> RecoveryKind {
                match self { $( $(#[cfg($cfg)])? RecoveryParams::$V(_) => RecoveryKind::$V, )* }
            }
            /// Its name in a scenario.
            pub fn name(&self) -> &'static str {
                self.kind().name()
            }
            /// Its row in the on-chip memory table.
            pub fn memory_row(&self) -> &'static str {
                match self { $( $(#[cfg($cfg)])? RecoveryParams::$V(_) => <$P as Scheme>::MEMORY_ROW, )* }
            }
            /// What it must agree with elsewhere in the scenario, errors within its section.
            pub fn check_run(&self, run: &RunFacts) -> Result<(), FieldError> {
                each_params!(self, p => p.check_run(run).map_err(|e| e.within(&format!("recovery.{}", self.name()))))
            }
            /// Its settings with no effect as set, one line each naming its field.
            pub fn inert_settings(&self) -> Vec<String> {
                let section = format!("recovery.{}", self.name());
                each_params!(self, p => p.inert_settings()).into_iter().map(|w| format!("{section}.{w}")).collect()
            }
            /// Its settings that do not fit the built network, one line each naming its field.
            pub fn network_warnings(&self, net: &NetworkScale) -> Vec<String> {
                let section = format!("recovery.{}", self.name());
                each_params!(self, p => p.network_warnings(net)).into_iter().map(|w| format!("{section}.{w}")).collect()
            }
            pub fn data_header(&self) -> u32 {
                each_params!(self, p => p.data_header())
            }
            pub fn response_bytes(&self, int_header: u32) -> u32 {
                each_params!(self, p => p.response_bytes(int_header))
            }
            pub fn symmetric_paths(&self) -> bool {
                each_params!(self, p => p.symmetric_paths())
            }
            pub fn chooses_entropy(&self) -> bool {
                each_params!(self, p => p.chooses_entropy())
            }
            pub fn sizes_by_network(&self) -> bool {
                each_params!(self, p => p.sizes_by_network())
            }
            pub fn receiver_completes(&self) -> bool {
                each_params!(self, p => p.receiver_completes())
            }
            pub fn qp_cache(&self) -> u32 {
                each_params!(self, p => p.qp_cache())
            }
            pub fn wants_sizes(&self) -> bool {
                each_params!(self, p => p.wants_sizes())
            }
            /// Itself with parameters derived from the workload's flow sizes.
            pub fn with_sizes(&self, sizes: &[u64]) -> RecoveryParams {
                match self { $( $(#[cfg($cfg)])? RecoveryParams::$V(p) => RecoveryParams::$V(p.with_sizes(sizes)), )* }
            }
            /// Its NIC-wide agent on a host whose link runs at `link` with `mtu`-byte payloads.
            pub fn agent(&self, link: Rate, mtu: u32) -> SchemeAgent {
                match self {
                    $( $(#[cfg($cfg)])? RecoveryParams::$V(p) => p.agent(link, mtu).map_or(SchemeAgent::None(NoAgent), SchemeAgent::$V), )*
                }
            }
            /// Both ends' loss recovery for one flow.
            pub fn endpoints(&self, setup: &Setup<'_>) -> (TxRecovery, RxRecovery) {
                match self {
                    $( $(#[cfg($cfg)])? RecoveryParams::$V(p) => {
                        let (tx, rx) = p.endpoints(setup);
                        (TxRecovery::$V(tx), RxRecovery::$V(rx))
                    } )*
                }
            }
        }

        /// Sender loss recovery, statically dispatched.
        #[derive(Clone, Debug)]
        pub enum TxRecovery {
            $( $(#[cfg($cfg)])? $V(<$P as Scheme>::Sender), )*
        }

        /// Receiver loss recovery, statically dispatched.
        #[derive(Clone, Debug)]
        pub enum RxRecovery {
            $( $(#[cfg($cfg)])? $V(<$P as Scheme>::Receiver), )*
        }

        /// The scheme's own NIC-wide agent, if it has one (endpoints reach theirs by type:
        /// `NicCall::agent`). Dispatch is static.
        #[derive(Clone, Debug)]
        pub enum SchemeAgent {
            None(NoAgent),
            $( $(#[cfg($cfg)])? $V(<$P as Scheme>::Agent), )*
        }

        impl Default for SchemeAgent {
            fn default() -> Self {
                SchemeAgent::None(NoAgent)
            }
        }

        macro_rules! each_tx {
            ($r:expr, $x:ident => $e:expr) => {
                match $r { $( $(#[cfg($cfg)])? TxRecovery::$V($x) => $e, )* }
            };
        }

        macro_rules! each_rx {
            ($r:expr, $x:ident => $e:expr) => {
                match $r { $( $(#[cfg($cfg)])? RxRecovery::$V($x) => $e, )* }
            };
        }

        macro_rules! each_agent {
            ($r:expr, $x:ident => $e:expr) => {
                match $r { SchemeAgent::None($x) => $e, $( $(#[cfg($cfg)])? SchemeAgent::$V($x) => $e, )* }
            };
        }

        impl TxRecovery {
            /// What it holds, if it is a `T` (a scheme's own sender type, boxed or not).
            pub fn get<T: 'static>(&self) -> Option<&T> {
                each_tx!(self, x => $crate::transport::registry::downcast_ref::<T>(x as &dyn Any))
            }
        }

        impl RxRecovery {
            /// What it holds, if it is a `T` (a scheme's own receiver type, boxed or not).
            pub fn get<T: 'static>(&self) -> Option<&T> {
                each_rx!(self, x => $crate::transport::registry::downcast_ref::<T>(x as &dyn Any))
            }
        }

        impl SchemeAgent {
            /// What it holds, if it is an `A` (a scheme's own agent type, boxed or not).
            pub fn get<A: 'static>(&self) -> Option<&A> {
                each_agent!(self, x => $crate::transport::registry::downcast_ref::<A>(x as &dyn Any))
            }



            /// Figures every NIC's agent reports over a run: (name, value).
            pub fn report<'a>(agents: impl Iterator<Item = &'a SchemeAgent> + Clone) -> Vec<(&'static str, f64)> {
                let mut out = Vec::new();
                $( $(#[cfg($cfg)])? {
                    let mut mine = agents.clone().filter_map(|a| match a { SchemeAgent::$V(x) => Some(x), _ => None }).peekable();
                    if mine.peek().is_some() {
                        out.extend(<$P as Scheme>::report(&mut mine));
                    }
                } )*
                out
            }
        }

        /// What it holds, as an endpoint's `NicCall` lends it.
        impl $crate::transport::common::agent::AgentSlot for SchemeAgent {
            #[inline]
            fn agent_any(&mut self) -> &mut dyn Any {
                each_agent!(self, x => x as &mut dyn Any)
            }
        }

        // The engine asks every NIC's agent these per packet or per input; most schemes keep
        // none (`SchemeAgent::None`), answered inline here without the match over every
        // scheme's agent, which the compiler does not inline.
        impl SchemeAgent {
            #[inline(never)]
            fn poll_transmit_scheme(&mut self, now: Time) -> AgentTransmit {
                each_agent!(self, a => HostAgent::poll_transmit(a, now))
            }
            #[inline(never)]
            fn wants_wire_scheme(&self) -> bool {
                each_agent!(self, a => HostAgent::wants_wire(a))
            }
            #[inline(never)]
            fn poll_timeout_scheme(&self) -> Option<Time> {
                each_agent!(self, a => HostAgent::poll_timeout(a))
            }
        }

        impl HostAgent for SchemeAgent {
            #[inline]
            fn poll_transmit(&mut self, now: Time) -> AgentTransmit {
                match self {
                    SchemeAgent::None(a) => HostAgent::poll_transmit(a, now),
                    _ => self.poll_transmit_scheme(now),
                }
            }
            #[inline]
            fn wants_wire(&self) -> bool {
                match self {
                    SchemeAgent::None(a) => HostAgent::wants_wire(a),
                    _ => self.wants_wire_scheme(),
                }
            }
            #[inline]
            fn poll_timeout(&self) -> Option<Time> {
                match self {
                    SchemeAgent::None(a) => HostAgent::poll_timeout(a),
                    _ => self.poll_timeout_scheme(),
                }
            }
            fn handle_timeout(&mut self, now: Time, wake: &mut Vec<u32>) {
                each_agent!(self, a => HostAgent::handle_timeout(a, now, wake))
            }
            fn sample_pools(&mut self, out: &mut dyn FnMut(PoolOccupancy)) {
                each_agent!(self, a => HostAgent::sample_pools(a, out))
            }
        }

        impl SendRecovery for TxRecovery {
            #[inline]
            fn snd_una(&self) -> u64 {
                each_tx!(self, r => SendRecovery::snd_una(r))
            }
            #[inline]
            fn snd_nxt(&self) -> u64 {
                each_tx!(self, r => SendRecovery::snd_nxt(r))
            }
            #[inline]
            fn has_data(&self) -> bool {
                each_tx!(self, r => SendRecovery::has_data(r))
            }
            #[inline]
            fn is_done(&self) -> bool {
                each_tx!(self, r => SendRecovery::is_done(r))
            }
            #[inline]
            fn next(&mut self, now: Time, rate: Rate, nic: &mut NicCall<'_>) -> Option<(u64, bool)> {
                each_tx!(self, r => SendRecovery::next(r, now, rate, nic))
            }
            #[inline]
            fn next_past_closed_window(&mut self, now: Time) -> Option<(u64, bool)> {
                each_tx!(self, r => SendRecovery::next_past_closed_window(r, now))
            }
            #[inline]
            fn window_inflation(&self) -> i64 {
                each_tx!(self, r => SendRecovery::window_inflation(r))
            }
            #[inline]
            fn mark(&self, index: u64, retransmit: bool) -> Option<(u8, u8)> {
                each_tx!(self, r => SendRecovery::mark(r, index, retransmit))
            }
            #[inline]
            fn stamp(&self, seg: &mut Segment) {
                each_tx!(self, r => SendRecovery::stamp(r, seg))
            }
            #[inline]
            fn unscheduled(&self) -> bool {
                each_tx!(self, r => SendRecovery::unscheduled(r))
            }
            fn notifications(&self) -> $crate::transport::common::notifications::Notifications {
                each_tx!(self, r => SendRecovery::notifications(r))
            }
            #[inline]
            fn on_feedback(&mut self, now: Time, seg: &Segment, at: PsnReader, nic: &mut NicCall<'_>) -> bool {
                each_tx!(self, r => SendRecovery::on_feedback(r, now, seg, at, nic))
            }
            #[inline]
            fn on_returned(&mut self, now: Time, index: u64) {
                each_tx!(self, r => SendRecovery::on_returned(r, now, index))
            }
            #[inline]
            fn poll_timeout(&self) -> Option<Time> {
                each_tx!(self, r => SendRecovery::poll_timeout(r))
            }
            #[inline]
            fn handle_timeout(&mut self, now: Time, nic: &mut NicCall<'_>) -> bool {
                each_tx!(self, r => SendRecovery::handle_timeout(r, now, nic))
            }
            #[inline]
            fn poll_connection(&mut self, now: Time, psn: PsnSpace) -> Option<Segment> {
                each_tx!(self, r => SendRecovery::poll_connection(r, now, psn))
            }
            #[inline]
            fn release(&mut self) {
                each_tx!(self, r => SendRecovery::release(r))
            }
        }

        impl ReceiveRecovery for RxRecovery {
            #[inline]
            fn on_data(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
                each_rx!(self, r => ReceiveRecovery::on_data(r, now, index, seg, rx, nic))
            }
            fn on_trimmed(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
                each_rx!(self, r => ReceiveRecovery::on_trimmed(r, now, index, seg, rx, nic))
            }
            #[inline]
            fn on_connection(&mut self, now: Time, seg: &Segment, rx: &mut RxCtx) {
                each_rx!(self, r => ReceiveRecovery::on_connection(r, now, seg, rx))
            }
            #[inline]
            fn echoes_congestion(&self) -> bool {
                each_rx!(self, r => ReceiveRecovery::echoes_congestion(r))
            }
            fn reorder_stats(&self) -> (u64, u64, u64) {
                each_rx!(self, r => ReceiveRecovery::reorder_stats(r))
            }
            fn swap_out(&mut self, nic: &mut NicCall<'_>) -> u32 {
                each_rx!(self, r => ReceiveRecovery::swap_out(r, nic))
            }
            fn swap_in(&mut self, nic: &mut NicCall<'_>) -> Option<u32> {
                each_rx!(self, r => ReceiveRecovery::swap_in(r, nic))
            }
            #[inline]
            fn poll_timeout(&self) -> Option<Time> {
                each_rx!(self, r => ReceiveRecovery::poll_timeout(r))
            }
            fn handle_timeout(&mut self, now: Time, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
                each_rx!(self, r => ReceiveRecovery::handle_timeout(r, now, rx, nic))
            }
            fn release(&mut self) {
                each_rx!(self, r => ReceiveRecovery::release(r))
            }
            fn completes_flow(&self) -> bool {
                each_rx!(self, r => ReceiveRecovery::completes_flow(r))
            }
            #[inline]
            fn wants_wire(&self) -> bool {
                each_rx!(self, r => ReceiveRecovery::wants_wire(r))
            }
            fn poll_transmit(&mut self, now: Time, rx: &mut RxCtx, nic: &mut NicCall<'_>) -> Transmit {
                each_rx!(self, r => ReceiveRecovery::poll_transmit(r, now, rx, nic))
            }
        }
    };
}
pub(crate) use recovery_registry;

/// Congestion controllers, one line each as for [`recovery_registry`]; a line marked
/// `#[serde(skip)]` has no config section (`none`).
macro_rules! cc_registry {
    ($( $(#[cfg($cfg:meta)])? $(#[doc = $doc:literal])* $(#[serde($serde:meta)])* $field:ident : $V:ident ($P:ty) ),* $(,)?) => {
        use $crate::transport::common::congestion::CongestionControl;
        use $crate::transport::common::feedback::{AckSample, Flight};
        use $crate::transport::common::scheme::{CcSetup, Controller};
        use $crate::transport::common::cnp::CnpPacer;

        $( $(#[cfg($cfg)])? const _: () = assert!(
            $crate::transport::common::scheme::same_name(stringify!($field), <$P as Controller>::NAME),
            concat!("the registry's field `", stringify!($field), "` is not its controller's NAME"),
        ); )*

        /// Which congestion control every connection runs (`[transport] cc`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum CcKind {
            $( $(#[cfg($cfg)])? $(#[doc = $doc])* $V, )*
        }

        impl CcKind {
            /// Every registered controller, in the registry's order.
            pub fn all() -> Vec<CcKind> {
                let mut all = Vec::new();
                $( $(#[cfg($cfg)])? all.push(CcKind::$V); )*
                all
            }

            /// Its name in a scenario.
            pub fn name(self) -> &'static str {
                match self { $( $(#[cfg($cfg)])? CcKind::$V => <$P as Controller>::NAME, )* }
            }

            /// Every name, for the error that names an unknown one.
            pub fn names() -> &'static [&'static str] {
                static NAMES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
                NAMES.get_or_init(|| CcKind::all().into_iter().map(CcKind::name).collect())
            }

            /// Congestion control by a window of bytes in flight (not a rate).
            pub fn is_window(self) -> bool {
                match self { $( $(#[cfg($cfg)])? CcKind::$V => <$P as Controller>::IS_WINDOW, )* }
            }
        }

        impl serde::Serialize for CcKind {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> serde::Deserialize<'de> for CcKind {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                CcKind::all().into_iter().find(|k| k.name() == s)
                    .ok_or_else(|| serde::de::Error::unknown_variant(&s, CcKind::names()))
            }
        }

        /// Every controller's section (`[cc.<name>]`), chosen or not.
        #[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct CcCfg {
            $( $(#[cfg($cfg)] #[serde(skip)])? $(#[serde($serde)])* pub $field: $P, )*
        }

        impl CcCfg {
            pub fn check(&self) -> Checked {
                $( $(#[cfg($cfg)])? Controller::check(&self.$field).map_err(|e| e.within(&format!("cc.{}", <$P as Controller>::NAME)))?; )*
                Ok(())
            }

            /// The section of controller `kind`, as its connections run.
            pub fn params(&self, kind: CcKind) -> CcParams {
                match kind { $( $(#[cfg($cfg)])? CcKind::$V => CcParams::$V(self.$field.clone()), )* }
            }
        }

        /// The run's congestion control and its parameters.
        #[derive(Clone, Debug, PartialEq)]
        pub enum CcParams {
            $( $(#[cfg($cfg)])? $V($P), )*
        }

        impl CcParams {
            pub fn kind(&self) -> CcKind {
                match self { $( $(#[cfg($cfg)])? CcParams::$V(_) => CcKind::$V, )* }
            }
            /// One sender's controller.
            pub fn build(&self, setup: &CcSetup) -> Cc {
                match self { $( $(#[cfg($cfg)])? CcParams::$V(p) => Cc::$V(p.build(setup)), )* }
            }
            /// The receiver's CNP generator, if the controller has one.
            pub fn notification_point(&self) -> Option<CnpPacer> {
                match self { $( $(#[cfg($cfg)])? CcParams::$V(p) => p.notification_point(), )* }
            }
        }

        /// Congestion control, statically dispatched: enum storage, and the trait implemented
        /// on it by one `match` per method (smoltcp's `AnyController`).
        #[derive(Clone, Debug)]
        pub enum Cc {
            $( $(#[cfg($cfg)])? $V(<$P as Controller>::Cc), )*
        }

        macro_rules! each_cc {
            ($r:expr, $c:ident => $e:expr) => {
                match $r { $( $(#[cfg($cfg)])? Cc::$V($c) => $e, )* }
            };
        }

        impl Cc {
            /// What it holds, if it is a `T` (a controller's own type).
            pub fn get<T: 'static>(&self) -> Option<&T> {
                each_cc!(self, c => (c as &dyn Any).downcast_ref::<T>())
            }

            /// Figures every sender's controller reports over a run: (name, value).
            pub fn report<'a>(ccs: impl Iterator<Item = &'a Cc> + Clone) -> Vec<(&'static str, f64)> {
                let mut out = Vec::new();
                $( $(#[cfg($cfg)])? {
                    let mut mine = ccs.clone().filter_map(|c| match c { Cc::$V(x) => Some(x), #[allow(unreachable_patterns)] _ => None });
                    out.extend(<$P as Controller>::report(&mut mine));
                } )*
                out
            }
        }

        impl CongestionControl for Cc {
            #[inline]
            fn rate(&self) -> Option<Rate> {
                each_cc!(self, c => CongestionControl::rate(c))
            }
            // Asked before every data packet; with a dozen controllers the match was no
            // longer inlined (a call of 30 instructions a packet, mostly to learn None).
            #[inline(always)]
            fn window(&self) -> Option<u64> {
                each_cc!(self, c => CongestionControl::window(c))
            }
            #[inline]
            fn retimes_pacing(&self) -> bool {
                each_cc!(self, c => CongestionControl::retimes_pacing(c))
            }
            #[inline]
            fn on_sent(&mut self, now: Time, bytes: u64) {
                each_cc!(self, c => CongestionControl::on_sent(c, now, bytes))
            }
            #[inline]
            fn on_ack(&mut self, now: Time, sample: &AckSample) -> bool {
                each_cc!(self, c => CongestionControl::on_ack(c, now, sample))
            }
            #[inline]
            fn on_loss(&mut self, now: Time, flight: &Flight) {
                each_cc!(self, c => CongestionControl::on_loss(c, now, flight))
            }
            #[inline]
            fn on_cnp(&mut self, now: Time) {
                each_cc!(self, c => CongestionControl::on_cnp(c, now))
            }
            #[inline]
            fn on_timeout(&mut self, now: Time, flight: &Flight) {
                each_cc!(self, c => CongestionControl::on_timeout(c, now, flight))
            }
            #[inline]
            fn poll_timeout(&self) -> Option<Time> {
                each_cc!(self, c => CongestionControl::poll_timeout(c))
            }
            #[inline]
            fn handle_timeout(&mut self, now: Time) {
                each_cc!(self, c => CongestionControl::handle_timeout(c, now))
            }
        }
    };
}
pub(crate) use cc_registry;

/// `x` as a `&T`: itself, or what it boxes (ExpressPass's sender and pacer, LEFT's NIC are
/// stored boxed so every other scheme's enums keep their size).
pub fn downcast_ref<T: 'static>(x: &dyn std::any::Any) -> Option<&T> {
    x.downcast_ref::<T>().or_else(|| x.downcast_ref::<Box<T>>().map(|b| &**b))
}

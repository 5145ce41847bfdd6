//! LEFT (Huang et al., "LEFT: LightwEight and FasT packet Reordering for RDMA", APNet'24;
//! only the slides are public): its parameters (`params.rs`), its NIC-wide state, the
//! dual-state pool with the gather FIFOs and the scheduler (`nic.rs`), its sender and receiver
//! (`ends.rs`), and here LEFT as the registry sees it.

pub mod ends;
pub mod nic;
pub mod params;

use crate::sim::check::{self, Checked};
use crate::sim::units::{Rate, Time};
use crate::transport::common::scheme::{Scheme, Setup};
use ends::{LeftReceiver, LeftSender};
use nic::LeftNic;
use params::LeftParams;

impl Scheme for LeftParams {
    const NAME: &'static str = "left";
    type Sender = LeftSender;
    type Receiver = LeftReceiver;
    /// The pool, FIFOs and scheduler, boxed (every NIC of every other scheme keeps its size).
    type Agent = Box<LeftNic>;

    /// Fields by their names within `[recovery.left]`.
    fn check(&self) -> Checked {
        check::range_u32("block_bits", self.block_bits, 1, 64)?;
        check::range_u32("pool_bits", self.pool_bits, self.block_bits, self.block_bits.saturating_mul(60_000))?;
        check::range_u32("registers", self.registers, 0, 64)?;
        check::range_u32("register_bits", self.register_bits, self.block_bits, 1 << 16)?;
        if self.register_bits % self.block_bits != 0 {
            return Err(check::FieldError::new("register_bits", format!("{} is not a multiple of block_bits ({})", self.register_bits, self.block_bits)));
        }
        check::range_u32("fifos", self.fifos, 1, 256)?;
        check::range_u32("gather_packets", self.gather_packets, 1, 4096)?;
        check::range_u32("nack_holes", self.nack_holes, 1, 3)?;
        check::range_u32("window", self.window, 0, 1 << 20)?;
        check::range_u32("disorder_threshold", self.disorder_threshold, 0, 1 << 20)?;
        check::range_u32("connection_threshold", self.connection_threshold, 0, 1 << 20)?;
        if self.cycle.0 == Time::ZERO || self.cycle.0 > Time::from_us(1) {
            return Err(check::FieldError::new("cycle", format!("{} must be above 0 and at most 1 us", self.cycle.0)));
        }
        check::timer("gather_timeout", self.gather_timeout.0)?;
        check::timer("hole_timeout", self.hole_timeout.0)?;
        check::timer("rto", self.rto.0)?;
        if self.hole_timeout.0 <= self.gather_timeout.0 {
            return Err(check::FieldError::new("hole_timeout", format!("{} must exceed gather_timeout ({}): a gathered packet would be reported lost", self.hole_timeout.0, self.gather_timeout.0)));
        }
        if self.rto.0 <= self.hole_timeout.0 {
            return Err(check::FieldError::new("rto", format!("{} must exceed hole_timeout ({}): the sender would time out before the receiver reports", self.rto.0, self.hole_timeout.0)));
        }
        Ok(())
    }

    /// Packets in flight and the receiver's bitmap both span `window` (one BDP at 0).
    fn endpoints(&self, f: &Setup<'_>) -> (LeftSender, LeftReceiver) {
        let window = f.or_bdp(self.window);
        (LeftSender::new(self, window, f.npkts()), LeftReceiver::new(self, window, f.ack_interval))
    }

    fn agent(&self, _link: Rate, _mtu: u32) -> Option<Box<LeftNic>> {
        Some(Box::new(LeftNic::new(self)))
    }

    fn report<'a>(nics: &mut dyn Iterator<Item = &'a Box<LeftNic>>) -> Vec<(&'static str, f64)> {
        LeftNic::report(nics.map(|n| &**n))
    }
}

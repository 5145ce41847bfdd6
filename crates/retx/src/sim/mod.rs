//! The engine's foundations: time and units, the event queue, random streams and bounded
//! reading of input files. Knows no network element and no scheme.

pub mod check;
pub mod input;
pub mod queue;
pub mod queue_trace;
pub mod rng;
pub mod units;

//! The engine's foundations: time and units, the event queue and random streams. Knows no
//! network element and no scheme.

pub mod queue;
pub mod rng;
pub mod units;

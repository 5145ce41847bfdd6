//! The engine: time and units, the event queue, random streams and the simulation loop.

pub mod queue;
pub mod rng;
pub mod units;
pub mod world;

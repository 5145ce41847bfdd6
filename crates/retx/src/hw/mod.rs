//! Hardware structures modelled bit-exactly, and their on-chip memory footprint.

pub mod bits_pool;
pub mod left_gather_trace;
pub mod left_pool;
pub mod left_pool_trace;
pub mod memory;

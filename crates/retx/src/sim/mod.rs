//! The engine's foundations: time and units, the event queue, random streams and bounded
//! reading of input files. Knows no network element and no scheme.

pub mod input;
pub mod queue;
pub mod rng;
pub mod units;

/// Asks the CPU to bring the cache lines of `*value` in ahead of use: a hint with no effect
/// on results (a no-op on other architectures).
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        let p = value as *const T as *const i8;
        let lines = std::mem::size_of::<T>().div_ceil(64);
        for i in 0..lines {
            // SAFETY: prefetching is a hint: it never faults and reads nothing into the
            // program, even for an address past the value's end.
            unsafe { std::arch::x86_64::_mm_prefetch(p.wrapping_add(i * 64), std::arch::x86_64::_MM_HINT_T0) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

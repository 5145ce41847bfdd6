//! The test binary's global allocator: it counts the bytes each thread has live and their peak
//! (a test measures its own run, whatever the tests beside it allocate), and refuses any
//! allocation that would take the process past [`MEMORY_CAP`] (the process then aborts,
//! loudly): a case that would take the machine's memory is a finding, not a swap storm.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

pub struct Counting;

/// Bytes live in the whole process.
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// The most the whole process may hold.
pub const MEMORY_CAP: usize = 4 << 30;

thread_local! {
    /// Bytes this thread allocated and has not freed (negative if it frees others' bytes).
    static THREAD_LIVE: Cell<isize> = const { Cell::new(0) };
    /// The most `THREAD_LIVE` has been since the last [`reset_peak`].
    static THREAD_PEAK: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    let _ = THREAD_LIVE.try_with(|l| {
        let live = l.get() + delta;
        l.set(live);
        let _ = THREAD_PEAK.try_with(|p| p.set(p.get().max(live)));
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if LIVE.fetch_add(layout.size(), Relaxed) + layout.size() > MEMORY_CAP {
            LIVE.fetch_sub(layout.size(), Relaxed);
            return std::ptr::null_mut();
        }
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            LIVE.fetch_sub(layout.size(), Relaxed);
        } else {
            count(layout.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
        count(-(layout.size() as isize));
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let grow = new_size.saturating_sub(layout.size());
        if LIVE.fetch_add(grow, Relaxed) + grow > MEMORY_CAP {
            LIVE.fetch_sub(grow, Relaxed);
            return std::ptr::null_mut();
        }
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            LIVE.fetch_sub(grow, Relaxed);
        } else {
            LIVE.fetch_sub(layout.size().saturating_sub(new_size), Relaxed);
            count(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// Starts counting a new peak on this thread from what it has live now; returns that baseline.
pub fn reset_peak() -> isize {
    let live = THREAD_LIVE.with(Cell::get);
    THREAD_PEAK.with(|p| p.set(live));
    live
}

/// Bytes this thread held at most above `baseline` since [`reset_peak`].
pub fn peak_above(baseline: isize) -> usize {
    (THREAD_PEAK.with(Cell::get) - baseline).max(0) as usize
}

/// The peak heap `run` took on this thread above what was live before it, and its result.
pub fn measure<T>(run: impl FnOnce() -> T) -> (usize, T) {
    let base = reset_peak();
    let result = run();
    (peak_above(base), result)
}

#[test]
fn a_thread_counts_its_own_peak_not_its_neighbours() {
    let (peak, v) = measure(|| vec![0u8; 1 << 20]);
    assert!(peak >= 1 << 20 && peak < 1 << 21, "{peak}");
    drop(v);
    // Another thread's allocation leaves this thread's peak alone.
    let base = reset_peak();
    std::thread::spawn(|| drop(std::hint::black_box(vec![0u8; 8 << 20]))).join().unwrap();
    assert!(peak_above(base) < 1 << 20, "{}", peak_above(base));
}

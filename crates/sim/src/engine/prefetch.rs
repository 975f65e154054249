//! Asking the processor to start loading memory that an event soon to run will read. With a
//! thousand connections their state does not stay in the caches between their turns, and
//! an event's reads (a channel's lines, a packet's headers) wait on memory one after
//! another; started one event ahead, the loads overlap with the event running now.

/// Starts loading the cache lines of `value` into the caches; does nothing else (a
/// prefetch neither faults nor changes what any load sees), and nothing on processors
/// without the instruction.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let start = std::ptr::from_ref(value).cast::<i8>();
        for offset in (0..std::mem::size_of::<T>()).step_by(64) {
            // SAFETY: a prefetch is a hint that reads nothing architecturally and cannot
            // fault; the address lies within `value`, which the reference keeps alive.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(offset)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

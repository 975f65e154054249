//! Simulated time is an integer number of nanoseconds since the start of the run. A u64
//! covers 584 years, and integers keep runs bit-for-bit reproducible where a float clock
//! would drift with the order of additions.

/// Nanoseconds since the start of the run.
pub type Nanos = u64;

pub const NS_PER_S: u64 = 1_000_000_000;

/// Time to clock `bytes` onto a line of `rate_bps`, rounded up to the next nanosecond so
/// that a link is never faster than its rate.
pub fn serialization_ns(bytes: u64, rate_bps: u64) -> Nanos {
    let bits = u128::from(bytes) * 8 * u128::from(NS_PER_S);
    let rate = u128::from(rate_bps);
    bits.div_ceil(rate) as Nanos
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_is_exact_when_it_divides() {
        // 1502 bytes at 2.048 Mb/s = 12016 bits / 2048000 bit/s = 5.8671875 ms exactly.
        assert_eq!(serialization_ns(1502, 2_048_000), 5_867_188);
        assert_eq!(serialization_ns(125, 1_000_000), 1_000_000);
    }

    #[test]
    fn serialization_rounds_up() {
        // 1 byte at 3 bit/s = 8/3 s.
        assert_eq!(serialization_ns(1, 3), 2_666_666_667);
    }
}

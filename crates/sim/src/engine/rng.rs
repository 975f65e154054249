//! Named random streams. Each component draws from its own stream, seeded from the run's
//! seed and the stream's name, so adding a random choice in one place never shifts the
//! numbers another component sees, and a run is reproducible bit for bit.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

#[derive(Debug, Clone)]
pub struct RngStream(Pcg64);

/// SplitMix64 finaliser: spreads a 64-bit value over all output bits.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// FNV-1a: a stable hash of the stream name (std's hasher is not stable across releases).
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl RngStream {
    pub fn new(seed: u64, name: &str) -> Self {
        let a = mix(seed ^ name_hash(name));
        let b = mix(a ^ 0x5bd1_e995);
        let mut bytes = [0u8; 32];
        bytes[..8].copy_from_slice(&a.to_le_bytes());
        bytes[8..16].copy_from_slice(&b.to_le_bytes());
        bytes[16..24].copy_from_slice(&mix(b).to_le_bytes());
        bytes[24..].copy_from_slice(&mix(a.rotate_left(17)).to_le_bytes());
        Self(Pcg64::from_seed(bytes))
    }

    /// A uniform draw in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0.gen::<f64>()
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.uniform() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_name_give_the_same_stream() {
        let mut a = RngStream::new(7, "links.0.forward.errors");
        let mut b = RngStream::new(7, "links.0.forward.errors");
        for _ in 0..1000 {
            assert_eq!(a.uniform().to_bits(), b.uniform().to_bits());
        }
    }

    #[test]
    fn different_names_or_seeds_give_different_streams() {
        let first = |seed, name| RngStream::new(seed, name).uniform();
        assert_ne!(first(7, "a"), first(7, "b"));
        assert_ne!(first(7, "a"), first(8, "a"));
    }

    #[test]
    fn chance_matches_its_probability() {
        let mut r = RngStream::new(1, "t");
        let hits = (0..100_000).filter(|_| r.chance(0.25)).count();
        assert!((24_000..26_000).contains(&hits), "{hits}");
        assert!(!r.chance(0.0));
    }
}

//! The largest TCP goodput the ATM links allow after the cell tax: the denominator of seed
//! 001's efficiency ("sum of TCP throughputs / maximum possible TCP throughput").
//!
//! A full segment of `payload` bytes is a datagram of payload + 40 bytes, which takes
//! cells(datagram + encapsulation) cells (aal5::cells) on each ATM link it crosses, so a
//! link of C cell slots per second carries at most C · payload · 8 / cells bit/s of that
//! flow's goodput (models.md §1.5). With several flows, the links' capacities are shared
//! by progressive filling (max-min fairness, Bertsekas & Gallager, Data Networks, ch. 6): all
//! flows grow together until a link is full, the flows on it stop, and the rest go on. For
//! one path this is the §1.5 bound of its tightest link; for N flows on a shared trunk
//! (seed 001's dumbbell) it is the trunk's bound.

/// One flow's use of one ATM link direction.
pub struct Use {
    pub channel: usize,
    /// Cells the link carries per bit of the flow's goodput.
    pub cells_per_bit: f64,
}

/// The largest total goodput (bit/s) of `flows`, each listed by the link directions it
/// uses, where channel c has `capacity[c]` cell slots per second.
pub fn max_goodput_bps(flows: &[Vec<Use>], capacity: &[f64]) -> f64 {
    let mut rate = vec![0.0; flows.len()];
    let mut growing: Vec<bool> = flows.iter().map(|uses| !uses.is_empty()).collect();
    while growing.contains(&true) {
        // Per channel: cells/s in use, and cells/s more per bit/s that all growing flows add.
        let mut used = vec![0.0; capacity.len()];
        let mut growth = vec![0.0; capacity.len()];
        for (f, uses) in flows.iter().enumerate() {
            for u in uses {
                used[u.channel] += rate[f] * u.cells_per_bit;
                if growing[f] {
                    growth[u.channel] += u.cells_per_bit;
                }
            }
        }
        let step = (0..capacity.len())
            .filter(|&c| growth[c] > 0.0)
            .map(|c| (capacity[c] - used[c]) / growth[c])
            .fold(f64::INFINITY, f64::min);
        let full: Vec<bool> = (0..capacity.len())
            .map(|c| growth[c] > 0.0 && (capacity[c] - used[c]) / growth[c] <= step * (1.0 + 1e-12))
            .collect();
        for (f, uses) in flows.iter().enumerate() {
            if growing[f] {
                rate[f] += step;
                growing[f] = !uses.iter().any(|u| full[u.channel]);
            }
        }
    }
    rate.iter().sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atm::aal5::cells;

    const CELL_BITS: f64 = 424.0;

    fn use_of(channel: usize, payload: u64, encapsulation: u64) -> Use {
        Use {
            channel,
            cells_per_bit: cells(payload + 40 + encapsulation) as f64 / (payload * 8) as f64,
        }
    }

    #[test]
    fn seed_001_bound_on_a_150mbps_cell_stream() {
        // MSS 2000 + 40 + LLC/SNAP 8 → 43 cells (2279 bytes): 150 Mb/s × 2000/2279 =
        // 131.637 Mb/s (the paper rounds the ratio to 0.87 and writes 130.5 Mb/s).
        let capacity = 150e6 / CELL_BITS;
        let bound = max_goodput_bps(&[vec![use_of(0, 2000, 8)]], &[capacity]);
        assert!((bound - 150e6 * 2000.0 / 2279.0).abs() < 1.0, "{bound}");
        assert!((bound / 1e6 - 131.637).abs() < 1e-3);
    }

    #[test]
    fn reference_goodput_table() {
        // models.md §1.5 (Mb/s): OC-3c payload 149.76 Mb/s with MSS 1460 → 128.92 and MSS
        // 9140 → 134.51; a 150 Mb/s cell stream with MSS 1460 → 129.13.
        let one = |rate: f64, slot_bits: f64, mss: u64, h: u64| {
            max_goodput_bps(&[vec![use_of(0, mss, h)]], &[rate / slot_bits]) / 1e6
        };
        assert!((one(149.76e6, CELL_BITS, 1460, 8) - 128.92).abs() < 0.005);
        assert!((one(149.76e6, CELL_BITS, 9140, 8) - 134.51).abs() < 0.005);
        assert!((one(150e6, CELL_BITS, 1460, 8) - 129.13).abs() < 0.005);
        // ATM25 with its command octet (54 octets a slot): LANE with MSS 1460 → 21.63, and
        // Classical IP (LLC/SNAP) with MSS 9140 → 22.57.
        assert!((one(25.6e6, 432.0, 1460, 16) - 21.63).abs() < 0.005);
        assert!((one(25.6e6, 432.0, 9140, 8) - 22.57).abs() < 0.005);
    }

    #[test]
    fn flows_on_a_shared_trunk_share_its_bound() {
        // Access links of the trunk's rate into one trunk: the trunk limits the total.
        let c = 150e6 / CELL_BITS;
        let flows: Vec<Vec<Use>> = (0..3)
            .map(|i| vec![use_of(i, 2000, 8), use_of(3, 2000, 8)])
            .collect();
        let bound = max_goodput_bps(&flows, &[c, c, c, c]);
        assert!((bound - 150e6 * 2000.0 / 2279.0).abs() < 1.0);
    }

    #[test]
    fn flows_on_separate_paths_add_up() {
        let c = 150e6 / CELL_BITS;
        let flows = vec![vec![use_of(0, 2000, 8)], vec![use_of(1, 2000, 8)]];
        let bound = max_goodput_bps(&flows, &[c, c / 2.0]);
        assert!((bound - 1.5 * 150e6 * 2000.0 / 2279.0).abs() < 1.0);
    }
}

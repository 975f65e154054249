//! Jain's fairness index (Jain, Chiu & Hawe, "A Quantitative Measure of Fairness and
//! Discrimination for Resource Allocation in Shared Computer Systems", DEC-TR-301, 1984):
//! (Σx)² / (n · Σx²), 1 when every flow gets the same and 1/n when one gets everything.
//! Seed 001 applies it to x_i = T_i / O_i, each flow's throughput over its optimal share;
//! with equal optimal shares that is the index of the throughputs themselves.

/// The index of `x`; None when there is nothing to compare (no flows, or all zero).
pub fn jain_index(x: &[f64]) -> Option<f64> {
    let sum: f64 = x.iter().sum();
    let squares: f64 = x.iter().map(|v| v * v).sum();
    (squares > 0.0).then(|| sum * sum / (x.len() as f64 * squares))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_shares_are_perfectly_fair_and_one_hog_scores_one_over_n() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0, 5.0]), Some(1.0));
        assert_eq!(jain_index(&[8.0, 0.0, 0.0, 0.0]), Some(0.25));
        // Two flows at 3:1 → 16 / (2 · 10) = 0.8.
        assert_eq!(jain_index(&[3.0, 1.0]), Some(0.8));
        assert_eq!(jain_index(&[0.0, 0.0]), None);
        assert_eq!(jain_index(&[]), None);
    }
}

//! The PEP's relay: the application inside a split-connection proxy that copies bytes from
//! the connection it accepted to the one it opened (RFC 3135 §2.4). Its buffer is bounded:
//! when it is full the relay stops reading, the upstream connection's receive buffer fills
//! and its advertised window closes, so a slow downstream segment holds the sender back
//! instead of the PEP storing without limit.

/// Bytes read from the upstream connection that the downstream connection's send buffer
/// has not taken yet.
pub struct Relay {
    /// The connection whose receiving application the relay is, and the one it writes into.
    pub upstream: usize,
    pub downstream: usize,
    capacity: u64,
    held: u64,
    peak: u64,
}

impl Relay {
    pub fn new(upstream: usize, downstream: usize, capacity: u64) -> Self {
        Self {
            upstream,
            downstream,
            capacity,
            held: 0,
            peak: 0,
        }
    }

    /// How much the next read from the upstream connection may take.
    pub fn room(&self) -> u64 {
        self.capacity - self.held
    }

    /// `n` bytes were read from the upstream connection (never more than `room`).
    pub fn took(&mut self, n: u64) {
        debug_assert!(n <= self.room(), "the relay read past its buffer");
        self.held += n;
        self.peak = self.peak.max(self.held);
    }

    /// The downstream connection's send buffer took `n` of the held bytes.
    pub fn gave(&mut self, n: u64) {
        debug_assert!(n <= self.held, "the relay wrote bytes it never read");
        self.held -= n;
    }

    #[cfg(test)]
    fn held(&self) -> u64 {
        self.held
    }

    /// The most the buffer ever held.
    pub fn peak(&self) -> u64 {
        self.peak
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_buffer_stops_the_reads_until_the_far_side_takes_some() {
        // RFC 3135 §2.4: a split connection's proxy buffers between its two connections;
        // bounded, a full buffer must push back on the upstream sender.
        let mut relay = Relay::new(0, 1, 4096);
        relay.took(3000);
        assert_eq!(relay.room(), 1096);
        relay.took(1096);
        assert_eq!(relay.room(), 0, "full: the next read takes nothing");
        relay.gave(1460);
        assert_eq!(
            relay.room(),
            1460,
            "what the downstream took can be read again"
        );
        assert_eq!(relay.peak(), 4096);
    }

    #[test]
    fn bytes_are_neither_made_nor_lost() {
        // Every byte read is either still held or written on: read = written + held.
        let mut relay = Relay::new(0, 1, 10_000);
        let (mut read, mut written) = (0, 0);
        for (take, give) in [(5000, 1460), (6460, 2920), (0, 7080), (2000, 0)] {
            let take = take.min(relay.room());
            relay.took(take);
            read += take;
            let give = give.min(relay.held());
            relay.gave(give);
            written += give;
            assert_eq!(read, written + relay.held());
        }
        assert_eq!((read, written, relay.held()), (13_460, 11_460, 2000));
    }
}

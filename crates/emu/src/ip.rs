//! What the emulator reads and writes in an IPv4 header: the flow (FQ-CoDel's 5-tuple) and
//! the ECN field, which an AQM sets to Congestion Experienced (RFC 3168 §5) by rewriting
//! the header in place with its checksum updated (RFC 1624); and the Internet checksum
//! (RFC 1071) that segmentation (crate::tso) writes.

use tcplab_sim::net::aqm::Arrival;

pub const PROTOCOL_TCP: u8 = 6;
const PROTOCOL_UDP: u8 = 17;
/// RFC 3168 §5: the ECN field, the low two bits of the second byte.
const ECN_MASK: u8 = 0b11;
const ECN_CE: u8 = 0b11;

/// The flow and ECN capability of an IP packet; what is not IPv4 (or is too short to be)
/// is one flow, not ECN-capable.
pub fn classify(packet: &[u8]) -> Arrival {
    if packet.len() < 20 || packet[0] >> 4 != 4 {
        return Arrival::default();
    }
    let header = usize::from(packet[0] & 0x0f) * 4;
    let protocol = packet[9];
    // FNV-1a over source, destination, protocol and, for TCP and UDP, the two ports.
    let mut key = [0u8; 13];
    key[..8].copy_from_slice(&packet[12..20]);
    key[8] = protocol;
    let mut len = 9;
    if matches!(protocol, PROTOCOL_TCP | PROTOCOL_UDP) && packet.len() >= header + 4 {
        key[9..].copy_from_slice(&packet[header..header + 4]);
        len = 13;
    }
    let flow = key[..len].iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    Arrival {
        flow,
        ect: matches!(packet[1] & ECN_MASK, 0b01 | 0b10),
    }
}

/// The DSCP of an IPv4 packet (RFC 2474 §3: the upper six bits of the second byte), None
/// for anything else.
pub fn dscp(packet: &[u8]) -> Option<u8> {
    (packet.len() >= 20 && packet[0] >> 4 == 4).then(|| packet[1] >> 2)
}

/// The 16-bit one's complement sum of `data` (RFC 1071 §4.1: big-endian words, an odd
/// last byte padded with zero) added to `sum`, not yet folded.
pub fn sum_words(data: &[u8], mut sum: u32) -> u32 {
    let mut words = data.chunks_exact(2);
    for w in &mut words {
        sum += u32::from(u16::from_be_bytes([w[0], w[1]]));
        // Fold early: at most 2^15 words fit in 32 bits before a carry is lost.
        sum = (sum & 0xffff) + (sum >> 16);
    }
    if let [last] = words.remainder() {
        sum += u32::from(*last) << 8;
    }
    sum
}

/// A sum of [`sum_words`] folded to 16 bits, the carries added back in.
pub fn fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// Writes an IPv4 header's checksum (RFC 791 §3.1) over `header`, its whole header.
pub fn set_header_checksum(header: &mut [u8]) {
    header[10..12].copy_from_slice(&[0, 0]);
    let sum = !fold(sum_words(header, 0));
    header[10..12].copy_from_slice(&sum.to_be_bytes());
}

/// The TCP/UDP pseudo-header's sum (RFC 9293 §3.1: source, destination, zero and protocol,
/// segment length), folded and not complemented: what a checksum left for the device to
/// finish holds (Linux `~tcp_v4_check(len, saddr, daddr, 0)` for CHECKSUM_PARTIAL).
pub fn pseudo_header_sum(ip_header: &[u8], protocol: u8, length: u16) -> u16 {
    let mut sum = sum_words(&ip_header[12..20], 0);
    sum += u32::from(protocol) + u32::from(length);
    fold(sum)
}

/// Marks an IPv4 packet Congestion Experienced, updating the header checksum.
pub fn mark_ce(packet: &mut [u8]) {
    if packet.len() < 20 || packet[0] >> 4 != 4 {
        return;
    }
    let old = u16::from_be_bytes([packet[0], packet[1]]);
    packet[1] |= ECN_CE;
    let new = u16::from_be_bytes([packet[0], packet[1]]);
    // RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m').
    let checksum = u16::from_be_bytes([packet[10], packet[11]]);
    let sum = u32::from(!checksum) + u32::from(!old) + u32::from(new);
    packet[10..12].copy_from_slice(&(!fold(sum)).to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 40-byte IPv4/TCP packet with the given ECN field and a correct header checksum.
    fn packet(ecn: u8, sport: u16) -> Vec<u8> {
        let mut p = vec![0u8; 40];
        p[0] = 0x45;
        p[1] = ecn;
        p[2..4].copy_from_slice(&40u16.to_be_bytes());
        p[8] = 64;
        p[9] = PROTOCOL_TCP;
        p[12..16].copy_from_slice(&[198, 18, 0, 1]);
        p[16..20].copy_from_slice(&[198, 18, 0, 2]);
        p[20..22].copy_from_slice(&sport.to_be_bytes());
        p[22..24].copy_from_slice(&5001u16.to_be_bytes());
        set_header_checksum(&mut p[..20]);
        p
    }

    fn header_sum(p: &[u8]) -> u16 {
        fold(sum_words(&p[..20], 0))
    }

    #[test]
    fn the_dscp_is_the_upper_six_bits_of_the_second_byte() {
        // RFC 2474 §3 beside RFC 3168's ECN field: DSCP 1 with ECT(0) is 0b000001_10.
        assert_eq!(dscp(&packet(0b0000_0110, 1)), Some(1));
        assert_eq!(dscp(&packet(0b10, 1)), Some(0));
        let mut ipv6 = packet(0, 1);
        ipv6[0] = 0x60;
        assert_eq!(dscp(&ipv6), None);
    }

    #[test]
    fn the_checksum_sums_words_and_pads_an_odd_byte() {
        // RFC 1071 §3's example: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2.
        assert_eq!(
            fold(sum_words(
                &[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7],
                0
            )),
            0xddf2
        );
        assert_eq!(fold(sum_words(&[0x01, 0x02, 0x03], 0)), 0x0402);
        // 70 000 words of 0xffff: carries folded as they come, none lost.
        assert_eq!(fold(sum_words(&vec![0xff; 140_000], 0)), 0xffff);
    }

    #[test]
    fn the_pseudo_header_sums_addresses_protocol_and_length() {
        let p = packet(0, 1);
        // 198.18.0.1 and 198.18.0.2 are the words c612 0001 c612 0002; then 6 and 1480.
        let words = 0xc612 + 0x0001 + 0xc612 + 0x0002 + 6 + 1480;
        assert_eq!(pseudo_header_sum(&p, PROTOCOL_TCP, 1480), fold(words));
    }

    #[test]
    fn a_written_header_checksum_verifies() {
        let mut p = packet(0, 1);
        p[10] ^= 0x5a;
        set_header_checksum(&mut p[..20]);
        assert_eq!(header_sum(&p), 0xffff);
    }

    #[test]
    fn marking_sets_ce_and_keeps_the_checksum_valid() {
        let mut p = packet(0b10, 40000);
        mark_ce(&mut p);
        assert_eq!(p[1] & ECN_MASK, ECN_CE);
        // A valid header sums to 0xffff (RFC 791 §3.1).
        assert_eq!(header_sum(&p), 0xffff);
    }

    #[test]
    fn ect_and_flows_come_from_the_header() {
        assert!(classify(&packet(0b10, 1)).ect);
        assert!(classify(&packet(0b01, 1)).ect);
        assert!(!classify(&packet(0b00, 1)).ect);
        assert!(!classify(&packet(0b11, 1)).ect);
        // Another source port is another flow; the same 5-tuple the same flow.
        assert_ne!(classify(&packet(0, 1)).flow, classify(&packet(0, 2)).flow);
        assert_eq!(
            classify(&packet(0b10, 1)).flow,
            classify(&packet(0, 1)).flow
        );
    }
}

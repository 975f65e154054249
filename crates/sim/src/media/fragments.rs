//! IPv4 fragmentation of a UDP datagram larger than the path MTU (RFC 791 §2.3, §3.2).

/// IPv4 header without options (RFC 791 §3.1).
const IP_HEADER: u32 = 20;
/// UDP header (RFC 768).
pub const UDP_HEADER: u32 = 8;

/// The IP payload of each fragment that carries a `message`-byte UDP payload over an
/// `mtu`-byte path: one piece when the datagram fits, else pieces of the largest multiple of
/// 8 bytes that fits (the fragment offset counts 8-byte units, RFC 791 §3.1) and the rest.
/// Each fragment adds its own 20-byte IP header; the UDP header is in the first.
pub fn fragments(message: u64, mtu: u32) -> Vec<u32> {
    let mut left = message + u64::from(UDP_HEADER);
    let piece = u64::from((mtu - IP_HEADER) / 8 * 8);
    let mut out = Vec::with_capacity(left.div_ceil(piece) as usize);
    while left > u64::from(mtu - IP_HEADER) {
        out.push(piece as u32);
        left -= piece;
    }
    out.push(left as u32);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_datagram_that_fits_the_mtu_is_one_packet() {
        // 1472 + 8 + 20 = 1500: exactly an Ethernet MTU.
        assert_eq!(fragments(1472, 1500), vec![1480]);
        assert_eq!(fragments(160, 1500), vec![168]);
    }

    #[test]
    fn larger_datagrams_split_on_8_byte_boundaries() {
        // RFC 791 §3.2: all fragments but the last carry a multiple of 8 data bytes.
        assert_eq!(fragments(1473, 1500), vec![1480, 1]);
        assert_eq!(fragments(3000, 1500), vec![1480, 1480, 48]);
        // 576 − 20 = 556, rounded down to 552.
        assert_eq!(fragments(1000, 576), vec![552, 456]);
    }
}

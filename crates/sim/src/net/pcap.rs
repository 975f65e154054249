//! Packets as real IPv4/TCP bytes in a pcap file, so that Wireshark, tshark and tcpdump
//! dissect what crossed a simulated link. The simulator writes no files: a [`PcapFile`]
//! is a byte buffer that the caller saves.
//!
//! Sources: the pcap file format (pcap-savefile(5); draft-ietf-opsawg-pcap), the IPv4
//! header (RFC 791 §3.1), the TCP header and its pseudo-header checksum (RFC 9293 §3.1),
//! the Internet checksum (RFC 1071), and the options: MSS (RFC 9293 §3.2), window scale
//! and timestamps (RFC 7323 §2–3), SACK-permitted and SACK (RFC 2018 §2–3).

use std::net::Ipv4Addr;

use crate::engine::{Nanos, NS_PER_S};
use crate::tcp::Segment;

/// pcap's magic number for nanosecond timestamps (0xa1b2c3d4 means microseconds), so the
/// simulator's integer-nanosecond clock is kept exactly.
const MAGIC_NANOSECONDS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_RAW: each record starts with the IP header, no link-layer header.
const LINKTYPE_RAW: u32 = 101;
const IPV4_HEADER_BYTES: usize = 20;
/// RFC 9293 §3.1: a data offset of 15 words.
const TCP_MAX_HEADER_BYTES: usize = 60;
const PROTOCOL_TCP: u8 = 6;
/// The TTL a host puts in the packets it sends (Linux's default, net.ipv4.ip_default_ttl).
pub const INITIAL_TTL: u8 = 64;

const TCP_FLAG_SYN: u8 = 0x02;
const TCP_FLAG_ACK: u8 = 0x10;
/// RFC 3168 §6.1: ECN-Echo and Congestion Window Reduced.
const TCP_FLAG_ECE: u8 = 0x40;
const TCP_FLAG_CWR: u8 = 0x80;
/// RFC 3168 §5: the ECN field, the low two bits of the old type-of-service octet.
const ECN_ECT0: u8 = 0b10;
const ECN_CE: u8 = 0b11;

const OPT_NOP: u8 = 1;
const OPT_MSS: u8 = 2;
const OPT_WINDOW_SCALE: u8 = 3;
const OPT_SACK_PERMITTED: u8 = 4;
const OPT_SACK: u8 = 5;
const OPT_TIMESTAMPS: u8 = 8;

/// One end of a TCP connection as it appears in packet headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    pub addr: Ipv4Addr,
    pub port: u16,
    /// Initial sequence number of the bytes this end sends.
    pub isn: u32,
}

/// The 32-bit sequence number of a 64-bit stream offset. The SYN takes the ISN itself, so
/// stream offset 0 is ISN + 1 (RFC 9293 §3.4), and sequence space wraps modulo 2^32.
pub fn wire_seq(isn: u32, offset: u64) -> u32 {
    // Truncating the offset is the modulo-2^32 reduction.
    isn.wrapping_add(1).wrapping_add(offset as u32)
}

/// RFC 1071: adds the big-endian 16-bit words of `data` (an odd last byte padded with a
/// zero) to `sum`, without folding the carries yet.
fn sum_words(data: &[u8], sum: u32) -> u32 {
    data.chunks(2).fold(sum, |sum, word| {
        sum + (u32::from(word[0]) << 8 | u32::from(word.get(1).copied().unwrap_or(0)))
    })
}

/// RFC 1071: the one's complement of the one's complement sum.
fn checksum(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Writes the options of `seg` and returns their length. Each option is aligned to 4 bytes
/// with leading NOPs, as Linux sends them (RFC 7323 Appendix A), which gives exactly the
/// header length `Segment::tcp_header_bytes` charges on the wire for every segment the TCP
/// model sends. SACK edges are sequence numbers of the data `peer_isn` starts.
fn write_options(seg: &Segment, peer_isn: u32, out: &mut [u8; 40]) -> usize {
    let mut n = 0;
    let mut put = |bytes: &[u8]| {
        out[n..n + bytes.len()].copy_from_slice(bytes);
        n += bytes.len();
    };
    if let Some(mss) = seg.mss_option {
        put(&[OPT_MSS, 4]);
        put(&mss.to_be_bytes());
    }
    if let Some(shift) = seg.wscale_option {
        put(&[OPT_NOP, OPT_WINDOW_SCALE, 3, shift]);
    }
    if seg.sack_permitted {
        put(&[OPT_NOP, OPT_NOP, OPT_SACK_PERMITTED, 2]);
    }
    if let Some(ts) = seg.timestamps {
        put(&[OPT_NOP, OPT_NOP, OPT_TIMESTAMPS, 10]);
        put(&ts.val.to_be_bytes());
        put(&ts.ecr.to_be_bytes());
    }
    let blocks = seg.sack_blocks();
    if !blocks.is_empty() {
        put(&[OPT_NOP, OPT_NOP, OPT_SACK, 2 + 8 * blocks.len() as u8]);
        for &(start, end) in blocks {
            put(&wire_seq(peer_isn, start).to_be_bytes());
            put(&wire_seq(peer_isn, end).to_be_bytes());
        }
    }
    n
}

/// The IPv4 datagram that carries a segment: its IPv4 and TCP headers as bytes, and its
/// total length. The payload is `seg.len` bytes of zeros, never materialised: zeros add
/// nothing to the checksum.
pub struct Datagram {
    header: [u8; IPV4_HEADER_BYTES + TCP_MAX_HEADER_BYTES],
    header_len: usize,
    total_len: usize,
}

impl Datagram {
    /// `seg` as sent from `src` to `dst`, with `ttl` left in its IPv4 header.
    pub fn new(seg: &Segment, src: &Endpoint, dst: &Endpoint, ttl: u8) -> Self {
        let mut options = [0u8; 40];
        let options_len = write_options(seg, dst.isn, &mut options);
        let tcp_len = 20 + options_len;
        debug_assert_eq!(tcp_len, seg.tcp_header_bytes() as usize);
        let header_len = IPV4_HEADER_BYTES + tcp_len;
        let total_len = header_len + seg.len as usize;
        // The TCP model never sends more than an IPv4 datagram holds (MSS ≤ 65495).
        let total = u16::try_from(total_len).expect("an IPv4 datagram is at most 65535 bytes");
        let mut header = [0u8; IPV4_HEADER_BYTES + TCP_MAX_HEADER_BYTES];

        // RFC 791 §3.1: version 4, IHL 5 words; no DSCP, the ECN field as the queues left it.
        let ip = &mut header[..IPV4_HEADER_BYTES];
        ip[0] = 0x45;
        ip[1] = match (seg.ect, seg.ce) {
            (_, true) => ECN_CE,
            (true, false) => ECN_ECT0,
            (false, false) => 0,
        };
        ip[2..4].copy_from_slice(&total.to_be_bytes());
        // Identification stays 0: with DF set the datagram is atomic, and RFC 6864 §4.1
        // gives its ID no meaning. Flags: DF (0x4000), as TCP with path MTU discovery sets.
        ip[6..8].copy_from_slice(&0x4000u16.to_be_bytes());
        ip[8] = ttl;
        ip[9] = PROTOCOL_TCP;
        ip[12..16].copy_from_slice(&src.addr.octets());
        ip[16..20].copy_from_slice(&dst.addr.octets());
        let ip_checksum = checksum(sum_words(ip, 0));
        ip[10..12].copy_from_slice(&ip_checksum.to_be_bytes());

        // RFC 9293 §3.1.
        let seq = if seg.syn {
            src.isn
        } else {
            wire_seq(src.isn, seg.seq)
        };
        // The ACK field is meaningful only with the ACK flag; otherwise it is sent as 0.
        let ack = if seg.has_ack {
            wire_seq(dst.isn, seg.ack)
        } else {
            0
        };
        let mut flags = 0;
        if seg.syn {
            flags |= TCP_FLAG_SYN;
        }
        if seg.has_ack {
            flags |= TCP_FLAG_ACK;
        }
        if seg.ece {
            flags |= TCP_FLAG_ECE;
        }
        if seg.cwr {
            flags |= TCP_FLAG_CWR;
        }
        let tcp = &mut header[IPV4_HEADER_BYTES..header_len];
        tcp[0..2].copy_from_slice(&src.port.to_be_bytes());
        tcp[2..4].copy_from_slice(&dst.port.to_be_bytes());
        tcp[4..8].copy_from_slice(&seq.to_be_bytes());
        tcp[8..12].copy_from_slice(&ack.to_be_bytes());
        tcp[12] = ((tcp_len / 4) as u8) << 4;
        tcp[13] = flags;
        tcp[14..16].copy_from_slice(&seg.window.to_be_bytes());
        tcp[20..].copy_from_slice(&options[..options_len]);
        // The pseudo-header: source, destination, zero, protocol, TCP length (header and
        // payload). The zero payload adds nothing.
        let tcp_length = (total_len - IPV4_HEADER_BYTES) as u32;
        let pseudo = sum_words(&src.addr.octets(), 0)
            + sum_words(&dst.addr.octets(), 0)
            + u32::from(PROTOCOL_TCP)
            + tcp_length;
        let tcp_checksum = checksum(sum_words(tcp, pseudo));
        tcp[16..18].copy_from_slice(&tcp_checksum.to_be_bytes());
        Self {
            header,
            header_len,
            total_len,
        }
    }

    /// The IPv4 and TCP headers, options included.
    pub fn header(&self) -> &[u8] {
        &self.header[..self.header_len]
    }

    /// IPv4 total length: headers and payload.
    pub fn total_len(&self) -> usize {
        self.total_len
    }
}

/// A pcap file being written in memory: a global header, then one record per datagram,
/// each cut to `snaplen` bytes with its full length recorded (as `tcpdump -s` does).
/// Little-endian; readers tell the byte order from the magic number.
pub struct PcapFile {
    bytes: Vec<u8>,
    snaplen: u32,
}

impl PcapFile {
    pub fn new(snaplen: u32) -> Self {
        let mut bytes = Vec::with_capacity(1 << 16);
        bytes.extend_from_slice(&MAGIC_NANOSECONDS.to_le_bytes());
        bytes.extend_from_slice(&2u16.to_le_bytes()); // version 2.4
        bytes.extend_from_slice(&4u16.to_le_bytes());
        bytes.extend_from_slice(&0i32.to_le_bytes()); // timestamps are UTC
        bytes.extend_from_slice(&0u32.to_le_bytes()); // accuracy: always 0
        bytes.extend_from_slice(&snaplen.to_le_bytes());
        bytes.extend_from_slice(&LINKTYPE_RAW.to_le_bytes());
        Self { bytes, snaplen }
    }

    /// Appends a record for `datagram`, stamped `at` nanoseconds after the epoch (the run
    /// starts at 1970-01-01 00:00:00 UTC).
    pub fn record(&mut self, at: Nanos, datagram: &Datagram) {
        let kept = datagram.total_len().min(self.snaplen as usize);
        // Seconds fit 32 bits for runs of up to 136 years; plans are refused beyond that.
        self.bytes
            .extend_from_slice(&((at / NS_PER_S) as u32).to_le_bytes());
        self.bytes
            .extend_from_slice(&((at % NS_PER_S) as u32).to_le_bytes());
        self.bytes.extend_from_slice(&(kept as u32).to_le_bytes());
        self.bytes
            .extend_from_slice(&(datagram.total_len() as u32).to_le_bytes());
        let header = datagram.header();
        let from_header = kept.min(header.len());
        self.bytes.extend_from_slice(&header[..from_header]);
        self.bytes.resize(self.bytes.len() + kept - from_header, 0);
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::Timestamps;

    const CLIENT: Endpoint = Endpoint {
        addr: Ipv4Addr::new(10, 0, 0, 1),
        port: 49152,
        isn: 0x0102_0304,
    };
    const SERVER: Endpoint = Endpoint {
        addr: Ipv4Addr::new(10, 0, 0, 2),
        port: 9,
        isn: 0xffff_fff0,
    };

    fn options(seg: &Segment, peer_isn: u32) -> Vec<u8> {
        let mut out = [0u8; 40];
        let n = write_options(seg, peer_isn, &mut out);
        out[..n].to_vec()
    }

    fn syn(wscale: Option<u8>, sack_permitted: bool, timestamps: bool) -> Segment {
        Segment {
            syn: true,
            window: 65_535,
            mss_option: Some(1460),
            wscale_option: wscale,
            sack_permitted,
            timestamps: timestamps.then_some(Timestamps {
                val: 0x1122_3344,
                ecr: 0,
            }),
            ..Segment::default()
        }
    }

    /// The Internet checksum over `data` must come out as 0 when `data` carries its own
    /// checksum (RFC 1071 §1: the receiver's check).
    fn verifies(data: &[u8], pseudo: u32) -> bool {
        checksum(sum_words(data, pseudo)) == 0
    }

    fn pseudo_header(d: &Datagram) -> u32 {
        let ip = &d.header()[..20];
        sum_words(&ip[12..20], 0) + 6 + (d.total_len() - 20) as u32
    }

    mod checksums {
        use super::*;

        #[test]
        fn rfc_1071_worked_example() {
            // RFC 1071 §3: the words 0001 f203 f4f5 f6f7 sum to ddf2 once the carries are
            // folded; the checksum is its complement.
            let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
            assert_eq!(checksum(sum_words(&data, 0)), !0xddf2);
        }

        #[test]
        fn odd_length_pads_the_last_byte_with_zero() {
            assert_eq!(sum_words(&[0x12, 0x34, 0x56], 0), 0x1234 + 0x5600);
        }

        #[test]
        fn ipv4_header_matches_a_hand_computed_one() {
            // 45 00 0028 | 0000 4000 | 40 06 cksum | 0a000001 | 0a000002: the other words
            // sum to 4500 + 0028 + 4000 + 4006 + 0a00 + 0001 + 0a00 + 0002 = 0xd931, with
            // no carry to fold; the checksum is its complement, 0x26ce.
            let d = Datagram::new(&Segment::pure_ack(0, 100), &CLIENT, &SERVER, 64);
            assert_eq!(
                &d.header()[..20],
                &[
                    0x45, 0x00, 0x00, 0x28, 0x00, 0x00, 0x40, 0x00, 0x40, 0x06, 0x26, 0xce, 10, 0,
                    0, 1, 10, 0, 0, 2
                ]
            );
        }

        #[test]
        fn tcp_checksum_covers_pseudo_header_options_and_zero_payload() {
            let mut seg = Segment::data(1000, 1448, 0, 512);
            seg.timestamps = Some(Timestamps {
                val: 0xdead_beef,
                ecr: 7,
            });
            let d = Datagram::new(&seg, &CLIENT, &SERVER, 63);
            assert!(verifies(&d.header()[..20], 0));
            assert!(verifies(&d.header()[20..], pseudo_header(&d)));
            // The same segment with its payload materialised as zeros checks the same.
            let mut whole = d.header()[20..].to_vec();
            whole.resize(whole.len() + 1448, 0);
            assert!(verifies(&whole, pseudo_header(&d)));
        }

        #[test]
        fn tcp_header_of_a_pure_ack_matches_a_hand_computed_one() {
            // The server's ACK: ports 0009 c000, seq = 0xfffffff0 + 1 = fffffff1, ack =
            // 0x01020304 + 1 = 01020305, 5 words and ACK (5010), window 0064. Checksum:
            // pseudo-header 0a00 + 0002 + 0a00 + 0001 + 0006 + 0014 (length) = 0x141d;
            // header 0009 + c000 + ffff + fff1 + 0102 + 0305 + 5010 + 0064 = 0x3_1474;
            // together 0x3_2891, folded 0x2894, complement 0xd76b.
            let d = Datagram::new(&Segment::pure_ack(0, 100), &SERVER, &CLIENT, 64);
            assert_eq!(
                &d.header()[20..],
                &[
                    0x00, 0x09, 0xc0, 0x00, 0xff, 0xff, 0xff, 0xf1, 0x01, 0x02, 0x03, 0x05, 0x50,
                    0x10, 0x00, 0x64, 0xd7, 0x6b, 0x00, 0x00
                ]
            );
        }
    }

    mod options {
        use super::*;

        #[test]
        fn syn_with_every_option() {
            assert_eq!(
                options(&syn(Some(7), true, true), 0),
                [
                    2, 4, 0x05, 0xb4, // MSS 1460
                    1, 3, 3, 7, // NOP, window scale 7
                    1, 1, 4, 2, // NOP, NOP, SACK-permitted
                    1, 1, 8, 10, 0x11, 0x22, 0x33, 0x44, 0, 0, 0, 0, // NOP, NOP, TSval, TSecr
                ]
            );
        }

        #[test]
        fn syn_with_mss_alone() {
            assert_eq!(options(&syn(None, false, false), 0), [2, 4, 0x05, 0xb4]);
        }

        #[test]
        fn sack_blocks_follow_timestamps_with_edges_in_the_peers_sequence_space() {
            let mut ack = Segment::pure_ack(0, 100);
            ack.timestamps = Some(Timestamps { val: 1, ecr: 2 });
            ack.sack[..2].copy_from_slice(&[(14, 1014), (3000, 4000)]);
            ack.sack_len = 2;
            assert_eq!(
                options(&ack, 0xffff_fff0),
                [
                    1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2, // NOP, NOP, timestamps
                    1, 1, 5, 18, // NOP, NOP, SACK with two blocks
                    0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x03, 0xe7, // 14 and 1014, wrapped
                    0x00, 0x00, 0x0b, 0xa9, 0x00, 0x00, 0x0f, 0x91, // 3000 and 4000
                ]
            );
        }

        #[test]
        fn header_length_is_what_the_wire_model_charges() {
            for wscale in [None, Some(14)] {
                for sack_permitted in [false, true] {
                    for ts in [false, true] {
                        let seg = syn(wscale, sack_permitted, ts);
                        let d = Datagram::new(&seg, &CLIENT, &SERVER, 64);
                        assert_eq!(d.header().len(), 20 + seg.tcp_header_bytes() as usize);
                    }
                }
            }
            for ts in [false, true] {
                let most = if ts { 3 } else { 4 };
                for blocks in 0..=most {
                    let mut ack = Segment::pure_ack(0, 100);
                    ack.timestamps = ts.then_some(Timestamps::default());
                    ack.sack_len = blocks;
                    let d = Datagram::new(&ack, &SERVER, &CLIENT, 64);
                    assert_eq!(d.header().len(), 20 + ack.tcp_header_bytes() as usize);
                    assert_eq!(usize::from(d.header()[32] >> 4) * 4, d.header().len() - 20);
                }
            }
        }
    }

    mod sequence_numbers {
        use super::*;

        #[test]
        fn offsets_wrap_modulo_two_to_the_32() {
            assert_eq!(wire_seq(0xffff_fff0, 0), 0xffff_fff1);
            assert_eq!(wire_seq(0xffff_fff0, 15), 0);
            assert_eq!(wire_seq(0, (1 << 32) + 5), 6);
            assert_eq!(wire_seq(7, 3 * (1 << 32) - 1), 7);
        }

        #[test]
        fn the_syn_takes_the_isn_and_data_starts_after_it() {
            let d = Datagram::new(&syn(None, false, false), &CLIENT, &SERVER, 64);
            assert_eq!(d.header()[24..28], 0x0102_0304u32.to_be_bytes());
            assert_eq!(d.header()[33], TCP_FLAG_SYN); // no ACK on the active open
            assert_eq!(d.header()[28..32], [0; 4]);
            let data = Segment::data((5 << 32) + 10, 1448, 0, 512);
            let d = Datagram::new(&data, &CLIENT, &SERVER, 64);
            assert_eq!(d.header()[24..28], 0x0102_030fu32.to_be_bytes());
            // ACKs the server's SYN, which wrapped the server's ISN.
            assert_eq!(d.header()[28..32], 0xffff_fff1u32.to_be_bytes());
            assert_eq!(d.header()[33], TCP_FLAG_ACK);
        }
    }

    mod file_format {
        use super::*;

        #[test]
        fn global_header_announces_nanoseconds_raw_ip_and_the_snaplen() {
            assert_eq!(
                PcapFile::new(128).into_bytes(),
                [
                    0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 128, 0, 0, 0, 101,
                    0, 0, 0
                ]
            );
        }

        #[test]
        fn records_keep_nanoseconds_and_cut_at_the_snaplen() {
            let mut data = Segment::data(0, 1448, 0, 512);
            data.timestamps = Some(Timestamps::default());
            let d = Datagram::new(&data, &CLIENT, &SERVER, 64);
            assert_eq!(d.total_len(), 1500);
            let mut file = PcapFile::new(128);
            file.record(3_000_000_123, &d);
            let bytes = file.into_bytes();
            let record = &bytes[24..];
            assert_eq!(record[..4], 3u32.to_le_bytes());
            assert_eq!(record[4..8], 123u32.to_le_bytes());
            assert_eq!(record[8..12], 128u32.to_le_bytes());
            assert_eq!(record[12..16], 1500u32.to_le_bytes());
            assert_eq!(record.len(), 16 + 128);
            assert_eq!(&record[16..16 + 52], d.header());
            assert!(record[16 + 52..].iter().all(|&b| b == 0));
        }

        #[test]
        fn a_snaplen_shorter_than_the_headers_cuts_them() {
            let d = Datagram::new(&syn(Some(7), true, true), &CLIENT, &SERVER, 64);
            let mut file = PcapFile::new(40);
            file.record(0, &d);
            let bytes = file.into_bytes();
            assert_eq!(bytes[24 + 8..24 + 16], [40, 0, 0, 0, 64, 0, 0, 0]);
            assert_eq!(&bytes[24 + 16..], &d.header()[..40]);
        }
    }
}

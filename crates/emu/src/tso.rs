//! TCP segmentation in the emulator. A TUN device with TCP segmentation offload (crate::sys
//! `open_tun`) hands over the sender's TCP/IPv4 super-packets (Linux's GSO buffers, up to
//! 64 KiB under one header) whole, and the emulator cuts each into the wire-size segments
//! before they meet the hops, as the kernel's own software segmentation would have done
//! (net/ipv4/tcp_offload.c `tcp_gso_segment`, net/ipv4/af_inet.c `inet_gso_segment`):
//! - every segment carries `gso_size` bytes of payload but the last, which has the rest;
//! - its sequence number is the first's plus the payload before it, its IP identification
//!   the first's plus its index, its IP total length its own, its IP header checksum redone;
//! - CWR only on the first segment, FIN and PSH only on the last; the options (timestamps)
//!   are the same in all;
//! - its TCP checksum is left partial, the pseudo-header's sum for its own length, and is
//!   written with `NEEDS_CSUM` (crate::vnet) for the receiving device to trust, as a device
//!   with checksum offload does.

use crate::ip;

const TCP_CWR: u8 = 0x80;
const TCP_PSH: u8 = 0x08;
const TCP_FIN: u8 = 0x01;

/// Why a super-packet cannot be cut (it is dropped and counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not IPv4 carrying TCP, or a header is cut short or says a length it does not have.
    NotTcpIpv4,
    /// A zero `gso_size`, or one whose segments would not fit the device's MTU.
    SegmentSize,
}

/// A TCP/IPv4 super-packet with its headers checked, ready to be cut.
pub struct Segments<'a> {
    packet: &'a [u8],
    ip_header: usize,
    /// IP and TCP headers together.
    headers: usize,
    mss: usize,
    count: usize,
}

impl<'a> Segments<'a> {
    /// Checks `packet` (an IP packet, without the vnet header) for cutting into segments of
    /// `mss` payload bytes, each at most `max_len` bytes of IP packet.
    pub fn new(packet: &'a [u8], mss: usize, max_len: usize) -> Result<Self, Refusal> {
        if packet.len() < 20 || packet[0] >> 4 != 4 || packet[9] != ip::PROTOCOL_TCP {
            return Err(Refusal::NotTcpIpv4);
        }
        let ip_header = usize::from(packet[0] & 0x0f) * 4;
        let total = usize::from(u16::from_be_bytes([packet[2], packet[3]]));
        if ip_header < 20 || total != packet.len() || packet.len() < ip_header + 20 {
            return Err(Refusal::NotTcpIpv4);
        }
        let headers = ip_header + usize::from(packet[ip_header + 12] >> 4) * 4;
        if headers < ip_header + 20 || headers >= packet.len() {
            return Err(Refusal::NotTcpIpv4);
        }
        if mss == 0 || headers + mss > max_len {
            return Err(Refusal::SegmentSize);
        }
        Ok(Self {
            packet,
            ip_header,
            headers,
            mss,
            count: (packet.len() - headers).div_ceil(mss),
        })
    }

    pub fn count(&self) -> usize {
        self.count
    }

    /// Writes segment `i` (an IP packet) at the start of `out`; returns its length.
    pub fn write(&self, i: usize, out: &mut [u8]) -> usize {
        let (p, ih, h) = (self.packet, self.ip_header, self.headers);
        let start = h + i * self.mss;
        let end = (start + self.mss).min(p.len());
        let len = h + end - start;
        out[..h].copy_from_slice(&p[..h]);
        out[h..len].copy_from_slice(&p[start..end]);

        out[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        let id = u16::from_be_bytes([p[4], p[5]]).wrapping_add(i as u16);
        out[4..6].copy_from_slice(&id.to_be_bytes());
        ip::set_header_checksum(&mut out[..ih]);

        let tcp = &mut out[ih..len];
        let seq = u32::from_be_bytes([p[ih + 4], p[ih + 5], p[ih + 6], p[ih + 7]])
            .wrapping_add((i * self.mss) as u32);
        tcp[4..8].copy_from_slice(&seq.to_be_bytes());
        if i > 0 {
            tcp[13] &= !TCP_CWR;
        }
        if i + 1 < self.count {
            tcp[13] &= !(TCP_PSH | TCP_FIN);
        }
        let pseudo = ip::pseudo_header_sum(&p[..ih], ip::PROTOCOL_TCP, (len - ih) as u16);
        tcp[16..18].copy_from_slice(&pseudo.to_be_bytes());
        len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: usize = 1448;
    const ACK: u8 = 0x10;

    /// A TCP/IPv4 packet built field by field, with a complete TCP checksum and a 12-byte
    /// timestamps option, as a wire would carry it.
    fn packet(id: u16, seq: u32, flags: u8, payload: &[u8]) -> Vec<u8> {
        let len = 20 + 32 + payload.len();
        let mut p = vec![0u8; len];
        p[0] = 0x45;
        p[1] = 0x02; // ECT(0)
        p[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        p[4..6].copy_from_slice(&id.to_be_bytes());
        p[6] = 0x40; // DF
        p[8] = 64;
        p[9] = ip::PROTOCOL_TCP;
        p[12..16].copy_from_slice(&[198, 18, 0, 1]);
        p[16..20].copy_from_slice(&[198, 18, 0, 2]);
        ip::set_header_checksum(&mut p[..20]);
        let t = &mut p[20..];
        t[0..2].copy_from_slice(&40000u16.to_be_bytes());
        t[2..4].copy_from_slice(&5201u16.to_be_bytes());
        t[4..8].copy_from_slice(&seq.to_be_bytes());
        t[8..12].copy_from_slice(&7u32.to_be_bytes());
        t[12] = 8 << 4;
        t[13] = flags;
        t[14..16].copy_from_slice(&501u16.to_be_bytes());
        t[20..32].copy_from_slice(&[1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 3]);
        t[32..].copy_from_slice(payload);
        let pseudo = ip::pseudo_header_sum(&p[..20], ip::PROTOCOL_TCP, (len - 20) as u16);
        p[36..38].copy_from_slice(&pseudo.to_be_bytes());
        finish_checksum(&mut p);
        p
    }

    /// What a device does with a partial checksum (Linux `skb_checksum_help`): the sum from
    /// the TCP header on, its field holding the pseudo-header's sum, complemented into it.
    fn finish_checksum(p: &mut [u8]) {
        let sum = !ip::fold(ip::sum_words(&p[20..], 0));
        p[36..38].copy_from_slice(&sum.to_be_bytes());
    }

    fn payload(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 + i / 251) as u8).collect()
    }

    /// Cuts the super-packet made of `data` and returns the segments, each with its partial
    /// checksum finished as the receiving device would.
    fn cut(id: u16, seq: u32, flags: u8, data: &[u8]) -> Vec<Vec<u8>> {
        let sup = packet(id, seq, flags, data);
        let s = Segments::new(&sup, MSS, 1500).unwrap();
        (0..s.count())
            .map(|i| {
                let mut out = vec![0u8; 1500];
                let len = s.write(i, &mut out);
                out.truncate(len);
                let pseudo = u16::from_be_bytes([out[36], out[37]]);
                assert_eq!(
                    pseudo,
                    ip::pseudo_header_sum(&out[..20], 6, (len - 20) as u16)
                );
                finish_checksum(&mut out);
                out
            })
            .collect()
    }

    #[test]
    fn segments_are_the_packets_a_wire_carries() {
        // 3 full segments and 100 bytes: ids, sequence numbers, lengths and checksums as
        // if each had been sent alone; PSH and FIN on the last only.
        let data = payload(3 * MSS + 100);
        let segments = cut(0xfffe, 0xffff_f000, ACK | TCP_PSH | TCP_FIN, &data);
        assert_eq!(segments.len(), 4);
        for (i, seg) in segments.iter().enumerate() {
            let last = i == 3;
            let flags = if last { ACK | TCP_PSH | TCP_FIN } else { ACK };
            let body = &data[i * MSS..((i + 1) * MSS).min(data.len())];
            let expected = packet(
                0xfffe_u16.wrapping_add(i as u16),
                0xffff_f000_u32.wrapping_add((i * MSS) as u32),
                flags,
                body,
            );
            assert_eq!(seg, &expected, "segment {i}");
        }
        assert_eq!(segments[3].len(), 52 + 100);
    }

    #[test]
    fn cwr_stays_on_the_first_segment_only() {
        let segments = cut(1, 1, ACK | TCP_CWR | TCP_PSH, &payload(2 * MSS));
        let flags: Vec<u8> = segments.iter().map(|s| s[33]).collect();
        assert_eq!(flags, [ACK | TCP_CWR, ACK | TCP_PSH]);
    }

    #[test]
    fn checksums_verify_as_a_receiver_checks_them() {
        for seg in cut(9, 1000, ACK, &payload(2 * MSS + 1)) {
            // RFC 1071: the sum over a header with its checksum is all ones.
            assert_eq!(ip::fold(ip::sum_words(&seg[..20], 0)), 0xffff);
            let tcp_len = (seg.len() - 20) as u16;
            let pseudo = ip::pseudo_header_sum(&seg[..20], 6, tcp_len);
            assert_eq!(
                ip::fold(ip::sum_words(&seg[20..], u32::from(pseudo))),
                0xffff
            );
        }
    }

    #[test]
    fn an_exact_multiple_has_no_short_segment() {
        let segments = cut(1, 1, ACK, &payload(2 * MSS));
        assert_eq!(
            segments.iter().map(Vec::len).collect::<Vec<_>>(),
            [1500, 1500]
        );
    }

    #[test]
    fn what_cannot_be_cut_is_refused() {
        let good = packet(1, 1, ACK, &payload(3000));
        assert!(Segments::new(&good, MSS, 1500).is_ok());
        assert_eq!(
            Segments::new(&good, 0, 1500).err(),
            Some(Refusal::SegmentSize)
        );
        assert_eq!(
            Segments::new(&good, MSS, 1499).err(),
            Some(Refusal::SegmentSize)
        );
        let mut udp = good.clone();
        udp[9] = 17;
        assert_eq!(
            Segments::new(&udp, MSS, 1500).err(),
            Some(Refusal::NotTcpIpv4)
        );
        assert_eq!(
            Segments::new(&good[..good.len() - 1], MSS, 1500).err(),
            Some(Refusal::NotTcpIpv4)
        );
        // Headers and no payload.
        let empty = packet(1, 1, ACK, &[]);
        assert_eq!(
            Segments::new(&empty, MSS, 1500).err(),
            Some(Refusal::NotTcpIpv4)
        );
    }
}

//! The virtio-net header (`struct virtio_net_hdr`, <linux/virtio_net.h>; virtio 1.x
//! §5.1.6) that a TUN device opened with `IFF_VNET_HDR` puts before each packet it hands
//! over and expects before each packet written to it. It says whether the packet is a
//! super-packet to be cut into `gso_size` segments (crate::tso) and whether its transport
//! checksum is left partial, for the device to finish (`NEEDS_CSUM`: the sum runs from
//! `csum_start` and goes `csum_offset` bytes further). A TUN device in this byte order
//! (TUNSETVNETLE is for big-endian hosts) reads the fields little-endian.

/// Length of the header (the default TUNSETVNETHDRSZ, without `num_buffers`).
pub const LEN: usize = 10;
pub const F_NEEDS_CSUM: u8 = 1;
pub const GSO_NONE: u8 = 0;
pub const GSO_TCPV4: u8 = 1;
/// Or-ed into `gso_type`: the super-packet's first segment carries CWR (RFC 3168 §6.1.2).
pub const GSO_ECN: u8 = 0x80;

/// Where a TCP header's checksum field sits (RFC 9293 §3.1).
const TCP_CHECKSUM_OFFSET: u16 = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Header {
    pub flags: u8,
    pub gso_type: u8,
    pub hdr_len: u16,
    pub gso_size: u16,
    pub csum_start: u16,
    pub csum_offset: u16,
}

impl Header {
    pub fn read(b: &[u8; LEN]) -> Self {
        let word = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        Self {
            flags: b[0],
            gso_type: b[1],
            hdr_len: word(2),
            gso_size: word(4),
            csum_start: word(6),
            csum_offset: word(8),
        }
    }

    pub fn write(&self, b: &mut [u8]) {
        b[0] = self.flags;
        b[1] = self.gso_type;
        b[2..4].copy_from_slice(&self.hdr_len.to_le_bytes());
        b[4..6].copy_from_slice(&self.gso_size.to_le_bytes());
        b[6..8].copy_from_slice(&self.csum_start.to_le_bytes());
        b[8..10].copy_from_slice(&self.csum_offset.to_le_bytes());
    }

    /// The header a single packet is written with: its checksum state as it came, no GSO
    /// (the device works out the header length itself).
    pub fn single(&self) -> Self {
        Self {
            flags: self.flags & F_NEEDS_CSUM,
            csum_start: self.csum_start,
            csum_offset: self.csum_offset,
            ..Self::default()
        }
    }

    /// The header of a TCP segment whose checksum holds the pseudo-header's sum only, after
    /// an IP header of `ip_header_len` bytes: the receiving stack then takes it as verified,
    /// as it does a packet from a device with checksum offload.
    pub fn partial_tcp(ip_header_len: usize) -> Self {
        Self {
            flags: F_NEEDS_CSUM,
            csum_start: ip_header_len as u16,
            csum_offset: TCP_CHECKSUM_OFFSET,
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_little_endian_in_struct_order() {
        let bytes = [1, 0x81, 0x36, 0, 0xa8, 0x05, 20, 0, 16, 0];
        let h = Header::read(&bytes);
        assert_eq!(
            h,
            Header {
                flags: F_NEEDS_CSUM,
                gso_type: GSO_TCPV4 | GSO_ECN,
                hdr_len: 54,
                gso_size: 1448,
                csum_start: 20,
                csum_offset: 16,
            }
        );
        let mut out = [0u8; LEN];
        h.write(&mut out);
        assert_eq!(out, bytes);
    }

    #[test]
    fn a_single_packet_keeps_its_checksum_state_and_drops_gso() {
        let h = Header::read(&[1, 1, 0x36, 0, 0xa8, 0x05, 20, 0, 16, 0]);
        assert_eq!(h.single(), Header::partial_tcp(20));
        assert_eq!(Header::default().single(), Header::default());
    }
}

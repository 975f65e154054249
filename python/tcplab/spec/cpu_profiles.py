"""Named host CPU profiles: what a packet, a copied byte, a system call and a stored byte
cost on the hosts the source papers measured. A host's `cpu` table overrides them one by
one. docs/models/hosts.md explains the model and how each number was estimated; "assumption"
marks a value no source states.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CpuProfile:
    description: str
    source: str
    per_packet_ns: int
    per_byte_ns: int
    per_call_ns: int
    storage_per_byte_ns: int
    ring_packets: int

    def costs_nothing(self) -> bool:
        return not (
            self.per_packet_ns or self.per_byte_ns or self.per_call_ns or self.storage_per_byte_ns
        )


PROFILES: dict[str, CpuProfile] = {
    "modern": CpuProfile(
        "a current host: its costs are too small to matter at the rates simulated here",
        "modelled as zero, so the default host never limits a flow and runs as if it had no"
        " CPU model",
        per_packet_ns=0,
        per_byte_ns=0,
        per_call_ns=0,
        storage_per_byte_ns=0,
        ring_packets=1024,
    ),
    "pentium-133": CpuProfile(
        "Pentium 133 MHz, Windows 95, PCI ATM25 adapter (Jang, Lee, Hwang & Lee 1999)",
        "seed 002: CPU use near 90 % at the ~20 Mb/s its 25 Mb/s link allowed (5 MB files),"
        " and LANE (MTU 1500) using about 80 % where IPOA (MTU 9180) used 75 % at a similar"
        " rate. Solving cost/byte = per_byte + 1.5 per_packet / MSS (a data packet and half"
        " an ACK per segment) for 1/(22 Mb/s) at MSS 9140 and an 80:75 ratio between MSS 1460"
        " and 9140 gives per_byte ≈ 350 ns and per_packet ≈ 30 µs; per_call 50 µs (Winsock on"
        " Windows 95) and the ring of 64 are assumptions",
        per_packet_ns=30_000,
        per_byte_ns=350,
        per_call_ns=50_000,
        storage_per_byte_ns=0,
        ring_packets=64,
    ),
    "pentium4-2.4ghz": CpuProfile(
        "Pentium 4 2.4 GHz PC, Windows 2000, 100 Mb/s PCI NIC: seed 003's fixed host",
        "estimates: ~20 k cycles of NDIS + TCP/IP per packet (8 µs), copy and checksum at"
        " ~1 GB/s (1 ns/B), 5 µs per Winsock call, an IDE disk writing ~40 MB/s (25 ns/B),"
        " a 256-descriptor receive ring. Seed 003 only says the PC is far faster than the"
        " PDA, which these keep it",
        per_packet_ns=8_000,
        per_byte_ns=1,
        per_call_ns=5_000,
        storage_per_byte_ns=25,
        ring_packets=256,
    ),
    "pda-400mhz": CpuProfile(
        "PDA with a 400 MHz Samsung S3C2440 (ARM920T), Windows CE, CompactFlash 802.11b"
        " card, flash storage: seed 003's mobile host, fitted to the paper's measured times",
        "per_packet and per_call fitted to seed 003 (bench/fit_pda_profile.py): 4.57 ms per"
        " packet makes the first 11 packets upstream take the 0.043 s of Fig. 7, and 550 µs"
        " per call makes 32,768 B reads 32 % faster than 512 B downstream (Fig. 9); the"
        " per-packet figure takes in all the PDA path's time the model has no place for"
        " (the CF card's programmed I/O, NDIS, the driver's and the access point's latency)."
        " Estimates, not fitted: memory copy at ~65 MB/s (15 ns/B), flash written at"
        " ~1 MB/s through the file system (1 µs/B), a CF card that holds 4 received frames",
        per_packet_ns=4_570_000,
        per_byte_ns=15,
        per_call_ns=550_000,
        storage_per_byte_ns=1_000,
        ring_packets=4,
    ),
    "yats-300us": CpuProfile(
        "the TCP hosts of Kim, Park & Park's YATS simulations",
        "seed 001, Fig. 4: 'average packet processing = 300 µs'; nothing else is charged, and"
        " the ring is large enough never to overflow, as the simulator's hosts did not drop",
        per_packet_ns=300_000,
        per_byte_ns=0,
        per_call_ns=0,
        storage_per_byte_ns=0,
        ring_packets=100_000,
    ),
}

DEFAULT_CPU = "modern"

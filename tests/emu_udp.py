"""UDP sender and receiver for the emulator's link tests, run inside its namespaces.

Kept free of tcplab imports so that it starts in a few milliseconds.

    python emu_udp.py recv PORT COUNT IDLE_S    -> prints "ready", then one JSON line
    python emu_udp.py send HOST PORT COUNT SIZE BURST GAP_S
    python emu_udp.py ping HOST COUNT GAP_S     -> one JSON line of RTTs in ms

`ping` sends ICMP echo requests (RFC 792) of 56 data bytes, as ping(8) does by default, on
a raw socket (root), so the tests need no ping binary.
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import time


def receive(port: int, count: int, idle_s: float) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, 33, 16 * 1024 * 1024)  # SO_RCVBUFFORCE
    sock.bind(("0.0.0.0", port))
    print("ready", flush=True)
    sock.settimeout(idle_s)
    times: list[float] = []
    sizes: list[int] = []
    try:
        while len(times) < count:
            data = sock.recv(65536)
            times.append(time.monotonic())
            sizes.append(len(data))
    except TimeoutError:
        pass
    first, last = (times[0], times[-1]) if times else (0.0, 0.0)
    print(json.dumps({"received": len(times), "first": first, "last": last, "sizes": sizes[:1]}))


def send(host: str, port: int, count: int, size: int, burst: int, gap_s: float) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    payload = bytes(size)
    start = time.monotonic()
    for i in range(count):
        sock.sendto(payload, (host, port))
        if gap_s and (i + 1) % burst == 0:
            # Paced against the start, so sleeping late does not slow the average rate.
            due = start + (i + 1) // burst * gap_s
            time.sleep(max(due - time.monotonic(), 0))


def _checksum(data: bytes) -> int:
    # The Internet checksum (RFC 1071): one's-complement sum of 16-bit words.
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def ping(host: str, count: int, gap_s: float) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    sock.settimeout(5.0)
    ident = 0x7C4B
    rtts = []
    for seq in range(count):
        header = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
        payload = bytes(56)
        packet = struct.pack("!BBHHH", 8, 0, _checksum(header + payload), ident, seq) + payload
        sent = time.monotonic()
        sock.sendto(packet, (host, 0))
        while True:
            reply = sock.recv(2048)
            kind, _, _, rid, rseq = struct.unpack("!BBHHH", reply[20:28])
            if kind == 0 and rid == ident and rseq == seq:
                rtts.append(1000 * (time.monotonic() - sent))
                break
        time.sleep(gap_s)
    print(json.dumps({"rtt_ms": rtts}))


if __name__ == "__main__":
    role, *args = sys.argv[1:]
    if role == "recv":
        receive(int(args[0]), int(args[1]), float(args[2]))
    elif role == "ping":
        ping(args[0], int(args[1]), float(args[2]))
    else:
        send(args[0], int(args[1]), int(args[2]), int(args[3]), int(args[4]), float(args[5]))

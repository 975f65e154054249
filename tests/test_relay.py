"""The emu backend's PEP relay (tcplab.measure.relay) on local sockets: its bounded buffer
pushes back on the sender, and every byte arrives once and in order."""

from __future__ import annotations

import socket
import threading
import time

from tcplab.measure.relay import Copied, copy

BUFFER = 16 * 1024


def small_pair() -> tuple[socket.socket, socket.socket]:
    a, b = socket.socketpair()
    for sock in (a, b):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    return a, b


def test_a_stalled_server_side_stops_the_relay_and_no_byte_is_lost() -> None:
    # RFC 3135 §2.4: the proxy buffers between its two connections; bounded, a full buffer
    # must stop it reading, so the client's writes block instead of piling up in the relay.
    client, accepted = small_pair()
    opened, server = small_pair()
    copied = Copied()
    relay = threading.Thread(target=copy, args=(accepted, opened, BUFFER, copied))
    relay.start()
    data = bytes(range(256)) * 4096  # 1 MiB
    sent = 0
    client.setblocking(False)
    # Nothing reads at the server: the client can send only what the socket buffers and
    # the relay's one buffer hold, and then its sends block.
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        try:
            sent += client.send(data[sent : sent + 4096])
        except BlockingIOError:
            time.sleep(0.01)
    assert 0 < sent < len(data) // 4, sent
    assert copied.peak_bytes <= BUFFER
    # Once the server reads, the rest follows: every byte once, in order.
    received = bytearray()

    def read_all() -> None:
        while chunk := server.recv(65536):
            received.extend(chunk)

    reader = threading.Thread(target=read_all)
    reader.start()
    client.setblocking(True)
    client.sendall(data[sent:])
    client.shutdown(socket.SHUT_WR)
    relay.join(10)
    reader.join(10)
    assert bytes(received) == data
    assert copied.bytes == len(data)
    assert copied.peak_bytes <= BUFFER
    for sock in (client, accepted, opened, server):
        sock.close()

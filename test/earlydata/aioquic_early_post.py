#!/usr/bin/env python3
"""A third-party HTTP/3 client (aioquic) that sends a POST in 0-RTT, for msgbench's gateway tests.

It connects once with a full handshake, publishes with a POST (after the handshake) and keeps the
session ticket the server sends; then it resumes that session on a new connection and sends a
POST at once, in 0-RTT data, before the handshake completes. As RFC 8470 asks of a client, a
425 Too Early is answered by sending the request again once the handshake is complete (once).
It prints one JSON object with what happened; the Go test (gateway/http) judges it.

usage: aioquic_early_post.py HOST PORT CA_FILE PATH BODY
"""

import asyncio
import json
import sys

from aioquic.asyncio.client import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import HandshakeCompleted

TIMEOUT = 20


class Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.http = H3Connection(self._quic)
        self.responses = {}  # stream id -> [status, body, future]
        self.handshake = asyncio.get_running_loop().create_future()

    def quic_event_received(self, event):
        if isinstance(event, HandshakeCompleted) and not self.handshake.done():
            self.handshake.set_result(event)
        for ev in self.http.handle_event(event):
            r = self.responses.get(ev.stream_id)
            if r is None:
                continue
            if isinstance(ev, HeadersReceived):
                for name, value in ev.headers:
                    if name == b":status":
                        r[0] = int(value)
            elif isinstance(ev, DataReceived):
                r[1] += ev.data
            if getattr(ev, "stream_ended", False) and not r[2].done():
                r[2].set_result((r[0], r[1].decode("utf-8", "replace")))

    def post(self, authority, path, body):
        """Sends a POST now (in 0-RTT when the handshake is not complete) and returns its
        response future and whether the handshake was complete when it was sent."""
        sid = self._quic.get_next_available_stream_id()
        fut = asyncio.get_running_loop().create_future()
        self.responses[sid] = [0, b"", fut]
        self.http.send_headers(sid, [
            (b":method", b"POST"), (b":scheme", b"https"), (b":authority", authority.encode()),
            (b":path", path.encode()), (b"content-length", str(len(body)).encode()),
            (b"user-agent", b"aioquic"),
        ])
        self.http.send_data(sid, body, end_stream=True)
        complete = self.handshake.done()
        self.transmit()
        return fut, complete


async def main(host, port, cafile, path, body):
    out = {}
    tickets = []
    ticket_event = asyncio.Event()

    def on_ticket(ticket):
        tickets.append(ticket)
        ticket_event.set()

    authority = f"{host}:{port}"
    conf = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, server_name=host)
    conf.load_verify_locations(cafile)

    # 1. A full handshake; a POST after it; the session ticket.
    async with connect(host, port, configuration=conf, create_protocol=Client,
                       session_ticket_handler=on_ticket, wait_connected=True) as c:
        fut, _ = c.post(authority, path, b"full handshake")
        out["first_status"], _ = await asyncio.wait_for(fut, TIMEOUT)
        await asyncio.wait_for(ticket_event.wait(), TIMEOUT)
    out["ticket_max_early_data"] = tickets[-1].max_early_data_size

    # 2. Resumed: the POST leaves in 0-RTT, before the handshake completes.
    conf.session_ticket = tickets[-1]
    async with connect(host, port, configuration=conf, create_protocol=Client,
                       wait_connected=False) as c:
        fut, complete = c.post(authority, path, body)
        out["sent_before_handshake"] = not complete
        out["early_status"], out["early_body"] = await asyncio.wait_for(fut, TIMEOUT)
        hs = await asyncio.wait_for(c.handshake, TIMEOUT)
        out["session_resumed"] = hs.session_resumed
        out["early_data_accepted"] = hs.early_data_accepted
        if out["early_status"] == 425:
            # RFC 8470 §5.2: retry, not in early data: the handshake is complete now.
            fut, complete = c.post(authority, path, body)
            out["retry_after_handshake"] = complete
            out["retry_status"], _ = await asyncio.wait_for(fut, TIMEOUT)
    print(json.dumps(out))


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    host, port, cafile, path, body = sys.argv[1:]
    asyncio.run(main(host, int(port), cafile, path, body.encode()))

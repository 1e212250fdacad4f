"""A real DNS server on loopback (dnslib's, UDP on 127.0.0.1, a free port) answering the TXT
records a test puts under a name; every other question is NXDOMAIN."""

from __future__ import annotations

import threading

from dnslib import QTYPE, RCODE, RR, TXT, DNSRecord
from dnslib.server import BaseResolver, DNSHandler, DNSLogger, DNSServer


class TxtZone(BaseResolver):
    def __init__(self) -> None:
        self.records: dict[str, list[str]] = {}
        self.questions: list[str] = []
        self._lock = threading.Lock()

    def resolve(self, request: DNSRecord, handler: DNSHandler) -> DNSRecord:
        name = str(request.q.qname).rstrip(".").lower()
        reply = request.reply()
        with self._lock:
            self.questions.append(name)
            values = list(self.records.get(name, ()))
        if not values:
            reply.header.rcode = RCODE.NXDOMAIN
        elif request.q.qtype == QTYPE.TXT:
            for value in values:
                reply.add_answer(RR(name, QTYPE.TXT, rdata=TXT(value), ttl=60))
        return reply


class LoopbackDns:
    """`set_txt(name, *values)` / `remove(name)` / `clear()`; `address` is (host, port) for the resolver."""

    def __init__(self) -> None:
        self.zone = TxtZone()
        quiet = DNSLogger("-recv,-send,-request,-reply,-truncated,-data")  # errors still logged
        self._server = DNSServer(self.zone, address="127.0.0.1", port=0, logger=quiet)
        self._server.start_thread()

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server.server_address[:2]
        return str(host), int(port)

    def set_txt(self, name: str, *values: str) -> None:
        self.zone.records[name.rstrip(".").lower()] = list(values)

    def remove(self, name: str) -> None:
        self.zone.records.pop(name.rstrip(".").lower(), None)

    def clear(self) -> None:
        """Forget every record and question, as a new server would (stopping one takes half a second)."""
        self.zone.records.clear()
        self.zone.questions.clear()

    def close(self) -> None:
        self._server.stop()
        self._server.server.server_close()

"""`agentdex import` keeps every connection busy: a batch waits behind each request in flight, so a
connection whose answer comes first sends the next batch at once instead of waiting for the
oldest request (a real loopback server, two processes named by `/healthz`)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cli.client import WORKER_HEADER, RegistryClient
from cli.importer import import_file

DEADLINE = 5.0


class SlowFirstBatch:
    """An import endpoint whose answer to the batch holding line 1 waits until the batch holding
    line 5 has arrived (batches of two lines): only a connection that does not wait for the first
    answer can send it."""

    def __init__(self) -> None:
        self.third_arrived = threading.Event()
        self.first_waited_out = False
        self.accepted = 0
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                with lock:
                    self.worker = "ab"[outer.accepted % 2]
                    outer.accepted += 1

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                self._answer({"status": "ok"})

            def do_POST(self) -> None:  # noqa: N802
                items = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["items"]
                names = [item["card"]["name"] for item in items]
                if "line 5" in names:
                    outer.third_arrived.set()
                if "line 1" in names and not outer.third_arrived.wait(DEADLINE):
                    outer.first_waited_out = True
                self._answer(
                    {
                        "created": len(items),
                        "failed": 0,
                        "results": [{"index": i, "agentId": f"id-{i}", "error": None} for i in range(len(items))],
                    }
                )

            def _answer(self, payload: object) -> None:
                body = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header(WORKER_HEADER, self.worker)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def test_a_connection_whose_answer_came_first_sends_the_next_batch_while_the_oldest_is_in_flight(tmp_path: Path):
    registry = SlowFirstBatch()
    try:
        lines = tmp_path / "cards.jsonl"
        lines.write_text(
            "".join(
                json.dumps({"card": {"name": f"line {n}"}, "cardUrl": f"https://a{n}.example/"}) + "\n"
                for n in range(1, 9)
            )
        )
        summary = import_file(lambda: RegistryClient(registry.url), lines, 2, progress=False, parallel=2)
    finally:
        registry.server.shutdown()
        registry.server.server_close()
    assert summary == {"created": 8, "failed": 0, "errors": []}
    assert registry.third_arrived.is_set() and not registry.first_waited_out

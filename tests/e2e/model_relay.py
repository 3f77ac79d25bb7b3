"""A recording relay in front of a real inference server, for test_real_model.py.

Every ``POST`` is forwarded unchanged to the server behind it, and the request body and the
server's answer are recorded (so a test sees what the service really sent: ``stream``, the
``tools``, ``max_tokens``). A test can set what the next request meets, to play the failures a
real server shows in the field without depending on timing:

* ``"pass"``: the server's answer as it is;
* ``"hold"``: nothing is answered until :meth:`Relay.release` (a server that is too slow); the
  request is still forwarded, so the model really runs;
* ``"cut"``: the server's real answer is started (status, headers with the full
  ``content-length``, the first half of the body) and the connection closed (a server that stops
  mid-answer).

Serves on a free loopback port in daemon threads.
"""

from __future__ import annotations

import json
import socket
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Seen:
    """One relayed request: its JSON body, the server's status and JSON answer."""

    request: dict[str, Any]
    status: int = 0
    answer: dict[str, Any] = field(default_factory=dict)
    mode: str = "pass"


class Relay:
    def __init__(self, upstream: str) -> None:
        """``upstream``: the server's origin, ``http://127.0.0.1:PORT`` (paths are kept)."""
        self.upstream = upstream.rstrip("/")
        self.seen: list[Seen] = []
        self._mode = "pass"
        self._released = threading.Event()
        self._lock = threading.Lock()
        self._held = threading.Condition()
        self.holding = 0
        relay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                relay._handle(self)

            def log_message(self, *args: object) -> None:  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL to configure (ends in ``/v1/``)."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1/"

    def next(self, mode: str) -> None:
        """What the following requests meet: ``pass``, ``hold`` or ``cut``."""
        assert mode in ("pass", "hold", "cut"), mode
        with self._lock:
            self._mode = mode
            self._released.clear()

    def release(self) -> None:
        """Lets held requests answer."""
        self._released.set()

    def wait_holding(self, timeout: float = 30.0) -> None:
        """Blocks until a request is being held."""
        with self._held:
            assert self._held.wait_for(lambda: self.holding > 0, timeout), "no request reached the relay"

    def close(self) -> None:
        self._released.set()
        self.server.shutdown()

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("content-length", "0"))
        body = h.rfile.read(length)
        with self._lock:
            mode = self._mode
        seen = Seen(request=json.loads(body or b"{}"), mode=mode)
        self.seen.append(seen)
        forward = urllib.request.Request(
            self.upstream + h.path,
            data=body,
            headers={"content-type": h.headers.get("content-type", "application/json")},
            method="POST",
        )
        try:
            with urllib.request.urlopen(forward, timeout=120) as resp:
                status, answer, ctype = resp.status, resp.read(), resp.headers.get("content-type", "")
        except urllib.error.HTTPError as e:
            status, answer, ctype = e.code, e.read(), e.headers.get("content-type", "")
        seen.status = status
        try:
            seen.answer = json.loads(answer)
        except ValueError:
            seen.answer = {"raw": answer.decode(errors="replace")}
        if mode == "hold":
            with self._held:
                self.holding += 1
                self._held.notify_all()
            self._released.wait()
            with self._held:
                self.holding -= 1
        h.send_response(status)
        h.send_header("content-type", ctype or "application/json")
        h.send_header("content-length", str(len(answer)))
        h.end_headers()
        try:
            if mode == "cut":
                h.wfile.write(answer[: len(answer) // 2])
                h.wfile.flush()
                h.connection.shutdown(socket.SHUT_RDWR)
                h.close_connection = True
            else:
                h.wfile.write(answer)
        except OSError:
            # The service gave up first (its timeout): nobody is listening any more.
            h.close_connection = True

"""One loopback HTTP server for the emulators that answer a request with a whole reply.

``serve(handle)`` starts a threaded server on a free 127.0.0.1 port whose every request
(any method) goes to ``handle(method, path, headers, body) -> (status, headers, payload)``;
the reply is JSON. HTTP/1.1 keep-alive, as the SDKs expect, and no Nagle stall.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = tuple[int, dict[str, str], bytes]
Handle = Callable[[str, str, Any, bytes], Reply]


def serve(handle: Handle) -> ThreadingHTTPServer:
    """A running server handing each request to ``handle``; stop it with ``stop(server)``."""
    handler = type("Handler", (_Handler,), {"reply": staticmethod(handle)})
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads, srv.block_on_close = True, False
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return srv


def stop(srv: ThreadingHTTPServer | None) -> None:
    if srv is not None:
        srv.shutdown()
        srv.server_close()


class _Handler(BaseHTTPRequestHandler):
    reply: Handle  # BaseHTTPRequestHandler.handle is the request loop: another name
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms stall

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        status, headers, payload = type(self).reply(self.command, self.path, self.headers, raw)
        try:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_GET = do_POST = do_DELETE = do_PATCH = do_PUT = do_HEAD = _serve

    def log_message(self, format: str, *args: Any) -> None:
        pass

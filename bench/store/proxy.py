"""A counting HTTP proxy in front of the S3 server: every request classified, counted, attributed
to the harness phase in progress, and optionally slowed or throttled.

- **Classification** (:func:`classify`): LIST, HEAD, GET (response bytes), PUT (request bytes),
  COPY, DELETE, DELETE_MULTI, MULTIPART_CREATE / MULTIPART_PART / MULTIPART_COMPLETE /
  MULTIPART_ABORT, CREATE_BUCKET, OTHER.
- **Attribution**: the harness labels what it is doing (:meth:`CountingProxy.label`: a phase such
  as ``ingest`` or ``query_scan`` and a context such as ``batch 12`` or ``service_hours@75``).
  Requests come from the driver and from Spark's Python workers alike, so the label is the
  proxy's, not a thread's: work that overlaps (async maintenance) is attributed to the label in
  force. The engine is the path segment after ``tables/``.
- **Store latency**: ``first_byte_ms`` is slept before each request is forwarded (S3's typical
  first-byte latency is tens of milliseconds: AWS's S3 performance guidelines quote 100-200 ms
  for small-object requests to the first byte; 20 ms is a fast, same-region case), and
  ``bandwidth_mb_s`` caps each connection's transfer. Both apply to the measured phases only: the
  harness's own requests (labels in :data:`UNMEASURED`: audits, file listings and footer counts
  for the results, bucket setup) are counted but not slowed, since no figure measures them and
  they only lengthened the run (about 13 per batch and engine).
- **Throttling**: :meth:`CountingProxy.throttle` answers the next requests with S3's
  ``503 SlowDown`` instead of forwarding them.

Binds to 127.0.0.1 only; a context manager starts and stops it.
"""

from __future__ import annotations

import http.client
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

from engines.config.registry import MB

OPS = ("LIST", "HEAD", "GET", "PUT", "COPY", "DELETE", "DELETE_MULTI", "MULTIPART_CREATE", "MULTIPART_PART",
       "MULTIPART_COMPLETE", "MULTIPART_ABORT", "CREATE_BUCKET", "OTHER")
_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"}
_CREDENTIAL = re.compile(r"Credential=([^/,\s]+)/")
UNMEASURED = ("harness", "setup")  # labels whose requests are not slowed (see above)
SLOW_DOWN = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
             b"<Message>Please reduce your request rate.</Message></Error>")


def classify(method: str, path: str, query: str, headers: dict[str, str]) -> str:
    """The S3 operation of a request (path-style addressing: ``/bucket/key``)."""
    q = parse_qs(query, keep_blank_values=True)
    is_bucket = "/" not in path.strip("/")
    if method == "GET":
        return "LIST" if is_bucket or "list-type" in q else "GET"
    if method == "HEAD":
        return "HEAD"
    if method == "PUT":
        if "partNumber" in q and "uploadId" in q:
            return "MULTIPART_PART"
        if is_bucket:
            return "CREATE_BUCKET"
        return "COPY" if "x-amz-copy-source" in {k.lower() for k in headers} else "PUT"
    if method == "POST":
        if "uploads" in q:
            return "MULTIPART_CREATE"
        if "uploadId" in q:
            return "MULTIPART_COMPLETE"
        if "delete" in q:
            return "DELETE_MULTI"
    if method == "DELETE":
        return "MULTIPART_ABORT" if "uploadId" in q else "DELETE"
    return "OTHER"


def subject_key(op: str, key: str, query: str, body: bytes) -> str:
    """The key a request is about: a LIST's prefix, a multi-object DELETE's first key, else the path's."""
    if op == "LIST":
        return parse_qs(query).get("prefix", [""])[0]
    if op == "DELETE_MULTI":
        m = re.search(rb"<Key>([^<]*)</Key>", body)
        return m.group(1).decode() if m else key
    return key


@dataclass(frozen=True)
class Request:
    """One request the proxy saw."""

    op: str
    bucket: str
    key: str
    request_bytes: int  # the payload sent (a PUT's object, a part), without aws-chunked framing
    response_bytes: int
    status: int
    phase: str
    context: str
    seconds: float


def run_columns(tally: dict[str, int] | None) -> dict[str, int | None]:
    """The ``queries`` table's store columns of one query run from its :meth:`CountingProxy.label`
    tally (None on local disk: the columns stay null)."""
    if tally is None:
        return {}
    return {"store_requests": sum(tally.values()), "store_get": tally.get("GET", 0),
            "store_head": tally.get("HEAD", 0), "store_list": tally.get("LIST", 0)}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes: Nagle + delayed ACK cost 40 ms each
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
        pass  # every request is recorded as data; nothing goes to stderr

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _forward(self) -> None:
        proxy = self.server.proxy
        t0 = time.perf_counter()
        body = self._body()
        parts = urlsplit(self.path)
        path = unquote(parts.path)
        bucket, _, key = path.lstrip("/").partition("/")
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
        op = classify(self.command, path, parts.query, headers)
        key = subject_key(op, key, parts.query, body)
        # an aws-chunked upload frames the payload (chunk sizes, checksum trailer): count the payload
        sent = int(self.headers.get("x-amz-decoded-content-length") or len(body))
        phase, context = proxy.current
        refused = proxy.refuses(headers)
        if refused is not None:  # moto accepts any key; the store's front door checks it, as S3 would
            proxy.record(Request(op, bucket, key, sent, 0, 403, phase, context, time.perf_counter() - t0))
            self._answer(403, refused)
            return
        if proxy.take_throttle(op):
            # recorded before the answer leaves: a client that saw it finds it in the log
            proxy.record(Request(op, bucket, key, sent, 0, 503, phase, context, time.perf_counter() - t0))
            self._answer(503, SLOW_DOWN)
            return
        slowed = phase not in UNMEASURED
        if proxy.first_byte_s and slowed:
            time.sleep(proxy.first_byte_s)
        if body:
            headers["Content-Length"] = str(len(body))
        conn = http.client.HTTPConnection(proxy.upstream_host, proxy.upstream_port, timeout=120)
        try:
            conn.request(self.command, self.path, body=body or None, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        finally:
            conn.close()
        if proxy.bandwidth_b_s and slowed:
            time.sleep((len(body) + len(data)) / proxy.bandwidth_b_s)
        proxy.record(Request(op, bucket, key, sent, len(data) if self.command != "HEAD" else 0,
                             resp.status, phase, context, time.perf_counter() - t0))
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() in _HOP or (k.lower() == "content-length" and self.command != "HEAD"):
                continue
            self.send_header(k, v)
        if self.command != "HEAD":
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _answer(self, status: int, xml: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(xml)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(xml)

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _forward


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    proxy: CountingProxy

    def handle_error(self, request: object, client_address: object) -> None:
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a client that closed its keep-alive connection: nothing was lost
        super().handle_error(request, client_address)  # type: ignore[arg-type]


class CountingProxy:
    """The proxy; ``endpoint`` is what clients use instead of the server's."""

    def __init__(self, upstream: str, first_byte_ms: float = 0.0, bandwidth_mb_s: float | None = None,
                 access_key: str | None = None) -> None:
        self.access_key = access_key  # when set, a request signed with another key is refused (403)
        host, _, port = upstream.partition(":")
        self.upstream_host, self.upstream_port = host, int(port)
        self.first_byte_s = first_byte_ms / 1000.0
        self.bandwidth_b_s = bandwidth_mb_s * MB if bandwidth_mb_s else None
        self.requests: list[Request] = []
        self.current: tuple[str, str] = ("other", "")
        self._lock = threading.Lock()
        self._throttle: dict[str | None, int] = {}
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def endpoint(self) -> str:
        assert self._server is not None, "the proxy is not started"
        return f"127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> CountingProxy:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.proxy = self
        self._thread = threading.Thread(target=self._server.serve_forever, name="s3-proxy", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> CountingProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- accounting -------------------------------------------------------------------------
    def record(self, r: Request) -> None:
        with self._lock:
            self.requests.append(r)

    @contextmanager
    def label(self, phase: str, context: str = "") -> Iterator[dict[str, int]]:
        """Attribute the requests made inside the block to ``phase`` (and ``context``); the block gets
        a dict that is filled, when it ends, with its own requests per operation (those recorded under
        this label while it ran: one query run's, for the ``queries`` table)."""
        before = self.current
        self.current = (phase, context)
        start = self.mark()
        tally: dict[str, int] = {}
        try:
            yield tally
        finally:
            self.current = before
            tally.update(self.counts([r for r in self.since(start) if (r.phase, r.context) == (phase, context)]))

    def mark(self) -> int:
        """A position in the request log (for :meth:`since`)."""
        with self._lock:
            return len(self.requests)

    def since(self, mark: int) -> list[Request]:
        with self._lock:
            return list(self.requests[mark:])

    def counts(self, requests: list[Request] | None = None) -> dict[str, int]:
        """Requests per operation."""
        out: dict[str, int] = {}
        for r in self.requests if requests is None else requests:
            out[r.op] = out.get(r.op, 0) + 1
        return out

    # -- faults -----------------------------------------------------------------------------
    def refuses(self, headers: dict[str, str]) -> bytes | None:
        """S3's 403 InvalidAccessKeyId answer when a request is signed with an unknown access key
        (the key is checked, not the signature: moto's server checks neither)."""
        if self.access_key is None:
            return None
        auth = next((v for k, v in headers.items() if k.lower() == "authorization"), "")
        m = _CREDENTIAL.search(auth)
        if m is not None and m.group(1) == self.access_key:
            return None
        return (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidAccessKeyId</Code><Message>The AWS '
                b"Access Key Id you provided does not exist in our records.</Message></Error>")

    def throttle(self, count: int, op: str | None = None) -> None:
        """Answer the next ``count`` requests (of ``op``, or of any kind) with 503 SlowDown."""
        with self._lock:
            self._throttle[op] = self._throttle.get(op, 0) + count

    def clear_throttle(self) -> None:
        """Forget the 503 answers not given yet."""
        with self._lock:
            self._throttle.clear()

    def take_throttle(self, op: str) -> bool:
        with self._lock:
            for key in (op, None):
                if self._throttle.get(key, 0) > 0:
                    self._throttle[key] -= 1
                    return True
            return False

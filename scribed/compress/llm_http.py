"""HTTP for the llm compressor: one wall-clock deadline per call and a cap on the answer's size.

httpx's timeouts are per operation: the read timeout restarts with every chunk, so a server that
trickles a byte a second holds a call as long as it likes, and a non-streamed answer is read
whole into memory whatever its size. Here a request's timeout is a total deadline for connect,
TLS, headers and body (every socket operation waits at most what is left of it), and the body is
counted (after decompression) as it arrives and abandoned past ``max_bytes``. Both surface as
ordinary httpx errors, so openai turns them into a timeout or a connection error: a failure.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import urllib.request
import zlib
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urlsplit

import httpcore2
import httpx2

log = logging.getLogger(__name__)

ACCEPT_ENCODING = "gzip, deflate"  # what _Inflate decodes (with the cap); never br/zstd
_COMPRESSED = ("gzip", "x-gzip", "deflate")

_local = threading.local()  # the deadline of the call this thread is making (time.monotonic)


class ResponseTooLarge(httpx2.TransportError):
    """The answer passed the size cap; reading stopped there."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"response too large (over {limit} bytes)")
        self.limit = limit


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[float | None]:
    """Every socket operation of this thread finishes within ``seconds`` from now (nests: the
    earliest deadline wins). Yields the absolute deadline in effect."""
    prev: float | None = getattr(_local, "deadline", None)
    mine = None if seconds is None else time.monotonic() + seconds
    _local.deadline = _earliest(prev, mine)
    try:
        yield _local.deadline
    finally:
        _local.deadline = prev


@contextlib.contextmanager
def _until(when: float | None) -> Iterator[None]:
    prev: float | None = getattr(_local, "deadline", None)
    _local.deadline = _earliest(prev, when)
    try:
        yield
    finally:
        _local.deadline = prev


def _earliest(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


def _cap(timeout: float | None, error: type[Exception]) -> float | None:
    """``timeout`` shortened to what is left of the deadline; ``error`` when none is left."""
    when: float | None = getattr(_local, "deadline", None)
    if when is None:
        return timeout
    left = when - time.monotonic()
    if left <= 0:
        raise error("deadline exceeded")
    return left if timeout is None else min(timeout, left)


# --- the socket level: every wait bounded by the deadline ----------------------------------------


class _DeadlineStream(httpcore2.NetworkStream):
    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _cap(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _cap(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> Any:
        return _DeadlineStream(
            self._inner.start_tls(ssl_context, server_hostname, _cap(timeout, httpcore2.ConnectTimeout))
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore2.NetworkBackend):
    def __init__(self, inner: httpcore2.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        t = _cap(timeout, httpcore2.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_tcp(host, port, t, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.NetworkStream:
        t = _cap(timeout, httpcore2.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_unix_socket(path, t, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


# --- the response level: deadline between chunks, size cap ---------------------------------------


class _Inflate:
    """gzip/zlib/raw deflate, never producing more than the room left under the cap."""

    def __init__(self, limit: int) -> None:
        self._d = zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib header
        self._first = True
        self._limit = limit

    def __call__(self, data: bytes, room: int) -> bytes:
        try:
            out = self._d.decompress(data, room + 1)
        except zlib.error:
            if not self._first:
                raise httpx2.DecodingError("undecodable compressed response") from None
            self._d = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate, as some servers send
            try:
                out = self._d.decompress(data, room + 1)
            except zlib.error:
                raise httpx2.DecodingError("undecodable compressed response") from None
        self._first = False
        if len(out) > room:  # output stopped at room + 1: the rest is over the cap
            raise ResponseTooLarge(self._limit)
        return out

    def flush(self, room: int) -> bytes:
        out = self._d.flush(room + 1)
        if len(out) > room:
            raise ResponseTooLarge(self._limit)
        return out


class _BoundedBody(httpx2.SyncByteStream):
    def __init__(self, inner: httpx2.SyncByteStream, when: float | None, limit: int, inflate: bool) -> None:
        self._inner = inner
        self._when = when
        self._limit = limit
        self._inflate = _Inflate(limit) if inflate else None

    def __iter__(self) -> Iterator[bytes]:
        chunks = iter(self._inner)
        seen = 0
        while True:
            with _until(self._when):  # socket reads inside next() see the call's deadline
                chunk = next(chunks, None)
            if chunk is None:
                break
            if self._when is not None and time.monotonic() > self._when:
                raise httpx2.ReadTimeout("deadline exceeded")
            if self._inflate is not None:
                chunk = self._inflate(chunk, self._limit - seen)
            seen += len(chunk)
            if seen > self._limit:
                raise ResponseTooLarge(self._limit)
            if chunk:
                yield chunk
        if self._inflate is not None and (rest := self._inflate.flush(self._limit - seen)):
            yield rest

    def close(self) -> None:
        self._inner.close()


def _request_deadline(request: httpx2.Request) -> float | None:
    """The request's timeout read as a total: its largest phase timeout from now."""
    phases = request.extensions.get("timeout") or {}
    values = [float(v) for v in phases.values() if v is not None]
    return time.monotonic() + max(values) if values else None


class BoundedTransport(httpx2.BaseTransport):
    """Wraps a transport: the request's timeout is a total deadline; the body is capped."""

    def __init__(self, inner: httpx2.BaseTransport, max_bytes: int) -> None:
        self._inner = inner
        self.max_bytes = max_bytes

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        when = _earliest(getattr(_local, "deadline", None), _request_deadline(request))
        request.headers["Accept-Encoding"] = ACCEPT_ENCODING
        with _until(when):
            response = self._inner.handle_request(request)
        encoding = response.headers.get("content-encoding", "").strip().lower()
        try:
            declared = int(response.headers.get("content-length") or 0)
        except ValueError:
            declared = 0
        if declared > self.max_bytes or encoding not in ("", "identity", *_COMPRESSED):
            response.close()
            if declared > self.max_bytes:
                raise ResponseTooLarge(self.max_bytes)
            raise httpx2.DecodingError(f"unsupported content-encoding {encoding[:20]!r}")
        inflate = encoding in _COMPRESSED
        stream = response.stream
        assert isinstance(stream, httpx2.SyncByteStream)
        headers = [
            (k, v) for k, v in response.headers.multi_items() if not (inflate and k == "content-encoding")
        ]
        return httpx2.Response(
            response.status_code,
            headers=headers,
            stream=_BoundedBody(stream, when, self.max_bytes, inflate),
            extensions=response.extensions,
        )

    def close(self) -> None:
        self._inner.close()


def _env_proxy(base_url: str) -> str | None:
    """The proxy httpx would take from the environment (HTTPS_PROXY, ALL_PROXY, NO_PROXY)."""
    parts = urlsplit(base_url)
    proxies = urllib.request.getproxies()
    if not proxies or (parts.hostname and urllib.request.proxy_bypass(parts.hostname)):
        return None
    return proxies.get(parts.scheme) or proxies.get("all")


def bounded_client(base_url: str, max_bytes: int, timeout: float) -> httpx2.Client:
    """An httpx client for openai whose every request obeys a total deadline and a size cap."""
    inner = httpx2.HTTPTransport(
        proxy=_env_proxy(base_url), limits=httpx2.Limits(max_connections=100, max_keepalive_connections=20)
    )
    # HTTPTransport takes no network backend, so ours is slipped under its connection pool.
    pool = getattr(inner, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if isinstance(backend, httpcore2.NetworkBackend):
        pool._network_backend = _DeadlineBackend(backend)  # type: ignore[union-attr]
    else:  # a changed httpx2: the deadline still holds between body chunks, not within a read
        log.warning("llm http: cannot bound socket waits (httpx2 internals changed)")
    return httpx2.Client(
        transport=BoundedTransport(inner, max_bytes), timeout=timeout, follow_redirects=True, max_redirects=5
    )

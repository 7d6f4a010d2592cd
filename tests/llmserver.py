"""A fake OpenAI-compatible server on 127.0.0.1 for fault-injection tests.

The openai 3.x client runs on httpx2, which respx/pytest-httpx cannot intercept, so tests
talk to a real socket. Behaviours are queued with :meth:`FakeLLM.script` and consumed one
per chat request; when the queue is empty the default behaviour answers (``echo_summary``:
a plausible Summary built from the request, so end-to-end tests get realistic output).

Usage::

    from llmserver import FakeLLM, fake_llm, ok, status

    def test_x(fake_llm: FakeLLM) -> None:
        fake_llm.script(status(500), ok({"goal": "g"}))
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

LIST_FIELDS = ("decisions", "files", "errors", "open_items", "knowledge", "key_facts")
SUMMARY_FIELDS = ("goal", "outcome", *LIST_FIELDS)


@dataclass
class Reply:
    """What the server does for one request."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering
    drop: bool = False  # close the socket without any response
    # A body made piece by piece (never held whole), for trickling and huge answers.
    chunks: Callable[[], Iterable[bytes]] | None = None
    length: int | None = None  # Content-Length declared for ``chunks``; None = chunked encoding
    interval: float = 0.0  # pause before each piece of ``chunks``
    trickle_headers: bool = False  # the status line and headers too, one byte per ``interval``
    give_up: float = 60.0  # a trickle stops (closes the socket) after this many seconds


@dataclass
class Received:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: dict[str, Any]

    @property
    def user_text(self) -> str:
        """All user message text of a chat request, joined."""
        return "\n".join(
            str(m.get("content", "")) for m in self.body.get("messages", []) if m.get("role") == "user"
        )

    @property
    def system_text(self) -> str:
        return "\n".join(
            str(m.get("content", "")) for m in self.body.get("messages", []) if m.get("role") == "system"
        )

    @property
    def format_type(self) -> str | None:
        rf = self.body.get("response_format")
        return rf.get("type") if isinstance(rf, dict) else None


Behaviour = Callable[[dict[str, Any]], Reply]


def _completion(
    content: str | None, finish_reason: str, usage: dict[str, int] | None, body: dict[str, Any]
) -> bytes:
    if usage is None:
        prompt = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
        usage = {
            "prompt_tokens": prompt // 4,
            "completion_tokens": len(content or "") // 4,
            "total_tokens": prompt // 4 + len(content or "") // 4,
        }
    data: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake-model"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
            }
        ],
    }
    if usage:
        data["usage"] = usage
    return json.dumps(data).encode()


# --- behaviours ---------------------------------------------------------------------------


def ok(
    content: dict[str, Any] | str, finish_reason: str = "stop", usage: dict[str, int] | None = None
) -> Behaviour:
    """A 200 completion with this content (a dict is sent as JSON text). ``usage={}`` omits it."""
    text = content if isinstance(content, str) else json.dumps(content)
    return lambda body: Reply(body=_completion(text, finish_reason, usage, body))


def status(code: int, retry_after: float | str | None = None, message: str | None = None) -> Behaviour:
    """An error status with an OpenAI-style error body (and a Retry-After header if given)."""
    if message is None:
        message = {
            400: "response_format of type 'json_schema' is not supported by this model",
            429: "Rate limit reached",
        }.get(code, f"error {code}")
    err = {"error": {"message": message, "type": "invalid_request_error" if code < 500 else "server_error"}}
    if code == 400 and "response_format" in message:
        err["error"]["param"] = "response_format"
    headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
    return lambda body: Reply(status=code, body=json.dumps(err).encode(), headers=headers)


def slow(seconds: float, then: Behaviour | None = None) -> Behaviour:
    """Wait, then answer like ``then`` (the echo summary by default)."""

    def run(body: dict[str, Any]) -> Reply:
        reply = (then or echo_summary())(body)
        reply.delay = seconds
        return reply

    return run


def non_json(text: str = "Sure! Here is a summary of the session: it went well.") -> Behaviour:
    return ok(text)


def empty() -> Behaviour:
    return lambda body: Reply(body=_completion("", "stop", None, body))


def truncated(text: str = '{"goal": "Fix the parser", "decisions": ["use a') -> Behaviour:
    return ok(text, finish_reason="length")


def think_wrapped(
    content: dict[str, Any] | None = None, thoughts: str = "Let me think {about} it."
) -> Behaviour:
    """Valid JSON after a ``<think>`` block (reasoning models); echo summary when no content."""

    def run(body: dict[str, Any]) -> Reply:
        inner = json.dumps(content) if content is not None else json.dumps(build_echo_summary(body))
        return Reply(body=_completion(f"<think>{thoughts}</think>\n{inner}", "stop", None, body))

    return run


def trickle(
    interval: float = 1.0, then: Behaviour | None = None, *, headers: bool = False, give_up: float = 30.0
) -> Behaviour:
    """Answer like ``then`` (the echo summary by default) one byte every ``interval`` seconds.

    Every read returns within the client's per-read timeout, so only a total deadline ends it.
    ``headers=True`` trickles the status line and headers as well; the server gives up (closes)
    after ``give_up`` seconds so a client without a deadline fails slowly instead of hanging.
    """

    def run(body: dict[str, Any]) -> Reply:
        reply = (then or echo_summary())(body)
        data = reply.body
        return Reply(
            status=reply.status,
            headers=reply.headers,
            chunks=lambda: (data[i : i + 1] for i in range(len(data))),
            length=len(data),
            interval=interval,
            trickle_headers=headers,
            give_up=give_up,
        )

    return run


def huge(
    size: int = 100 * 1024 * 1024, *, code: int = 200, declare: bool = False, gzip: bool = False
) -> Behaviour:
    """A completion whose content is ``size`` bytes of filler, streamed in 64 KB pieces.

    Sent with chunked encoding (the client cannot know the size up front) unless ``declare``
    sends a Content-Length; ``gzip`` compresses it on the fly (a small body that inflates).
    """
    head = b'{"id":"x","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,'
    head += b'"finish_reason":"stop","message":{"role":"assistant","content":"'
    tail = b'"}}]}'
    piece = b"a" * 65536

    def raw() -> Iterator[bytes]:
        yield head
        left = size
        while left > 0:
            yield piece[: min(left, len(piece))]
            left -= len(piece)
        yield tail

    def packed() -> Iterator[bytes]:
        z = zlib.compressobj(9, zlib.DEFLATED, 31)
        for part in raw():
            if out := z.compress(part):
                yield out
        yield z.flush()

    def run(body: dict[str, Any]) -> Reply:
        headers = {"Content-Encoding": "gzip"} if gzip else {}
        total = len(head) + size + len(tail)
        return Reply(
            status=code,
            headers=headers,
            chunks=packed if gzip else raw,
            length=total if declare and not gzip else None,
        )

    return run


def close_connection() -> Behaviour:
    return lambda body: Reply(drop=True)


def echo_summary() -> Behaviour:
    """The default: a valid Summary JSON made from the request's transcript or parts."""
    return lambda body: Reply(body=_completion(json.dumps(build_echo_summary(body)), "stop", None, body))


_LINE = re.compile(r"^\[L(\d+) ([^\]]+)\] (.*)$")
_ANCHOR = re.compile(r"^- \[(\w+)\] (.+)$")
_PATH = re.compile(r"(?:[\w.-]+/)+[\w.-]+\.\w+")
_ISSUE = re.compile(r"#\d+")


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


def build_echo_summary(body: dict[str, Any]) -> dict[str, Any]:
    """Pick lines from the request like a diligent (if dull) model would."""
    texts = [str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "user"]
    lines: list[tuple[str, str]] = []
    parts: list[dict[str, Any]] = []
    anchors: list[str] = []
    dec = json.JSONDecoder()
    for text in texts[:1]:  # the first user message holds the data; later ones are repairs
        for raw in text.splitlines():
            if m := _LINE.match(raw):
                lines.append((m.group(2), m.group(3)))
            elif m := _ANCHOR.match(raw):
                anchors.append(m.group(2))
            elif "{" in raw:
                with contextlib.suppress(ValueError):
                    obj, _ = dec.raw_decode(raw, raw.index("{"))
                    if isinstance(obj, dict) and any(k in obj for k in SUMMARY_FIELDS):
                        parts.append(obj)
    out: dict[str, Any] = {k: [] for k in LIST_FIELDS}
    if parts:
        out["goal"] = next((str(p["goal"]) for p in parts if p.get("goal")), "")
        out["outcome"] = next((str(p["outcome"]) for p in reversed(parts) if p.get("outcome")), "")
        for k in LIST_FIELDS:
            out[k] = _dedupe([str(i) for p in parts for i in p.get(k, [])])
    else:
        users = [t for r, t in lines if r == "user"]
        assistants = [t for r, t in lines if r == "assistant"]
        everything = [t for _, t in lines]
        out["goal"] = (users[0] if users else "work on the session")[:300]
        out["outcome"] = (assistants[-1] if assistants else "done")[:800]
        out["files"] = _dedupe([p for t in everything for p in _PATH.findall(t)])[:20]
        out["errors"] = _dedupe([t[:200] for t in everything if "error" in t.lower()])[:10]
        out["open_items"] = _dedupe([t[:200] for t in everything if "TODO" in t])[:10]
        out["decisions"] = _dedupe([t[:200] for t in everything if "decid" in t.lower()])[:10]
        out["key_facts"] = _dedupe([i for t in everything for i in _ISSUE.findall(t)])
    out["key_facts"] = _dedupe([*out["key_facts"], *anchors])
    return out


# --- the server ---------------------------------------------------------------------------


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeLLM

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that timed out and hung up is expected here, not a test failure."""


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _record(self, body: dict[str, Any]) -> Received:
        rec = Received(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
        )
        self.server.fake._add(rec)
        return rec

    def _send(self, reply: Reply) -> None:
        fake = self.server.fake
        if reply.delay and fake._stopping.wait(reply.delay):
            reply = Reply(drop=True)
        if reply.drop:
            self._drop()
            return
        if reply.chunks is not None:
            with contextlib.suppress(OSError):  # the client gave up (deadline, size cap): expected
                self._send_pieces(reply)
            self._drop()
            return
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply.body)))
        for k, v in reply.headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(reply.body)

    def _drop(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _send_pieces(self, reply: Reply) -> None:
        """Headers and a body written piece by piece, with pauses; stops at ``give_up``."""
        fake = self.server.fake
        stop_at = time.monotonic() + reply.give_up
        lines = [f"HTTP/1.1 {reply.status} OK", "Content-Type: application/json"]
        if reply.length is None:
            lines.append("Transfer-Encoding: chunked")
        else:
            lines.append(f"Content-Length: {reply.length}")
        lines += [f"{k}: {v}" for k, v in reply.headers.items()]
        head = ("\r\n".join(lines) + "\r\n\r\n").encode()

        def write(data: bytes) -> bool:
            if reply.interval and (fake._stopping.wait(reply.interval) or time.monotonic() > stop_at):
                return False
            self.wfile.write(data)
            self.wfile.flush()
            return True

        if reply.trickle_headers:
            if not all(write(head[i : i + 1]) for i in range(len(head))):
                return
        else:
            self.wfile.write(head)
        assert reply.chunks is not None
        for piece in reply.chunks():
            framed = piece if reply.length is not None else b"%x\r\n%s\r\n" % (len(piece), piece)
            if piece and not write(framed):
                return
        if reply.length is None:
            self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def do_GET(self) -> None:
        self._record({})
        fake = self.server.fake
        if fake.models is not None and self.path.rstrip("/").endswith("/models"):
            self._send(fake.models({}))
            return
        if self.path.rstrip("/").endswith("/models"):
            data = {
                "object": "list",
                "data": [{"id": "fake-model", "object": "model", "created": 0, "owned_by": "test"}],
            }
            self._send(Reply(body=json.dumps(data).encode()))
        else:
            self._send(Reply(status=404, body=b'{"error": {"message": "not found"}}'))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        rec = self._record(body if isinstance(body, dict) else {"_raw": body})
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(Reply(status=404, body=b'{"error": {"message": "not found"}}'))
            return
        fake = self.server.fake
        if rec.format_type in fake.reject_formats:
            self._send(
                status(400, message=f"response_format type '{rec.format_type}' is not supported")(body)
            )
            return
        self._send(fake._next()(rec.body))


class FakeLLM:
    """A real HTTP server speaking enough of the OpenAI API for the llm compressor."""

    def __init__(self, default: Behaviour | None = None) -> None:
        self.default: Behaviour = default or echo_summary()
        self.reject_formats: set[str] = set()  # response_format types answered with 400
        self.models: Behaviour | None = None  # how GET /models answers (None: a normal list)
        self._queue: deque[Behaviour] = deque()
        self._requests: list[Received] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), name="fake-llm", daemon=True
        )

    # behaviour factories, also reachable as FakeLLM.ok(...) etc.
    ok = staticmethod(ok)
    status = staticmethod(status)
    slow = staticmethod(slow)
    non_json = staticmethod(non_json)
    empty = staticmethod(empty)
    truncated = staticmethod(truncated)
    think_wrapped = staticmethod(think_wrapped)
    close_connection = staticmethod(close_connection)
    trickle = staticmethod(trickle)
    huge = staticmethod(huge)
    echo_summary = staticmethod(echo_summary)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[Received]:
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[Received]:
        return [r for r in self.requests if r.method == "POST" and r.path.endswith("/chat/completions")]

    def start(self) -> FakeLLM:
        self._thread.start()
        return self

    def script(self, *behaviours: Behaviour) -> FakeLLM:
        with self._lock:
            self._queue.extend(behaviours)
        return self

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self._requests.clear()
        self.reject_formats.clear()
        self.models = None

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _add(self, rec: Received) -> None:
        with self._lock:
            self._requests.append(rec)

    def _next(self) -> Behaviour:
        with self._lock:
            return self._queue.popleft() if self._queue else self.default


def make_fake_llm(default: Behaviour | None = None) -> FakeLLM:
    """A started FakeLLM (for conftest fixtures elsewhere); call ``.stop()`` when done."""
    return FakeLLM(default).start()


def down_url() -> str:
    """A base_url nothing listens on: a port from a bound-then-closed socket."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    server = make_fake_llm()
    try:
        yield server
    finally:
        server.stop()

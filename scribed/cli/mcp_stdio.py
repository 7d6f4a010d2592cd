"""The stdio wire of ``scribed mcp``: the SDK's transport, with every line answered and memory held.

The SDK's own stdio transport drops a line it cannot read (not JSON, a wrong type, a batch, an
envelope without its method) without a word, so a client waiting on that request's id waits
forever; it reads a line of any length whole; and it starts a task for every request it reads,
however many are waiting. Here, before the SDK sees a line:

- a line that is not a JSON-RPC message gets the JSON-RPC error the spec names (``-32700`` parse
  error, ``-32600`` invalid request), with the request's id when one can be read, else ``null``;
  a broken notification or response gets none (nobody waits on it) and is logged;
- a line longer than :data:`MAX_REQUEST_BYTES` is read past in pieces, never held whole, and
  answered ``-32600`` with the id its first bytes carry;
- at most :data:`MAX_IN_FLIGHT` requests are open at a time: the next line is read once a
  response goes out (or the client cancels one), so a client that floods the server waits on
  its pipe instead of growing the server's memory;
- at the end of the input the requests read are answered before the server ends (up to
  :data:`DRAIN_SECONDS`): the SDK ended at once, and a scripted client's calls went unanswered.

File descriptors 0 and 1 point at the null device and at stderr while serving (as the SDK does),
so a stray ``print`` in a handler cannot corrupt the wire.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import sys
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator
from typing import IO, Any, cast

import anyio
import anyio.to_thread

# A 1 MB fact (agent_writes.MAX_FACT_BYTES) fits JSON-escaped (non-ASCII as \\uXXXX: up to 3 MB); a longer line
# is no request this server serves, and is never held whole.
MAX_REQUEST_BYTES = 4 << 20
MAX_IN_FLIGHT = 64  # requests open at once (the SDK's worker threads number 40)
STALE_SECONDS = 600.0  # a request with no answer by then no longer holds its place
DRAIN_SECONDS = 60.0  # at the end of the input, how long the requests read may take to be answered
HEAD_BYTES = 64 << 10  # what is kept of a line too long to read: where its id is
PARSE_ERROR, INVALID_REQUEST = -32700, -32600


def top_members(text: str) -> tuple[list[str], dict[str, Any]]:
    """The members of the JSON object ``text`` starts, as far as its first bytes go: the keys seen
    in order (the last one's value may be cut off) and the values read whole. Only the outer
    object counts, never an ``"id"`` inside params."""
    dec = json.JSONDecoder()
    keys: list[str] = []
    values: dict[str, Any] = {}
    i, n = _skip(text, 0), len(text)
    if i >= n or text[i] != "{":
        return keys, values
    i += 1
    while True:
        i = _skip(text, i)
        if i >= n or text[i] == "}":
            return keys, values
        try:
            key, i = dec.raw_decode(text, i)
            i = _skip(text, i)
            if i >= n or text[i] != ":" or not isinstance(key, str):
                return keys, values
            keys.append(key)
            values[key], i = dec.raw_decode(text, _skip(text, i + 1))
        except (ValueError, IndexError):  # the head ends inside this member
            return keys, values
        i = _skip(text, i)
        if i >= n or text[i] != ",":
            return keys, values
        i += 1


def top_level_id(text: str) -> tuple[bool, Any]:
    """(found, value) of the outer object's ``id``: a string or an integer, else not an id."""
    value = top_members(text)[1].get("id")
    ok = isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
    return ok, value if ok else None


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _error(rid: Any, code: int, message: str) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


class _Wire:
    """The write side: one line at a time, whoever writes (the SDK's responses, this module's
    errors); each response frees its request's place (:class:`_Places`)."""

    def __init__(self, out: IO[bytes], places: _Places) -> None:
        self.out, self.places = out, places
        self.lock = anyio.Lock()

    async def write(self, line: str) -> None:
        data = line.encode("utf-8", "replace")
        async with self.lock:
            await anyio.to_thread.run_sync(self._put, data)
        keys, values = top_members(line[:512])
        if "method" not in keys and ("result" in keys or "error" in keys) and "id" in values:
            self.places.done(values["id"])  # a response: its request's place is free

    def _put(self, data: bytes) -> None:
        self.out.write(data if data.endswith(b"\n") else data + b"\n")
        self.out.flush()

    async def flush(self) -> None:
        return None  # each write is flushed


class _Places:
    """The requests read and not answered yet, by id (at most :data:`MAX_IN_FLIGHT`)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.open: Counter[str] = Counter()
        self.since: dict[str, float] = {}
        self.changed = anyio.Event()

    @staticmethod
    def _key(rid: Any) -> str:
        return json.dumps(rid)

    def take(self, rid: Any) -> None:
        k = self._key(rid)
        self.open[k] += 1
        self.since.setdefault(k, time.monotonic())

    def done(self, rid: Any) -> None:
        k = self._key(rid)
        if self.open[k] <= 0:
            self.open.pop(k, None)
            return
        self.open[k] -= 1
        if self.open[k] == 0:
            del self.open[k]
            self.since.pop(k, None)
        self.changed.set()

    async def drained(self, seconds: float) -> None:
        """Until every request read is answered, or ``seconds`` pass (a handler that never ends:
        the client is gone anyway). The end of the input is not the end of the work: a client that
        writes its requests and closes its pipe (``printf … | scribed mcp``) still waits on them."""
        with anyio.move_on_after(seconds):
            while self.open:
                self.changed = anyio.Event()
                await self.changed.wait()

    async def wait(self) -> None:
        """Until a request may be read: fewer than ``limit`` open (stale ones let go)."""
        while sum(self.open.values()) >= self.limit:
            now = time.monotonic()
            for k in [k for k, t in self.since.items() if now - t > STALE_SECONDS]:
                self.open.pop(k, None)
                self.since.pop(k, None)
            self.changed = anyio.Event()
            with anyio.move_on_after(1.0):
                await self.changed.wait()


class _Lines:
    """The read side, as the SDK iterates it: the lines that are JSON-RPC messages; the others
    are answered here (see the module docstring)."""

    def __init__(self, src: IO[bytes], wire: _Wire, places: _Places, max_bytes: int) -> None:
        self.src, self.wire, self.places, self.max_bytes = src, wire, places, max_bytes
        # One line read ahead, by a daemon thread: a read blocked on an open stdin must not keep
        # the process from exiting (Ctrl-C), as a worker thread of the event loop would.
        self._ahead: queue.Queue[tuple[bytes, bool] | None] = queue.Queue(maxsize=1)
        self._reader: threading.Thread | None = None

    def _pump(self) -> None:
        while True:
            got = self._read()
            self._ahead.put(got)  # waits while the server takes no more (the in-flight limit)
            if got is None:
                return

    async def _next(self) -> tuple[bytes, bool] | None:
        if self._reader is None:
            self._reader = threading.Thread(target=self._pump, name="scribed-mcp-stdin", daemon=True)
            self._reader.start()
        while True:
            with contextlib.suppress(queue.Empty):
                return await anyio.to_thread.run_sync(self._ahead.get, True, 1.0)  # a second at most

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        from mcp_types import jsonrpc_message_adapter

        while True:
            await self.places.wait()
            got = await self._next()
            if got is None:  # the end of the input: answer what was read, then end
                await self.places.drained(DRAIN_SECONDS)
                return
            raw, whole = got
            if not whole:
                await self._too_long(raw)
                continue
            line = raw.decode("utf-8", "replace")
            if not line.strip():
                continue
            try:
                msg = jsonrpc_message_adapter.validate_json(line, by_name=False)
            except ValueError as exc:
                await self._invalid(line, exc)
                continue
            if getattr(msg, "id", None) is None and "id" in top_members(line)[0]:
                # read as a notification only because its id is of no allowed type: a bad request
                await self.wire.write(
                    _error(None, INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
                )
                continue
            self._note(msg)
            yield line

    def _read(self) -> tuple[bytes, bool] | None:
        """The next line (None at the end); a longer one than allowed is read past, its head kept."""
        raw = self.src.readline(self.max_bytes + 1)
        if not raw:
            return None
        if len(raw) <= self.max_bytes or raw.endswith(b"\n"):
            return raw, True
        head = raw[:HEAD_BYTES]
        del raw
        while True:
            more = self.src.readline(1 << 20)
            if not more or more.endswith(b"\n"):
                return head, False

    def _note(self, msg: Any) -> None:
        """A request takes a place; a cancellation gives its request's back (no answer may follow)."""
        method = getattr(msg, "method", None)
        rid = getattr(msg, "id", None)
        if method is not None and rid is not None:
            self.places.take(rid)
        elif method == "notifications/cancelled":
            params = getattr(msg, "params", None)
            req = params.get("requestId") if isinstance(params, dict) else getattr(params, "request_id", None)
            if req is not None:
                self.places.done(req)

    async def _too_long(self, head: bytes) -> None:
        found, rid = top_level_id(head.decode("utf-8", "replace"))
        _warn(
            f"request longer than {self.max_bytes} bytes refused (id {json.dumps(rid) if found else 'unknown'})"
        )
        await self.wire.write(
            _error(rid, INVALID_REQUEST, f"Invalid Request: longer than {self.max_bytes} bytes; nothing done")
        )

    async def _invalid(self, line: str, exc: Exception) -> None:
        try:
            obj = json.loads(line)
        except ValueError:
            _warn("a line that is not JSON: answered with a parse error")
            await self.wire.write(_error(None, PARSE_ERROR, "Parse error: not JSON"))
            return
        if isinstance(obj, list):
            await self.wire.write(_error(None, INVALID_REQUEST, "Invalid Request: batches are not supported"))
            return
        rid = obj.get("id") if isinstance(obj, dict) else None
        if not (isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool))):
            rid = None  # an id of another type is no id: the answer says null
        if isinstance(obj, dict) and (
            "result" in obj or "error" in obj or ("method" in obj and "id" not in obj)
        ):
            _warn(f"a malformed response or notification, dropped: {_first(exc)}")  # nobody waits on it
            return
        await self.wire.write(_error(rid, INVALID_REQUEST, f"Invalid Request: {_first(exc)}"))


def _first(exc: Exception) -> str:
    """The first problem pydantic found, on one short line."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        with contextlib.suppress(Exception):
            e = errors()[0]
            return f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', '')}"[:200]
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


def _warn(text: str) -> None:
    print(f"scribed mcp: {text}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _claimed() -> Any:
    """The wire on private descriptors; fd 0 on the null device and fd 1 on stderr meanwhile
    (streams without descriptors, as in a test runner: used as they are)."""
    try:
        wire_in, wire_out = os.dup(0), os.dup(1)
    except OSError:
        yield sys.stdin.buffer, sys.stdout.buffer
        return
    saved_in, saved_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
        # closefd=False: a worker thread may still block reading the wire when serving ends; the
        # descriptor must not be closed and reused under it (the SDK's transport does the same)
        yield (
            os.fdopen(wire_in, "rb", buffering=1 << 16, closefd=False),
            os.fdopen(wire_out, "wb", closefd=False),
        )
    finally:
        os.close(null)
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)


async def serve(server: Any) -> None:
    """Serve ``server`` (an SDK ``MCPServer``) on stdin/stdout through the guarded wire."""
    from mcp.server.stdio import stdio_server

    low = server._lowlevel_server  # what the SDK's own run_stdio_async serves (mcp 2.x)
    with _claimed() as (src, out):
        places = _Places(MAX_IN_FLIGHT)
        wire = _Wire(out, places)
        lines = _Lines(src, wire, places, MAX_REQUEST_BYTES)
        async with stdio_server(stdin=cast(Any, lines), stdout=cast(Any, wire)) as (read, write):
            await low.run(read, write, low.create_initialization_options())


def run(server: Any) -> None:
    anyio.run(serve, server)

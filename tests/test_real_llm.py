"""scribed's ``llm`` backend end to end against a real local model (``scripts/local-llm``).

The model is deliberately tiny (SmolLM2-135M-Instruct): it answers slowly and often badly, which
is what these tests are for. Requests must be well-formed; every answer must end up parsed,
repaired or replaced by the extractive fallback; the retention guard must restore what the
model drops; no secret may reach the model or the cold files; tokens must be recorded.

Set ``SCRIBED_REAL_LLM_URL`` (e.g. ``$(scripts/local-llm start)``, or Ollama's
``http://127.0.0.1:11434/v1`` with ``SCRIBED_REAL_LLM_MODEL``). Without a reachable server the
tests skip, unless ``SCRIBED_REQUIRE_REAL_LLM=1``, which turns the skip into a failure (CI).
Every request goes through a recording proxy on 127.0.0.1, so the tests see exactly what was sent.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "bench") not in sys.path:
    sys.path.insert(0, str(ROOT / "bench"))

import gen  # noqa: E402

from scribed import config as config_mod  # noqa: E402
from scribed.compress import anchors as anchors_mod  # noqa: E402
from scribed.compress import entry as entry_mod  # noqa: E402
from scribed.compress import entry_guard  # noqa: E402
from scribed.compress.llm import LlmCompressor, LlmError  # noqa: E402
from scribed.core.scribe import Scribe  # noqa: E402
from scribed.models import Session, Turn  # noqa: E402
from scribed.session.redact import redact  # noqa: E402

pytestmark = [pytest.mark.real_llm, pytest.mark.timeout(1800)]

URL = os.environ.get("SCRIBED_REAL_LLM_URL", "").rstrip("/")
MODEL = os.environ.get("SCRIBED_REAL_LLM_MODEL", "smollm2-135m")
CTX = int(os.environ.get("SCRIBED_REAL_LLM_CTX", "2048"))
REQUIRE = os.environ.get("SCRIBED_REQUIRE_REAL_LLM") == "1"


def _unavailable() -> str | None:
    if not URL:
        return "SCRIBED_REAL_LLM_URL is not set"
    try:
        with urllib.request.urlopen(f"{URL}/models", timeout=5) as r:
            if r.status != 200:
                return f"{URL}/models answered {r.status}"
    except (OSError, urllib.error.URLError) as exc:
        return f"no model server at {URL} ({exc})"
    return None


@dataclass
class Exchange:
    path: str
    request: dict[str, Any]
    status: int
    response: dict[str, Any] | None


@dataclass
class Recorder:
    """A loopback proxy in front of the real server that keeps every request and answer."""

    upstream: str
    exchanges: list[Exchange] = field(default_factory=list)
    url: str = ""
    # llama-cpp-python's server has no response_format json_schema but takes the same schema as
    # {"type": "json_object", "schema": ...}; translating lets scribed's default mode reach it.
    translate_schema: bool = True
    require_text: bool = True

    @property
    def chats(self) -> list[Exchange]:
        return [e for e in self.exchanges if e.path.endswith("/chat/completions")]


def _translate(rec: Recorder, body: bytes | None) -> bytes | None:
    """The request body to send upstream: a json_schema response format becomes the server's own form."""
    if not (body and rec.translate_schema):
        return body
    try:
        obj = json.loads(body)
    except ValueError:
        return body
    rf = obj.get("response_format") if isinstance(obj, dict) else None
    if not (isinstance(rf, dict) and rf.get("type") == "json_schema"):
        return body
    schema = json.loads(json.dumps((rf.get("json_schema") or {}).get("schema") or {}))
    if rec.require_text and isinstance(schema.get("properties"), dict):
        # A 135M model takes the shortest valid answer, {"key_facts": []}, which
        # scribed rightly rejects as empty; requiring goal and outcome makes it
        # write something, so the parse → guard path runs on real model output.
        schema["required"] = sorted({*schema.get("required", []), "goal", "outcome"})
        for key in ("goal", "outcome"):
            schema["properties"].setdefault(key, {"type": "string"})["minLength"] = 12
    obj["response_format"] = {"type": "json_object", "schema": schema}
    return json.dumps(obj).encode()


def _handler(rec: Recorder) -> type[BaseHTTPRequestHandler]:
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(rec.upstream))

    class Proxy(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _forward(self, body: bytes | None) -> None:
            sent_body = _translate(rec, body)
            req = urllib.request.Request(origin + self.path, data=sent_body, method=self.command)
            req.add_header("Content-Type", self.headers.get("Content-Type", "application/json"))
            try:
                with urllib.request.urlopen(req, timeout=1200) as r:
                    status, data = r.status, r.read()
            except urllib.error.HTTPError as exc:
                status, data = exc.code, exc.read()
            try:
                parsed = json.loads(data) if data else None
            except ValueError:
                parsed = None
            try:
                sent = json.loads(body) if body else {}
            except ValueError:
                sent = {"_raw": body.decode("utf-8", "replace") if body else ""}
            rec.exchanges.append(Exchange(self.path, sent, status, parsed))
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._forward(None)

        def do_POST(self) -> None:
            n = int(self.headers.get("Content-Length") or 0)
            self._forward(self.rfile.read(n))

    return Proxy


@pytest.fixture(scope="module")
def server() -> str:
    reason = _unavailable()
    if reason:
        if REQUIRE:
            pytest.fail(f"SCRIBED_REQUIRE_REAL_LLM=1 but {reason}")
        pytest.skip(f"{reason}: run `export SCRIBED_REAL_LLM_URL=$(scripts/local-llm start)`")
    return URL


def _is_llama_cpp_python(url: str) -> bool:
    """llama-cpp-python's server lists its models as ``owned_by: "me"`` (Ollama says "library")."""
    try:
        with urllib.request.urlopen(f"{url}/models", timeout=5) as r:
            data = json.loads(r.read())
    except (OSError, ValueError):
        return False
    models = data.get("data") if isinstance(data, dict) else None
    return bool(models) and all(isinstance(m, dict) and m.get("owned_by") == "me" for m in models)


@pytest.fixture
def proxy(server: str) -> Iterator[Recorder]:
    rec = Recorder(server)
    # Translate json_schema only for llama-cpp-python; SCRIBED_REAL_LLM_SCHEMA_PROXY=0/1 overrides.
    flag = os.environ.get("SCRIBED_REAL_LLM_SCHEMA_PROXY", "")
    rec.translate_schema = flag == "1" if flag in ("0", "1") else _is_llama_cpp_python(server)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(rec))
    base_path = urlsplit(server).path or "/v1"
    rec.url = f"http://127.0.0.1:{httpd.server_address[1]}{base_path}"
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        yield rec
    finally:
        httpd.shutdown()
        httpd.server_close()


# llama-cpp-python's server answers response_format json_schema with HTTP 500 (a request
# validation error); scribed recognises that answer and falls back to json_object (see
# test_auto_response_format_negotiates_with_the_server). The recording proxy translates
# json_schema into the equivalent llama.cpp request, so scribed's default "auto" (json_schema
# first) gets a schema-constrained answer. Ollama takes either.
FORMAT = os.environ.get("SCRIBED_REAL_LLM_FORMAT", "auto")


def _llm_cfg(url: str, response_format: str = FORMAT) -> dict[str, Any]:
    return {
        "base_url": url,
        "model": MODEL,
        "context_tokens": CTX,
        "timeout_seconds": 600,
        "max_retries": 1,
        "max_concurrency": 1,
        "response_format": response_format,
    }


def _secrets(sessions: list[gen.GenSession]) -> list[str]:
    return [v for s in sessions for sec in s.manifest.secrets for v in sec["values"] if v]


def _check_requests(rec: Recorder) -> None:
    """Every chat request is a well-formed OpenAI chat completion that fits the context."""
    assert rec.chats, "no chat request reached the server"
    for ex in rec.chats:
        body = ex.request
        assert body.get("model") == MODEL
        msgs = body.get("messages")
        assert isinstance(msgs, list) and msgs, body
        assert all(m.get("role") in ("system", "user", "assistant") for m in msgs)
        assert all(isinstance(m.get("content"), str) and m["content"] for m in msgs)
        assert msgs[0]["role"] == "system" and any(m["role"] == "user" for m in msgs)
        out = body.get("max_tokens") or body.get("max_completion_tokens")
        assert isinstance(out, int) and 0 < out < CTX
        assert body.get("temperature") == 0.0
        rf = body.get("response_format")
        assert rf is None or rf.get("type") in ("json_schema", "json_object", "text")
        # The transcript is framed as data between nonce markers.
        user = "\n".join(m["content"] for m in msgs if m["role"] == "user")
        assert "<<<DATA " in user and "<<<END DATA " in user
        if ex.status == 200:
            assert ex.response and ex.response.get("choices"), ex.response


def _small(seed: int, n: int, max_kb: float = 8) -> list[gen.GenSession]:
    return list(gen.iter_sessions(seed, n, min_kb=4, max_kb=max_kb, unrecognised_rate=0.0))


def test_compressor_on_a_real_model_then_guard(proxy: Recorder, tmp_path: Path) -> None:
    """One session straight through LlmCompressor: parsed or repaired, or a clean LlmError."""
    s = _small(11, 1)[0]
    path = gen.write_session(s, tmp_path / "transcripts")
    from scribed import sources

    parsed = sources.parse_file(s.fmt, path, s.agent)
    sess = parsed.sessions[0]
    turns = [
        Turn(t.role, redact(t.text), t.kind, t.ts, t.line, t.end_offset, t.tool_name) for t in sess.turns
    ]
    red = Session(
        sess.agent, sess.session_id, sess.source, sess.kind, turns, sess.start, sess.end, sess.ended
    )
    anchors = anchors_mod.extract(red)
    comp = LlmCompressor(config_mod.LlmCfg(**_llm_cfg(proxy.url)))
    failure: LlmError | None = None
    try:
        result = comp.compress(red, anchors, 1500)
    except LlmError as exc:
        failure = exc
    _check_requests(proxy)
    if failure is not None:
        # The tiny model may fail even the repair; the pipeline then falls back (next test).
        assert failure.reason and len(failure.reason) < 200
        print(f"real model: LlmError {failure.reason!r} after {len(proxy.chats)} calls")
        return
    assert result.compressor == f"llm:{MODEL}"
    assert result.tokens_in > 0 and result.tokens_out > 0
    assert result.calls >= 1
    meta = entry_mod.EntryMeta(
        entry_id="e-000000000000",
        agent=s.agent,
        session=red.session_id,
        source=str(path),
        kind=s.fmt,
        end=s.end,
        first_line=turns[0].line,
        last_line=turns[-1].line,
        turns=len(turns),
        sha256="0" * 64,
        compressor=result.compressor,
        bytes_in=len(s.data),
    )
    raw = entry_mod.render(result.summary, meta)
    before = anchors_mod.recall(anchors, raw)
    guarded, after = entry_guard.guard(result.summary, anchors, meta, hard_cap=100_000)
    print(
        f"real model: parsed ({result.notes}), anchor recall {before:.2f} before the guard, {after:.2f} after"
    )
    assert after == 1.0, "the guard must restore every anchor when there is room"
    assert after >= before
    text = entry_mod.render(guarded, meta)
    assert not any(v in text for v in _secrets([s]))


def test_pipeline_auto_backend_end_to_end(proxy: Recorder, tmp_path: Path) -> None:
    """run-once with backend auto on a real model: an entry per session, nothing lost or leaked."""
    sessions = _small(12, 3)
    transcripts = tmp_path / "transcripts"
    for s in sessions:
        gen.write_session(s, transcripts)
    root = tmp_path / "squad"
    root.mkdir()
    cfg = config_mod.from_dict(
        {
            "root": str(root),
            "session": {"quiet_seconds": 0},
            # Room for every anchor, so "nothing lost" is checkable as recall == 1.
            "compress": {"backend": "auto", "ratio": 0.5, "min_bytes": 2500, "max_bytes": 8000},
            "cold": {"max_bytes": 1_000_000},
            "llm": _llm_cfg(proxy.url),
            "log": {"format": "json", "level": "error"},
            "sources": gen.sources(transcripts),
        }
    )
    last = max(s.end for s in sessions) + timedelta(hours=1)
    scribe = Scribe(cfg, clock=lambda: last)
    try:
        rep = scribe.run_once(force=True)
    finally:
        scribe.close()
    assert rep.failed == 0, rep.failures
    assert rep.compacted == len(sessions)
    _check_requests(proxy)
    assert any(ex.status == 200 for ex in proxy.chats), "the model never answered a request"
    llm_entries = [e for e in rep.entries if e.compressor.startswith("llm:")]
    fallbacks = [e for e in rep.entries if e.compressor == "extractive"]
    assert len(llm_entries) + len(fallbacks) == len(sessions)
    for e in fallbacks:
        assert e.llm_error, "a fallback must say why the model's answer was not used"
    for e in llm_entries:
        assert e.tokens_in > 0 and e.tokens_out > 0, "tokens must be recorded"
        assert e.recall == 1.0, f"guard left anchors out of {e.session}"
    for e in rep.entries:
        assert e.recall == 1.0
    print("real model:", [(e.compressor, e.llm_error, e.tokens_in, e.tokens_out, e.ms) for e in rep.entries])
    cold = "".join(p.read_text() for p in (root / ".squad/memory/cold").glob("*.md"))
    everything = "\n".join(json.dumps(ex.request) for ex in proxy.exchanges)
    for v in _secrets(sessions):
        assert v not in cold, "a secret reached the cold files"
        assert v not in everything, "a secret was sent to the model"
    _, entries = entry_mod.split_entries(cold)
    assert len(entries) == len(sessions)
    for e in entries:
        assert "sha256=" in e.text and "session=" in e.text and "source=`" in e.text
    # The ledger keeps the tokens too (what `scribed status` and reports read).
    import sqlite3

    con = sqlite3.connect(root / ".squad/memory/.scribed/ledger.sqlite")
    try:
        rows = con.execute("select compressor, tokens_in, tokens_out from entries").fetchall()
    finally:
        con.close()
    assert len(rows) == len(sessions)
    for comp, t_in, t_out in rows:
        if comp.startswith("llm:"):
            assert t_in > 0 and t_out > 0


def test_auto_response_format_negotiates_with_the_server(proxy: Recorder, tmp_path: Path) -> None:
    """response_format auto must end up on a mode the server accepts and use the model's answers."""
    proxy.translate_schema = False  # the server as it is
    sessions = _small(14, 2)
    for s in sessions:
        gen.write_session(s, tmp_path / "transcripts")
    root = tmp_path / "squad"
    root.mkdir()
    cfg = config_mod.from_dict(
        {
            "root": str(root),
            "session": {"quiet_seconds": 0},
            "compress": {"backend": "auto"},
            "llm": _llm_cfg(proxy.url, response_format="auto"),
            "log": {"format": "json", "level": "error"},
            "sources": gen.sources(tmp_path / "transcripts"),
        }
    )
    scribe = Scribe(cfg, clock=lambda: max(s.end for s in sessions) + timedelta(hours=1))
    try:
        rep = scribe.run_once(force=True)
    finally:
        scribe.close()
    assert rep.failed == 0
    assert any(ex.status == 200 for ex in proxy.chats), [ex.status for ex in proxy.chats]
    assert not any(e.llm_error.startswith("server error") for e in rep.entries), [
        e.llm_error for e in rep.entries
    ]


def test_long_session_map_reduce_or_fallback(proxy: Recorder, tmp_path: Path) -> None:
    """A session several times the context: map-reduce over chunks, or a recorded fallback."""
    s = next(iter(gen.iter_sessions(13, 1, min_kb=24, max_kb=28, unrecognised_rate=0.0)))
    gen.write_session(s, tmp_path / "transcripts")
    root = tmp_path / "squad"
    root.mkdir()
    cfg = config_mod.from_dict(
        {
            "root": str(root),
            "session": {"quiet_seconds": 0},
            "compress": {"backend": "auto"},
            "llm": _llm_cfg(proxy.url),
            "log": {"format": "json", "level": "error"},
            "sources": gen.sources(tmp_path / "transcripts"),
        }
    )
    scribe = Scribe(cfg, clock=lambda: s.end + timedelta(hours=1))
    try:
        rep = scribe.run_once(force=True)
    finally:
        scribe.close()
    assert rep.failed == 0 and rep.compacted == 1
    _check_requests(proxy)
    e = rep.entries[0]
    print(
        "real model, long session:",
        e.compressor,
        e.llm_error,
        e.tokens_in,
        e.tokens_out,
        len(proxy.chats),
        "calls",
    )
    if e.compressor.startswith("llm:"):
        assert len(proxy.chats) >= 2, "a session this long needs more than one call"
        assert e.tokens_in > CTX
    else:
        assert e.llm_error
    cold = "".join(p.read_text() for p in (root / ".squad/memory/cold").glob("*.md"))
    assert not any(v in cold for v in _secrets([s]))

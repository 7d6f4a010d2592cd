"""LLM bounds against a real loopback server: a total deadline per HTTP call and a response size cap.

httpx's read timeout is per chunk, so a server trickling a byte a second held a call for
minutes, and a 100 MB answer sat whole in memory. Each test here failed before the bounds.
"""

from __future__ import annotations

import json
import time
import tracemalloc
from pathlib import Path
from typing import Any

import llmserver
import pytest
from helpers import run_json
from llmserver import FakeLLM, huge, ok, trickle

from scribed.cli import demo
from scribed.compress.llm import LlmCompressor, LlmError, probe
from scribed.config import LlmCfg
from scribed.models import Session, Turn

fake_llm = llmserver.fake_llm

KEY_ENV = "SCRIBED_TEST_LLM_KEY"
SLACK = 5.0  # the acceptance bound: a call ends within timeout + 5 s


def make_cfg(url: str, **kw: object) -> LlmCfg:
    base: dict[str, object] = {
        "base_url": url,
        "model": "fake-model",
        "api_key_env": KEY_ENV,
        "timeout_seconds": 3.0,
        "max_retries": 0,
    }
    base.update(kw)
    return LlmCfg.model_validate(base)


def session() -> Session:
    turns = [
        Turn("user", "Please fix the flaky test in src/parser.py (issue #123)", line=1),
        Turn("assistant", "I decided to use a streaming parser. Fixed src/parser.py.", line=2),
    ]
    return Session(
        agent="copilot", session_id="s1", source=Path("/tmp/s1.jsonl"), kind="copilot", turns=turns
    )


def compress_fails(url: str, **kw: object) -> tuple[str, float]:
    """(reason, seconds) of a compress() that must fail."""
    comp = LlmCompressor(make_cfg(url, **kw), environ={KEY_ENV: "k"})
    t0 = time.monotonic()
    with pytest.raises(LlmError) as err:
        comp.compress(session(), [], 2000)
    return err.value.reason, time.monotonic() - t0


# --- the deadline ----------------------------------------------------------------------------


@pytest.mark.parametrize("headers", [False, True], ids=["body", "headers"])
def test_a_trickling_answer_ends_at_the_deadline(fake_llm: FakeLLM, headers: bool) -> None:
    """One byte a second never trips a per-read timeout; the total deadline ends the call."""
    fake_llm.default = trickle(1.0, headers=headers)
    reason, took = compress_fails(fake_llm.url, timeout_seconds=3.0)
    assert "timeout" in reason, reason
    assert 2.5 <= took < 3.0 + SLACK, took
    assert len(fake_llm.chat_requests) == 1


def test_retries_stay_bounded_in_count_and_time(fake_llm: FakeLLM) -> None:
    fake_llm.default = trickle(0.5)
    reason, took = compress_fails(fake_llm.url, timeout_seconds=2.0, max_retries=2)
    assert "timeout" in reason, reason
    assert len(fake_llm.chat_requests) == 3  # 1 + max_retries, then it gives up
    # three attempts of at most 2 s, plus stamina's backoff between them (≤ 3.5 s)
    assert took < 3 * 2.0 + 3.5 + SLACK, took


def test_a_slow_but_steady_answer_inside_the_deadline_still_works(fake_llm: FakeLLM) -> None:
    """The deadline is per call, not per byte: an answer done in time is used."""
    fake_llm.default = trickle(0.001)
    comp = LlmCompressor(make_cfg(fake_llm.url, timeout_seconds=10.0), environ={KEY_ENV: "k"})
    res = comp.compress(session(), [], 2000)
    assert res.summary.goal


def test_the_probe_obeys_the_deadline(fake_llm: FakeLLM) -> None:
    fake_llm.models = trickle(0.5, ok({"object": "list", "data": []}))
    t0 = time.monotonic()
    reason = probe(make_cfg(fake_llm.url), timeout=2.0, environ={})
    took = time.monotonic() - t0
    assert reason is not None and "timeout" in reason, reason
    assert took < 2.0 + SLACK, took


# --- the size cap ----------------------------------------------------------------------------


def test_a_100_mb_answer_is_abandoned_at_the_cap(fake_llm: FakeLLM) -> None:
    """Chunked, so its size is unknown up front: the body is counted as it arrives."""
    fake_llm.default = huge()
    tracemalloc.start()
    try:
        reason, took = compress_fails(fake_llm.url, timeout_seconds=30.0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "response too large" in reason and "1048576" in reason, reason
    assert peak < 16 * 1024 * 1024, f"{peak / 1e6:.1f} MB held"
    assert took < 15, took


@pytest.mark.parametrize(
    "behaviour",
    [huge(declare=True), huge(gzip=True), huge(code=500)],
    ids=["declared-length", "gzip-bomb", "error-status"],
)
def test_every_oversized_shape_fails(fake_llm: FakeLLM, behaviour: Any) -> None:
    fake_llm.default = behaviour
    reason, took = compress_fails(fake_llm.url, timeout_seconds=30.0)
    assert "response too large" in reason, reason
    assert took < 15, took


def test_the_cap_is_configurable(fake_llm: FakeLLM) -> None:
    """A normal answer (under 1 KB) passes a 2 KB cap; a 4 KB one does not."""
    cfg = {"max_response_bytes": 2048}
    comp = LlmCompressor(make_cfg(fake_llm.url, **cfg), environ={KEY_ENV: "k"})
    assert comp.compress(session(), [], 2000).summary.goal
    fake_llm.default = ok({"goal": "g", "outcome": "x" * 4000})
    reason, _ = compress_fails(fake_llm.url, **cfg)
    assert reason == "response too large (over 2048 bytes)"


def test_the_probe_obeys_the_cap(fake_llm: FakeLLM) -> None:
    fake_llm.models = huge()
    reason = probe(make_cfg(fake_llm.url), timeout=10.0, environ={})
    assert reason is not None and "response too large" in reason, reason


# --- run-once end to end (subprocess) --------------------------------------------------------


def setup(tmp_path: Path, url: str, timeout: float) -> tuple[Path, str]:
    root = tmp_path / "squad"
    root.mkdir()
    demo.build(root)
    cfg = root / "scribed.toml"
    text = cfg.read_text().replace('backend = "extractive"', 'backend = "auto"')
    text += f'\n[llm]\nbase_url = "{url}"\nmodel = "tiny"\ntimeout_seconds = {timeout}\nmax_retries = 0\n'
    cfg.write_text(text)
    return root, str(cfg)


def run_complete(err: str) -> dict[str, Any]:
    for line in err.splitlines():
        if '"run_complete"' in line:
            data: dict[str, Any] = json.loads(line)
            return data
    raise AssertionError(f"no run_complete line in: {err[-2000:]}")


def assert_all_by_fallback(out: dict[str, Any], err: str, reason: str) -> None:
    assert out["compacted"] == 5 and out["failed"] == 0, out
    assert {e["compressor"] for e in out["entries"]} == {"extractive"}
    assert reason in err  # the failure is logged
    assert "llm_paused" in err  # three failures in a row pause the endpoint (the breaker)
    assert "Traceback" not in err


def test_run_once_with_a_trickling_server_falls_back(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.default = trickle(1.0)
    _root, cfg = setup(tmp_path, fake_llm.url, timeout=3.0)
    t0 = time.monotonic()
    code, out, err = run_json("--config", cfg, "run-once", env={}, timeout=240)
    took = time.monotonic() - t0
    assert code == 0, err
    assert_all_by_fallback(out, err, "timeout")
    calls = len(fake_llm.chat_requests)
    assert calls == 3, calls  # then the breaker stops calling it
    assert took < calls * (3.0 + SLACK) + 10, took


def test_run_once_with_a_100_mb_answer_stays_small(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.default = huge()
    _root, cfg = setup(tmp_path, fake_llm.url, timeout=30.0)
    code, out, err = run_json("--config", cfg, "run-once", env={}, timeout=240)
    assert code == 0, err
    assert_all_by_fallback(out, err, "response too large")
    rss = run_complete(err)["peak_rss_mb"]
    assert rss < 200, f"peak RSS {rss} MB"


# --- the client keeps what openai's default client did ---------------------------------------


@pytest.mark.parametrize(
    ("env", "url", "expected"),
    [
        ({"HTTPS_PROXY": "http://proxy:3128"}, "https://api.openai.com/v1", "http://proxy:3128"),
        ({"HTTPS_PROXY": "http://proxy:3128"}, "http://127.0.0.1:8080/v1", None),
        ({"ALL_PROXY": "http://proxy:3128"}, "http://llm.lan:8080/v1", "http://proxy:3128"),
        (
            {"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "api.openai.com"},
            "https://api.openai.com/v1",
            None,
        ),
    ],
)
def test_environment_proxies_are_still_used(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], url: str, expected: str | None
) -> None:
    """Handing openai our own transport turns off httpx's env proxies, so they are read here."""
    from scribed.compress.llm_http import _env_proxy

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert _env_proxy(url) == expected

"""A hot-only spawn (``scribed context AGENT``, issue 15: ≤ 150 ms) stays light: it imports no
``dataclasses`` (which imports ``inspect``, ~40 M instructions) and no OpenSSL (``hashlib``). The small records on its path are
plain classes; these tests keep the behaviour the dataclasses had."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_spawn import PROBE  # the same probe: it lists which of the given modules a spawn loaded

from scribed.config_light import LightConfig, LightLog, LightSource
from scribed.recall.context import Context
from scribed.session import door
from scribed.session.redact import rules
from scribed.session.rules import Rule, compile_rule

LIGHT = ("dataclasses", "inspect", "_hashlib", "threading", "datetime")  # _hashlib: OpenSSL, ~4 ms to load


@pytest.mark.parametrize(
    "extra", [[], ["--format", "json"], ["--situation", "new-task", "--max-bytes", "900"]]
)
def test_a_hot_only_spawn_imports_no_dataclasses(tmp_path: Path, extra: list[str]) -> None:
    hot = tmp_path / ".squad/memory/hot/data.md"
    hot.parent.mkdir(parents=True)
    hot.write_text(  # every anchor of the redactor, and a secret: each pass runs
        "# Hot memory: data\n\nCurrent task: fix `src/export/run.py` (JIRA-12, KEY_ID ~/x).\n"
        "- note_1: api_key=sk-proj-Abc123Def456Ghi789Jkl012Mno345 and password = hunter2hunter2\n"
    )
    code = PROBE.format(heavy=set(LIGHT))
    args = ["context", "data", "--root", str(tmp_path), *extra]
    # As a user's machine runs it: the parsed rule file is cached beside the bytecode (a shell that
    # sets PYTHONDONTWRITEBYTECODE parses the TOML, and loads datetime, at every spawn); warmed once.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "scribed", *args], capture_output=True, env=env, check=True)
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, check=True
    )
    assert "[REDACTED_SECRET]" in proc.stdout and "hunter2" not in proc.stdout
    assert proc.stdout.rstrip().endswith("LOADED [] EXIT 0"), proc.stdout[-400:]


def test_a_rule_is_immutable_and_hashed_by_identity() -> None:
    rule = rules()[0]
    with pytest.raises(AttributeError):
        rule.id = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del rule.kind
    raw = {"id": "x", "family": "f", "kind": "named", "keywords": ["k"], "shape": "[a-z]+"}
    raw |= {"tests": ["k = «abcdef»"], "allow_tests": ["k = 1"]}
    a, b = compile_rule(raw), compile_rule(raw)
    assert a != b and len({a, b}) == 2, "identity equality: rules are dict keys on the hot path"
    defaults = (a.back, a.boundary, a.mixed, a.entropy, a.value, a.window, a.regex, a.line)
    assert defaults == (0, True, False, 0.0, "", 0, "", False)
    assert repr(a).startswith("Rule(id='x', family='f', kind='named', keywords=('k',),")
    with pytest.raises(TypeError):
        Rule(id="x")  # required fields missing
    fields = {k: getattr(a, k) for k in ("id", "family", "kind", "keywords", "shape", "tests")}
    assert Rule(**fields).keywords == ("k",)
    with pytest.raises(ValueError, match="marks its secret"):
        compile_rule({**raw, "tests": ["k = abcdef"]})
    with pytest.raises(TypeError):
        Rule(**fields, colour="red")  # as the dataclass: an unknown field is an error


def test_a_redacted_session_is_immutable_and_compared_by_value() -> None:
    red = door.RedactedSession("s", door.Redacted("src"))  # type: ignore[arg-type]
    assert red == door.RedactedSession("s", door.Redacted("src"))  # type: ignore[arg-type]
    assert red != door.RedactedSession("s", door.Redacted("other"))  # type: ignore[arg-type]
    assert hash(red) == hash(("s", "src"))
    assert repr(red) == "RedactedSession(session='s', source='src')"
    with pytest.raises(AttributeError):
        red.source = door.Redacted("x")  # type: ignore[misc]
    import pickle

    assert pickle.loads(pickle.dumps(red)) == red  # a pool worker sends it (the merge broke this once)


def test_a_context_compares_and_shows_its_fields() -> None:
    a = Context(agent="data", situation=None, hot="h\n")
    assert a == Context("data", None, "h\n", [], {}, {}, "")
    assert a != Context("data", None, "h\n", text="t")
    assert a.cold is not Context("data", None, "").cold, "each context its own lists"
    shown = "Context(agent='data', situation=None, hot='h\\n', cold=[], wiki={}, left_out={}, text='')"
    assert repr(a) == shown
    with pytest.raises(TypeError):
        hash(a)


def test_the_light_config_records_keep_their_defaults() -> None:
    cfg = LightConfig()
    assert (cfg.root, cfg.sources, cfg.path, cfg.log.format, cfg.log.level) == (".", [], None, "auto", "info")
    assert cfg.sources is not LightConfig().sources
    assert repr(LightLog()) == "LightLog(format='auto', level='info')"
    assert repr(LightSource("codex", "t")) == "LightSource(kind='codex', path='t', agent='', glob='')"

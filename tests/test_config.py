"""Config lookup and validation: bad input is the user's mistake → exit 2, one line naming the key."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from scribed import config
from scribed.cli.main import main


def write(p: Path, text: str) -> Path:
    p.write_text(text)
    return p


def test_defaults_without_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCRIBED_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    cfg = config.load()
    assert cfg.compress.backend == "auto"
    assert cfg.session.quiet_seconds == 1800
    assert cfg.cold.max_bytes == 196608
    assert cfg.path is None


def test_lookup_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    xdg = tmp_path / "xdg"
    (xdg / "scribed").mkdir(parents=True)
    write(xdg / "scribed/config.toml", "[session]\nquiet_seconds = 5\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    monkeypatch.delenv("SCRIBED_CONFIG", raising=False)
    assert config.load().session.quiet_seconds == 5
    write(tmp_path / "scribed.toml", "[session]\nquiet_seconds = 6\n")
    assert config.load().session.quiet_seconds == 6
    env = write(tmp_path / "env.toml", "[session]\nquiet_seconds = 7\n")
    monkeypatch.setenv("SCRIBED_CONFIG", str(env))
    assert config.load().session.quiet_seconds == 7
    explicit = write(tmp_path / "x.toml", "[session]\nquiet_seconds = 8\n")
    assert config.load(str(explicit)).session.quiet_seconds == 8


def test_relative_paths_resolve_against_the_file(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    p = write(tmp_path / "sub/c.toml", 'root = "."\n[[sources]]\nkind = "codex"\npath = "t/codex"\n')
    cfg = config.load(str(p))
    assert cfg.root_path == (tmp_path / "sub").absolute()
    assert cfg.sources[0].expanded == (tmp_path / "sub/t/codex").absolute()


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("bogus = 1\n", "unknown key 'bogus'"),
        ('[compress]\nbackend = "magic"\n', "'compress.backend'"),
        ("[compress]\nratio = 2\n", "'compress.ratio'"),
        ("[llm]\ntimeout_seconds = -1\n", "'llm.timeout_seconds'"),
        ("[session]\nquiet = 3\n", "unknown key 'session.quiet'"),
        ('[[sources]]\nkind = "vim"\npath = "/x"\n', "bad value for 'kind' in [[sources]] #1"),
        ('[[sources]]\nkind = "codex"\n', "missing key 'path' in [[sources]] #1"),
        ("root = [\n", "invalid TOML"),
    ],
)
def test_bad_config_exit_2_names_key(tmp_path: Path, text: str, needle: str) -> None:
    p = write(tmp_path / "bad.toml", text)
    res = CliRunner().invoke(main, ["--config", str(p), "check-config"])
    assert res.exit_code == 2, res.output
    err = res.stderr if hasattr(res, "stderr") else res.output
    assert needle in err
    assert str(p) in err
    assert "Traceback" not in res.output
    assert len(err.strip().splitlines()) == 1


def test_missing_named_config(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["--config", str(tmp_path / "nope.toml"), "check-config"])
    assert res.exit_code == 2
    assert "not found" in res.output


@pytest.mark.parametrize("agent", ["../evil", "a/b", " ", "-x"])
@pytest.mark.parametrize("cmd", [["run-once"], ["check-config"], ["context", "picard"], ["doctor"]])
def test_bad_agent_name_in_source_names_file_and_key(tmp_path: Path, agent: str, cmd: list[str]) -> None:
    """Like every other bad value: one line naming the config file and the dotted key, exit 2."""
    (tmp_path / ".squad").mkdir()
    p = write(
        tmp_path / "c.toml",
        f'root = "{tmp_path}"\n[[sources]]\nkind = "codex"\npath = "/x"\n'
        f'[[sources]]\nkind = "claude"\npath = "/y"\nagent = "{agent}"\n',
    )
    res = CliRunner().invoke(main, ["--config", str(p), *cmd])
    assert res.exit_code == 2, res.output
    err = res.stderr if hasattr(res, "stderr") else res.output
    assert err.strip() == (
        f"scribed: error: {p}: bad value for 'agent' in [[sources]] #2: {agent!r} is not a valid agent name "
        "(lowercase letters, digits, '-' and '_')"
    )


def test_bad_agent_name_from_the_core_names_file_and_key(tmp_path: Path) -> None:
    from scribed.core.scribe import Scribe

    (tmp_path / ".squad").mkdir()
    p = write(tmp_path / "c.toml", '[[sources]]\nkind = "codex"\npath = "/x"\nagent = "a/b"\n')
    with pytest.raises(
        config.ConfigError, match=rf"^{p}: bad value for 'agent' in \[\[sources\]\] #1: 'a/b'"
    ):
        Scribe(config.load(str(p)))


def test_example_config_is_valid_and_complete() -> None:
    example = Path(__file__).parent.parent / "config.example.toml"
    cfg = config.load(str(example))
    text = example.read_text()
    # Every key of every section is documented in the example.
    for section in ("session", "compress", "llm", "cold", "log", "watch", "daemon", "promote"):
        model = getattr(cfg, section)
        for key in type(model).model_fields:
            assert f"\n{key} = " in text, f"{section}.{key} missing from config.example.toml"


def _typed_cases() -> list[tuple[str, str, str, str]]:
    """(section, key, TOML value, what the message says is expected) for every number and
    true/false setting: a value of the wrong TOML type, or a number that is not finite."""
    from scribed import config_light

    words = {"float": "a number", "int": "a whole number", "bool": "true or false"}
    wrong = {
        "float": ["true", "false", '"60"', '"0.1"', "inf", "-inf", "nan", "1e400"],
        "int": ["true", '"60"'],
        "bool": ["1", "0", '"true"', "1.0"],
    }
    out = []
    for section, keys in config_light.SCHEMA.items():
        for key, spec in keys.items():
            kind = spec[0]
            for value in wrong.get(kind, []):
                finite = value.lstrip("-") in ("inf", "nan", "1e400")
                out.append((section, key, value, "a finite number" if finite else words[kind]))
    return out


TYPED = _typed_cases()


@pytest.mark.parametrize(
    ("section", "key", "value", "expected"), TYPED, ids=[f"{c[0]}.{c[1]}={c[2]}" for c in TYPED]
)
def test_a_value_of_the_wrong_type_or_not_finite_is_refused(
    tmp_path: Path, section: str, key: str, value: str, expected: str
) -> None:
    """TOML has real numbers and booleans: `quiet_seconds = true` (1 s of quiet), `ratio = "0.1"`
    or `quiet_seconds = inf` (an OverflowError later, naming no key) are the user's mistake."""
    p = write(tmp_path / "c.toml", f"[{section}]\n{key} = {value}\n")
    res = CliRunner().invoke(main, ["--config", str(p), "check-config"])
    assert res.exit_code == 2, res.output
    shown = {"1e400": "inf", '"60"': "'60'", '"0.1"': "'0.1'", '"true"': "'true'"}.get(value, value)
    assert res.stderr.strip() == (
        f"scribed: error: {p}: bad value for '{section}.{key}': expected {expected} (got {shown})"
    )


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (
            "[session]\nquiet_seconds = 1e22\n",
            "'session.quiet_seconds': Input should be less than or equal to",
        ),
        (
            "[cold]\nttl_days = 9000000000000000000\n",
            "'cold.ttl_days': Input should be less than or equal to",
        ),
        ("[archive]\nretention_days = 10000000\n", "'archive.retention_days'"),
        ("[watch]\npoll_interval = 1e300\n", "'watch.poll_interval'"),
        ("[daemon]\nshutdown_grace = 1e300\n", "'daemon.shutdown_grace'"),
        ("[llm]\ntimeout_seconds = 1e300\n", "'llm.timeout_seconds'"),
    ],
)
def test_a_time_too_long_to_mean_anything_is_refused(tmp_path: Path, text: str, needle: str) -> None:
    """A finite but huge duration passed, then overflowed a date or a sleep (`ttl_days = 9e18`:
    "OverflowError: Python int too large to convert to C int") or printed "finished after
    166666666666666655744 min quiet"."""
    p = write(tmp_path / "c.toml", text)
    res = CliRunner().invoke(main, ["--config", str(p), "check-config"])
    assert res.exit_code == 2, res.output
    assert needle in res.stderr and str(p) in res.stderr


def test_the_longest_times_allowed_run(tmp_path: Path) -> None:
    """Every duration at its bound: run-once and status work and say the quiet time readably."""
    from scribed import config_light

    longest = {
        s: {k: spec[3] for k, spec in keys.items() if spec[0] in ("float", "int") and spec[3] is not None}
        for s, keys in config_light.SCHEMA.items()
    }
    (tmp_path / ".squad").mkdir()
    t = tmp_path / "t" / "-p"
    t.mkdir(parents=True)
    rec = {
        "type": "user",
        "sessionId": "s1",
        "cwd": str(tmp_path),
        "timestamp": "2026-11-20T09:00:00Z",
        "message": {"role": "user", "content": "still typing the rate limit change"},
    }
    (t / "s1.jsonl").write_text(json.dumps(rec) + "\n")
    lines = [f'root = "{tmp_path}"', "[compress]", 'backend = "extractive"']
    for s, keys in longest.items():
        keys.pop("workers", None)  # a process count, not a duration
        if s == "compress" or not keys:
            continue
        lines += [f"[{s}]", *(f"{k} = {v!r}" for k, v in keys.items())]
    lines += ["[[sources]]", 'kind = "claude"', f'path = "{tmp_path / "t"}"', 'agent = "bob"']
    p = write(tmp_path / "c.toml", "\n".join(lines) + "\n")
    runner = CliRunner()
    chk = runner.invoke(main, ["--config", str(p), "check-config"])
    assert chk.exit_code == 0, chk.output
    now = time.time()
    os.utime(t / "s1.jsonl", (now, now))
    run = runner.invoke(main, ["--config", str(p), "run-once"])
    assert run.exit_code == 0, (run.output, run.stderr)
    assert "Error" not in run.output + run.stderr
    assert "finished after 720 h quiet" in run.output
    st = runner.invoke(main, ["--config", str(p), "status"])
    assert st.exit_code == 0, (st.output, st.stderr)
    assert "finished after 720 h quiet" in st.output


# --- a config's encoding: Notepad's BOM is read, other encodings named (finding s21) ----------------
BOM = b"\xef\xbb\xbf"
BOM_CONFIG = b'root = "."\n\n[[sources]]\nkind = "markdown"\npath = "logs"\nagent = "aider"\n'


def test_a_config_saved_with_a_bom_is_read_by_every_reader(tmp_path: Path) -> None:
    """Windows Notepad saves UTF-8 with a byte-order mark; tomllib refuses it ("invalid TOML")."""
    from helpers import run_cli

    from scribed import config_light
    from scribed.cli.daemon import lenient_root

    (tmp_path / ".squad").mkdir()
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs/chat.md").write_text("#### fix the login bug\n\nFixed `check_token` in auth.py.\n")
    p = tmp_path / "scribed.toml"
    p.write_bytes(BOM + BOM_CONFIG)
    cfg = config.load(str(p))
    assert [(s.kind, s.agent) for s in cfg.sources] == [("markdown", "aider")]
    light = config_light.light(*config_light.read(str(p)))
    assert light is not None and [s.agent for s in light.sources] == ["aider"]  # a spawn's reader
    for args in (["check-config", "--strict"], ["context", "aider"], ["report"]):
        r = run_cli("--config", str(p), *args)
        assert r.returncode == 0 and "TOML" not in r.stderr.decode(), (args, r.stderr.decode())
    # the daemon's lenient reader (a broken config's `root =`, for healthcheck) too
    (tmp_path / "broken.toml").write_bytes(BOM + b'root = "elsewhere"\n[session]\nquiet_seconds = "x"\n')
    assert lenient_root(str(tmp_path / "broken.toml")) == tmp_path / "elsewhere"


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b'root = "."\n# caf\xe9\n', "it is not UTF-8 text (byte 0xe9 on line 2); save it as UTF-8"),
        ('root = "."\n'.encode("utf-16"), 'it is UTF-16 text (Notepad\'s "Unicode"); save it as UTF-8'),
    ],
)
def test_a_config_in_another_encoding_is_named_with_the_fix(tmp_path: Path, data: bytes, said: str) -> None:
    from helpers import run_cli

    (tmp_path / ".squad").mkdir()
    p = tmp_path / "scribed.toml"
    p.write_bytes(data)
    with pytest.raises(config.ConfigError) as exc:
        config.load(str(p))
    assert str(exc.value) == f"{p}: cannot read config: {said}"
    for args in (["check-config"], ["context", "picard"], ["run-once"]):
        r = run_cli("--config", str(p), *args)
        err = r.stderr.decode()
        assert r.returncode == 2 and err == f"scribed: error: {p}: cannot read config: {said}\n", (args, err)

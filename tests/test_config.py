"""Config lookup and validation: bad input is the user's mistake → exit 2, one line naming the key."""

from __future__ import annotations

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

"""One validation (issue 33, part 4): every config `scribed run` refuses, `check-config` refuses too,
with the same lines naming the file and the key; `run` exits 78 (EX_CONFIG) and the shipped
systemd units do not restart on 78."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from scribed.cli.main import main

REPO = Path(__file__).parent.parent
EX_CONFIG = 78


def _root(tmp: Path) -> Path:
    root = tmp / "repo"
    (root / ".squad").mkdir(parents=True)
    return root


def _cfg(tmp: Path, text: str) -> Path:
    p = tmp / "scribed.toml"
    p.write_text(text)
    return p


def _orphan(tmp: Path) -> str:
    (tmp / "repo/.squad/config.json").write_text(json.dumps({"stateBackend": "orphan"}))
    return 'root = "repo"\n'


def _linked_state(tmp: Path) -> str:
    (tmp / "elsewhere").mkdir()
    (tmp / "repo/.squad/memory").mkdir()
    (tmp / "repo/.squad/memory/.scribed").symlink_to(tmp / "elsewhere")
    return 'root = "repo"\n'


def _no_squad(tmp: Path) -> str:
    (tmp / "bare").mkdir()
    return 'root = "bare"\n'


# (config text or a function of the temp folder that returns it, words every error line must hold)
BAD: list[tuple[str | Callable[[Path], str], tuple[str, ...]]] = [
    ('root = "repo"\n[promote]\nschedule = "0 3 * *"\n', ("'promote.schedule'", "expected 5 fields")),
    ('root = "repo"\n[promote]\nschedule = "61 3 * * *"\n', ("'promote.schedule'", "61")),
    ('root = "repo"\n[promote]\nschedule = "0 3 * * 9"\n', ("'promote.schedule'", "weekday 9")),
    ('root = "repo"\n[promote]\ntimezone = "Mars/Base"\n', ("'promote.timezone'", "Mars/Base")),
    ('root = "repo"\n[promote]\ntimezone = "Europe"\n', ("'promote.timezone'", "Europe")),
    ('root = "repo"\n[promote]\ntimezone = "/etc/passwd"\n', ("'promote.timezone'",)),
    (  # each problem at once, not the zone's first and the schedule's after it is mended
        'root = "repo"\n[promote]\nschedule = "every night"\ntimezone = "Mars/Base"\n',
        ("'promote.timezone'", "'promote.schedule'"),
    ),
    ('root = "repo"\nsession = 5\n', ("'session'", "should be a table: a [session] section")),
    ('root = "repo"\n[[sources]]\nkind = "claude"\npath = 5\n', ("'path' in [[sources]] #1", "string")),
    (
        'root = "repo"\n[[sources]]\nkind = "claude"\npath = "/x"\nworkspace = 3\n',
        ("'workspace' in [[sources]] #1: should be a string or a list of strings (got 3)",),
    ),
    (  # one line for the key, naming the bad item: not pydantic's ``workspace.list[str].0``
        'root = "repo"\n[[sources]]\nkind = "claude"\npath = "/x"\nworkspace = [1, "a", 3]\n',
        ("'workspace' in [[sources]] #1: should be a string or a list of strings; item 1 is 1, item 3 is 3",),
    ),
    ('root = "repo"\n[compress]\nbackend = "llm"\n', ("'compress.backend'", "llm.base_url and llm.model")),
    (
        'root = "repo"\n[compress]\nbackend = "llm"\n[llm]\nbase_url = "http://127.0.0.1:1/v1"\n',
        ("'compress.backend'", "llm.model"),
    ),
    ('root = "repo"\n[llm]\nbase_url = "localhost:11434/v1"\nmodel = "m"\n', ("'llm.base_url'",)),
    ('root = "repo"\n[compress]\nratio = 2\n', ("'compress.ratio'",)),
    ('root = "repo"\n[session]\nquiet = 3\n', ("unknown key 'session.quiet'",)),
    ("root = [\n", ("invalid TOML",)),
    (
        'root = "repo"\n[[sources]]\nkind = "codex"\npath = "/x"\nagent = "../x"\n',
        ("'agent' in [[sources]] #1",),
    ),
    ('root = "gone"\n', ("root folder", "gone", "does not exist", "`root =`")),
    (_no_squad, ("no .squad/ folder", "`root =`")),
    (_orphan, ("stateBackend='orphan'", ".squad/config.json")),  # the file at fault is Squad's
    (_linked_state, ("is a symlink", ".squad/memory/.scribed")),  # … or the folder
]
NOT_IN_CONFIG = (_orphan, _linked_state)


def _errors(output: str) -> list[str]:
    return [ln for ln in output.splitlines() if ln.startswith("scribed: error:")]


@pytest.mark.parametrize(("text", "words"), BAD)
def test_run_and_check_config_refuse_the_same_configs_in_the_same_words(
    tmp_path: Path, text: str | Callable[[Path], str], words: tuple[str, ...]
) -> None:
    _root(tmp_path)
    cfg = _cfg(tmp_path, text(tmp_path) if callable(text) else text)
    runner = CliRunner()
    chk = runner.invoke(main, ["--config", str(cfg), "check-config"])
    run = runner.invoke(main, ["--config", str(cfg), "run"])
    assert chk.exit_code == 2, chk.output
    assert run.exit_code == EX_CONFIG, run.output
    lines = _errors(run.stderr)
    assert lines and lines == _errors(chk.stderr), (run.stderr, chk.stderr)
    assert "Traceback" not in run.output + chk.output
    assert not any("Cfg" in ln or "list[" in ln for ln in lines), lines  # no name of ours or pydantic's
    if text not in NOT_IN_CONFIG:
        assert any(str(cfg) in ln for ln in lines), lines  # the file is named
    for w in words:
        assert any(w in ln for ln in lines), (w, lines)
    assert not (tmp_path / "repo/.squad/memory/.scribed/heartbeat").exists(), "run never started"


def test_a_good_config_passes_with_its_warnings(tmp_path: Path) -> None:
    _root(tmp_path)
    cfg = _cfg(
        tmp_path,
        'root = "repo"\n[llm]\nmodel = "m"\n[promote]\nschedule = "30 2 * * 1-5"\ntimezone = "Europe/Berlin"\n'
        '[[sources]]\nkind = "codex"\npath = "not-yet"\n',
    )
    p = CliRunner().invoke(main, ["--config", str(cfg), "check-config"])
    assert p.exit_code == 0, p.output
    assert p.stdout.startswith(f"config valid, 2 warning(s): {cfg}")
    warnings = [ln for ln in p.stderr.splitlines() if ln.startswith("scribed: warning:")]
    assert any("llm.model is set but llm.base_url is empty" in w for w in warnings), warnings
    assert any("[[sources]] #1 (codex): path does not exist" in w for w in warnings), warnings
    assert "promotion: 30 2 * * 1-5 Europe/Berlin" in p.stdout
    assert CliRunner().invoke(main, ["--config", str(cfg), "check-config", "--strict"]).exit_code == 1


def test_init_turns_a_missing_squad_into_a_warning(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, 'root = "new"\n')
    p = CliRunner().invoke(main, ["--config", str(cfg), "--init", "check-config"])
    assert p.exit_code == 0, p.output
    assert "--init creates it" in p.stderr and not (tmp_path / "new").exists(), "check-config writes nothing"


def test_run_exits_78_as_a_process(tmp_path: Path) -> None:
    """What systemd sees: the process's own status, and one line naming the file and the key."""
    _root(tmp_path)
    cfg = _cfg(tmp_path, 'root = "repo"\n[promote]\ntimezone = "Nowhere/Land"\n')
    p = subprocess.run(
        [sys.executable, "-m", "scribed", "--config", str(cfg), "run"], capture_output=True, timeout=120
    )
    assert p.returncode == EX_CONFIG, p.stderr.decode()
    err = p.stderr.decode().strip().splitlines()
    assert err == [
        f"scribed: error: {cfg}: bad value for 'promote.timezone': unknown time zone "
        "(got 'Nowhere/Land'; e.g. 'UTC', 'Europe/Berlin')"
    ]


@pytest.mark.parametrize("unit", ["scribed.service", "scribed-user.service"])
def test_the_units_do_not_restart_on_a_bad_config(unit: str) -> None:
    lines = (REPO / "deploy" / unit).read_text().splitlines()
    assert "RestartPreventExitStatus=78" in lines and "Restart=on-failure" in lines

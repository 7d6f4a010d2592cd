"""`scribed status`'s text form: each line says something a reader can act on."""

from __future__ import annotations

from pathlib import Path

import pytest

from scribed import config
from scribed.cli.daemon import _print_status, collect_status


@pytest.mark.parametrize(("watch", "shown"), [("", "watch starting)"), ("inotify", "watch inotify)")])
def test_a_daemon_just_started_says_its_watch_is_starting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], watch: str, shown: str
) -> None:
    """The first heartbeat is written before the watcher runs: "watch )" said nothing."""
    (tmp_path / ".squad").mkdir()
    d = collect_status(config.from_dict({"root": str(tmp_path)}))
    d["daemon"] = {**d["daemon"], "alive": True, "pid": 42, "queue": 0, "watch": watch, "catch_up": None}
    _print_status(d)
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("daemon:"))
    assert line.endswith(f"running (pid 42, queue 0, {shown}")

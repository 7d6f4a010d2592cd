"""What the write-access check (``scribed/tiers/access.py``) looks at, and what it must not stop,
tested in-process (``tests/test_root_access.py`` runs the real CLI as another user, which needs
setpriv and an interpreter that user can run):

- an agent's or a topic's folder one level inside ``cold/``, ``wiki/`` or the archive is checked
  too: one ``sudo scribed run-once`` makes a new agent's folder root's, and the service user's next
  run failed there with a bare PermissionError while its parent passed;
- the commands that only read (the review listing, a page's history, a dry run) are not refused
  for a memory the user may read but not write.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from scribed.cli.main import main
from scribed.tiers import access
from scribed.tiers.cold import Layout


def _root(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "repo"
    (root / ".squad/memory/cold/riker").mkdir(parents=True)
    (root / ".squad/memory/wiki/ops").mkdir(parents=True)
    cfg = root / "scribed.toml"
    cfg.write_text('root = "."\n')
    return root, cfg


def test_folders_one_level_inside_cold_and_wiki_are_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = _root(tmp_path)
    asked: list[Path] = []
    monkeypatch.setattr(access, "folder_problem", lambda f: asked.append(f))
    access.problems(Layout(root))
    memory = root / ".squad/memory"
    assert memory / "cold/riker" in asked and memory / "wiki/ops" in asked, asked


DENIED = "/x/.squad/memory: scribed runs as nobody and cannot write in it: chown nobody /x/.squad/memory"


@pytest.mark.parametrize(
    "args",
    [["review"], ["wiki", "history", "ops"], ["promote", "--dry-run"], ["import", "--all", "--dry-run"]],
)
def test_commands_that_only_read_are_not_refused_for_want_of_write_access(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    _, cfg = _root(tmp_path)
    monkeypatch.setattr(access, "problems", lambda *_a, **_k: [DENIED])
    monkeypatch.chdir(cfg.parent)
    refused = CliRunner().invoke(main, ["--config", str(cfg), "check-config"])
    assert refused.exit_code == 2 and "cannot write" in refused.output  # what `run` would refuse
    got = CliRunner().invoke(main, ["--config", str(cfg), *args])
    assert "cannot write" not in got.output, got.output
    assert got.exit_code in (0, 1) or "legacy" in got.output.lower(), got.output  # import: nothing to import

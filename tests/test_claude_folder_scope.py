"""Claude Code names a project folder by the session's working directory with every character that
is not a letter or digit as "-", so ``/x/app/api`` (a sub-folder) and the sibling repository
``/x/app-api`` share one folder (finding s19). ``scribed setup`` scopes the Claude sources it writes
to the root, so the sibling's session there is skipped and counted, never compacted into this
root's committed memory; ``check-config``, ``doctor`` and ``run-once`` warn about a Claude source on
such a folder (or on ``projects/`` as a whole) that has no ``workspace``."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

from helpers import run_cli

from scribed.core import setup_find


def _session(folder: Path, name: str, cwd: Path, said: str) -> None:
    """A finished two-turn Claude Code session run in ``cwd``."""
    folder.mkdir(parents=True, exist_ok=True)
    recs = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": name, "cwd": str(cwd),
         "timestamp": "2025-05-26T07:27:39Z", "message": {"role": "user", "content": said}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": name, "cwd": str(cwd),
         "timestamp": "2025-05-26T07:28:00Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": f"Done: {said}"}]}},
    ]  # fmt: skip
    (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))


def _two_repos(tmp: Path) -> tuple[Path, Path, Path]:
    """``app`` with a session started in ``app/api``, and the sibling repository ``app-api`` whose
    session lands in the same Claude Code project folder."""
    home, app = tmp / "home", tmp / "app"
    (app / "api").mkdir(parents=True)
    (tmp / "app-api").mkdir()
    shared = home / ".claude/projects" / (setup_find.dashed(app) + "-api")
    assert shared.name == setup_find.dashed(tmp / "app-api"), "the two folders' names are one"
    _session(shared, "mine", app / "api", "rename parse_config to load_config in api/config.py")
    _session(shared, "sibling", tmp / "app-api", "bump the sibling's stripe client to 9.2.0")
    return home, app, shared


def _text(p: subprocess.CompletedProcess[bytes]) -> str:
    return p.stdout.decode() + p.stderr.decode()


def test_setup_scopes_claude_sources_and_the_siblings_session_is_skipped_and_counted(tmp_path: Path) -> None:
    home, app, shared = _two_repos(tmp_path)
    p = run_cli("setup", "--root", str(app), "--home", str(home), "--no-mcp", cwd=app)
    assert p.returncode == 0, _text(p)
    cfg = tomllib.loads((app / "scribed.toml").read_text())
    claude = [s for s in cfg["sources"] if s["kind"] == "claude"]
    assert [(Path(s["path"]).name, s.get("workspace")) for s in claude] == [
        (setup_find.dashed(app), "."),
        (shared.name, "."),
    ]
    strict = run_cli("--config", str(app / "scribed.toml"), "check-config", "--strict", cwd=app)
    assert strict.returncode == 0, _text(strict)  # what setup writes passes its own --strict
    p = run_cli("--config", str(app / "scribed.toml"), "run-once", "--force", "--json", cwd=app)
    assert p.returncode == 0, _text(p)
    summary = json.loads(p.stdout)
    assert summary["compacted"] == 1 and summary["skips"]["other_repository"] == 1, summary
    told = "".join(f.read_text() for f in (app / ".squad/memory/cold").rglob("*.md"))
    assert "parse_config" in told and "stripe" not in told and "sibling.jsonl" not in told


def _config(tmp: Path, path: Path, workspace: str = "") -> Path:
    root = tmp / "repo"
    (root / ".squad").mkdir(parents=True, exist_ok=True)
    cfg = tmp / "scribed.toml"
    scope = f"workspace = {json.dumps(workspace)}\n" if workspace else ""
    cfg.write_text(f'root = "repo"\n\n[[sources]]\nkind = "claude"\npath = "{path}"\n{scope}')
    return cfg


def test_an_unscoped_claude_project_folder_is_warned_by_check_config_doctor_run_once(tmp_path: Path) -> None:
    folder = tmp_path / "home/.claude/projects" / setup_find.dashed(tmp_path / "repo")
    _session(folder, "mine", tmp_path / "repo", "add a retry to the uploader")
    cfg = _config(tmp_path, folder)
    check = run_cli("--config", str(cfg), "check-config", "--strict")
    assert check.returncode == 1, _text(check)
    out = _text(check)
    assert f"[[sources]] #1 (claude): {folder} is a Claude Code project folder" in out
    assert 'add `workspace = "repo"`' in out, out  # the root, as this config's folder names it
    doc = run_cli("--config", str(cfg), "doctor")
    assert "Claude Code project folder" in doc.stdout.decode() and "1 warning," in doc.stdout.decode()
    data = json.loads(run_cli("--config", str(cfg), "doctor", "--json").stdout)
    assert "workspace" in data["sources"][0]["scope"]
    once = run_cli("--config", str(cfg), "run-once", "--force")
    assert once.returncode == 0 and "Claude Code project folder" in once.stderr.decode(), _text(once)


def test_projects_as_a_whole_unscoped_is_warned_and_a_scoped_one_is_not(tmp_path: Path) -> None:
    projects = tmp_path / "home/.claude/projects"
    _session(projects / "-srv-one", "s", Path("/srv/one"), "x")
    check = run_cli("--config", str(_config(tmp_path, projects)), "check-config", "--strict")
    assert check.returncode == 1, _text(check)
    assert "holds the Claude Code project folders of every repository" in _text(check)
    check = run_cli("--config", str(_config(tmp_path, projects, "repo")), "check-config", "--strict")
    assert check.returncode == 0, _text(check)


def test_folders_no_other_path_shares_are_not_warned(tmp_path: Path) -> None:
    """``-app`` can only be ``/app``; a folder outside a ``projects/`` folder (the demo's, a copy)
    is not named by Claude Code; ``workspace = "*"`` is the user's explicit choice."""
    for path, workspace in (
        (tmp_path / "home/.claude/projects/-app", ""),
        (tmp_path / "transcripts/claude/-srv-app-api", ""),
        (tmp_path / "home/.claude/projects/-srv-app-api", "*"),
    ):
        _session(path, "s", Path("/srv/app"), "x")
        check = run_cli("--config", str(_config(tmp_path, path, workspace)), "check-config", "--strict")
        assert check.returncode == 0, (path, _text(check))

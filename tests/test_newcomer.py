"""A newcomer following the README (issue 33's second pass): the config `scribed setup` wrote is
found from `--root`, a missing config is said rather than reported as "0 sessions", every driver
validates the config as `scribed run` does, and every config problem is listed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from helpers import run_cli

SAMPLES = Path(__file__).parent / "samples"


def _repo(tmp_path: Path) -> Path:
    """A repository as `scribed setup` leaves it: .squad/ and REPO/scribed.toml with one source."""
    repo = tmp_path / "repo"
    (repo / ".squad").mkdir(parents=True)
    shutil.copytree(SAMPLES / "claude/-home-dev-api", repo / "claude")
    (repo / "scribed.toml").write_text('root = "."\n\n[[sources]]\nkind = "claude"\npath = "claude"\n')
    return repo


# --- 1. --root finds ROOT/scribed.toml; no config at all is said -------------------------------
def test_root_finds_its_own_config_from_another_folder(tmp_path: Path) -> None:
    repo, elsewhere = _repo(tmp_path), tmp_path / "elsewhere"
    elsewhere.mkdir()
    p = run_cli("status", "--json", "--root", str(repo), cwd=elsewhere)
    assert p.returncode == 0, p.stderr.decode()
    waits = json.loads(p.stdout)["waiting"]
    assert waits["active"] + waits["ready"] == 2, waits
    p = run_cli("run-once", "--root", str(repo), "--force", "--json", cwd=elsewhere)
    assert p.returncode == 0, p.stderr.decode()
    assert json.loads(p.stdout)["compacted"] >= 1


def test_root_config_wins_over_an_unrelated_one_in_the_current_folder(tmp_path: Path) -> None:
    repo, elsewhere = _repo(tmp_path), tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "scribed.toml").write_text('root = "."\n')  # another project's, no sources
    p = run_cli("check-config", "--root", str(repo), cwd=elsewhere)
    assert p.returncode == 0, p.stderr.decode()
    assert f"config ok: {repo / 'scribed.toml'}" in p.stdout.decode()
    p = run_cli("run-once", "--root", str(repo), "--force", "--json", cwd=elsewhere)
    assert p.returncode == 0 and json.loads(p.stdout)["compacted"] >= 1, p.stderr.decode()
    # --config still names the file outright
    p = run_cli(
        "--config", str(elsewhere / "scribed.toml"), "check-config", "--root", str(repo), cwd=tmp_path
    )
    assert f"config ok: {elsewhere / 'scribed.toml'}" in p.stdout.decode(), p.stderr


def test_no_config_and_no_sources_is_said_not_reported_as_success(tmp_path: Path) -> None:
    root, elsewhere = tmp_path / "bare", tmp_path / "elsewhere"
    (root / ".squad").mkdir(parents=True)
    elsewhere.mkdir()
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    p = run_cli("run-once", "--root", str(root), cwd=elsewhere, env=env)
    err = p.stderr.decode()
    assert p.returncode == 2, (p.stdout, err)
    assert "0 sessions" not in p.stdout.decode()
    assert f"no config file found (looked for {root / 'scribed.toml'}, scribed.toml" in err
    assert len([ln for ln in err.splitlines() if "no config file found" in ln]) == 1
    p = run_cli("status", "--root", str(root), cwd=elsewhere, env=env)
    assert p.returncode == 0 and "no config file found" in p.stderr.decode()
    p = run_cli("doctor", "--root", str(root), cwd=elsewhere, env=env)
    out = p.stdout.decode()
    assert "no config file found" in out and "no warnings" not in out and "1 warning" in out

"""A newcomer following the README (issue 33's second pass): the config `scribed setup` wrote is
found from `--root`, a missing config is said rather than reported as "0 sessions", every driver
validates the config as `scribed run` does, and every config problem is listed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
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


# --- 2. every driver runs the one validation; every failed session is listed --------------------
def _demo(tmp_path: Path, llm: str = "") -> Path:
    from scribed.cli import demo

    root = tmp_path / "demo"
    root.mkdir()
    demo.build(root)
    cfg = root / "scribed.toml"
    cfg.write_text(cfg.read_text().replace('backend = "extractive"\n', 'backend = "llm"\n' + llm))
    return cfg


DRIVERS = [
    ["run-once"],
    ["run-once", "--force", "--dry-run"],
    ["import", "--all"],
    ["promote"],
    ["review"],
    ["wiki-write", "build", "--agent", "riker"],
    ["git", "setup"],
    ["mcp"],
]


def test_every_driver_refuses_what_check_config_refuses_with_the_same_line(tmp_path: Path) -> None:
    cfg = _demo(tmp_path)
    p = run_cli("--config", str(cfg), "check-config")
    assert p.returncode == 2
    [line] = p.stderr.decode().splitlines()
    assert "bad value for 'compress.backend'" in line and str(cfg) in line
    p = run_cli("--config", str(cfg), "run")
    assert p.returncode == 78 and line in p.stderr.decode().splitlines()
    before = sorted(str(q) for q in cfg.parent.rglob("*"))
    for args in DRIVERS:
        p = run_cli("--config", str(cfg), *args, input=b"")
        assert (p.returncode, p.stderr.decode().splitlines()) == (2, [line]), (args, p.stderr.decode())
    assert sorted(str(q) for q in cfg.parent.rglob("*")) == before, "a refused command writes nothing"


def test_each_failed_session_is_listed(tmp_path: Path) -> None:
    llm = '\n[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\nmax_retries = 0\ntimeout_seconds = 2\n'
    cfg = _demo(tmp_path, llm)
    p = run_cli("--config", str(cfg), "run-once", "--force")
    out = p.stdout.decode().splitlines()
    assert p.returncode == 1 and "5 sessions: 0 compacted, 0 skipped, 5 failed" in out, out
    listed = [ln for ln in out if ln.startswith("  ")]
    assert len(listed) == 5, out  # the copilot file's two sessions (picard, troi) are two lines
    assert any("picard/" in ln for ln in listed) and any("troi" in ln for ln in listed), listed


def test_a_long_failure_list_says_how_many_more() -> None:
    from scribed.core.results import FileOutcome, RunReport, SourceItem

    rep = RunReport()
    for i in range(4):
        out = FileOutcome("failed", sessions=3)
        for j in range(3):
            out.fail(f"a/s{i}{j}: refused")
        rep.add(SourceItem(Path(f"/t/f{i}.jsonl"), "claude", "a"), out)
    lines = rep.why_not(0)
    assert lines[0].startswith("12 sessions failed")
    assert [ln for ln in lines if ln.startswith("  /t/")] == [
        f"  /t/f{i}.jsonl: a/s{i}{j}: refused" for i in range(4) for j in range(3)
    ][:10]
    assert lines[-1] == "  … and 2 more (`scribed run-once --json` lists every one)"


# --- 3. every config problem, one line each ---------------------------------------------------
def test_every_config_problem_is_listed_one_line_each(tmp_path: Path) -> None:
    (tmp_path / ".squad").mkdir()
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        '[session]\nquiet_secs = 5\n[compress]\nratio = 0\n[[sources]]\nkind = "claude"\npath = "x"\nagent = "Picard!"\n'
        '[[sources]]\nkind = "claude"\npath = "y"\n[[sources]]\nkind = "codex"\npth = "z"\n'
    )
    for args in (["check-config"], ["run-once"], ["context", "picard"], ["status"]):
        p = run_cli("--config", str(cfg), *args, cwd=tmp_path)
        assert p.returncode == 2, (args, p.stderr.decode())
        assert sorted(p.stderr.decode().splitlines()) == sorted(
            f"scribed: error: {cfg}: {line}"
            for line in (
                "unknown key 'session.quiet_secs' (did you mean 'session.quiet_seconds'?)",
                "unknown key 'pth' in [[sources]] #3 (did you mean 'path'?)",
                "bad value for 'compress.ratio': Input should be greater than 0 (got 0)",
                "bad value for 'agent' in [[sources]] #1: 'Picard!' is not a valid agent name "
                "(lowercase letters, digits, '-' and '_')",
            )
        ), args


def test_an_empty_config_does_not_claim_a_root_line(tmp_path: Path) -> None:
    cfg = tmp_path / "emptycfg.toml"
    cfg.write_text("")
    p = run_cli("--config", str(cfg), "run-once", cwd=tmp_path)
    err = p.stderr.decode()
    assert p.returncode == 2 and "`root =` in" not in err, err
    assert f"the folder of {cfg}, which sets no `root =`" in err, err


# --- 4. doctor warns about a missing source; a reader gone early; short prefixes; setup agrees ----
def test_doctor_warns_about_a_missing_source_and_notes_a_watched_one(tmp_path: Path) -> None:
    (tmp_path / ".squad").mkdir()
    (tmp_path / "home/.claude/projects").mkdir(parents=True)
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        '[[sources]]\nkind = "codex"\npath = "gone/codex"\n'
        '[[sources]]\nkind = "claude"\npath = "home/.claude/projects/-repo"\n'
    )
    p = run_cli("--config", str(cfg), "doctor", cwd=tmp_path)
    out = p.stdout.decode().splitlines()
    assert p.returncode == 0, p.stderr.decode()
    assert (
        f"  warning: {cfg}: [[sources]] #1 (codex): path does not exist: {tmp_path / 'gone/codex'}; "
        in "\n".join(out)
    ), out
    assert any(
        ln.startswith(f"  note: {cfg}: [[sources]] #2 (claude): ") and "watched for" in ln for ln in out
    )
    assert out[-1] == "1 warning, each listed above with what to do", out
    p = run_cli("--config", str(cfg), "check-config", "--strict", cwd=tmp_path)
    assert p.returncode == 1 and "1 warning(s)" in p.stdout.decode()


@pytest.mark.parametrize("made", ["claude-projects", "agent-homes-only"])
def test_setup_config_passes_check_config_strict(tmp_path: Path, made: str) -> None:
    """Claude Code installed with no session in the repository yet, or the agents' homes made and
    none of their transcript folders (a re-check found ``~/.claude`` without ``projects/`` and
    ``~/.copilot`` without ``session-state/`` failing --strict): setup says watched for, and so
    does check-config."""
    home, repo = tmp_path / "home", tmp_path / "repo"
    if made == "claude-projects":
        (home / ".claude/projects").mkdir(parents=True)
        env = {"CODEX_HOME": "/nonexistent", "COPILOT_HOME": "/nonexistent"}
    else:
        for d in (".claude", ".copilot", ".codex"):
            (home / d).mkdir(parents=True)
        env = {"CODEX_HOME": str(home / ".codex"), "COPILOT_HOME": str(home / ".copilot")}
    repo.mkdir()
    p = run_cli("setup", "--root", str(repo), "--home", str(home), "--no-mcp", cwd=repo, env=env)
    assert p.returncode == 0 and "watched for" in p.stdout.decode(), p.stdout.decode()
    p = run_cli("--config", str(repo / "scribed.toml"), "check-config", "--strict", cwd=repo)
    assert p.returncode == 0, (p.stdout.decode(), p.stderr.decode())
    assert "watched for" in p.stderr.decode() and "warning" not in p.stderr.decode()


@pytest.mark.parametrize(
    "args", [["status"], ["doctor"], ["report"], ["search", "test"], ["context", "riker"]]
)
def test_a_reader_gone_early_is_no_error(tmp_path: Path, args: list[str]) -> None:
    import os
    import subprocess
    import sys

    from scribed.cli import demo

    demo.build(tmp_path)
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first write: every write is EPIPE
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    try:
        p = subprocess.run(
            [sys.executable, "-m", "scribed", "--config", str(tmp_path / "scribed.toml"), *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=env,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    err = p.stderr.decode()
    assert p.returncode == 0 and "error" not in err and "Traceback" not in err, (args, p.returncode, err)


def test_show_with_a_short_prefix_says_it_needs_six_characters(tmp_path: Path) -> None:
    from scribed.cli import demo

    demo.build(tmp_path)
    p = run_cli("--config", str(tmp_path / "scribed.toml"), "show", "37f")
    assert p.returncode == 2
    assert "a session id prefix needs at least 6 characters" in p.stderr.decode(), p.stderr.decode()


# --- 5. setup from a sub-folder sets up the repository; 6. the compose line's uid ---------------
@pytest.mark.parametrize("marker", [".git", ".squad"])
def test_setup_from_a_sub_folder_sets_up_the_repository(tmp_path: Path, marker: str) -> None:
    repo = tmp_path / "repo"
    (repo / "src/api").mkdir(parents=True)
    (repo / marker).mkdir()
    env = {"CODEX_HOME": "/nonexistent", "COPILOT_HOME": "/nonexistent"}
    p = run_cli("setup", "--home", str(tmp_path / "home"), "--no-mcp", cwd=repo / "src/api", env=env)
    out = p.stdout.decode()
    assert p.returncode == 0, p.stderr.decode()
    why = "the git top level" if marker == ".git" else "the nearest folder holding .squad/"
    assert (
        out.splitlines()[0]
        == f"scribed setup for {repo} ({why}, chosen as the root; --root DIR picks another)"
    )
    assert (repo / "scribed.toml").is_file() and (repo / ".squad").is_dir()
    assert not (repo / "src/api/.squad").exists() and not (repo / "src/api/scribed.toml").exists()


def test_docker_line_and_compose_use_a_uid_variable_bash_can_set(tmp_path: Path) -> None:
    import subprocess

    repo = tmp_path / "repo"
    repo.mkdir()
    p = run_cli("setup", "--root", str(repo), "--home", str(tmp_path / "h"), "--dry-run", "--docker")
    [line] = [ln for ln in p.stdout.decode().splitlines() if ln.startswith("docker")]
    assert " SCRIBED_UID=$(id -u) docker compose " in line and " UID=" not in line, line
    compose = (Path(__file__).parent.parent / "deploy/compose.yaml").read_text()
    assert 'UID: "${SCRIBED_UID:-10001}"' in compose and "UID=$(id -u) docker" not in compose.replace(
        "SCRIBED_UID=$(id -u) docker", ""
    )
    # the variable as the line sets it reaches docker's environment (UID=… does not: readonly in bash)
    name = line.split("=$(id -u)")[0].split()[-1]
    run = subprocess.run(["bash", "-c", f"{name}=777 env"], capture_output=True, check=True)
    assert f"{name}=777" in run.stdout.decode().splitlines(), name


# --- run from a subfolder: the repository's root is found, as git finds .git ----------------------
def test_a_command_run_from_a_subfolder_works_on_the_repositorys_root(tmp_path: Path) -> None:
    """`scribed context`, `status` and `run-once` from repo/src/api mean repo (its .squad/ and its
    scribed.toml), as `setup` and `mcp` already did: not "no .squad/ folder here, pass --init"."""
    if Path("/etc/scribed/config.toml").exists():
        pytest.skip("a system-wide config is found first")
    repo = _repo(tmp_path)
    (repo / ".git").mkdir()
    sub = repo / "src" / "api"
    sub.mkdir(parents=True)
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    p = run_cli("run-once", "--force", "--json", cwd=sub, env=env)
    assert p.returncode == 0, p.stderr.decode()
    assert json.loads(p.stdout)["compacted"] >= 1
    assert list((repo / ".squad/memory/cold").glob("*.md")), "the repository's memory was written"
    assert not (sub / ".squad").exists()
    p = run_cli("status", "--json", cwd=sub, env=env)
    assert p.returncode == 0 and json.loads(p.stdout)["root"] == str(repo), p.stdout.decode()
    agent = next((repo / ".squad/memory/cold").glob("*.md")).stem
    p = run_cli("context", agent, "--include-cold", cwd=sub, env=env)
    assert p.returncode == 0 and b"provenance" in p.stdout, p.stderr.decode()


def test_the_search_up_stops_at_the_repository_top_and_at_a_config_here(tmp_path: Path) -> None:
    """Another repository's memory is not this one's; a scribed.toml in the current folder is the
    config, whatever folder above holds .squad/."""
    if Path("/etc/scribed/config.toml").exists():
        pytest.skip("a system-wide config is found first")
    outer = _repo(tmp_path)
    inner = outer / "vendor" / "lib"
    (inner / ".git").mkdir(parents=True)
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    p = run_cli("context", "kim", cwd=inner, env=env)
    assert p.returncode == 2 and b"no .squad/ folder here" in p.stderr, p.stderr.decode()
    (outer / "docs").mkdir()
    (outer / "docs" / "scribed.toml").write_text('root = "elsewhere"\n')
    p = run_cli("context", "kim", cwd=outer / "docs", env=env)
    assert p.returncode == 2 and b"docs/elsewhere does not exist" in p.stderr, p.stderr.decode()


def test_init_in_a_subfolder_and_a_folder_outside_git_are_not_sent_up(tmp_path: Path) -> None:
    """`--init` makes the current folder a root, whatever holds .squad/ above; outside a git
    repository nothing is looked for above (a ~/.squad is no project's root)."""
    if Path("/etc/scribed/config.toml").exists():
        pytest.skip("a system-wide config is found first")
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    repo = _repo(tmp_path)
    (repo / ".git").mkdir()
    sub = repo / "pkg" / "foo"
    sub.mkdir(parents=True)
    p = run_cli("--init", "context", "kim", cwd=sub, env=env)
    assert p.returncode == 0 and (sub / ".squad").is_dir(), p.stderr.decode()
    home = tmp_path / "home"
    (home / ".squad").mkdir(parents=True)
    (home / "notes").mkdir()
    p = run_cli("context", "kim", cwd=home / "notes", env=env)
    assert p.returncode == 2 and b"no .squad/ folder here" in p.stderr, p.stderr.decode()

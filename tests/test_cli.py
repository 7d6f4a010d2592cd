"""The rough edges a new user hits (issue 17, item 4), each through the real command line."""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import run_cli

from scribed.cli import demo

PKG = Path(__file__).parent.parent / "scribed"


def _err_lines(p: subprocess.CompletedProcess[bytes]) -> list[str]:
    return [ln for ln in p.stderr.decode().splitlines() if ln.strip()]


@pytest.fixture(scope="module")
def compacted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo squad root after one run-once (read-only for the tests that share it)."""
    root = tmp_path_factory.mktemp("demo") / "squad"
    root.mkdir()
    demo.build(root)
    p = run_cli("--config", str(root / "scribed.toml"), "run-once", "--json")
    assert p.returncode == 0, p.stderr.decode()
    return root


# --- 1. a root without .squad/ ------------------------------------------------------------------
@pytest.mark.parametrize("cmd", [["run-once"], ["context", "picard"], ["report"], ["promote"]])
def test_root_without_squad_is_refused(tmp_path: Path, cmd: list[str]) -> None:
    root = tmp_path / "typo"
    root.mkdir()
    p = run_cli(*cmd, "--root", str(root), cwd=tmp_path)
    assert p.returncode == 2, p.stderr.decode()
    lines = _err_lines(p)
    assert len(lines) == 1 and str(root) in lines[0] and ".squad/" in lines[0] and "--init" in lines[0], lines
    assert p.stdout == b""
    assert not (root / ".squad").exists(), "nothing is created on a refused root"


@pytest.mark.parametrize(
    "cmd", [["run-once"], ["context", "picard"], ["import", "--all"], ["search", "x"], ["doctor"]]
)
def test_missing_root_names_it_and_where_it_was_set(tmp_path: Path, cmd: list[str]) -> None:
    """A root folder that does not exist: one line naming it, saying so, where it was set (the
    config's `root =` or --root) and what to do; exit 2, nothing created."""
    gone = tmp_path / "gone"
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'root = "{gone}"\n')
    for args, origin in (
        (["--config", str(cfg), *cmd], f"set by `root =` in {cfg}"),
        ([*cmd, "--root", str(gone)], "given with --root"),
    ):
        p = run_cli(*args, cwd=tmp_path)
        lines = _err_lines(p)
        assert p.returncode == 2 and p.stdout == b"", p.stderr.decode()
        assert lines == [
            f"scribed: error: root folder {gone} does not exist ({origin}); "
            + ("fix `root =` there" if "--config" in args else "check the path")
            + ", or pass --init to create it with .squad/"
        ], lines
        assert not gone.exists()


def test_root_that_is_a_file_is_refused_even_with_init(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'root = "{afile}"\n')
    for extra in ([], ["--init"]):
        p = run_cli("--config", str(cfg), *extra, "run-once", cwd=tmp_path)
        assert p.returncode == 2 and _err_lines(p) == [
            f"scribed: error: root {afile} is not a folder (set by `root =` in {cfg}); fix `root =` there"
        ], p.stderr.decode()


def test_missing_root_in_check_config_and_status(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'root = "{gone}"\n')
    for strict in ([], ["--strict"]):  # `scribed run` refuses it, so check-config does (issue 33)
        p = run_cli("--config", str(cfg), "check-config", *strict)
        assert p.returncode == 2
        assert _err_lines(p) == [
            f"scribed: error: root folder {gone} does not exist (set by `root =` in {cfg}); fix `root =` "
            f"there, or `scribed --config {cfg} --init run-once` to create it with .squad/"  # its config kept
        ]
    p = run_cli("--config", str(cfg), "status")  # status still reports, exit 0, and says why it is empty
    assert p.returncode == 0 and p.stdout.startswith(b"root:")
    assert f"root folder {gone} does not exist (set by `root =` in {cfg})" in p.stderr.decode()
    assert not gone.exists()
    # status takes no --init: the hint names the command that does
    p = run_cli("--config", str(cfg), "--init", "status")
    assert (
        f"or `scribed --config {cfg} --init run-once` to create it" in p.stderr.decode() and not gone.exists()
    )
    p = run_cli("--config", str(cfg), "--init", "check-config")  # as `run --init`: created, not refused
    assert p.returncode == 0
    assert f"{gone / '.squad'} does not exist yet: --init creates it" in p.stderr.decode()
    assert not gone.exists()


def test_a_root_that_is_a_dangling_symlink_says_so(tmp_path: Path) -> None:
    """Review: it was reported as missing with a hint to --init, which then failed with exit 1."""
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "nowhere")
    for args in (["run-once", "--root", str(link)], ["--init", "run-once", "--root", str(link)]):
        p = run_cli(*args, cwd=tmp_path)
        assert p.returncode == 2, p.stderr.decode()
        assert _err_lines(p) == [
            f"scribed: error: root {link} is a symlink to {tmp_path / 'nowhere'}, which does not exist "
            "(given with --root); check the path"
        ]


@pytest.mark.parametrize("where", ["before", "after"])
def test_init_creates_squad(tmp_path: Path, where: str) -> None:
    root = tmp_path / "new"
    args = (
        ["--init", "run-once", "--root", str(root)]
        if where == "before"
        else ["run-once", "--root", str(root), "--init"]
    )
    p = run_cli(*args, cwd=tmp_path)
    assert p.returncode == 0, p.stderr.decode()
    assert (root / ".squad").is_dir() and f"created {root / '.squad'}" in p.stderr.decode()


# --- 2. empty outputs say so on stderr ----------------------------------------------------------
def test_empty_outputs_say_so(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    (root / ".squad").mkdir(parents=True)
    r = ("--root", str(root))
    p = run_cli("context", "picard", *r, cwd=tmp_path)
    assert p.returncode == 0 and b"## Memory Context" in p.stdout
    assert "no memory for picard" in p.stderr.decode() and "empty" in p.stderr.decode()
    p = run_cli("report", *r, cwd=tmp_path)
    assert p.returncode == 0 and b"no agents found" in p.stdout
    assert "no agents found under" in p.stderr.decode()
    p = run_cli("status", *r, cwd=tmp_path)
    assert p.returncode == 0 and b"root:" in p.stdout
    assert "nothing here yet" in p.stderr.decode()
    p = run_cli("status", "--json", "--root", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert p.returncode == 0 and json.loads(p.stdout)["daemon"]["alive"] is False
    assert f"root folder {tmp_path / 'nowhere'} does not exist (given with --root)" in p.stderr.decode()
    assert not (tmp_path / "nowhere").exists(), "status writes nothing"


def test_outputs_with_memory_are_quiet(compacted: Path) -> None:
    cfg = str(compacted / "scribed.toml")
    for args in (["context", "picard"], ["report"], ["status"]):
        p = run_cli("--config", cfg, *args)
        assert p.returncode == 0 and p.stdout, p.stderr.decode()
        assert not [ln for ln in _err_lines(p) if ln.startswith("scribed:")], (args, p.stderr.decode())


# --- 3. check-config verifies the source paths --------------------------------------------------
def test_check_config_warns_about_missing_paths(tmp_path: Path) -> None:
    (tmp_path / ".squad").mkdir()
    (tmp_path / "codex").mkdir()
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        'root = "."\n'
        '[[sources]]\nkind = "codex"\npath = "codex"\n'
        '[[sources]]\nkind = "claude"\npath = "gone/claude"\n'
        '[[sources]]\nkind = "copilot"\npath = "/nonexistent/copilot"\n'
    )
    p = run_cli("--config", str(cfg), "check-config")
    assert p.returncode == 0, p.stderr.decode()
    warnings = [ln for ln in _err_lines(p) if ln.startswith("scribed: warning:")]
    assert len(warnings) == 2, warnings
    assert "[[sources]] #2 (claude)" in warnings[0] and str(tmp_path / "gone/claude") in warnings[0]
    assert "[[sources]] #3 (copilot)" in warnings[1] and "/nonexistent/copilot" in warnings[1]
    assert not p.stdout.decode().startswith("config ok"), "not 'ok' with missing paths"
    assert run_cli("--config", str(cfg), "check-config", "--strict").returncode == 1
    cfg.write_text('root = "."\n[[sources]]\nkind = "codex"\npath = "codex"\n')
    p = run_cli("--config", str(cfg), "check-config", "--strict")
    assert p.returncode == 0 and p.stdout.decode().startswith("config ok") and not _err_lines(p)


def test_check_config_refuses_a_root_without_squad(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('root = "."\n')
    p = run_cli("--config", str(cfg), "check-config")  # `scribed run` refuses it: an error (issue 33)
    assert p.returncode == 2 and "no .squad/ folder" in p.stderr.decode()


# --- 4. --config before or after the subcommand -------------------------------------------------
def test_config_before_or_after_subcommand(compacted: Path) -> None:
    cfg = str(compacted / "scribed.toml")
    outs = []
    for args in (
        ["--config", cfg, "run-once", "--json"],
        ["run-once", "--config", cfg, "--json"],
        ["run-once", "--json", f"--config={cfg}"],
    ):
        p = run_cli(*args)
        assert p.returncode == 0, (args, p.stderr.decode())
        outs.append({k: v for k, v in json.loads(p.stdout).items() if k != "ms"})
    assert outs[0] == outs[1] == outs[2] and outs[0]["files"] > 0
    p = run_cli("context", "picard", "--config", cfg)
    assert p.returncode == 0 and b"## Memory Context" in p.stdout


def test_hoist_group_options() -> None:
    from scribed.cli.main import hoist_group_options

    assert hoist_group_options(["run-once", "--config", "x", "--json"]) == [
        "--config",
        "x",
        "run-once",
        "--json",
    ]
    assert hoist_group_options(["--config", "x", "run-once"]) == ["--config", "x", "run-once"]
    assert hoist_group_options(["context", "a", "--init"]) == ["--init", "context", "a"]
    assert hoist_group_options(["redact", "--", "--config"]) == ["redact", "--", "--config"]
    assert hoist_group_options(["--version"]) == ["--version"]


# --- 5. healthcheck reads the daemon's heartbeat, not the config --------------------------------
def _fresh_heartbeat(root: Path) -> None:
    state = root / ".squad/memory/.scribed"
    state.mkdir(parents=True, exist_ok=True)
    beat = {"pid": os.getpid(), "unix": time.time(), "interval": 10.0, "stopped": False, "queue": 0}
    (state / "heartbeat").write_text(json.dumps(beat))


@pytest.mark.parametrize(
    "broken",
    ['root = "{root}"\n[session]\nquiet = 3\n', 'root = "{root}"\n[compress\nratio = ]]\n'],
    ids=["unknown-key", "not-toml"],
)
def test_healthcheck_with_a_broken_config_and_a_healthy_daemon(tmp_path: Path, broken: str) -> None:
    root = tmp_path / "squad"
    _fresh_heartbeat(root)
    cfg = tmp_path / "c.toml"
    cfg.write_text(broken.format(root=root))
    p = run_cli("--config", str(cfg), "healthcheck")
    assert p.returncode == 0, p.stderr.decode()
    assert (
        p.stdout.startswith(b"ok: pid") and "warning" in p.stderr.decode() and str(cfg) in p.stderr.decode()
    )
    # the same with the config named by the environment, and a relative root
    cfg.write_text(broken.format(root="squad"))
    p = run_cli("healthcheck", env={"SCRIBED_CONFIG": str(cfg)}, cwd=Path("/"))
    assert p.returncode == 0, p.stderr.decode()
    assert run_cli("--config", str(cfg), "healthcheck", "--root", str(root)).returncode == 0


def test_healthcheck_unhealthy_is_exit_1_even_with_a_broken_config(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'root = "{tmp_path}"\n[nope]\n')
    p = run_cli("--config", str(cfg), "healthcheck")
    assert p.returncode == 1 and b"no heartbeat" in p.stderr
    assert run_cli("--config", str(tmp_path / "missing.toml"), "healthcheck").returncode == 2


# --- 6. a closed pipe -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "cmd", [["status"], ["context", "picard", "--situation", "post-incident"], ["report"]]
)
def test_closed_pipe_is_quiet(compacted: Path, cmd: list[str]) -> None:
    r, w = os.pipe()
    os.close(r)  # the reader is gone before scribed writes, like `| head -1` after its first line
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    try:
        p = subprocess.run(
            [sys.executable, "-m", "scribed", "--config", str(compacted / "scribed.toml"), *cmd],
            stdout=w,
            stderr=subprocess.PIPE,
            env=env,
            timeout=60,
        )
    finally:
        os.close(w)
    err = p.stderr.decode()
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err, err
    assert "error" not in err, err


def test_shell_pipelines_into_head(compacted: Path) -> None:
    """`| head` as a user types it; 400 KB through `redact` outlasts the pipe's buffer, so the
    write after head has gone is certain to fail."""
    cfg = compacted / "scribed.toml"
    me = f"{sys.executable} -m scribed"
    for script, out in (
        (f"{me} --config {cfg} status | head -1", f"root:             {compacted}\n".encode()),
        (f"seq 1 60000 | sed 's/$/ abcdef/' | {me} redact | head -c 10", b"1 abcdef\n2"),
    ):
        p = subprocess.run(["bash", "-c", script], capture_output=True, timeout=120)
        assert p.stdout == out and p.stderr == b"", (script, p.stderr)


# --- 7. one daemon per root -----------------------------------------------------------------------
def _daemon(cfg: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCRIBED_", "NOTIFY_", "WATCHDOG_"))}
    return subprocess.Popen(
        [sys.executable, "-m", "scribed", "--config", str(cfg), "run"],
        stdout=subprocess.DEVNULL,
        stderr=log.open("ab"),
        env=env,
    )


def _wait(pred: Any, what: str, timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_second_daemon_on_the_same_root_exits(tmp_path: Path) -> None:
    root = tmp_path / "squad"
    (root / ".squad").mkdir(parents=True)
    (tmp_path / "codex").mkdir()
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'root = "{root}"\n[session]\nquiet_seconds = 600\n[compress]\nbackend = "extractive"\n'
        f'[log]\nformat = "json"\n[[sources]]\nkind = "codex"\npath = "{tmp_path / "codex"}"\n'
    )
    hb = root / ".squad/memory/.scribed/heartbeat"
    first = _daemon(cfg, tmp_path / "first.log")
    try:
        _wait(lambda: hb.exists() or first.poll() is not None, "the first daemon's heartbeat")
        assert first.poll() is None, (tmp_path / "first.log").read_text()
        beat = json.loads(hb.read_text())
        second = subprocess.run(
            [sys.executable, "-m", "scribed", "--config", str(cfg), "run"], capture_output=True, timeout=60
        )
        assert second.returncode == 2, second.stderr.decode()
        lines = [ln for ln in _err_lines(second) if ln.startswith("scribed: error:")]
        assert len(lines) == 1 and f"pid {first.pid}" in lines[0] and "already serves" in lines[0], (
            second.stderr
        )
        assert "Traceback" not in second.stderr.decode()
        assert first.poll() is None, "the first daemon keeps running"
        assert json.loads(hb.read_text())["pid"] == beat["pid"] == first.pid
        assert not json.loads(hb.read_text())["stopped"], "the second daemon did not touch the heartbeat"
        assert run_cli("--config", str(cfg), "healthcheck").returncode == 0
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=60) == 0
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    # the lock goes with the process: a new daemon starts
    again = _daemon(cfg, tmp_path / "again.log")
    try:
        _wait(lambda: not json.loads(hb.read_text())["stopped"] or again.poll() is not None, "restart")
        assert again.poll() is None, (tmp_path / "again.log").read_text()
    finally:
        again.send_signal(signal.SIGTERM)
        again.wait(timeout=60)


# --- 8. status: transcript files apart from hot files, labels that say what they count -------------
def test_status_text_separates_sources_and_hot_files(compacted: Path) -> None:
    p = run_cli("--config", str(compacted / "scribed.toml"), "status")
    data = json.loads(run_cli("--config", str(compacted / "scribed.toml"), "status", "--json").stdout)
    text = p.stdout.decode()
    lines = {ln.split(":", 1)[0]: ln.split(":", 1)[1].strip() for ln in text.splitlines() if ":" in ln}
    src, hot = data["sources"], data["hot_files"]
    # the demo's 3 transcript files hold 4 sessions: the line counts files, and says so
    assert src["done"] == 3 and hot["done"] >= 1, data
    assert lines["transcript files"] == (
        f"{src['done']} done, {src['pending']} pending, {src['failed']} failed, {src['quarantined']} quarantined"
    )
    assert lines["hot files"].startswith(f"{hot['done']} done, {hot['pending']} pending")
    assert "sources" not in lines and "(transcripts)" not in text
    # the per-agent table's numbers are bytes against a budget: the header says so
    header = next(ln for ln in text.splitlines() if ln.startswith("agent "))
    assert header.split() == ["agent", "hot", "bytes/budget", "cold", "bytes/budget"], header
    labelled = [ln for ln in text.splitlines() if re.match(r"[a-z ]+: ", ln)]
    assert len({len(ln) - len(ln.split(":", 1)[1].lstrip()) for ln in labelled}) == 1, "values line up"


# --- 9. an unsupported Python -----------------------------------------------------------------------
def test_python_check_message() -> None:
    from scribed.__main__ import python_problem

    assert python_problem((3, 11, 0)) is None and python_problem((3, 13, 1)) is None
    assert python_problem() is None
    msg = python_problem((3, 10, 12))
    assert msg is not None and "needs Python 3.11 or newer" in msg and "3.10.12" in msg
    assert "\n" not in msg and "scribed-memory" in msg


def test_old_python_gets_one_line_before_any_311_import() -> None:
    code = (
        "import sys; sys.version_info = (3, 10, 4, 'final', 0)\n"
        "from scribed.__main__ import main\n"
        "try:\n    main()\nfinally:\n    print('cli' if 'scribed.cli.main' in sys.modules else 'no-cli')\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert p.returncode == 2 and p.stdout.strip() == b"no-cli", p.stderr
    assert p.stderr.decode().count("\n") == 1 and "Python 3.10.4" in p.stderr.decode()
    # the entry modules parse on old Pythons (nothing there needs 3.11 syntax)
    for name in ("__init__.py", "__main__.py"):
        ast.parse((PKG / name).read_text(), feature_version=(3, 7))


def test_lazy_command_table_matches_what_modules_register() -> None:
    """Every command a subcommand module registers is in the lazy table, under that module."""
    import importlib

    import click

    from scribed.cli.main import LAZY

    found: dict[str, str] = {}
    for module in sorted(set(LAZY.values())):
        group = click.Group()
        importlib.import_module(f"scribed.cli.{module}").register(group)
        found.update(dict.fromkeys(group.commands, module))
    assert found == LAZY


# --- 10. the Commands table (docs/commands.md) ---------------------------------------------------------
def _command_table() -> list[str]:
    """The `scribed …` spellings in the first column of docs/commands.md's table."""
    table = (PKG.parent / "docs" / "commands.md").read_text("utf-8")
    rows = [ln for ln in table.splitlines() if ln.startswith("| `scribed")]
    return [spec for row in rows for spec in re.findall(r"`(scribed [^`]+)`", row.split(" | ")[0])]


def test_the_command_table_lists_every_command_and_only_real_flags() -> None:
    import click

    from scribed.cli.main import main

    ctx = click.Context(main)
    documented: set[str] = set()
    for spec in _command_table():
        words = spec.split()[1:]
        cmd: click.Command = main
        path: list[str] = []
        while isinstance(cmd, click.Group) and words and (sub := cmd.get_command(ctx, words[0])):
            cmd, path = sub, [*path, words.pop(0)]
        documented.add(" ".join(path[:1]))
        flags = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
        flags |= {"--config", "--init", "--version"}  # the group's own, accepted after the subcommand
        for flag in re.findall(r"--[a-z][a-z-]*", spec):
            assert flag in flags, f"docs/commands.md documents {flag} for `{spec}`, which has no such option"
    assert set(main.list_commands(ctx)) <= documented, set(main.list_commands(ctx)) - documented

"""A root scribed's user cannot write (stop 48, s04): a systemd ``User=`` or a container uid that
is not the owner of ``.squad/``. ``check-config --strict`` said "config ok" and ``doctor`` "no
warnings", then ``scribed run`` exited 1 (the restart-me code: a unit restart-loops) with a bare
``PermissionError``. Now every command names the folder (or file), the user and the access it
lacks; ``run`` exits 78 (EX_CONFIG), ``run-once`` 2, each with that one line.

The real CLI runs as a user that lacks the access: as root, ``setpriv`` to nobody with the root's
folders owned by root; as anyone else, the folder's own write bit taken away."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

EX_CONFIG = 78
NOBODY = 65534
AS_ROOT = os.geteuid() == 0


class Runner:
    """Runs ``scribed`` in ``base`` as a user without write access to what :meth:`deny` names."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.prefix = (
            ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"] if AS_ROOT else []
        )

    def give(self, path: Path) -> None:
        """``path`` and what is below it: the runner's own (as root: chowned to nobody)."""
        if AS_ROOT:
            for p in [path, *path.rglob("*")]:
                os.chown(p, NOBODY, NOBODY)

    def deny(self, path: Path) -> None:
        """``path``: readable by the runner, not writable (as root: root's; else mode without w)."""
        if AS_ROOT:
            os.chown(path, 0, 0)
            path.chmod(0o755 if path.is_dir() else 0o644)
        else:
            path.chmod(0o555 if path.is_dir() else 0o444)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SCRIBED_", "NOTIFY_SOCKET"))}
        return env | {"HOME": str(self.base), "PYTHONDONTWRITEBYTECODE": "1"}

    def run(self, *args: str, timeout: float = 60, input: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.prefix, sys.executable, "-m", "scribed", *args],
            cwd=self.base,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            input=input,
        )


@pytest.fixture
def runner() -> Iterator[Runner]:
    if AS_ROOT and shutil.which("setpriv") is None:
        pytest.skip("as root, running as another user needs setpriv")
    base = Path(tempfile.mkdtemp(prefix="scribed-access-", dir="/tmp"))  # nobody must reach it
    base.chmod(0o755)
    r = Runner(base)
    if AS_ROOT and r.run("--version").returncode != 0:
        shutil.rmtree(base)
        pytest.skip("nobody cannot run this interpreter or import this tree")
    yield r
    for p in [base, *base.rglob("*")]:  # give write back, so the tree can go
        if p.is_dir() and not p.is_symlink():
            p.chmod(0o755)
    shutil.rmtree(base)


def _root(r: Runner) -> tuple[Path, Path]:
    """A root with one Claude source; everything the runner's, and the config path."""
    root, src = r.base / "repo", r.base / "src/cl"
    (root / ".squad").mkdir(parents=True)
    src.mkdir(parents=True)
    cfg = root / "scribed.toml"
    cfg.write_text(f'root = "."\n[[sources]]\nkind = "claude"\npath = "{src}"\nagent = "riker"\n')
    r.give(r.base / "src")
    r.give(root)
    return root, cfg


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err and "PermissionError" not in err, err
    return lines[0]


def _check_all(r: Runner, cfg: Path, named: Path, lacks: str) -> None:
    """check-config, doctor, run-once and run all name ``named`` and what its user lacks."""
    who = "nobody (uid 65534)" if AS_ROOT else f"(uid {os.geteuid()})"
    p = r.run("--config", str(cfg), "check-config", "--strict")
    assert p.returncode == 2 and "config ok" not in p.stdout, (p.stdout, p.stderr)
    line = _one_line(p.stderr)
    assert line.startswith(f"scribed: error: {named}") and lacks in line and who in line, line
    p = r.run("--config", str(cfg), "doctor")
    assert str(named) in p.stdout and lacks in p.stdout and "no warnings" not in p.stdout, p.stdout
    assert p.stdout.strip().endswith("1 warning, each listed above with what to do"), p.stdout
    p = r.run("--config", str(cfg), "run-once")
    assert p.returncode == 2 and _one_line(p.stderr) == line, p.stderr
    p = r.run("--config", str(cfg), "run", timeout=20)  # refused at once: no timeout, no restart code
    assert p.returncode == EX_CONFIG and _one_line(p.stderr) == line, (p.returncode, p.stderr)


def test_a_squad_folder_its_user_cannot_write_in(runner: Runner) -> None:
    """The finding: ``.squad/`` another user's, ``memory/`` not made yet."""
    root, cfg = _root(runner)
    runner.deny(root / ".squad")
    _check_all(runner, cfg, root / ".squad/memory", f"cannot write in {root / '.squad'} to create it")
    assert not (root / ".squad/memory").exists()


def test_a_state_folder_its_user_cannot_write_in(runner: Runner) -> None:
    """The memory is the user's, scribed's state folder in it another's (a run as root once)."""
    root, cfg = _root(runner)
    state = root / ".squad/memory/.scribed"
    state.mkdir(parents=True)
    runner.give(root / ".squad")
    runner.deny(state)
    _check_all(runner, cfg, state, "cannot write in it")


def test_a_ledger_its_user_cannot_write(runner: Runner) -> None:
    """Every folder the user's, the ledger (opened in place, not replaced) another's."""
    root, cfg = _root(runner)
    ledger = root / ".squad/memory/.scribed/ledger.sqlite"
    ledger.parent.mkdir(parents=True)
    ledger.write_bytes(b"")
    runner.give(root / ".squad")
    runner.deny(ledger)
    _check_all(runner, cfg, ledger, "cannot write it")


def test_a_root_its_user_owns_passes_and_runs(runner: Runner) -> None:
    """No false alarm: the same root, the user's own, passes --strict and starts."""
    root, cfg = _root(runner)
    p = runner.run("--config", str(cfg), "check-config", "--strict")
    assert p.returncode == 0 and "config ok" in p.stdout, (p.stdout, p.stderr)
    p = runner.run("--config", str(cfg), "doctor")
    assert p.stdout.strip().endswith("no warnings"), p.stdout
    proc = subprocess.Popen(
        [*runner.prefix, sys.executable, "-m", "scribed", "--config", str(cfg), "run"],
        cwd=runner.base,
        env=runner.env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        beat = root / ".squad/memory/.scribed/heartbeat"
        end = time.monotonic() + 30
        while not beat.exists() and proc.poll() is None and time.monotonic() < end:
            time.sleep(0.1)
        assert proc.poll() is None and beat.exists(), proc.stderr.read() if proc.stderr else ""
        assert stat.S_IMODE(beat.stat().st_mode) == 0o600
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0


INITIALIZE = (
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    '"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
)


def test_mcp_still_serves_a_memory_its_user_cannot_write(runner: Runner) -> None:
    """``scribed mcp`` reads for the agent; a memory it may not write is no reason to refuse it
    (its wiki_write answers for itself). ``check-config`` still says what ``run`` would refuse."""
    pytest.importorskip("mcp")
    root, cfg = _root(runner)
    hot = root / ".squad/memory/hot"
    hot.mkdir(parents=True)
    (hot / "riker.md").write_text("# riker\nWorking on src/engine.py.\n")
    runner.give(root / ".squad")
    runner.deny(root / ".squad/memory")
    p = runner.run("--config", str(cfg), "check-config")
    assert p.returncode == 2 and str(root / ".squad/memory") in p.stderr, p.stderr
    p = runner.run("--config", str(cfg), "mcp", input=INITIALIZE)
    assert p.returncode == 0 and '"id":1,"result"' in p.stdout, (p.stdout, p.stderr)


@pytest.mark.parametrize(
    ("where", "err", "code"),
    [
        ("claim_instance", errno.EACCES, EX_CONFIG),
        ("start", errno.EROFS, EX_CONFIG),
        ("start", errno.ENOSPC, 1),  # a full disk: a restart may find room
    ],
)
def test_a_write_refused_as_the_daemon_starts_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, err: int, code: int
) -> None:
    """What the checks could not foresee (a file of the root another user made since): the daemon
    refuses to start with exit 78 and one line naming the file and the user, not exit 1 (which the
    units restart in a loop) with a bare PermissionError. Any other error keeps exit 1."""
    from click.testing import CliRunner

    from scribed.cli.main import main
    from scribed.daemon import service

    root = tmp_path / "repo"
    (root / ".squad").mkdir(parents=True)
    cfg = tmp_path / "scribed.toml"
    cfg.write_text(f'root = "{root}"\n[promote]\nschedule = "off"\n')
    pid = root / ".squad/memory/.scribed/daemon.pid"

    def refuse(*_: object) -> None:
        raise OSError(err, os.strerror(err), str(pid))

    if where == "start":
        monkeypatch.setattr(service.Daemon, "start", refuse)
    else:
        monkeypatch.setattr(service, "claim_instance", refuse)
    r = CliRunner().invoke(main, ["--config", str(cfg), "run"])
    assert r.exit_code == code, r.output
    if code == EX_CONFIG:  # the log's lines (JSON) aside, one line
        line = _one_line("\n".join(x for x in r.output.splitlines() if not x.startswith("{")))
        assert line.startswith(f"scribed: error: {pid}: {os.strerror(err)} (scribed runs as "), line

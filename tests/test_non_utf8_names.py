"""A transcript, or a folder of them, whose name is not valid UTF-8 (an old Latin-1 disk, an archive
unpacked with the wrong encoding: ``caf\\xe9.md``) is skipped with one warning naming it, its bad
bytes escaped, by check-config, doctor, run-once and the daemon, and every other file is read
(stop 48, finding s16: one such name made every run exit 1 with a bare UnicodeEncodeError, nothing
compacted; the daemon's startup thread died while ``healthcheck`` said ok). A startup thread that
dies of any error is logged with its reason and ends the daemon with 1.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import run_cli

from scribed import config, fsutil, log, sources
from scribed.daemon.service import Daemon

SAMPLES = Path(__file__).parent / "samples"
MARKDOWN = SAMPLES / "markdown/release-notes-chat.md"
CLAUDE = SAMPLES / "claude/-home-dev-api/4f35a1b2-7c8d-4e9f-a0b1-c2d3e4f5a6b7.jsonl"
BAD = os.fsdecode(b"caf\xe9")  # what the OS gives for the Latin-1 name: a lone surrogate


def _config(tmp_path: Path, kind: str, src: Path, extra: str = "") -> Path:
    (tmp_path / "repo/.squad").mkdir(parents=True)
    cfg = tmp_path / "repo/scribed.toml"
    cfg.write_text(
        f'root = "."\n[log]\nformat = "json"\n[promote]\nschedule = "off"\n[compress]\nbackend = "extractive"\n'
        f'{extra}[[sources]]\nkind = "{kind}"\npath = "{src}"\nagent = "troi"\n'
        + ('workspace = "*"\n' if kind == "claude" else "")
    )
    return cfg


def _markdown_source(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(MARKDOWN, src / "good.md")
    shutil.copy(MARKDOWN, src / f"{BAD}.md")
    return src


def _entries(cfg: Path) -> list[Path]:
    cold = cfg.parent / ".squad/memory/cold"
    return sorted(p for p in cold.glob("*/*.md")) if cold.is_dir() else []


def test_shown_escapes_the_bad_bytes_and_keeps_good_text() -> None:
    assert fsutil.shown(f"/x/{BAD}.md") == "/x/caf\\xe9.md"
    assert fsutil.shown("/x/café.md") == "/x/café.md"
    assert fsutil.shown("a \ud800 b") == "a \\ud800 b"  # a surrogate no name holds: escaped too
    assert not fsutil.utf8_name(BAD) and fsutil.utf8_name("café")


def test_discovery_skips_the_name_with_one_note_and_lists_the_rest(tmp_path: Path) -> None:
    src = _markdown_source(tmp_path)
    notes: list[sources.Note] = []
    assert list(sources.discover("markdown", src, "", notes)) == [src / "good.md"]
    (n,) = notes
    assert n.warn and str(n.path) == f"{src}/caf\\xe9.md" and "not valid UTF-8" in n.reason
    str(n.path).encode("utf-8")  # the note itself is text any writer takes
    assert not sources.match("markdown", src, "", src / f"{BAD}.md")
    assert sources.match("markdown", src, "", src / "good.md")
    assert sources.not_utf8("markdown", src, "", src / f"{BAD}.md") == n.reason
    assert sources.not_utf8("markdown", src, "", src / f"{BAD}.json") is None  # not the source's anyway


def test_a_folder_with_such_a_name_is_one_warning_for_all_its_files(tmp_path: Path) -> None:
    src = tmp_path / "claude"
    for folder in ("-home-dev-api", f"-home-{BAD}"):
        (src / folder).mkdir(parents=True)
        shutil.copy(CLAUDE, src / folder / CLAUDE.name)
    shutil.copy(CLAUDE, src / f"-home-{BAD}" / "second.jsonl")
    notes: list[sources.Note] = []
    assert list(sources.discover("claude", src, "", notes)) == [src / "-home-dev-api" / CLAUDE.name]
    assert [(str(n.path), n.reason.split(" (")[0]) for n in notes] == [
        (f"{src}/-home-caf\\xe9", "a folder whose name is not valid UTF-8")
    ]
    cfg = _config(tmp_path, "claude", src)
    p = run_cli("--config", str(cfg), "run-once", "--force", cwd=cfg.parent)
    out = p.stdout.decode()
    assert p.returncode == 0 and "1 compacted" in out and "-home-caf\\xe9: a folder whose name" in out, (
        out,
        p.stderr,
    )


def test_every_command_names_the_file_and_run_once_compacts_the_others(tmp_path: Path) -> None:
    cfg = _config(tmp_path, "markdown", _markdown_source(tmp_path))
    shown = f"{tmp_path}/src/caf\\xe9.md"
    check = run_cli("--config", str(cfg), "check-config", "--strict", cwd=cfg.parent)
    assert check.returncode == 1 and f"(markdown): {shown}: a file whose name is not valid UTF-8" in (
        check.stderr.decode()
    ), check.stderr
    doctor = run_cli("--config", str(cfg), "doctor", cwd=cfg.parent)
    assert f"(in {shown})" in doctor.stdout.decode() and "1 warning" in doctor.stdout.decode(), doctor
    for n in (1, 2):  # the name stops no run, and each run says it
        run = run_cli("--config", str(cfg), "run-once", "--force", "--json", cwd=cfg.parent)
        assert run.returncode == 0 and b"Traceback" not in run.stderr, run.stderr
        report = json.loads(run.stdout)
        assert report["source_warnings"][0]["source"] == shown and report["warnings"] == 1, report
        assert len(_entries(cfg)) == 1, n
    events = [json.loads(ln) for ln in run.stderr.decode().splitlines() if ln.startswith("{")]
    assert [e["file"] for e in events if e["event"] == "source_warning"] == [shown]


def _start(cfg: Path) -> tuple[subprocess.Popen[bytes], list[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    cmd = [sys.executable, "-m", "scribed", "--config", str(cfg), "run"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cfg.parent)
    lines: list[str] = []

    def drain() -> None:
        assert proc.stderr is not None
        lines.extend(line.decode() for line in proc.stderr)

    threading.Thread(target=drain, daemon=True).start()
    return proc, lines


def _wait(what: str, lines: list[str], timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while not any(what in ln for ln in lines):
        assert time.monotonic() < end, f"no {what} in {''.join(lines)}"
        time.sleep(0.1)


@pytest.mark.parametrize("mode", ["inotify", "polling"])
def test_the_daemon_catches_up_the_others_and_says_a_name_made_while_it_runs(
    tmp_path: Path, mode: str
) -> None:
    src = _markdown_source(tmp_path)
    extra = f'[session]\nquiet_seconds = 1\n[watch]\nmode = "{mode}"\npoll_interval = 0.3\n'
    cfg = _config(tmp_path, "markdown", src, extra)
    proc, lines = _start(cfg)
    try:
        _wait('"caught_up"', lines)
        _wait('"compacted"', lines)
        shutil.copy(MARKDOWN, src / f"{BAD}-2.md")
        _wait("caf\\\\xe9-2.md", lines)
        health = run_cli("--config", str(cfg), "healthcheck", cwd=cfg.parent)
        assert health.returncode == 0, health
        (src / f"{BAD}-2.md").write_text(MARKDOWN.read_text() + "\nmore\n")  # said once, not per event
        time.sleep(1.5)
    finally:
        proc.terminate()
        proc.wait(30)
    log_text = "".join(lines)
    assert proc.returncode == 0 and "Traceback" not in log_text and "event_failed" not in log_text, log_text
    said = [json.loads(ln)["file"] for ln in lines if '"source_warning"' in ln]
    assert said == [f"{src}/caf\\xe9.md", f"{src}/caf\\xe9-2.md"], log_text
    assert len(_entries(cfg)) == 1


def test_a_startup_thread_that_dies_is_logged_and_ends_the_daemon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not an OSError (those are the observer's, said as observer_failed): any error in the
    watch-and-catch-up thread; before, the thread died with a bare traceback and the daemon ran on."""
    (tmp_path / "root").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "c.toml").write_text(
        f'root = "{tmp_path / "root"}"\n[promote]\nschedule = "off"\n'
        f'[[sources]]\nkind = "markdown"\npath = "{tmp_path / "src"}"\nagent = "troi"\n'
    )
    d = Daemon(config.load(str(tmp_path / "c.toml")), notify=lambda _m: False)

    def broken() -> int:
        raise RuntimeError("a bug in the catch-up")

    monkeypatch.setattr(d.dispatch, "catch_up", broken)
    stream = io.StringIO()
    log.configure("json", "info", stream=stream)
    result: list[int] = []
    try:
        t = threading.Thread(target=lambda: result.append(d.run()))  # not the main thread: no signals
        t.start()
        t.join(30)
        if t.is_alive():
            d.request_stop()
            t.join(15)
    finally:
        log.configure("json", "error")
    assert result == [1], stream.getvalue()
    (failed,) = [e for e in map(json.loads, stream.getvalue().splitlines()) if e["event"] == "startup_failed"]
    assert failed["reason"] == "RuntimeError: a bug in the catch-up" and failed["level"] == "error"
    assert "test_non_utf8_names.py" in failed["at"]


def test_a_console_log_line_holding_such_a_name_is_written_escaped() -> None:
    class Strict(io.StringIO):
        def write(self, s: str) -> int:
            s.encode("utf-8")  # as a UTF-8 terminal's stream does
            return super().write(s)

    stream = Strict()
    log.configure("console", "info", stream=stream)
    try:
        log.get("scribed.test").warning("source_warning", file=f"/x/{BAD}.md")
    finally:
        log.configure("json", "error")
    assert "caf\\xe9.md" in stream.getvalue()

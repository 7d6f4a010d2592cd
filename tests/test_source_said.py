"""A source that reads nothing, or the wrong files, is said, in the same words by ``check-config``,
``doctor``, ``run-once``'s summary and the daemon's log (stop 48, findings s01, s03, s05):

* a ``glob`` that can match no file (absolute, above the folder, ``**`` inside a name, folders
  only) is a config error ``scribed run`` refuses; ``{a,b}`` braces are expanded;
* a glob or kind that matches none of the files a folder holds is a warning (an empty folder is not:
  the agent has not written yet);
* a folder scribed cannot read (a sub-folder, the source folder, a folder above it) is a warning
  naming it, never a traceback;
* a source one level too high (a tool's own folder, or the folder holding it) is a warning naming
  the folder the tool keeps its sessions in (:data:`scribed.sources.homes.HOMES`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run_cli

from scribed import sources
from scribed.sources import globs

SAMPLES = Path(__file__).parent / "samples"
CLAUDE = SAMPLES / "claude/-home-dev-api/4f35a1b2-7c8d-4e9f-a0b1-c2d3e4f5a6b7.jsonl"
COPILOT = SAMPLES / "copilot/37f4c2de-9b1a-4e0f-8d7c-2a6b5e9f1c03"
CODEX = SAMPLES / "codex/2026/04/30/rollout-2026-04-30T10-00-00-0197a3f2-5e6d-7c8b-9a0f-1e2d3c4b5a69.jsonl"
MARKDOWN = SAMPLES / "markdown/release-notes-chat.md"
REPL = SAMPLES / "squad-repl/2026-06-02T21-15-30Z_8b1f7c2e-3d4a-4b5c-9e6f-7a8b9c0d1e2f.json"


def _config(tmp_path: Path, *blocks: str) -> Path:
    (tmp_path / "repo/.squad").mkdir(parents=True, exist_ok=True)
    cfg = tmp_path / "repo/scribed.toml"
    cfg.write_text('root = "."\n' + "".join(f"[[sources]]\n{b}\n" for b in blocks))
    return cfg


def _warnings(p: subprocess.CompletedProcess[bytes]) -> list[str]:
    return [ln for ln in p.stderr.decode().splitlines() if ln.startswith("scribed: warning:")]


def _notes(kind: str, folder: Path, glob: str = "") -> list[str]:
    said: list[sources.Note] = []
    list(sources.discover(kind, folder, glob, said))
    return [n.reason for n in said if n.warn]


# --- s01: globs --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("glob", "words"),
    [
        ("/data/src/a/*.md", 'glob = "a/*.md"'),  # inside the folder: the relative form is named
        ("/elsewhere/*.md", "put the folder in `path =`"),
        ("~/notes/*.md", "relative to the source's `path`"),
        ("../other/*.jsonl", "must stay inside"),
        ("logs/../x/*.md", "must stay inside"),
        ("**.md", "'**/*.md'"),
        ("notes/**session.jsonl", "'notes/**/*session.jsonl'"),
        ("**", "matches folders, never a file"),
        ("logs/**/", "matches folders, never a file"),
        ("{*.md,/abs/*.txt}", "relative to the source's `path`"),  # one alternative is enough
        ("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}", "more than 64 patterns"),
    ],
)
def test_a_glob_that_can_match_no_file_is_named_with_its_remedy(glob: str, words: str) -> None:
    why = globs.problem(glob, "/data/src")
    assert why is not None and words in why, why


@pytest.mark.parametrize(
    "glob",
    [
        "*.md",
        "./*.md",
        "**/*.md",
        "a/*/b.jsonl",
        ".specstory/history/*.md",
        "*.{md,txt}",
        "x/{a,b/{c,d}}/*",
        "**/*",
    ],
)
def test_a_glob_that_can_match_is_not_refused(glob: str) -> None:
    assert globs.problem(glob, "/data/src") is None


def test_braces_are_expanded_by_discovery_and_by_the_daemon_s_match(tmp_path: Path) -> None:
    for name in ("a.md", "b.txt", "c.json", "sub/d.md", "sub/e.txt", "other/f.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("# x\n")
    cases = {
        "**/*.{md,txt}": {"a.md", "b.txt", "sub/d.md", "sub/e.txt", "other/f.md"},
        "{sub/*.md,*.{txt,json}}": {"sub/d.md", "b.txt", "c.json"},
        "{sub,other}/*.md": {"sub/d.md", "other/f.md"},
        "*.{md}": set(),  # no comma: the braces are literal, as in a shell
    }
    for glob, want in cases.items():
        got = {p.relative_to(tmp_path).as_posix() for p in sources.discover("markdown", tmp_path, glob)}
        assert got == want, glob
        for p in tmp_path.rglob("*"):
            if p.is_file():
                rel = p.relative_to(tmp_path).as_posix()
                assert sources.match("markdown", tmp_path, glob, p) == (rel in want), (glob, rel)


def test_a_bad_glob_is_refused_by_run_and_check_config_and_shown_by_doctor(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "a").mkdir(parents=True)
    shutil.copy(MARKDOWN, src / "a/y.md")
    cfg = _config(tmp_path, f'kind = "markdown"\npath = "{src}"\nglob = "{src}/a/*.md"')
    said = f"{cfg}: bad value for 'glob' in [[sources]] #1: "
    for args, code in ((["check-config"], 2), (["run-once"], 2), (["run"], 78)):
        p = run_cli("--config", str(cfg), *args, timeout=60)
        err = p.stderr.decode()
        assert p.returncode == code and said in err and 'glob = "a/*.md"' in err, (args, err)
        assert "Traceback" not in err
    out = run_cli("--config", str(cfg), "doctor").stdout.decode()
    assert f"  error: {said}" in out and "matches no file" not in out, out  # said once, as the error


def test_a_glob_matching_none_of_the_files_is_a_warning_everywhere(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "a").mkdir(parents=True)
    shutil.copy(MARKDOWN, src / "a/y.md")
    cfg = _config(tmp_path, f'kind = "markdown"\npath = "{src}"\nglob = "*.md"\nagent = "troi"')
    p = run_cli("--config", str(cfg), "check-config", "--strict")
    (w,) = _warnings(p)
    assert p.returncode == 1 and "[[sources]] #1 (markdown): glob '*.md' matches no file under" in w, w
    assert "a/y.md" in w and "`**/*.md`" in w, w
    reason = w.split("[[sources]] #1 (markdown): ", 1)[1]
    assert "(0 files, 1 warning below)" in p.stdout.decode()
    run = run_cli("--config", str(cfg), "run-once")
    assert (
        run.returncode == 0
        and f"1 source warning (`scribed --config {cfg} doctor` lists each with what to do):\n  {reason}\n"
        in (run.stdout.decode())
    ), run.stdout.decode()
    assert "(the source warnings say why)" in run.stderr.decode()
    data = json.loads(run_cli("--config", str(cfg), "run-once", "--json").stdout)
    assert data["source_warnings"] == [{"source": str(src), "kind": "markdown", "reason": reason}]
    doc = json.loads(run_cli("--config", str(cfg), "doctor", "--json").stdout)
    assert [i["warning"] for i in doc["sources"][0]["issues"]] == [f"markdown: {reason}"]
    shutil.rmtree(src / "a")  # an empty folder: nothing written yet, nothing wrong
    p = run_cli("--config", str(cfg), "check-config", "--strict")
    assert p.returncode == 0 and not _warnings(p) and "(0 files)" in p.stdout.decode(), p.stderr


# --- s05: a source one level too high ------------------------------------------------------------------
def _homes(tmp_path: Path) -> Path:
    """A home with Claude Code's and Copilot CLI's folders as the tools leave them."""
    home = tmp_path / "home"
    (home / ".claude/projects/-repo").mkdir(parents=True)
    shutil.copy(CLAUDE, home / ".claude/projects/-repo/s1.jsonl")
    (home / ".claude/history.jsonl").write_text(
        "".join(
            json.dumps({"display": f"fix the login bug {i}", "project": "/repo"}) + "\n" for i in range(3)
        )
    )
    shutil.copytree(COPILOT, home / ".copilot/session-state" / COPILOT.name)
    (home / ".copilot/logs").mkdir()
    (home / ".copilot/logs/session.jsonl").write_text('{"level":"info","msg":"started"}\n')
    return home


def test_a_source_on_a_tool_s_own_folder_names_the_transcript_folder(tmp_path: Path) -> None:
    home = _homes(tmp_path)
    cfg = _config(
        tmp_path,
        f'kind = "claude"\npath = "{home}/.claude"\nagent = "riker"',
        f'kind = "copilot"\npath = "{home}/.copilot"\nagent = "picard"\nworkspace = "*"',
    )
    claude = (
        f"Claude Code keeps its sessions in {home}/.claude/projects, not in {home}/.claude: point `path =` "
        "there (a file outside it, history.jsonl, is read as a transcript)"
    )
    copilot = (
        f"no copilot transcript under {home}/.copilot: Copilot CLI keeps its sessions in "
        f"{home}/.copilot/session-state: point `path =` there"
    )
    p = run_cli("--config", str(cfg), "check-config", "--strict")
    w = _warnings(p)
    assert p.returncode == 1 and len(w) == 2 and claude in w[0] and copilot in w[1], w
    out = run_cli("--config", str(cfg), "run-once", "--force").stdout.decode()
    assert "2 source warnings" in out and claude in out and copilot in out, out
    doc = json.loads(run_cli("--config", str(cfg), "doctor", "--json").stdout)
    issues = {i["file"]: i for s in doc["sources"] for i in s["issues"]}
    assert claude in issues[f"{home}/.claude"]["warning"] and copilot in issues[f"{home}/.copilot"]["warning"]
    history = issues[f"{home}/.claude/history.jsonl"]  # its lines are not a transcript's: not drift
    assert "malformed" in history["warning"] and "report it" not in history["fix"], history
    assert f"keeps its sessions in {home}/.claude/projects" in history["fix"], history


def test_a_source_above_the_transcript_folder_in_other_layouts(tmp_path: Path) -> None:
    """The rule read on layouts it was not written from: Codex's home with archived rollouts, a
    home above Copilot's folder, a repository above Squad's REPL sessions."""
    codex = tmp_path / ".codex"
    for sub in ("sessions/2026/04/30", "archived_sessions"):
        (codex / sub).mkdir(parents=True)
        shutil.copy(CODEX, codex / sub / CODEX.name)
    (w,) = _notes("codex", codex)
    assert f"Codex keeps its sessions in {codex}/sessions, not in {codex}" in w, w
    assert f"archived_sessions/{CODEX.name}, is read as a transcript" in w, w
    home = _homes(tmp_path)
    (w,) = _notes("copilot", home)
    assert w.startswith(f"no copilot transcript under {home}: Copilot CLI keeps its sessions in ") and (
        f"{home}/.copilot/session-state: point `path =` there" in w
    ), w
    repo = tmp_path / "repo"
    (repo / ".squad/sessions").mkdir(parents=True)
    shutil.copy(REPL, repo / ".squad/sessions" / REPL.name)
    (w,) = _notes("squad-repl", repo)
    assert f"no squad-repl transcript under {repo}: Squad keeps its sessions in {repo}/.squad/sessions" in w
    # the right folders, and a glob the user chose, say nothing
    assert _notes("codex", codex / "sessions") == []
    assert _notes("copilot", home / ".copilot/session-state") == []
    assert _notes("claude", home / ".claude/projects/-repo") == []
    assert _notes("claude", home / ".claude", "projects/**/*.jsonl") == []


def test_files_none_of_which_is_the_kind_s_are_said(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes/todo.txt").write_text("buy milk\n")
    (w,) = _notes("claude", tmp_path)
    assert w.startswith(
        f"no claude transcript under {tmp_path}: none of its files (notes/todo.txt, for one)"
    ), w
    assert "**/*.jsonl" in w and "set `glob =`" in w
    assert _notes("claude", tmp_path / "notes", "*.txt") == []


def test_a_squad_repl_folder_of_markdown_logs_names_the_kind_that_reads_them(tmp_path: Path) -> None:
    """Finding s21: the warning offered `glob =`, which hands a markdown log to the Squad REPL
    reader (JSON only). It names `kind = "markdown"` instead; that line, fed back, is accepted by
    `check-config --strict` and the source lists the log."""
    cfg = _config(tmp_path, 'kind = "squad-repl"\npath = ".squad/sessions"')
    logs = tmp_path / "repo/.squad/sessions"
    logs.mkdir()
    shutil.copy(MARKDOWN, logs / "2026-05-02-release-notes.md")
    (logs / "README.md").write_text("# Sessions\n\nNotes on this folder.\n")  # no one speaks: not a log
    p = run_cli("--config", str(cfg), "check-config", "--strict")
    (w,) = _warnings(p)
    assert p.returncode == 1 and "set `glob =`" not in w, w
    line = re.search(r'`(kind = "markdown")`', w)
    assert line is not None and "2026-05-02-release-notes.md is a markdown session log" in w, w
    cfg.write_text(cfg.read_text().replace('kind = "squad-repl"', line.group(1)))
    p = run_cli("--config", str(cfg), "check-config", "--strict")
    assert p.returncode == 0 and not _warnings(p), p.stderr.decode()
    assert "source: markdown " in p.stdout.decode() and "(2 files)" in p.stdout.decode(), p.stdout.decode()


def test_notes_in_a_folder_without_the_kind_s_files_keep_the_glob_advice(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# Sessions\n\nNotes on this folder.\n")
    (w,) = _notes("squad-repl", tmp_path)
    assert "set `glob =`" in w and "markdown" not in w, w


# --- s03: folders scribed cannot read ------------------------------------------------------------------
def test_a_folder_discovery_cannot_read_is_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process, whatever the user running the tests may read: scandir refused on one folder."""
    for day in ("06", "07"):
        (tmp_path / f"2026/12/{day}").mkdir(parents=True)
        shutil.copy(CODEX, tmp_path / f"2026/12/{day}/rollout-2026-12-{day}T10-00-00-x.jsonl")
    shut = tmp_path / "2026/12/07"
    real = os.scandir

    def scandir(path: object) -> object:
        if Path(str(path)) == shut:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)  # type: ignore[call-overload]

    monkeypatch.setattr(os, "scandir", scandir)
    said: list[sources.Note] = []
    found = list(sources.discover("codex", tmp_path, "", said))
    assert [p.parent for p in found] == [tmp_path / "2026/12/06"]
    assert said == [
        sources.Note(
            shut,
            f"cannot read folder {shut} (permission denied): the transcripts in it are not compacted",
            True,
        )
    ]


def _unprivileged() -> list[str]:
    """A command prefix under which a mode-000 folder cannot be read: none for a user, `setpriv`
    dropping root's override of file modes for root (skipped where that is not possible)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: a mode-000 folder stays readable")
    prefix = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"setpriv cannot drop capabilities here: {probe.stderr.decode().strip()}")
    return prefix


def _run(prefix: list[str], cfg: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    cmd = [*prefix, sys.executable, "-m", "scribed", "--config", str(cfg), *args]
    return subprocess.run(cmd, capture_output=True, env=env, cwd=cfg.parent, timeout=120)


@pytest.mark.parametrize("shut", ["day", "source", "above"])
def test_a_folder_scribed_cannot_read_is_said_by_every_command(tmp_path: Path, shut: str) -> None:
    prefix = _unprivileged()
    src = tmp_path / "locked/codex"
    for day in ("06", "07"):
        (src / f"2026/12/{day}").mkdir(parents=True)
        shutil.copy(CODEX, src / f"2026/12/{day}" / CODEX.name.replace("04-30", f"12-{day}"))
    cfg = _config(tmp_path, f'kind = "codex"\npath = "{src}"\nagent = "worf"\nworkspace = "*"')
    folder = {"day": src / "2026/12/07", "source": src, "above": src.parent}[shut]
    said = f"cannot read folder {src / '2026/12/07' if shut == 'day' else src} (permission denied)"
    folder.chmod(0)
    try:
        p = _run(prefix, cfg, "check-config", "--strict")
        (w,) = _warnings(p)
        assert p.returncode == 1 and "[[sources]] #1 (codex): " + said in w, p.stderr
        doc = _run(prefix, cfg, "doctor")
        assert (
            f"  warning: codex: {said}" in doc.stdout.decode()
            and "read and search access" in doc.stdout.decode()
        )
        run = _run(prefix, cfg, "run-once", "--force")
        out = run.stdout.decode()
        assert run.returncode == 0 and "1 source warning" in out and f"  {said}" in out, (out, run.stderr)
        assert ("1 sessions: 1 compacted" in out) == (shut == "day"), out
        for p in (doc, run):
            assert "Traceback" not in p.stderr.decode() and "scribed: error" not in p.stderr.decode(), (
                p.stderr
            )
    finally:
        folder.chmod(0o755)


def test_the_daemon_says_a_source_it_cannot_reach_and_runs_on(tmp_path: Path) -> None:
    """``scribed run`` with a source behind a folder it cannot search: the catch-up logs the
    warning and the daemon serves the other sources (it died of a PermissionError at start)."""
    prefix = _unprivileged()
    src, ok = tmp_path / "locked/codex", tmp_path / "open/codex"
    for folder in (src, ok):
        (folder / "2026/12/06").mkdir(parents=True)
        shutil.copy(CODEX, folder / "2026/12/06" / CODEX.name)
    cfg = _config(
        tmp_path,
        f'kind = "codex"\npath = "{src}"\nagent = "worf"\nworkspace = "*"',
        f'kind = "codex"\npath = "{ok}"\nagent = "data"\nworkspace = "*"',
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    (tmp_path / "locked").chmod(0)
    cmd = [*prefix, sys.executable, "-m", "scribed", "--config", str(cfg), "run"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cfg.parent)
    try:
        assert proc.stderr is not None
        lines = []
        for line in proc.stderr:
            lines.append(line.decode())
            if '"caught_up"' in lines[-1] or len(lines) > 200:
                break
        proc.terminate()
        rest = proc.communicate(timeout=30)[1].decode()
    finally:
        (tmp_path / "locked").chmod(0o755)
        if proc.poll() is None:
            proc.kill()
    log = "".join(lines) + rest
    assert proc.returncode == 0 and "Traceback" not in log, log
    events = [json.loads(ln) for ln in log.splitlines() if ln.startswith("{")]
    said = [e for e in events if e.get("event") == "source_warning" and e["file"] == str(src)]
    assert [e["reason"] for e in said] == [
        f"cannot read folder {src} (permission denied): the transcripts in it are not compacted"
    ], log
    assert any(e.get("event") == "catch_up_started" and e.get("files") == 1 for e in events), log


def test_a_glob_naming_one_file_not_written_yet_is_not_a_warning(tmp_path: Path) -> None:
    """Aider's history in a repository before Aider's first run there (the file is watched for, as
    an empty folder is), while a pattern matching none of the files there is a warning."""
    (tmp_path / "README.md").write_text("# app\n")
    assert _notes("markdown", tmp_path, ".aider.chat.history.md") == []
    assert _notes("markdown", tmp_path, ".specstory/history/{a,b}.md") == []
    (w,) = _notes("markdown", tmp_path, ".aider.chat.history*.md")
    assert "matches no file" in w and "README.md" in w, w

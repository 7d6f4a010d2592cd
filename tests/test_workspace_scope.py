"""A source's workspace: sessions recorded as run outside the repository are never compacted into it.

Codex (``~/.codex/sessions``) and Copilot CLI (``~/.copilot/session-state``) keep every repository's
sessions in one folder; each session records the folder it ran in (Codex ``session_meta.cwd``,
Copilot ``workspace.yaml`` / ``session.start`` context). A config's codex and copilot sources are
scoped to the root by default (a config written before the ``workspace`` key included), a claude
source when it says so; a skipped session is counted with its reason, read only as far as its
first records, and asked again when the scope changes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import run_cli, run_json

from scribed import config, sources
from scribed.core.results import SKIP_ELSEWHERE, SKIP_NO_PLACE
from scribed.sources import place

SAMPLES = Path(__file__).parent / "samples"
CODEX = next((SAMPLES / "codex").rglob("rollout-*.jsonl"))
COPILOT = next((SAMPLES / "copilot").iterdir())
SAMPLE_CWD = "/home/dev/svc"  # the codex sample's recorded cwd


def _codex(folder: Path, name: str, cwd: str | None, *, junk_after: bool = False) -> Path:
    """The codex sample as rollout ``name`` run in ``cwd`` (None: no recorded folder at all)."""
    text = CODEX.read_text()
    if cwd is None:
        text = "".join(_without_cwd(ln) + "\n" for ln in text.splitlines())
    else:
        text = text.replace(SAMPLE_CWD, cwd)
    uuid = f"0197a3f2-5e6d-7c8b-9a0f-{name.encode().hex()[:12].ljust(12, '0')}"
    text = text.replace(CODEX.name.removesuffix(".jsonl")[-36:], uuid)  # a session of its own
    path = folder / f"rollout-2026-04-30T10-00-00-{uuid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    if junk_after:  # a parse would warn about this line; the probe stops before it
        first, rest = text.split("\n", 1)
        text = first + "\n{not json\n" + rest
    path.write_text(text)
    return path


def _without_cwd(line: str) -> str:
    try:
        rec = json.loads(line)
    except ValueError:
        return line  # the sample's deliberately broken line
    if isinstance(rec, dict) and isinstance(rec.get("payload"), dict):
        rec["payload"].pop("cwd", None)
    return json.dumps(rec)


def _repo(tmp_path: Path, sources_toml: str) -> tuple[Path, Path]:
    root = tmp_path / "repo"
    (root / ".squad").mkdir(parents=True)
    cfg = root / "scribed.toml"
    cfg.write_text(f'root = "."\n[compress]\nbackend = "extractive"\n\n{sources_toml}')
    return root, cfg


def _run(cfg: Path) -> dict[str, Any]:
    code, data, err = run_json("--config", str(cfg), "run-once", "--force")
    assert code == 0, err[-2000:]
    return data


def _cold(root: Path) -> list[str]:
    return sorted(p.name for p in (root / ".squad/memory/cold").rglob("*.md") if p.parent.name != "cold")


def test_a_codex_session_of_another_repository_is_counted_not_compacted(tmp_path: Path) -> None:
    """The newcomer's case: a config with no workspace key (as written before it existed) and
    ~/.codex/sessions holding this repository's session and another's."""
    codex = tmp_path / "codex-sessions"
    root, cfg = _repo(tmp_path, f'[[sources]]\nkind = "codex"\npath = "{codex}"\n')
    _codex(codex, "mine", str(root / "sub"))  # started in a sub-folder: this repository's
    other = _codex(codex, "theirs", "/repo")
    _codex(codex, "nowhere", None)
    data = _run(cfg)
    assert data["compacted"] == 1 and data["skipped"] == 2, data
    assert data["skips"] == {SKIP_ELSEWHERE: 1, SKIP_NO_PLACE: 1}, data
    [mine] = data["entries"]
    assert b"mine".hex() in mine["session"], mine
    memory = "".join(p.read_text() for p in (root / ".squad").rglob("*.md"))
    assert b"theirs".hex() not in memory and b"nowhere".hex() not in memory
    assert b"mine".hex() in memory

    text = run_cli("--config", str(cfg), "run-once", "--force").stdout.decode()
    assert "1 session of other repositories skipped" in text, text
    assert "1 session with no recorded working directory skipped" in text, text
    again = _run(cfg)  # counted again each run, from the ledger, without reading the files
    assert again["skips"] == {SKIP_ELSEWHERE: 1, SKIP_NO_PLACE: 1} and again["compacted"] == 0, again
    status = run_cli("--config", str(cfg), "status").stdout.decode()
    assert "2 of them skipped: sessions of other repositories" in status, status

    other.write_text(other.read_text().replace('"/repo"', json.dumps(str(root))))  # now it is ours
    assert _run(cfg)["compacted"] == 1


def test_workspace_widens_narrows_and_star_takes_every_session(tmp_path: Path) -> None:
    codex = tmp_path / "codex-sessions"
    _, cfg = _repo(tmp_path, "")
    base = cfg.read_text()
    _codex(codex, "theirs", "/srv/other")
    _codex(codex, "nowhere", None)
    cfg.write_text(base + f'[[sources]]\nkind = "codex"\npath = "{codex}"\n')
    assert _run(cfg)["compacted"] == 0
    cfg.write_text(base + f'[[sources]]\nkind = "codex"\npath = "{codex}"\nworkspace = ["/srv/other", "."]\n')
    data = _run(cfg)  # the scope changed: the skipped file is asked again
    assert data["compacted"] == 1 and data["skips"] == {SKIP_NO_PLACE: 1}, data
    cfg.write_text(base + f'[[sources]]\nkind = "codex"\npath = "{codex}"\nworkspace = "*"\n')
    data = _run(cfg)
    assert data["compacted"] == 1 and data["skips"].get(SKIP_NO_PLACE) is None, data


def test_copilot_sessions_are_placed_by_workspace_yaml_or_session_start(tmp_path: Path) -> None:
    state = tmp_path / "session-state"
    root, cfg = _repo(tmp_path, f'[[sources]]\nkind = "copilot"\npath = "{state}"\n')
    theirs = state / COPILOT.name
    shutil.copytree(COPILOT, theirs)  # workspace.yaml: cwd /home/dev/repo/server
    mine = state / "5a1b2c3d-0000-4000-8000-000000000001"
    shutil.copytree(COPILOT, mine)
    (mine / "workspace.yaml").unlink()  # placed by session.start's context, here the root
    events = (mine / "events.jsonl").read_text()
    (mine / "events.jsonl").write_text(events.replace('"/home/dev/repo"', json.dumps(str(root))))
    data = _run(cfg)
    assert data["skips"] == {SKIP_ELSEWHERE: 1}, data
    assert data["compacted"] >= 1 and all("5a1b2c3d" in e["source"] for e in data["entries"]), data


def test_a_claude_source_is_scoped_only_when_it_says_so(tmp_path: Path) -> None:
    projects = tmp_path / "claude"
    shutil.copytree(SAMPLES / "claude/-home-dev-api", projects)  # cwd /home/dev/api
    _, cfg = _repo(tmp_path, f'[[sources]]\nkind = "claude"\npath = "{projects}"\n')
    assert _run(cfg)["compacted"] >= 1, "a project folder of its own: not scoped by default"
    scoped = f'[[sources]]\nkind = "claude"\npath = "{projects}"\nworkspace = "."\n'
    _, cfg2 = _repo(tmp_path / "b", scoped)
    data = _run(cfg2)
    assert data["compacted"] == 0 and data["skips"].get(SKIP_ELSEWHERE) == 2, data


def test_a_skipped_session_is_read_only_as_far_as_its_working_directory(tmp_path: Path) -> None:
    """The probe reads the first record; a parse would have met the broken second line."""
    codex = tmp_path / "codex-sessions"
    other = _codex(codex, "theirs", "/repo", junk_after=True)
    _, cfg = _repo(tmp_path, f'[log]\nformat = "json"\n\n[[sources]]\nkind = "codex"\npath = "{codex}"\n')
    p = run_cli("--config", str(cfg), "run-once", "--force")
    err = p.stderr.decode()
    assert p.returncode == 0, err
    assert "source_warning" not in err and "session_outside_workspace" in err, err
    assert place.recorded("codex", other) == "/repo"
    sample = sources.parse_file("codex", CODEX, "codex").malformed
    assert sources.parse_file("codex", other, "codex").malformed == sample + 1, "a parse meets it"


@pytest.mark.parametrize(
    ("where", "scope", "inside"),
    [
        ("/a/repo", ("/a/repo",), True),
        ("/a/repo/sub/x", ("/a/repo",), True),
        ("/a/repo-x", ("/a/repo",), False),  # a sibling that shares the prefix
        ("/a", ("/a/repo",), False),  # a parent: another repository's scope, not this one
        ("repo", ("/a/repo",), False),  # relative: no tool writes one
        ("/a/repo/../other", ("/a/repo",), False),
    ],
)
def test_inside(where: str, scope: tuple[str, ...], inside: bool) -> None:
    assert place.inside(where, scope) is inside


def test_inside_sees_through_a_symlinked_repository(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    assert place.inside(str(tmp_path / "link" / "sub"), (str(real),))
    assert place.inside(str(real), (str(tmp_path / "link"),))


def test_config_defaults_and_errors(tmp_path: Path) -> None:
    f = tmp_path / "scribed.toml"
    cfg = config.from_dict(
        {
            "root": "r",
            "sources": [
                {"kind": "codex", "path": "c"},
                {"kind": "copilot", "path": "p", "workspace": "*"},
                {"kind": "claude", "path": "l"},
                {"kind": "claude", "path": "l", "workspace": ["w", "~/x"]},
                {"kind": "markdown", "path": "m"},
            ],
        },
        f,
    )
    root = cfg.root_path
    assert [s.scope(root) for s in cfg.sources] == [
        (str(tmp_path / "r"),),
        None,
        None,
        (str(tmp_path / "w"), str(Path("~/x").expanduser())),
        None,
    ]
    for bad, says in (
        ({"kind": "markdown", "path": "m", "workspace": "."}, "record no working directory"),
        ({"kind": "codex", "path": "c", "workspace": ["*", "."]}, "stands alone"),
        ({"kind": "codex", "path": "c", "workspace": []}, "none blank"),
    ):
        with pytest.raises(config.ConfigError, match=says):
            config.from_dict({"sources": [bad]}, f)


def test_the_daemon_resolves_a_file_event_to_its_scoped_source(tmp_path: Path) -> None:
    """A file event in the daemon goes through the same scope as run-once's discovery."""
    import threading
    from datetime import UTC, datetime

    from scribed.core.scribe import Scribe
    from scribed.daemon.work import Dispatcher

    codex = tmp_path / "codex-sessions"
    root = tmp_path / "repo"
    (root / ".squad").mkdir(parents=True)
    other = _codex(codex, "theirs", "/repo")
    cfg = config.from_dict(
        {
            "root": str(root),
            "compress": {"backend": "extractive"},
            "sources": [{"kind": "codex", "path": str(codex)}],
        }
    )
    scribe = Scribe(cfg)
    try:
        item = Dispatcher(scribe, lambda: datetime.now(UTC), threading.Event()).resolve(other)
        assert item is not None and item.scope == (str(root),), item
        with scribe.locked():
            out = scribe.process(item, force=True)
        assert (out.status, out.skips, out.entries) == ("skipped", {SKIP_ELSEWHERE: 1}, []), out
    finally:
        scribe.close()


def test_doctor_reports_only_this_repositorys_sessions(tmp_path: Path) -> None:
    """doctor reads a source as compaction does: another repository's session, skipped by run-once,
    is not counted nor its warnings listed (a re-check saw its malformed line reported)."""
    codex = tmp_path / "codex-sessions"
    root, cfg = _repo(tmp_path, f'[[sources]]\nkind = "codex"\npath = "{codex}"\n')
    _codex(codex, "mine", str(root))
    theirs = _codex(codex, "theirs", "/somewhere/else")
    theirs.write_text(theirs.read_text() + "{broken line\n")
    code, data, err = run_json("--config", str(cfg), "doctor")
    assert code == 0, err
    [src] = data["sources"]
    assert src["files"] == 1, src
    assert not [i for i in src["issues"] if str(theirs) == i["file"]], src["issues"]

"""``scribed git setup`` in a teammate's fresh clone, with real git: the lines docs/teams.md tells a
newcomer to run ("Set up once per clone") must neither delete a shared cold entry from git nor
leave scribed's machine-local state showing as untracked."""

from __future__ import annotations

import os
import random
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_team_git import Clone, _session, git, squad_remote

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

DOCS = Path(__file__).resolve().parent.parent / "docs" / "teams.md"


def documented_setup() -> list[str]:
    """The shell lines of the "Set up once per clone" block of docs/teams.md, as written there."""
    text = DOCS.read_text()
    m = re.search(r"\*\*Set up once per clone\*\*.*?```sh\n(.*?)```", text, re.S)
    assert m, "docs/teams.md: no 'Set up once per clone' sh block"
    lines = [line.split("#", 1)[0].strip() for line in m.group(1).splitlines()]
    return [line for line in lines if line]


def run_documented(clone: Clone) -> str:
    """Run the documented lines in the clone's top folder, ``scribed`` being this scribed with the
    clone's config (what a user's ``scribed`` finds through its default config)."""
    cmd = f"{shlex.quote(sys.executable)} -m scribed --config {shlex.quote(str(clone.cfg))}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    out = []
    for line in documented_setup():
        script = f'scribed() {{ {cmd} "$@"; }}\nset -e\n{line}\n'
        p = subprocess.run(["bash", "-c", script], cwd=clone.dir, env=env, capture_output=True, text=True)
        assert p.returncode == 0, (line, p.stdout, p.stderr[-3000:])
        out.append(p.stdout)
    return "".join(out)


def _tracked_entries(clone: Clone) -> list[str]:
    files = git(clone.dir, "ls-files", "--", ".squad/memory/cold").stdout.split()
    return sorted(f for f in files if f.count("/") == 4)  # .squad/memory/cold/{agent}/{file}


@pytest.mark.parametrize("views_committed", [False, True])
def test_setup_in_a_fresh_clone_keeps_the_teams_entries(tmp_path: Path, views_committed: bool) -> None:
    """a compacts sessions and pushes its entries (and, ``views_committed``, its hot files and cold
    views too, as before scribed wrote a .gitignore); d, a fresh clone, runs the documented lines.
    Every entry file stays in git; only this machine's files (hot, views) leave the index; and
    afterwards git shows nothing of scribed's local state."""
    remote = squad_remote(tmp_path)
    a = Clone(tmp_path, "a", remote)
    rnd = random.Random(41)
    for n, day in enumerate((18, 20)):
        a.sessions.add(_session(a.sources["riker"], n, day, rnd))
    a.scribed("run-once")
    if views_committed:
        (a.dir / ".squad/memory/.gitignore").unlink()
    a.commit()
    a.push()
    entries = _tracked_entries(a)
    assert len(entries) == 2, git(a.dir, "ls-files").stdout
    assert (".squad/memory/cold/riker.md" in git(a.dir, "ls-files").stdout) == views_committed

    d = Clone(tmp_path, "d", remote)
    before = git(d.dir, "rev-parse", "HEAD").stdout.strip()
    out = run_documented(d)
    assert "riker/" not in out, out  # no entry named among the files taken out of the index
    changed = git(d.dir, "diff", "--name-status", before, "HEAD").stdout.splitlines()
    deleted = sorted(line.split("\t", 1)[1] for line in changed if line.startswith("D\t"))
    views = [".squad/memory/cold/riker.md", ".squad/memory/hot/riker.md"]
    assert deleted == (views if views_committed else []), changed
    assert _tracked_entries(d) == entries
    assert git(d.dir, "status", "--porcelain", "--untracked-files=all").stdout == "", (
        "the documented lines leave every change committed and nothing of scribed's state untracked"
    )
    # the first run after setup (and the daemon's state it writes) changes nothing git shows either
    d.scribed("run-once")
    assert git(d.dir, "status", "--porcelain", "--untracked-files=all").stdout == ""
    assert _tracked_entries(d) == entries
    d.push()
    e = Clone(tmp_path, "e", remote)  # the next newcomer: the team's files are committed already
    assert "git rm" not in e.scribed("git", "setup").stdout.decode()
    assert git(e.dir, "status", "--porcelain", "--untracked-files=all").stdout == ""


def test_setup_before_the_documented_add_shows_only_what_the_docs_add(tmp_path: Path) -> None:
    """Right after ``scribed git setup`` in a fresh clone, ``git status`` lists only the two files
    the documented ``git add`` names: no ``.scribed/`` lock or sync state, no entry deletion."""
    remote = squad_remote(tmp_path)
    a = Clone(tmp_path, "a", remote)
    a.sessions.add(_session(a.sources["worf"], 1, 20, random.Random(43)))
    a.scribed("run-once")
    (a.dir / ".squad/memory/.gitignore").unlink()  # a team that never ran setup
    git(a.dir, "add", "-A", ".squad/memory/cold/worf")  # only the shared entries
    git(a.dir, "commit", "-q", "-m", "entries")
    a.push()
    d = Clone(tmp_path, "d", remote)
    d.scribed("git", "setup")
    status = git(d.dir, "status", "--porcelain", "--untracked-files=all").stdout.splitlines()
    added = documented_setup()[-1]
    assert sorted(line[3:] for line in status) == sorted(
        p for p in (".gitattributes", ".squad/memory/.gitignore") if p in added
    ), status
    assert all(line.startswith("??") for line in status), status


def test_an_imported_files_git_date_is_its_own_not_a_glob_matchs(tmp_path: Path) -> None:
    """``a[1].md``'s date comes from its own commit: as a plain pathspec it would match ``a1.md``,
    changed later, and date the file by that commit."""
    from scribed.core.import_read import file_date

    repo = tmp_path / "r"
    git(tmp_path, "init", "-q", str(repo))
    (repo / "a[1].md").write_text("one\n")
    (repo / "a1.md").write_text("two\n")

    def commit(when: str, *args: str) -> None:
        env = {**os.environ, "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": when}
        p = subprocess.run(
            ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-q", *args],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert p.returncode == 0, p.stderr

    git(repo, "add", ".")
    commit("2020-01-02T03:04:05Z", "-m", "one")
    (repo / "a1.md").write_text("three\n")
    commit("2021-06-07T08:09:10Z", "-am", "two")
    when, how = file_date(repo / "a[1].md", repo)
    assert (how, when.date().isoformat()) == ("git", "2020-01-02")


LEGACY_COLD = (
    "# Cold memory: picard\n\n"
    "### 2026-10-01: Chose Postgres over MySQL for the billing service\n"
    "Decided with the team: Postgres 16, because of row-level security. See #301.\n\n"
    "### 2026-10-15: Rate limiter design\nToken bucket per API key, 100 req/min, stored in Redis.\n"
)


def test_setup_in_a_repo_that_commits_squads_cold_file_commits_its_entries(tmp_path: Path) -> None:
    """A Squad team commits ``cold/picard.md`` (and a hot file). Setup takes them out of the index
    and writes the entries as files under ``cold/picard/``: the documented lines (and the line
    setup prints) must commit those files with the removal, so the remote never lacks the memory
    and a teammate's pull leaves them the entries."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    seed = tmp_path / "seed"
    git(tmp_path, "init", "-q", str(seed))
    memory = seed / ".squad/memory"
    (memory / "cold").mkdir(parents=True)
    (memory / "hot").mkdir()
    (memory / "cold/picard.md").write_text(LEGACY_COLD)
    (memory / "hot/picard.md").write_text("# Hot memory: picard\n\nCurrent task: billing migration\n")
    git(seed, "add", ".")
    git(seed, "-c", "user.email=s@example.invalid", "-c", "user.name=s", "commit", "-q", "-m", "squad")
    git(seed, "push", "-q", str(remote), "HEAD:main")
    git(remote, "symbolic-ref", "HEAD", "refs/heads/main")
    a, b = Clone(tmp_path, "a", remote), Clone(tmp_path, "b", remote)
    out = run_documented(a)
    assert documented_setup()[-1] in out, out  # setup prints the line that commits its changes
    assert git(a.dir, "status", "--porcelain", "--untracked-files=all").stdout == ""
    tracked = git(a.dir, "ls-files", ".squad/memory").stdout.split()
    assert ".squad/memory/cold/picard.md" not in tracked
    entries = [f for f in tracked if f.startswith(".squad/memory/cold/picard/") and f.endswith(".md")]
    assert len(entries) == 2, tracked
    a.push()
    b.pull("merge")
    text = "".join((b.dir / f).read_text() for f in entries)
    assert "Postgres 16" in text and "Token bucket per API key" in text
    ctx = b.scribed("context", "picard", "--situation", "resume").stdout.decode()
    assert "Postgres 16" in ctx, ctx

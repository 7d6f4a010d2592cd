"""Team memory on git, with real git: two clones of one repository and a bare remote, each running
scribed on its own sessions of the same agents, committing, pulling and pushing in random order.
No merge driver is configured: only what scribed commits (.gitattributes, .squad/memory/.gitignore)
helps, as on a hosted pull-request merge. A pull is sometimes ``-s ours`` or ``-X theirs`` (a
conflict resolved with one side: the other side's entries vanish from the tree), sometimes
``--rebase``."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import threading
import uuid
from pathlib import Path

import pytest
from helpers import run_cli

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

AGENTS = ("riker", "worf")
_TOPICS = ["rate limiting", "the cache key", "the retry budget", "queue pinning", "login flake", "the index"]


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if check and p.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} in {cwd}: {p.stdout}{p.stderr}")
    return p


def _session(folder: Path, n: int, day: int, rnd: random.Random) -> str:
    """A finished Claude Code session with its own identifiers (a file, an issue, a test count)."""
    sid = str(uuid.UUID(int=rnd.getrandbits(128)))
    topic = rnd.choice(_TOPICS)
    ts = f"2026-11-{day:02d}T{10 + n % 10:02d}:{n % 60:02d}"
    turns = [
        ("user", f"Fix {topic} in src/mod_{n}.py, see issue #{400 + n}."),
        ("assistant", f"Reading src/mod_{n}.py first; {topic} is handled in handler_{n}()."),
        ("user", f"Also keep the limit at {n * 7} requests per minute."),
        (
            "assistant",
            f"Decision: use a token bucket keyed by tenant for mod_{n}, because {topic} needs per-tenant limits.",
        ),
        (
            "assistant",
            f"Done: handler_{n}() now applies the limit and tests/test_mod_{n}.py passes ({n + 3} passed).",
        ),
    ]
    lines = []
    for i, (role, text) in enumerate(turns):
        lines.append(
            json.dumps(
                {
                    "type": role,
                    "uuid": f"u{i}",
                    "parentUuid": f"u{i - 1}" if i else None,
                    "sessionId": sid,
                    "timestamp": f"{ts}:{10 + i:02d}.000Z",
                    "cwd": "/repo",
                    "message": {"role": role, "content": text},
                }
            )
        )
    path = folder / f"{sid}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    os.utime(path, (1_790_000_000, 1_790_000_000))  # finished: quiet for far longer than 30 minutes
    return sid


class Clone:
    def __init__(self, tmp: Path, name: str, remote: Path, *, crlf: bool = False) -> None:
        """``crlf``: git checks text files out with CRLF (``core.autocrlf=true``, a Windows clone)."""
        self.name = name
        self.dir = tmp / name
        git(tmp, "clone", "-q", *(["-c", "core.autocrlf=true"] if crlf else []), str(remote), str(self.dir))
        git(self.dir, "config", "user.email", f"{name}@example.invalid")
        git(self.dir, "config", "user.name", name)
        git(self.dir, "config", "pull.rebase", "false")
        self.sources = {a: tmp / f"{name}-transcripts" / a for a in AGENTS}
        for folder in self.sources.values():
            folder.mkdir(parents=True)
        self.cfg = tmp / f"{name}.toml"
        self.cfg.write_text(
            f'root = "{self.dir}"\n[compress]\nbackend = "extractive"\n'
            + "".join(
                f'[[sources]]\nkind = "claude"\npath = "{p}"\nagent = "{a}"\n'
                for a, p in self.sources.items()
            )
        )
        self.sessions: set[str] = set()
        self.facts: set[str] = set()

    def scribed(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        p = run_cli("--config", str(self.cfg), *args)
        assert p.returncode == 0, (self.name, args, p.stderr.decode()[-3000:])
        return p

    def commit(self) -> None:
        git(self.dir, "add", "-A", ".")
        if git(self.dir, "diff", "--cached", "--quiet", check=False).returncode:
            git(self.dir, "commit", "-q", "-m", f"{self.name}: memory")

    def pull(self, how: str) -> None:
        args = {
            "merge": ["pull", "-q", "--no-rebase", "--no-edit"],
            "ours": ["pull", "-q", "--no-rebase", "--no-edit", "-s", "ours"],
            "theirs": ["pull", "-q", "--no-rebase", "--no-edit", "-X", "theirs"],
            "rebase": ["pull", "-q", "--rebase"],
        }[how]
        p = git(self.dir, *args, check=False)
        if p.returncode != 0:  # a conflict git could not resolve: take both sides, as a person might
            assert how != "rebase" or "CONFLICT" in p.stdout + p.stderr, p.stderr
            assert "CONFLICT" in p.stdout + p.stderr, (how, p.stdout, p.stderr)
            self._take_both()

    def _take_both(self) -> None:
        for f in git(self.dir, "diff", "--name-only", "--diff-filter=U").stdout.split():
            path = self.dir / f
            if path.exists():
                text = path.read_text()
                path.write_text(re.sub(r"^(<{7}|={7}|>{7}|\|{7}).*\n", "", text, flags=re.M))
            git(self.dir, "add", "--", f)
        if (self.dir / ".git" / "rebase-merge").exists() or (self.dir / ".git" / "rebase-apply").exists():
            git(self.dir, "-c", "core.editor=true", "rebase", "--continue")
        else:
            git(self.dir, "commit", "-q", "--no-edit")

    def exchange(self) -> None:
        """Pull, run, commit and push: what a teammate's clone does after a change elsewhere."""
        self.pull("merge")
        self.scribed("run-once")
        self.commit()
        self.push()

    def push(self) -> None:
        for _ in range(5):
            if git(self.dir, "push", "-q", "origin", "HEAD", check=False).returncode == 0:
                return
            self.pull("merge")
        raise AssertionError(f"{self.name}: push kept failing")


def _store(clone: Clone) -> dict[str, list[str]]:
    """Session id → the store files that hold it, over every agent's folder."""
    out: dict[str, list[str]] = {}
    for p in sorted((clone.dir / ".squad/memory/cold").glob("*/*.md")):
        for m in re.finditer(r" · session=([^ ·]+) · ", p.read_text()):
            out.setdefault(m.group(1), []).append(p.name)
    return out


def _marked(clone: Clone) -> list[str]:
    memory = clone.dir / ".squad/memory"
    return [
        str(p)
        for p in memory.rglob("*")
        if p.is_file()
        and ".scribed" not in p.parts
        and re.search(r"^<{7}|^>{7}", p.read_text("utf-8", "replace"), re.M)
    ]


def squad_remote(tmp_path: Path) -> Path:
    """A bare remote whose main branch holds a committed ``.squad/``."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    seed = tmp_path / "seed"
    git(tmp_path, "init", "-q", str(seed))
    (seed / ".squad").mkdir()
    (seed / ".squad" / "team.md").write_text("# Team\n")
    git(seed, "add", ".")
    git(seed, "-c", "user.email=s@example.invalid", "-c", "user.name=s", "commit", "-q", "-m", "squad")
    git(seed, "push", "-q", str(remote), "HEAD:main")
    git(remote, "symbolic-ref", "HEAD", "refs/heads/main")
    return remote


def share(c: Clone, agent: str, days: range, rnd: random.Random) -> None:
    """Sessions of ``agent`` dated ``days`` on clone ``c``, compacted, committed and pushed."""
    for n, day in enumerate(days):
        c.sessions.add(_session(c.sources[agent], n, day, rnd))
    c.scribed("run-once")
    c.commit()
    c.push()


def clone_pair(tmp_path: Path, *, driver: bool) -> tuple[Clone, Clone]:
    """Two clones of one remote after ``a`` ran ``scribed git setup`` (.gitattributes and the memory
    .gitignore committed, pushed and pulled by ``b``). ``driver``: each clone has the merge driver
    in its git config, as docs/teams.md says; else neither (git's own merge, the team sync's repair)."""
    remote = squad_remote(tmp_path)
    a, b = Clone(tmp_path, "a", remote), Clone(tmp_path, "b", remote)
    a.scribed("git", "setup")
    if not driver:
        git(a.dir, "config", "--remove-section", "merge.scribed")
    a.commit()
    a.push()
    b.pull("merge")
    if driver:
        b.scribed("git", "setup")  # the driver in b's git config; .gitattributes came with the pull
    return a, b


@pytest.fixture
def team(tmp_path: Path) -> tuple[Clone, Clone]:
    return clone_pair(tmp_path, driver=False)  # the check runs no custom driver


def _round(c: Clone, rnd: random.Random, n: int) -> None:
    agent = rnd.choice(AGENTS)
    c.sessions.add(_session(c.sources[agent], n, 1 + n % 27, rnd))
    c.scribed("run-once")
    if n % 3 == 0:  # a fact an agent files by hand, on a page both clones write
        title = f"Convention {c.name}{n}: tests of mod_{n} use fixture_{n}"
        p = run_cli(
            "--config", str(c.cfg), "wiki-write", "conventions", "--agent", agent, input=title.encode()
        )
        assert p.returncode == 0, p.stderr.decode()
        c.facts.add(title)


@pytest.mark.slow
@pytest.mark.parametrize("pulls", [("merge", "ours", "theirs"), ("rebase",)])
def test_twenty_rounds_lose_nothing_and_duplicate_nothing(
    team: tuple[Clone, Clone], pulls: tuple[str, ...]
) -> None:
    a, b = team
    rnd = random.Random(29 + len(pulls))
    for n in range(20):
        order = [a, b] if rnd.random() < 0.5 else [b, a]
        if rnd.random() < 0.3:  # both clones write at once
            threads = [
                threading.Thread(target=_round, args=(c, rnd, 100 * i + n)) for i, c in enumerate(order)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        else:
            _round(order[0], rnd, n)
        for c in order:
            c.commit()
            c.pull(rnd.choice(pulls))
            if rnd.random() < 0.5:
                c.scribed("run-once")  # a run between a pull and the push: the views follow the merge
                c.commit()
            c.push()
    for c in (a, b, a):  # a final pull, run and push on each
        c.pull("merge")
        c.scribed("run-once")
        c.commit()
        c.push()
    b.pull("merge")
    b.scribed("run-once")
    assert git(b.dir, "status", "--porcelain").stdout.strip() == "", (
        "a run after the last pull changed nothing"
    )
    every = a.sessions | b.sessions
    facts = a.facts | b.facts
    assert facts
    for c in (a, b):
        titles = _wiki_titles(c)
        assert sorted(t for t in titles if t.startswith("Convention ")) == sorted(facts), (c.name, titles)
        assert _marked(c) == []
        store = _store(c)
        assert set(store) == every, (c.name, every - set(store), set(store) - every)
        assert all(len(files) == 1 for files in store.values()), {
            s: f for s, f in store.items() if len(f) > 1
        }
        for agent in AGENTS:
            view = (c.dir / f".squad/memory/cold/{agent}.md").read_text()
            ids = re.findall(r"provenance: id=(e-[0-9a-f]+)", view)
            assert len(ids) == len(set(ids))
            hot = (c.dir / f".squad/memory/hot/{agent}.md").read_text()
            assert hot.count("\n---\n") <= 1 and "<<<<<<<" not in hot
    for (
        agent
    ) in AGENTS:  # each clone's (git-ignored) hot file was seeded from the newest entry, pulled or not
        seeds = [
            re.search(r"^entry: (\S+)$", (c.dir / f".squad/memory/hot/{agent}.md").read_text(), re.M)
            for c in (a, b)
        ]
        assert seeds[0] and seeds[1] and seeds[0].group(1) == seeds[1].group(1), agent
    for agent in AGENTS:
        got = [c.scribed("context", agent, "--situation", "debug").stdout for c in (a, b)]
        assert got[0] == got[1]
    merges = git(a.dir, "rev-list", "--merges", "--count", "HEAD").stdout.strip()
    print(
        f"TEAM {pulls}: {len(every)} sessions, {len(facts)} wiki facts, {merges} merge commits, "
        f"{len(_store(a))} in a's store, {len(_store(b))} in b's"
    )
    assert "hot/" in git(a.dir, "check-ignore", "-v", ".squad/memory/hot/riker.md").stdout


def test_an_entry_a_merge_dropped_comes_back(team: tuple[Clone, Clone]) -> None:
    """b's entry is discarded by a's ``-s ours`` merge; b's next run after pulling writes it back."""
    a, b = team
    rnd = random.Random(7)
    _round(b, rnd, 1)
    b.commit()
    b.push()
    _round(a, rnd, 2)
    a.commit()
    a.pull("ours")  # keeps a's tree: b's entry file is gone from the merge
    a.push()
    b.pull("merge")
    sid = next(iter(b.sessions))
    assert sid not in _store(b)  # the merge dropped it from the tree
    p = b.scribed("run-once")
    assert b"cold_entry_restored" in p.stdout + p.stderr
    assert sid in _store(b)
    b.commit()
    b.push()
    a.pull("merge")
    a.scribed("run-once")
    assert set(_store(a)) == a.sessions | b.sessions


def _fact(c: Clone, text: str) -> None:
    p = run_cli("--config", str(c.cfg), "wiki-write", "conventions", "--agent", "riker", input=text.encode())
    assert p.returncode == 0, p.stderr.decode()


def test_a_wiki_fact_a_merge_dropped_comes_back(team: tuple[Clone, Clone]) -> None:
    """b's fact is discarded by a's ``-s ours`` merge (and again by b's merge of it, which git
    takes as a deliberate removal); b's next run writes it back, once, and says so."""
    a, b = team
    _fact(b, "Name test fixtures after the module they serve.")
    b.commit()
    b.push()
    _fact(a, "Pin the CI image by digest.")
    a.commit()
    a.pull("ours")
    a.push()
    b.pull("merge")
    assert "fixtures" not in (b.dir / ".squad/memory/wiki/conventions.md").read_text()
    p = b.scribed("run-once")
    assert b"wiki_block_restored" in p.stdout + p.stderr
    b.commit()
    b.push()
    a.pull("merge")
    a.scribed("run-once")
    for c in (a, b):
        page = (c.dir / ".squad/memory/wiki/conventions.md").read_text()
        assert page.count("fixtures after the module") == 1 and page.count("by digest") == 1, page


def test_a_ledger_entry_no_file_holds_is_compacted_again(team: tuple[Clone, Clone]) -> None:
    """Both the view and the store lost the entry (a hand, a reset): the source is still there, so
    the next run compacts it again instead of trusting the ledger."""
    a, _ = team
    _round(a, random.Random(3), 1)
    cold = a.dir / ".squad/memory/cold"
    for p in [*cold.glob("*/*.md"), *cold.glob("*.md")]:
        p.unlink()
    p = a.scribed("run-once", "--json")
    assert json.loads(p.stdout)["compacted"] == 1
    assert set(_store(a)) == a.sessions


def _wiki_titles(clone: Clone) -> list[str]:
    out: list[str] = []
    for p in sorted((clone.dir / ".squad/memory/wiki").glob("*.md")):
        if p.name != "index.md":
            out += re.findall(r"^### (.+)$", p.read_text(), flags=re.M)
    return out


def test_two_machines_promoting_the_same_night_give_one_fact_each(team: tuple[Clone, Clone]) -> None:
    """Both clones promote the same old entries; after the merge each fact is there once, and the
    promoted entries stay out of cold on both clones (retired, not restored)."""
    a, b = team
    share(a, "riker", range(2, 5), random.Random(11))
    b.pull("merge")
    b.scribed("run-once")
    for c in (a, b):
        c.scribed("promote", "--as-of", "2027-01-15")
        c.commit()
    a.push()
    b.exchange()
    a.pull("merge")
    a.scribed("run-once")
    for c in (a, b):
        assert _marked(c) == []
        titles = _wiki_titles(c)
        assert titles and len(titles) == len(set(titles)), titles
        assert _store(c) == {}, "promoted entries came back into cold"
        retired = (c.dir / ".squad/memory/cold/riker/retired.txt").read_text()
        assert len(retired.splitlines()) == 3
    assert _wiki_titles(a) == _wiki_titles(b)


def test_a_promotion_on_one_machine_leaves_cold_on_every_clone(team: tuple[Clone, Clone]) -> None:
    """Promotion runs in one place (a CI job): a teammate's view drops what it retired instead of
    writing it back as lost, and its ledger does not compact it again."""
    a, b = team
    share(b, "worf", range(3, 5), random.Random(5))
    a.pull("merge")
    a.scribed("promote", "--as-of", "2027-01-15")  # the CI job
    a.commit()
    a.push()
    b.pull("merge")
    out = b.scribed("run-once", "--json")
    assert json.loads(out.stdout)["compacted"] == 0
    b.commit()
    assert _store(b) == {} and "### " not in (b.dir / ".squad/memory/cold/worf.md").read_text()
    assert len(_wiki_titles(b)) >= 2


def test_a_spawn_after_a_pull_sees_the_pulled_entry_without_a_run(team: tuple[Clone, Clone]) -> None:
    a, b = team
    rnd = random.Random(13)
    _round(b, rnd, 1)  # b has a view of its own
    b.commit()
    b.push()
    a.pull("merge")
    a.sessions.add(_session(a.sources["riker"], 9, 20, rnd))
    a.scribed("run-once")
    a.commit()
    a.push()
    b.pull("merge")  # no run on b: its view is older than the store
    out = b.scribed("context", "riker", "--include-cold").stdout.decode()
    assert "src/mod_9.py" in out, out
    assert "e-" in (b.dir / ".squad/memory/cold/riker.md").read_text()


def test_a_transcript_in_the_repository_is_compacted_on_one_clone_only(team: tuple[Clone, Clone]) -> None:
    """An Aider history committed with the code: the clone that pulls it with its entry compacts
    nothing again (the entry's content id is already in its view), and the store holds it once."""
    a, b = team
    for c in (a, b):
        c.cfg.write_text(
            c.cfg.read_text() + f'[[sources]]\nkind = "markdown"\npath = "{c.dir}/chat"\nagent = "data"\n'
        )
    (a.dir / "chat").mkdir()
    hist = a.dir / "chat/.aider.chat.history.md"
    hist.write_text(
        "\n# aider chat started at 2026-11-01 10:00:00\n\n#### Pin worker_7 to queue q_7 in src/w.py.\n\n"
        "Pinned worker_7 to q_7 in src/w.py; tests/test_q.py passes (4 passed).\n\n"
    )
    os.utime(hist, (1_790_000_000, 1_790_000_000))
    first = json.loads(a.scribed("run-once", "--json").stdout)
    assert first["compacted"] == 1
    a.commit()
    a.push()
    b.pull("merge")
    os.utime(b.dir / "chat/.aider.chat.history.md", (1_790_000_000, 1_790_000_000))
    again = json.loads(b.scribed("run-once", "--json").stdout)
    assert again["compacted"] == 0, again["entries"]
    assert len(list((b.dir / ".squad/memory/cold/data").glob("*.md"))) == 1


def _holders(clone: Clone, agent: str) -> dict[str, list[str]]:
    """Entry id → the ids of the view's entries that hold it (itself, or digests that fold it)."""
    from scribed.compress.entry import split_entries

    out: dict[str, list[str]] = {}
    for e in split_entries((clone.dir / f".squad/memory/cold/{agent}.md").read_text())[1]:
        for i in e.ids:
            if i.startswith("e-"):
                out.setdefault(i, []).append(e.entry_id or "")
    return out


def test_two_clones_folding_the_same_entries_end_with_one_digest(team: tuple[Clone, Clone]) -> None:
    """Each clone folds before it pulls the other's fold: the two digests share an entry. After
    the pulls every entry is in one digest (or entry) on both clones, and both hold the same."""
    a, b = team
    for c in (a, b):
        c.cfg.write_text(c.cfg.read_text().replace("[compress]", "[cold]\nmax_bytes = 1024\n[compress]"))
    rnd = random.Random(17)
    a.sessions.add(_session(a.sources["riker"], 1, 2, rnd))
    a.scribed("run-once")
    a.commit()
    a.push()
    b.pull("merge")
    b.scribed("run-once")
    a.sessions.add(_session(a.sources["riker"], 2, 3, rnd))
    a.scribed("run-once")  # a folds its two entries
    b.sessions.add(_session(b.sources["riker"], 3, 4, rnd))
    b.scribed("run-once")  # b folds a's first entry and its own
    for c in (a, b):
        c.commit()
    a.push()
    b.exchange()
    a.exchange()
    b.pull("merge")
    b.scribed("run-once")
    held = [_holders(c, "riker") for c in (a, b)]
    assert held[0] == held[1]
    assert len(held[0]) == 3 and all(len(v) == 1 for v in held[0].values()), held[0]
    digests = {d for v in held[0].values() for d in v if d.startswith("d-")}
    assert len(digests) >= 1
    assert _marked(a) == [] and git(b.dir, "status", "--porcelain").stdout.strip() == ""


def test_entries_of_the_same_second_are_listed_alike_on_every_clone(team: tuple[Clone, Clone]) -> None:
    """Each clone compacts a session ending in the same second; after the exchange both views
    list the two entries in the same order, so both clones load the same spawn context."""
    a, b = team
    rnd = random.Random(23)
    for c in (a, b):
        c.sessions.add(_session(c.sources["riker"], 1, 5, rnd))  # same n and day: same timestamps
        c.scribed("run-once")
        c.commit()
    a.push()
    b.exchange()
    a.pull("merge")
    a.scribed("run-once")
    views = [
        re.findall(r"provenance: id=(e-[0-9a-f]+)", (c.dir / ".squad/memory/cold/riker.md").read_text())
        for c in (a, b)
    ]
    assert len(views[0]) == 2 and views[0] == views[1], views
    got = [c.scribed("context", "riker", "--situation", "debug").stdout for c in (a, b)]
    assert got[0] == got[1]


def _index_line(clone: Clone, topic: str) -> str:
    index = (clone.dir / ".squad/memory/wiki/index.md").read_text()
    m = re.search(rf"^- \[{topic}\]\({topic}\.md\): .*$", index, re.M)
    assert m, index
    return m.group(0)


@pytest.mark.parametrize("driver", [False, True])
def test_the_wiki_index_counts_a_page_a_merge_changed(team: tuple[Clone, Clone], driver: bool) -> None:
    """Both clones write a fact to ``db``; after the merge the page holds both, and the next run
    (or any command) rewrites ``index.md`` to say so: a merge took both sides' "(1 active)" line."""
    a, b = team
    if driver:  # each developer ran setup: git merges the page with scribed's driver
        for c in (a, b):
            c.scribed("git", "setup")
    p = run_cli(
        "--config", str(a.cfg), "wiki-write", "db", "--agent", "riker", input=b"Run postgres 16 in CI."
    )
    assert p.returncode == 0, p.stderr.decode()
    a.commit()
    a.push()
    p = run_cli(
        "--config",
        str(b.cfg),
        "wiki-write",
        "db",
        "--agent",
        "worf",
        input=b"Keep the pool at 20 connections.",
    )
    assert p.returncode == 0, p.stderr.decode()
    assert "(1 active)" in _index_line(b, "db")
    b.commit()
    b.pull("merge")
    page = (b.dir / ".squad/memory/wiki/db.md").read_text()
    assert "postgres 16" in page and "20 connections" in page, page
    b.scribed("run-once")
    assert "(2 active)" in _index_line(b, "db"), _index_line(b, "db")
    b.commit()
    b.push()
    a.pull("merge")
    a.scribed("context", "riker")  # a reader's command takes the lock too: the index follows the pull
    assert "(2 active)" in _index_line(a, "db")
    assert git(a.dir, "status", "--porcelain").stdout.strip() == ""


def test_a_run_that_adds_entries_changes_no_committed_entry(team: tuple[Clone, Clone]) -> None:
    """A store file's bytes do not depend on where its entry sits in the view: a run adding an
    entry after the last one, or before the others, leaves every committed file as it was (a
    blank line was added to the entry that stopped being last, or taken from the new last)."""
    a, _ = team
    rnd = random.Random(9)
    share(a, "worf", range(10, 12), rnd)
    for n, day in ((7, 13), (8, 2)):  # one after the others, one before them
        a.sessions.add(_session(a.sources["worf"], n, day, rnd))
        a.scribed("run-once")
        changed = git(a.dir, "status", "--porcelain", "--", ".squad/memory").stdout.splitlines()
        assert changed and all(ln.startswith("??") for ln in changed), changed  # new files only
        a.commit()
    a.scribed("run-once")
    assert git(a.dir, "status", "--porcelain").stdout == "", "a run with nothing new changes nothing"


def test_a_promotion_and_a_teammates_new_entry_merge_without_a_conflict(team: tuple[Clone, Clone]) -> None:
    """One clone promotes (its entries' files deleted) while the other compacts a new session:
    the other clone's commit touches none of the promoted files, so the merge has no
    modify/delete conflict."""
    a, b = team
    rnd = random.Random(11)
    share(a, "worf", range(3, 6), rnd)
    b.pull("merge")
    b.scribed("run-once")
    a.scribed("promote", "--as-of", "2027-01-15")
    a.commit()
    a.push()
    b.sessions.add(_session(b.sources["worf"], 9, 20, rnd))
    b.scribed("run-once")
    b.commit()
    p = git(b.dir, "pull", "--no-rebase", "--no-edit", check=False)
    assert p.returncode == 0 and "CONFLICT" not in p.stdout + p.stderr, p.stdout + p.stderr


def test_promoting_hand_written_entries_takes_each_out_of_cold(tmp_path: Path) -> None:
    """Entries written by hand (no id) are keyed by their text as the store holds it: promotion,
    which reads the view (where an entry that is not last ends in a blank line), and the sync,
    which reads the store, name the same archive, so each leaves cold in one promotion (all but
    the last were written back as unexplained)."""
    root = tmp_path / "r"
    cold = root / ".squad/memory/cold"
    cold.mkdir(parents=True)
    git(root, "init", "-q", ".")
    notes = [
        ("2026-01-05", "one", "use blue-green deploys for the gateway"),
        ("2026-01-06", "two", "pin k8s 1.29"),
    ]
    (cold / "worf.md").write_text(
        "# Cold memory: worf\n\n"
        + "\n".join(f"### {d} — Hand note {n}\n#### Decisions\n- {what}\n" for d, n, what in notes)
    )
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(f'root = "{root}"\n[compress]\nbackend = "extractive"\n')
    for args in (("run-once",), ("promote", "--as-of", "2026-11-29"), ("run-once",)):
        p = run_cli("--config", str(cfg), *args)
        assert p.returncode == 0, p.stderr.decode()
    assert "### " not in (cold / "worf.md").read_text()
    assert [p.name for p in (cold / "worf").glob("*.md")] == []

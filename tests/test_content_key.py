"""Keyed content ids (issue 31, part 4): an entry's id is no check for a guess at a secret turn,
two clones with different keys write the same shared files, a root an older release left is
carried over without a duplicate, and the key stays private."""

from __future__ import annotations

import gzip
import json
import multiprocessing
import os
import pickle
import re
import shutil
import sqlite3
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from helpers import run_cli

from scribed import sources
from scribed.core.content_key import KEY_FILE, Keyring, load
from scribed.core.ledger_ids import content_id, legacy_content_id, legacy_turn_digests
from scribed.models import Session, Turn
from scribed.session.door import redact_session

DATA = Path(__file__).parent / "data"
sys.path.insert(0, str(DATA))
import make_old_root  # noqa: E402

SECRET = make_old_root.SECRET_TURN  # a password typed alone: no redaction rule can tell it is one
TOKEN = "ghp_" + "Zq8mN2vB5xC1lK7jH3gF9dS4aP6oI0uY2tR8"  # one a rule knows
GUESSES = [SECRET, "hunter2", "Meadowlark7Quartx", "Sunflower2026", TOKEN]
# guesses at the token: of its shape (what is not of it is no guess at a value redaction removed)
TOKEN_GUESSES = [
    TOKEN,
    TOKEN[:-1] + "9",
    "ghp_" + "Xw3Rt7Yu1Io5Pa9Sd2Fg6Hj0Kl4Zx8Cv3Bn7M",
    "ghp_" + "0123456789" * 3 + "abcdef",
]
SID = "33333333-3333-4333-8333-333333333333"


def _transcripts(root: Path) -> Path:
    """The same sessions in any root (inside it: provenance paths are then the same everywhere)."""
    folder = root / "transcripts/claude"
    folder.mkdir(parents=True)
    make_old_root.claude(folder / f"{SID}.jsonl", SID, 6, [
        ("user", "The deploy key for CI expired; fix .github/workflows/ci.yml."),
        ("assistant", "Paste the new password and the token when you have them."),
        ("user", SECRET),
        ("user", f"and the token is {TOKEN}"),
        ("assistant", "Decision: ci.yml reads DEPLOY_TOKEN from the repository secrets, never inline."),
        ("assistant", "Done: the workflow passes (3 jobs green)."),
    ])  # fmt: skip
    return folder


def _root(tmp: Path, name: str) -> tuple[Path, Path]:
    root = tmp / name / "root"
    (root / ".squad/memory/hot").mkdir(parents=True)
    _transcripts(root)
    cfg = tmp / name / "c.toml"
    cfg.write_text(
        f'root = "{root}"\n[compress]\nbackend = "extractive"\n[log]\nlevel = "debug"\nformat = "json"\n'
        f'[[sources]]\nkind = "claude"\npath = "{root}/transcripts/claude"\nagent = "picard"\n'
    )
    return root, cfg


def _run(cfg: Path, *more: str) -> tuple[dict[str, object], str, str]:
    p = run_cli("--config", str(cfg), "run-once", "--json", *more)
    assert p.returncode == 0, p.stderr.decode()[-3000:]
    return json.loads(p.stdout), p.stdout.decode(), p.stderr.decode()


def _store(root: Path) -> dict[str, bytes]:
    """The shared cold files (what git carries between clones), by path."""
    cold = root / ".squad/memory/cold"
    return {str(p.relative_to(cold)): p.read_bytes() for p in sorted(cold.glob("*/*.md"))}


def _ids(root: Path) -> list[str]:
    return re.findall(r"id=(e-[0-9a-f]{12})", (root / ".squad/memory/cold/picard.md").read_text())


def _with_turn(sess: Session, at: int, text: str) -> Session:
    turns = [Turn(t.role, text if k == at else t.text, t.kind, t.ts, t.line, t.end_offset, t.tool_name)
             for k, t in enumerate(sess.turns)]  # fmt: skip
    return Session(sess.agent, sess.session_id, sess.source, sess.kind, turns, sess.start, sess.end)


def test_an_id_confirms_no_guess_at_a_secret_turn(tmp_path: Path) -> None:
    """Hashing a guess the way ids are made gives the same id whatever the guess: the secret turn
    is not in what the id is made of. The old id (an unkeyed sha256 of the raw turns) told the
    right guess from the others, which is what the test checks it can see."""
    root, cfg = _root(tmp_path, "a")
    out, _, _ = _run(cfg)
    assert out["compacted"] == 1
    (published,) = _ids(root)
    (sess,) = sources.parse_file("claude", root / f"transcripts/claude/{SID}.jsonl", "picard").sessions
    at = next(k for k, t in enumerate(sess.turns) if t.text == SECRET)
    tok = next(k for k, t in enumerate(sess.turns) if TOKEN in t.text)
    for guess in GUESSES:
        assert content_id(redact_session(_with_turn(sess, at, guess))) == published, guess
    for guess in TOKEN_GUESSES:
        assert content_id(redact_session(_with_turn(sess, tok, f"and the token is {guess}"))) == published
    old = {legacy_content_id(sess.session_id, _with_turn(sess, at, g).turns) for g in GUESSES}
    assert len(old) == len(GUESSES)  # the old scheme told them apart: an oracle
    # the ledger: keyed values only, which the right key (and only it) reproduces
    db = sqlite3.connect(root / ".squad/memory/.scribed/ledger.sqlite")
    ckey, blob, old_col = db.execute("SELECT content_key, turn_keys, turn_digests FROM entries").fetchone()
    db.close()
    assert old_col is None
    stored = {blob[i : i + 8] for i in range(0, len(blob), 8)}
    secret_turn = [sess.turns[at]]
    for unkeyed in (
        legacy_turn_digests(secret_turn),
        legacy_turn_digests(redact_session(sess, secret_turn).session.turns),
    ):
        assert unkeyed not in stored
    keys = Keyring(bytes.fromhex((root / ".squad/memory/.scribed" / KEY_FILE).read_text()))
    assert keys.turn_digests(secret_turn) in stored and keys.content_key(sess.session_id, sess.turns) == ckey
    other = Keyring(os.urandom(32))
    assert (
        other.turn_digests(secret_turn) not in stored
        and other.content_key(sess.session_id, sess.turns) != ckey
    )


def test_two_roots_with_different_keys_write_the_same_shared_files(tmp_path: Path) -> None:
    """Two clones compacting the same sessions (a transcript committed with the code) write the
    same entry files, name and bytes, though each keys its own ledger with its own key."""
    (ra, ca), (rb, cb) = _root(tmp_path, "a"), _root(tmp_path, "b")
    hist = ra / "transcripts/aider"
    hist.mkdir()
    text = make_old_root.aider_session("2026-11-07 10:00:00", 7) + make_old_root.aider_session(
        "2026-11-08 10:00:00", 8
    )
    for r in (ra, rb):
        (r / "transcripts/aider").mkdir(exist_ok=True)
        f = r / "transcripts/aider/.aider.chat.history.md"
        f.write_text(text)
        os.utime(f, (make_old_root.OLD, make_old_root.OLD))
    for cfg, r in ((ca, ra), (cb, rb)):
        cfg.write_text(
            cfg.read_text()
            + f'[[sources]]\nkind = "markdown"\npath = "{r}/transcripts/aider"\nagent = "data"\n'
        )
        assert _run(cfg)[0]["compacted"] == 3
    keys = [(r / ".squad/memory/.scribed" / KEY_FILE).read_text() for r in (ra, rb)]
    assert keys[0] != keys[1]
    ledgers = [sqlite3.connect(r / ".squad/memory/.scribed/ledger.sqlite") for r in (ra, rb)]
    rows = [dict(db.execute("SELECT id, content_key FROM entries").fetchall()) for db in ledgers]
    for db in ledgers:
        db.close()
    assert rows[0].keys() == rows[1].keys() and len(rows[0]) == 3  # the same shared ids …
    assert all(rows[0][k] != rows[1][k] for k in rows[0])  # … filed under different keyed digests
    store = _store(ra)
    assert len(store) == 3 and store == _store(rb)


def _old_root(tmp: Path) -> tuple[Path, Path, str]:
    """The root the code at f2b29dd left (tests/data/make_old_root.py), unpacked; its config."""
    with tarfile.open(DATA / "root-f2b29dd.tar.gz") as tar:
        tar.extractall(tmp, filter="tar")
    root = tmp / "root"
    cfg = tmp / "c.toml"
    cfg.write_text(make_old_root.config(root))
    return root, cfg, (tmp / "OLD_ROOT").read_text()


def _memory(root: Path) -> dict[str, bytes]:
    """The memory's files but scribed's own: the state folder, and the ``.gitignore`` an old root
    gets two lines added to at its first run (``/.scribed/``, ``/inbox/``; its old lines stay)."""
    mem = root / ".squad/memory"
    return {
        str(p.relative_to(mem)): p.read_bytes()
        for p in sorted(mem.rglob("*"))
        if p.is_file() and ".scribed" not in p.parts and p != mem / ".gitignore"
    }


def _sessions(root: Path) -> list[str]:
    """Every session id the shared store holds, once per entry file."""
    return sorted(m for t in _store(root).values() for m in re.findall(r" · session=([^ ·]+) · ", t.decode()))


def test_an_old_root_in_place_migrates_with_nothing_compacted_again(tmp_path: Path) -> None:
    root, cfg, old = _old_root(tmp_path)
    db = sqlite3.connect(root / ".squad/memory/.scribed/ledger.sqlite")
    for table in ("sources", "entries"):  # the root where it was: its ledger's paths are its own
        db.execute(f"UPDATE {table} SET path = replace(path, ?, ?)", (old, str(root)))
    db.commit()
    assert db.execute("PRAGMA user_version").fetchone()[0] == 4
    legacy = dict(
        db.execute("SELECT id, turn_digests FROM entries WHERE length(turn_digests) > 0").fetchall()
    )
    db.close()
    assert len(legacy) == 4  # the transcripts' entries (the hot one has none)
    before = _memory(root)
    out, _, _ = _run(cfg)
    assert out["compacted"] == 0, out
    assert _memory(root) == before
    led = root / ".squad/memory/.scribed/ledger.sqlite"
    db = sqlite3.connect(led)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 6  # 6: copies owed (none here)
    assert db.execute("SELECT COUNT(*) FROM entries WHERE turn_digests IS NOT NULL").fetchone()[0] == 0
    assert db.execute("SELECT COUNT(*) FROM entries WHERE length(legacy_keys) > 0").fetchone()[0] == 4
    db.close()
    data = led.read_bytes() + (
        led.with_name(led.name + "-wal").read_bytes() if led.with_name(led.name + "-wal").exists() else b""
    )
    assert not any(
        d[i : i + 8] in data for d in legacy.values() for i in range(0, len(d), 8)
    )  # the unkeyed digests left the file

    # an Aider history edited in place: only the edited turn is new (the old digests, keyed, tell it)
    hist = root / "transcripts/aider/.aider.chat.history.md"
    hist.write_text(hist.read_text().replace("Pin worker_2_1 to queue q_21", "Pin worker_2_1 to queue q_99"))
    os.utime(hist, (make_old_root.OLD + 100, make_old_root.OLD + 100))
    # a Claude transcript copied (a rotated file): nothing new
    cl = root / "transcripts/claude"
    shutil.copy2(cl / "22222222-2222-4222-8222-222222222222.jsonl", cl / "copy-of-2222.jsonl")
    out, _, _ = _run(cfg)
    assert out["compacted"] == 1, out
    assert [e["agent"] for e in out["entries"]] == ["data"]  # type: ignore[attr-defined]
    (text,) = [t.decode() for t in _store(root).values() if "q_99" in t.decode()]
    assert "q_99" in text and "worker_2_0" not in text and "worker_2_2" not in text  # the edit, not the rest
    assert len(_store(root)) == 6 and len(set(_sessions(root))) == 5


def test_an_old_root_moved_is_recognised_by_its_old_ids(tmp_path: Path) -> None:
    """The same root at another path: no source row matches, every transcript is read again, and
    each session is recognised by the ids its entries had (unkeyed, from before)."""
    root, cfg, _ = _old_root(tmp_path)
    before = _memory(root)
    out, _, _ = _run(cfg)
    assert out["compacted"] == 0, out
    assert _memory(root) == before
    # and its ledger lost: rebuilt from the files (the old ids), nothing compacted again
    for p in (root / ".squad/memory/.scribed").glob("ledger.sqlite*"):
        p.unlink()
    out, _, err = _run(cfg)
    assert out["compacted"] == 0 and "ledger_rebuilt" in err, out
    assert _memory(root) == before


def test_the_key_is_private_and_never_shown(tmp_path: Path) -> None:
    root, cfg = _root(tmp_path, "a")
    _, stdout, stderr = _run(cfg)
    state = root / ".squad/memory/.scribed"
    key_file = state / KEY_FILE
    assert key_file.stat().st_mode & 0o777 == 0o600
    hexkey = key_file.read_text().strip()
    key = bytes.fromhex(hexkey)
    shown = [stdout, stderr]
    for args in (
        ("status", "--json"),
        ("doctor",),
        ("context", "picard", "--include-cold"),
        ("search", "ci.yml"),
    ):
        p = run_cli("--config", str(cfg), *args)
        shown += [p.stdout.decode(), p.stderr.decode()]
    assert not any(hexkey in s or hexkey.upper() in s for s in shown)
    for p in root.rglob("*"):
        if not p.is_file() or p == key_file:
            continue
        data = p.read_bytes()
        if p.suffix == ".gz":
            data = gzip.decompress(data)
        assert hexkey.encode() not in data and key not in data, p
    if shutil.which("git"):  # the state folder is git-ignored: the key is never committed
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
        staged = subprocess.run(
            ["git", "-C", str(root), "diff", "--cached", "--name-only"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "cold/picard/" in staged and KEY_FILE not in staged and ".scribed/" not in staged


def test_a_damaged_or_open_key_is_replaced_or_closed(tmp_path: Path) -> None:
    root, cfg = _root(tmp_path, "a")
    assert _run(cfg)[0]["compacted"] == 1
    key_file = root / ".squad/memory/.scribed" / KEY_FILE
    key_file.chmod(0o644)
    _, _, err = _run(cfg, "--force")
    assert "content_key_mode" in err and key_file.stat().st_mode & 0o777 == 0o600
    key_file.write_text("not a key\n")
    (root / "transcripts/claude" / f"{SID}.jsonl").touch()  # read again: recognised by its id alone
    os.utime(root / "transcripts/claude" / f"{SID}.jsonl", (make_old_root.OLD + 5, make_old_root.OLD + 5))
    out, _, err = _run(cfg)
    assert out["compacted"] == 0, out
    assert "content_key_damaged" in err and "key replaced" in err
    assert len(list(key_file.parent.glob(f"{KEY_FILE}.damaged-*"))) == 1
    assert len(bytes.fromhex(key_file.read_text())) == 32 and len(_store(root)) == 1


def _first_load(state: str, barrier: object, got: object) -> None:
    barrier.wait()  # type: ignore[attr-defined]
    got.put(load(Path(state), create=True).key_bytes().hex())  # type: ignore[attr-defined]


def test_first_runs_at_once_agree_on_one_key(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    for n in range(5):
        state = tmp_path / f"s{n}"
        state.mkdir()
        barrier, got = ctx.Barrier(4), ctx.Queue()
        procs = [ctx.Process(target=_first_load, args=(str(state), barrier, got)) for _ in range(4)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(30)
        keys = {got.get(timeout=5) for _ in procs}
        assert len(keys) == 1 and (state / KEY_FILE).read_text().strip() in keys
        assert sorted(x.name for x in state.iterdir()) == [KEY_FILE]  # no temp file left


def test_a_dry_run_writes_no_key(tmp_path: Path) -> None:
    root, cfg = _root(tmp_path, "a")
    (root / ".squad/memory/.scribed").mkdir()  # a root that ran before, its key since lost
    p = run_cli("--config", str(cfg), "run-once", "--dry-run", "--json")
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    assert not (root / ".squad/memory/.scribed" / KEY_FILE).exists()
    with pytest.raises(TypeError):
        pickle.dumps(Keyring(bytes(32)))

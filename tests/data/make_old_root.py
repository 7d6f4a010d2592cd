"""Build a squad root with the scribed on ``PYTHONPATH`` and pack it: the root an older release
left, for ``tests/test_content_key.py`` to upgrade (ids and digests made before they were keyed).

``tests/data/root-f2b29dd.tar.gz`` was made by the code at commit f2b29dd (before keyed ids)::

    git worktree add /tmp/old f2b29dd
    PYTHONPATH=/tmp/old python tests/data/make_old_root.py tests/data/root-f2b29dd.tar.gz

The archive holds ``root/`` (transcripts inside it, ``.squad/memory`` with its ledger) and
``OLD_ROOT``, the absolute path the root had (the ledger keys sources by absolute path).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

OLD = 1_790_000_000  # an mtime long past any quiet time (whole seconds: tar keeps them exactly)
SECRET_TURN = "Meadowlark7Quartz"  # a password typed alone as a turn: no rule can tell it is one


def claude(path: Path, sid: str, day: int, turns: list[tuple[str, str]]) -> None:
    lines = []
    for i, (role, text) in enumerate(turns):
        rec = {
            "type": role, "uuid": f"{sid[:8]}-u{i}", "parentUuid": f"{sid[:8]}-u{i - 1}" if i else None,
            "sessionId": sid, "timestamp": f"2026-11-{day:02d}T10:{i:02d}:10.000Z", "cwd": "/repo",
            "message": {"role": role, "content": text},
        }  # fmt: skip
        lines.append(json.dumps(rec))
    path.write_text("\n".join(lines) + "\n")
    os.utime(path, (OLD, OLD))


def aider_session(start: str, n: int) -> str:
    out = f"\n# aider chat started at {start}\n\n"
    for j in range(3):
        out += f"#### Pin worker_{n}_{j} to queue q_{n}{j} in src/w{n}.py.\n\n"
        out += f"Pinned worker_{n}_{j} to q_{n}{j} in src/w{n}.py; tests/test_w{n}.py passes ({j + 3} passed).\n\n"
    return out


def build(root: Path) -> Path:
    (root / ".squad/memory/hot").mkdir(parents=True)
    cl = root / "transcripts/claude"
    cl.mkdir(parents=True)
    claude(cl / "11111111-1111-4111-8111-111111111111.jsonl", "11111111-1111-4111-8111-111111111111", 2, [
        ("user", "The staging db wants a password; fix src/db.py to read it from the vault."),
        ("assistant", "What is the staging password?"),
        ("user", SECRET_TURN),
        ("assistant", "Decision: src/db.py reads STAGING_DB_PASSWORD from the vault, never from the repo."),
        ("assistant", "Done: tests/test_db.py passes (12 passed)."),
    ])  # fmt: skip
    claude(cl / "22222222-2222-4222-8222-222222222222.jsonl", "22222222-2222-4222-8222-222222222222", 3, [
        ("user", "Fix the login flake in src/auth.py, see issue #412."),
        ("assistant", "Decision: retry the token refresh once in refresh_token(), because the flake is a race."),
        ("assistant", "Done: tests/test_auth.py passes (30 passed)."),
    ])  # fmt: skip
    md = root / "transcripts/aider"
    md.mkdir(parents=True)
    hist = md / ".aider.chat.history.md"
    hist.write_text(aider_session("2026-11-04 10:00:00", 1) + aider_session("2026-11-05 10:00:00", 2))
    os.utime(hist, (OLD, OLD))
    hot = root / ".squad/memory/hot/riker.md"
    hot.write_text(
        "# Current work\n\nDecision: the cache key is the lockfile hash, in src/cache.py.\n\n"
        "Open: tests/test_cache.py::test_key fails on Windows paths.\n"
    )
    os.utime(hot, (OLD, OLD))
    cfg = root.parent / "c.toml"
    cfg.write_text(config(root))
    return cfg


def config(root: Path) -> str:
    return (
        f'root = "{root}"\n[compress]\nbackend = "extractive"\n[cold]\nttl_days = 36500\n'
        f'[[sources]]\nkind = "claude"\npath = "{root}/transcripts/claude"\nagent = "picard"\n'
        f'[[sources]]\nkind = "markdown"\npath = "{root}/transcripts/aider"\nagent = "data"\n'
    )


def main(dest: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        cfg = build(root)
        env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
        p = subprocess.run(
            [sys.executable, "-m", "scribed", "--config", str(cfg), "run-once", "--json"],
            env=env, capture_output=True, check=False,
        )  # fmt: skip
        if p.returncode != 0:
            raise SystemExit(p.stderr.decode()[-3000:])
        print(json.loads(p.stdout)["compacted"], "entries")
        (Path(tmp) / "OLD_ROOT").write_text(str(root))
        with tarfile.open(dest, "w:gz") as tar:
            tar.add(Path(tmp) / "OLD_ROOT", "OLD_ROOT")
            tar.add(root, "root")


if __name__ == "__main__":
    main(sys.argv[1])

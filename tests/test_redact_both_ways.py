"""Issue 31: one redaction path. The whole hostile corpus (``tests/secrets_corpus.py``) goes through
``scribed redact`` and through a real compacted session (``run-once`` on an LLM backend served by a
loopback fake), placed as transcripts and hot files carry it: a line of its own, and the same line
after words ("tried ..."). Both ways must agree: no corpus secret in the CLI's output, in any file
under the root (cold files, the transcript and hot archives, the SQLite ledger, the search index, the
wiki page a ``wiki-write`` of the corpus made), in the JSON debug log, in ``context``/``search``
output, in what the MCP tools return, or in any LLM request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from llmserver import FakeLLM
from secrets_corpus import SECRETS, Secret
from test_secrets_everywhere import root_files, session_records

AGENT = "picard"


def carried(s: Secret) -> list[str]:
    """How a session carries ``s``: its line alone, and after a few words on the same line."""
    first, nl, rest = s.line.partition("\n")
    return [s.line, f"tried {first}{nl}{rest}"]


def secrets_of(s: Secret) -> list[str]:
    return [s.value, *s.extra]


def leaks(where: str, data: bytes) -> list[str]:
    return [
        f"{where}: {s.name} {v!r}"
        for s in SECRETS
        for v in secrets_of(s)
        if v.encode() in data or json.dumps(v)[1:-1].encode() in data
    ]


def cli_leaks() -> list[str]:
    """``scribed redact`` over every text the sessions below carry."""
    text = "\n\n".join(t for s in SECRETS for t in carried(s)) + "\n"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    p = subprocess.run(
        [sys.executable, "-m", "scribed", "redact"],
        input=text.encode(),
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    assert b"[REDACTED_SECRET]" in p.stdout
    return leaks("scribed redact", p.stdout)


def write_root(tmp: Path, llm_url: str) -> tuple[Path, Path]:
    """A root whose hot file and two Claude Code transcripts carry the whole corpus."""
    root = tmp / "repo"
    for d in ("hot", "cold", "wiki"):
        (root / ".squad/memory" / d).mkdir(parents=True)
    folder = tmp / "transcripts" / "-home-dev-shop"
    folder.mkdir(parents=True)
    texts = [t for s in SECRETS for t in carried(s)]
    for n in range(2):
        mine = texts[n::2]
        parts: list[list[str]] = [mine[k::4] for k in range(4)]  # request, reply, command, output
        sid = f"b0a7{n:04d}-0000-4000-8000-{n:012d}"
        records = session_records(sid, parts)
        (folder / f"session-{n}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (root / f".squad/memory/hot/{AGENT}.md").write_text(
        f"# Hot memory: {AGENT}\n\nCurrent task: rotate the shop credentials\n\n"
        + "\n".join(f"Last actions:\n{t}\n" for t in texts[::3])
    )
    cfg = root / "scribed.toml"
    cfg.write_text(
        'root = "."\n[compress]\nbackend = "llm"\n'
        f'[llm]\nbase_url = "{llm_url}"\nmodel = "tiny"\ntimeout_seconds = 5\nmax_retries = 1\n'
        '[log]\nformat = "json"\nlevel = "debug"\n'
        f'[[sources]]\nkind = "claude"\npath = "{folder.parent}"\nagent = "{AGENT}"\n'
    )
    return root, cfg


def scribed(cfg: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    p = subprocess.run(
        [sys.executable, "-m", "scribed", "--config", str(cfg), *args],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=300,
    )
    assert p.returncode == 0, f"{args}: {p.stderr.decode()[-2000:]}"
    return p


def mcp_outputs(root: Path) -> list[tuple[str, bytes]]:
    """What the MCP tools hand an agent (the plain functions the server wraps)."""
    from scribed.cli import mcp_server as mcp
    from scribed.tiers.cold import Layout

    lay = Layout(root)
    got = {
        "context": mcp.tool_context(lay, AGENT, situation="post-incident", query="credentials"),
        "search": mcp.tool_search(lay, "credentials rotate shop", limit=200),
        "search a secret": mcp.tool_search(lay, SECRETS[0].line, limit=20),
        "recent_sessions": mcp.tool_recent_sessions(lay),
        "resources": [mcp.read_resource(lay, t, n) for t, n, _ in mcp.resource_files(lay)],
    }
    return [(f"MCP {what}", json.dumps(v).encode()) for what, v in got.items()]


def session_leaks(tmp: Path) -> list[str]:
    with FakeLLM() as llm:
        root, cfg = write_root(tmp, llm.url)
        p = scribed(cfg, "run-once", "--force", "--json")
        assert json.loads(p.stdout)["compacted"] >= 3, p.stdout  # two transcripts and the hot file
        corpus = "\n".join(s.line for s in SECRETS[::2]).encode()
        runs = [
            p,
            scribed(cfg, "wiki-write", "credentials", "--agent", AGENT, stdin=b"Rotation\n" + corpus),
            scribed(cfg, "context", AGENT, "--query", "credentials rotate"),
            scribed(cfg, "search", "--json", "--limit", "200", "credentials", "shop"),
            scribed(cfg, "search", "--json", SECRETS[1].line.split("\n")[0]),
        ]
        files = dict(root_files(root))
        state = ".squad/memory/.scribed"
        kinds = {
            "cold": [n for n in files if n.startswith(".squad/memory/cold/")],
            "transcript archive": [
                n for n in files if n.startswith(f"{state}/transcripts/") and n.endswith(".zst")
            ],
            "hot archive": [n for n in files if "/hot/" in n and n.endswith(".md.gz")],
        }
        for what, names in kinds.items():
            assert names, f"no {what} was written: {sorted(files)}"
        assert llm.chat_requests, "the LLM backend was used"
        assert ".squad/memory/.scribed/ledger.sqlite" in files, sorted(files)
        assert any(n.startswith(".squad/memory/wiki/") for n in files), "the wiki-write landed"
        assert b'"level"' in p.stderr, "the JSON debug log was written"
        found = [x for name, data in files.items() for x in leaks(f"file {name}", data)]
        for r in runs:
            found += leaks(f"{r.args[4:6]} stdout", r.stdout) + leaks(f"{r.args[4:6]} stderr", r.stderr)
        for what, data in mcp_outputs(root):
            found += leaks(what, data)
        for i, r in enumerate(llm.requests):
            found += leaks(f"LLM request {i}", json.dumps(r.body).encode())
        return found


def test_the_hostile_corpus_leaks_neither_through_the_cli_nor_through_a_session(tmp_path: Path) -> None:
    cli, session = cli_leaks(), session_leaks(tmp_path)
    assert (cli, session) == ([], []), "\n".join([*cli, *session][:60])

"""``scribed mcp``: the memory as tools an agent can call, over MCP on stdio.

Agents ignore "read this file" about half the time; a tool they can call is used. The server is
built on the official ``mcp`` SDK (an optional extra: ``pip install 'scribed-memory[mcp]'``) and
exposes ``context``, ``search``, ``wiki_write`` and ``recent_sessions``, plus the hot, cold and
wiki files as resources. Each tool is a thin wrapper over the code the CLI runs (so ``wiki_write``
gets the same validation, lock and wiki/inbox handling as ``scribed wiki-write``).

It reads and writes only under the configured root: a name (agent, topic) that is really a path,
a file argument that resolves outside the root, and a tier file that is a symlink leading out are
refused with a one-line error the agent can read. The SDK is imported only when the command runs,
so ``scribed`` itself starts without it.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import click
from pydantic import Field

from scribed import __version__
from scribed.config_light import squad_root
from scribed.dates import believed, utcnow
from scribed.log import misnamed, utf8_named
from scribed.names import normalize_name
from scribed.session.door import redacted
from scribed.tiers.cold import Layout

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from scribed.config import Config

NAME = "scribed"
URI_PREFIX = "scribed://memory/"
RESOURCE_TIERS = ("hot", "cold", "wiki")
MAX_QUERY_CHARS = (
    4_000  # a search or context query: a few sentences, not a document (search time grows fast with it)
)
MAX_TITLE_CHARS = 500
MAX_TOPICS = 64
LOCK_TIMEOUT = 30.0  # a write waits this long for a run holding the root lock, then says so
_SESSION = re.compile(r"\bsession=(?P<s>[^\s·]+)")
INSTRUCTIONS = (
    "scribed keeps this squad's memory: hot (current task), cold (dated summaries of past sessions) "
    "and wiki (durable facts and decisions). Call `search` to find what was tried or decided before, "
    "`context` for an agent's memory block, `recent_sessions` for the latest sessions, and "
    "`wiki_write` to record a durable fact or decision. Agent and topic names are plain names "
    "(lowercase letters, digits, '-' and '_'), never paths."
)


class RefusedError(ValueError):
    """A tool argument names something outside the root; the message says which and why."""


class BadArgumentError(ValueError):
    """A tool argument that is not valid (bad name, bad date, empty text); one line."""


# --- the root boundary ---------------------------------------------------------------------------
def _inside(root: Path, path: Path) -> bool:
    real, base = path.resolve(), root.resolve()
    return real == base or base in real.parents


def check_name(raw: str, what: str, layout: Layout) -> str:
    """A plain name (agent, topic): a path-like value is refused, a malformed one is a bad argument."""
    text = raw.strip()
    if "\0" in text or "/" in text or "\\" in text or text.startswith("~") or ".." in text:
        raise RefusedError(
            f"refused: {what} {raw!r} is a path; scribed mcp reads and writes only under {layout.root}, "
            f"and {what} names are plain names (lowercase letters, digits, '-' and '_')"
        )
    name = normalize_name(text)
    if name is None:
        raise BadArgumentError(f"bad {what} name {raw!r} (lowercase letters, digits, '-' and '_')")
    return name


def check_tier_file(layout: Layout, path: Path, what: str) -> Path:
    """A tier file that is a symlink leading outside the root is refused (never read or written)."""
    if (path.is_symlink() or path.exists()) and not _inside(layout.root, path):
        rel = path.relative_to(layout.root)
        raise RefusedError(f"refused: {what} {rel} leads outside the root {layout.root} (a symlink out)")
    return path


def check_path(layout: Layout, raw: str, what: str) -> Path:
    """A path argument: relative to the root; one resolving outside it (``..``, absolute, symlink) is refused."""
    if "\0" in raw or not raw.strip():
        raise BadArgumentError(f"bad {what}: empty or holds a NUL byte")
    p = Path(os.path.expanduser(raw.strip()))
    path = p if p.is_absolute() else layout.root / p
    if not _inside(layout.root, path):
        raise RefusedError(f"refused: {what} {raw!r} resolves outside the root {layout.root}")
    return path


# --- the tools as plain functions (the SDK layer below only wraps them) --------------------------
def tool_context(
    layout: Layout,
    agent: str,
    *,
    situation: str = "",
    query: str = "",
    max_bytes: int | None = None,
    wiki_topics: list[str] | None = None,
) -> str:
    """The Memory Context block ``scribed context`` prints (``max_bytes`` None: its default budgets)."""
    from scribed.recall import context

    name = check_name(agent, "agent", layout)
    _bounded(query, MAX_QUERY_CHARS, "query")
    if len(wiki_topics or []) > MAX_TOPICS:
        raise BadArgumentError(f"wiki_topics: more than {MAX_TOPICS} topics")
    topics = [check_name(t.removesuffix(".md"), "topic", layout) for t in wiki_topics or []]
    check_tier_file(layout, layout.hot_file(name), "hot file")
    check_tier_file(layout, layout.cold_file(name), "cold file")
    for t in topics:
        check_tier_file(layout, layout.wiki / f"{t}.md", "wiki page")
    try:
        block = context.build(
            layout,
            name,
            situation=situation.strip() or None,
            include_wiki=bool(topics),
            wiki_topics=topics,
            max_bytes=None if max_bytes is None else max(0, max_bytes),
            query=query,
        )
    except context.ContextError as exc:
        raise BadArgumentError(str(exc)) from exc
    return block.text


def _bounded(text: str, limit: int, what: str) -> None:
    """A text argument longer than ``limit`` characters is refused (its length named, not its text)."""
    if len(text) > limit:
        raise BadArgumentError(f"{what}: {len(text)} characters, more than {limit}; nothing done")


def _since(raw: str) -> str:
    if not raw.strip():
        return ""
    try:
        return date.fromisoformat(raw.strip()[:10]).isoformat()
    except ValueError:
        raise BadArgumentError(f"since: {raw!r} is not a date (YYYY-MM-DD)") from None


def tool_search(
    layout: Layout,
    query: str,
    *,
    agent: str = "",
    tier: str = "",
    since: str = "",
    limit: int = 10,
    transcripts_at: Path | None = None,
) -> dict[str, Any]:
    """``scribed search --json``: best matches first, each with its provenance (a pasted secret in
    the query is searched for, never echoed)."""
    from scribed.recall.search import TIERS, Index, SearchError
    from scribed.session.door import redacted

    _bounded(query, MAX_QUERY_CHARS, "query")
    who = check_name(agent, "agent", layout) if agent.strip() else ""
    if tier and tier not in TIERS:
        raise BadArgumentError(f"tier: {tier!r} is not one of {', '.join(TIERS)}")
    day = _since(since)
    with Index(layout, transcripts_at) as index:
        index.refresh()
        try:
            hits = index.search(
                query, agent=who, tiers=(tier,) if tier else (), since=day, limit=max(1, min(limit, 200))
            )
        except SearchError as exc:
            raise BadArgumentError(str(exc)) from exc
    return {"query": redacted(query), "hits": [h.public() for h in hits]}


def tool_wiki_write(
    layout: Layout, topic: str, agent: str, *, text: str = "", title: str = "", file: str = "", cfg: Config
) -> dict[str, Any]:
    """``scribed wiki-write``: the same core operation (validation, redaction, merge, root lock)."""
    from scribed.core.lock import RootBusyError
    from scribed.core.scribe import Scribe
    from scribed.curate.agent_writes import read_fact
    from scribed.tiers.wiki import WikiError

    name = check_name(topic, "topic", layout)
    author = check_name(agent, "agent", layout)
    check_tier_file(layout, layout.wiki / f"{name}.md", "wiki page")
    if bool(text.strip()) == bool(file.strip()):
        raise BadArgumentError("give the fact as `text` or as `file` (a path under the root), not both")
    _bounded(title, MAX_TITLE_CHARS, "title")
    try:
        if file.strip():
            path = check_path(layout, file, "file")
            if not path.is_file():
                raise BadArgumentError(f"file {file!r}: not a file under {layout.root}")
            with path.open("rb") as f:  # read bounded: the same limit as `scribed wiki-write`
                text = read_fact(f, f"file {file!r}").decode("utf-8", "replace")
    except WikiError as exc:
        raise BadArgumentError(str(exc)) from exc
    except OSError as exc:
        raise BadArgumentError(f"file {file!r}: cannot read it ({exc.strerror or exc})") from exc
    scribe = Scribe(cfg)
    try:
        return scribe.write_fact(name, author, text, title=title, timeout=LOCK_TIMEOUT).to_json()
    except WikiError as exc:
        raise BadArgumentError(str(exc)) from exc
    except RootBusyError as exc:
        raise BadArgumentError(f"{exc}; nothing written, try again") from exc
    finally:
        scribe.close()


def tool_recent_sessions(layout: Layout, agent: str = "", limit: int = 10) -> dict[str, Any]:
    """The newest cold entries (all agents, or one): heading, date, session and entry ids; an
    imported section dated only by its file ("Project Context") after every dated one.

    Read from the cold files (read-only, no lock): they are what the agent would read anyway.
    """
    from scribed.compress.entry import dated_by_file, split_entries

    if agent.strip():
        files = [check_tier_file(layout, layout.cold_file(check_name(agent, "agent", layout)), "cold file")]
    else:
        files = (
            utf8_named(sorted(p for p in layout.cold.glob("*.md") if _inside(layout.root, p)))
            if layout.cold.is_dir()
            else []
        )
    floor, now = datetime.min.replace(tzinfo=UTC), utcnow()
    rows: list[tuple[tuple[bool, datetime], dict[str, Any]]] = []
    for path in files:
        try:
            text = path.read_bytes().decode("utf-8", "replace")
        except OSError:
            continue  # a missing or unreadable cold file is simply no sessions
        lines = {ln: no for no, ln in reversed(list(enumerate(text.splitlines(), start=1)))}
        for e in split_entries(text)[1]:
            session = _SESSION.search(e.text)
            rows.append(
                (
                    # a wrong clock's future date, or a file's: not the newest
                    (not dated_by_file(e.text), believed(e.when, now) or floor),
                    {
                        "agent": path.stem,
                        "date": e.date,
                        "title": redacted(e.title),
                        "heading": redacted(e.heading.removeprefix("### ")),
                        "session": session.group("s") if session else "",
                        "entry": e.entry_id or "",
                        "file": str(path.relative_to(layout.root)),
                        "line": lines.get(e.heading, 0),
                    },
                )
            )
    rows.sort(key=lambda r: r[0], reverse=True)
    return {"sessions": [r for _, r in rows[: max(1, min(limit, 500))]]}


def resource_files(layout: Layout) -> list[tuple[str, str, Path]]:
    """(tier, name, path) of every hot, cold and wiki file that stays inside the root."""
    out: list[tuple[str, str, Path]] = []
    for tier in RESOURCE_TIERS:
        folder: Path = getattr(layout, tier)
        if not folder.is_dir():
            continue
        for p in sorted(folder.glob("*.md")):
            if normalize_name(p.stem) != p.stem:
                misnamed(p, "topic" if tier == "wiki" else "agent")
            elif _inside(layout.root, p):
                out.append((tier, p.stem, p))
    return out


def read_resource(layout: Layout, tier: str, name: str) -> str:
    """One tier file's text, redacted; a path-like name or a symlink out is refused."""
    if tier not in RESOURCE_TIERS:
        raise BadArgumentError(f"tier {tier!r}: expected one of {', '.join(RESOURCE_TIERS)}")
    stem = check_name(name.removesuffix(".md"), "name", layout)
    path = check_tier_file(layout, getattr(layout, tier) / f"{stem}.md", f"{tier} file")
    if not path.is_file():
        raise BadArgumentError(f"no {tier} file named {stem!r}")
    return redacted(path.read_bytes().decode("utf-8", "replace"))  # a file read: the door


# --- the SDK layer --------------------------------------------------------------------------------
def build_server(layout: Layout, cfg: Config) -> MCPServer:
    """The MCP server over one squad root (tools and resources registered)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError
    from mcp_types import Resource

    def guard(fn: Any, *args: Any, **kw: Any) -> Any:
        try:
            return fn(layout, *args, **kw)
        except (RefusedError, BadArgumentError) as exc:
            raise ToolError(str(exc)) from None

    class Server(MCPServer):
        async def list_resources(self) -> list[Resource]:
            """The tier files as they are now (files appear as sessions end), not as at startup."""
            return [
                Resource(
                    uri=f"{URI_PREFIX}{tier}/{name}",
                    name=f"{tier}/{name}",
                    description=f"{tier} memory: {p.relative_to(layout.root)}",
                    mime_type="text/markdown",
                )
                for tier, name, p in resource_files(layout)
            ]

    server = Server(NAME, version=__version__, instructions=INSTRUCTIONS)
    _read_tools(server, guard, layout, cfg)
    _write_tools(server, guard, cfg)
    _resources(server, layout, ResourceError)

    return server


def _read_tools(server: MCPServer, guard: Any, layout: Layout, cfg: Config) -> None:
    """``context``, ``search`` and ``recent_sessions``: read-only tools."""
    from mcp_types import ToolAnnotations

    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @server.tool(annotations=read_only, structured_output=False)
    def context(
        agent: Annotated[str, Field(description="The agent whose memory to load (a name, e.g. 'picard').")],
        situation: Annotated[
            Literal["", "new-task", "resume", "debug", "spec", "onboarding", "post-incident"],
            Field(
                description="Which tiers to load: new-task (hot), resume/debug (+cold), "
                "spec/onboarding (+wiki), post-incident (all)."
            ),
        ] = "",
        query: Annotated[
            str, Field(description="Fill cold/wiki with the entries and facts best matching this.")
        ] = "",
        max_bytes: Annotated[
            int | None,
            Field(
                ge=0,
                description="Fit the block in this many bytes (0: no limit). Omitted: the hot file "
                "whole, at most 12 KB of cold and 8 KB of wiki.",
            ),
        ] = None,
        wiki_topics: Annotated[list[str] | None, Field(description="Wiki topics to include by name.")] = None,
    ) -> str:
        """An agent's Memory Context block (hot, plus cold and wiki as the situation or query asks)."""
        return str(
            guard(
                tool_context,
                agent,
                situation=situation,
                query=query,
                max_bytes=max_bytes,
                wiki_topics=wiki_topics,
            )
        )

    @server.tool(annotations=read_only)
    def search(
        query: Annotated[str, Field(description="Words to find (all of them, else any), ranked by bm25.")],
        agent: Annotated[str, Field(description="Only this agent's entries and facts.")] = "",
        tier: Annotated[
            Literal["", "cold", "wiki", "archive", "transcript"], Field(description="Only this tier.")
        ] = "",
        since: Annotated[str, Field(description="Only entries dated on or after YYYY-MM-DD.")] = "",
        limit: Annotated[int, Field(ge=1, le=200)] = 10,
    ) -> dict[str, Any]:
        """Search cold entries, wiki facts (superseded ones marked), archived originals and archived
        transcripts, with provenance."""
        from scribed.tiers import transcripts

        at = transcripts.folder(cfg, layout)
        return dict(
            guard(tool_search, query, agent=agent, tier=tier, since=since, limit=limit, transcripts_at=at)
        )

    @server.tool(annotations=read_only)
    def recent_sessions(
        agent: Annotated[str, Field(description="Only this agent (default: every agent).")] = "",
        limit: Annotated[int, Field(ge=1, le=500)] = 10,
    ) -> dict[str, Any]:
        """The newest sessions in cold memory: heading, date, session id and entry id, newest first."""
        return dict(guard(tool_recent_sessions, agent, limit))


def _write_tools(server: MCPServer, guard: Any, cfg: Config) -> None:
    """``wiki_write``: the one tool that writes, through the core like ``scribed wiki-write``."""
    from mcp_types import ToolAnnotations

    @server.tool(
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
    )
    def wiki_write(
        topic: Annotated[str, Field(description="The wiki topic (a name, e.g. 'decisions'; never a path).")],
        agent: Annotated[str, Field(description="The author (an agent name).")],
        text: Annotated[str, Field(description="The fact or decision (first line is the title).")] = "",
        title: Annotated[str, Field(description="Block title (default: the text's first line).")] = "",
        file: Annotated[
            str, Field(description="Read the text from this file instead (a path under the root).")
        ] = "",
    ) -> dict[str, Any]:
        """Record a durable fact or decision in wiki/TOPIC.md, stamped with its author and today's date."""
        return dict(guard(tool_wiki_write, topic, agent, text=text, title=title, file=file, cfg=cfg))


def _resources(server: MCPServer, layout: Layout, resource_error: type[Exception]) -> None:
    """The tier files as ``scribed://`` resources."""

    @server.resource(URI_PREFIX + "{tier}/{name}", name="tier-file", mime_type="text/markdown")
    def tier_file(tier: str, name: str) -> str:
        """A hot, cold or wiki file of the squad root (redacted)."""
        try:
            return read_resource(layout, tier, name)
        except (RefusedError, BadArgumentError) as exc:
            raise resource_error(str(exc)) from None


def register(main: click.Group) -> None:
    """Add ``scribed mcp`` to the ``scribed`` group."""

    @main.command("mcp")
    @click.option(
        "--root",
        type=click.Path(file_okay=False),
        help="Squad root (the folder holding .squad/). Default: found from the working directory.",
    )
    @click.pass_context
    def mcp_cmd(ctx: click.Context, root: str | None) -> None:
        """Serve the memory to an agent over MCP on stdio (tools: context, search, wiki_write, recent_sessions).

        Without --root and --config, the root is the nearest folder at or above the working
        directory that holds .squad/ (not past the repository's top), and its scribed.toml the
        config: one registration serves every repository an agent starts it in."""
        from scribed.cli.checks import load_checked
        from scribed.cli.common import fail

        obj = ctx.find_root().obj
        obj = obj if isinstance(obj, dict) else {}
        if root is None and not (obj.get("config_path") or os.environ.get("SCRIBED_CONFIG")):
            found = squad_root(Path.cwd())
            if found is not None:
                root = str(found)
                if (found / "scribed.toml").is_file():
                    obj["config_path"] = str(found / "scribed.toml")
        cfg = load_checked(ctx, root, writes=False)  # it serves reads to a user who cannot write
        try:
            server = build_server(Layout(cfg.root_path), cfg)
        except ImportError as exc:
            fail(f"scribed mcp needs the MCP SDK ({exc.name or exc}): pip install 'scribed-memory[mcp]'")
        warm_imports()
        from scribed.cli import mcp_stdio

        mcp_stdio.run(server)  # the SDK's stdio, every line answered (see mcp_stdio)


def warm_imports() -> list[str]:
    """Import every scribed module before the server answers ``initialize``: the tools import
    lazily (a spawn's ``scribed context`` stays light), and an agent's first calls arrive together
    on the SDK's worker threads, where two lazy imports of modules that import each other can
    meet a partially initialized module. Returns the modules imported."""
    import importlib
    import pkgutil

    import scribed

    names = [
        m.name for m in pkgutil.walk_packages(scribed.__path__, "scribed.") if m.name != "scribed.__main__"
    ]
    for name in names:
        importlib.import_module(name)
    return names

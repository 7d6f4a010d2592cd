"""CLI commands for the wiki tier: ``promote``, ``wiki-write``, ``wiki-deprecate``, ``import``,
``review`` (list, approve, reject proposals) and ``wiki history TOPIC`` (the audit log).

Kept apart from ``cli.py`` so the compaction CLI stays small; ``cli.py`` calls :func:`register`.
Exit codes as everywhere: 0 ok, 1 work failed, 2 usage error (bad name, bad date, refused import).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from scribed import log as log_mod
from scribed.cli import common as cli_mod
from scribed.config import Config
from scribed.tiers.cold import Layout

if TYPE_CHECKING:
    from scribed.core.results import ImportResult, PromoteResult, ProposalRow
    from scribed.core.scribe import Scribe


def _cfg(ctx: click.Context, root: str | None, *, writes: bool = True) -> Config:
    """The checked config; ``writes`` False for a command that only reads (a listing, a history, a
    dry run): a person who may read a service user's memory but not write it still can."""
    from scribed.cli.checks import load_checked

    cfg = load_checked(ctx, root, writes=writes)
    if not cfg.root_path.is_dir():
        cli_mod.fail(f"root: not a folder: {cfg.root_path}")
    return cfg


@contextlib.contextmanager
def _scribe(cfg: Config, *, dry_run: bool = False) -> Iterator[Scribe]:
    """The core for one command; it takes the root lock for the write it is asked for."""
    from scribed.core.scribe import Scribe

    scribe = Scribe(cfg, dry_run=dry_run)
    try:
        yield scribe
    finally:
        scribe.close()


def _emit(data: dict[str, Any], as_json: bool, lines: list[str]) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        for line in lines:
            click.echo(line)


def _promote_lines(res: PromoteResult) -> list[str]:
    head = "dry run, nothing written: " if res.dry_run else ""
    out = [f"{head}promotion as of {res.as_of} (entries before {res.cutoff})"]
    for p in res.promoted:
        out.append(f"promote {p.agent:<12} {p.entry} {p.date[:10]} {p.title}")
        out.extend(
            f"    → {f.topic:<12} {f.action:<8} {f.title}"
            + (f" (supersedes {f.superseded[0]})" if f.superseded else "")
            for f in p.facts
        )
    out.extend(
        f"archive {a.agent:<12} {a.entry} {a.date[:10]} {a.title} (nothing durable)" for a in res.archived
    )
    out.extend(f"inbox   {a.file} → {a.fact.topic} ({a.fact.action})" for a in res.inbox.applied)
    out.extend(f"inbox   {q.file} quarantined: {q.reason}" for q in res.inbox.quarantined)
    out.append(
        f"{len(res.promoted)} promoted, {len(res.archived)} archived, {res.kept} kept in cold; "
        f"topics: {', '.join(sorted(res.topics)) or '-'}"
    )
    return out


def _import_lines(res: ImportResult) -> list[str]:
    head = "dry run, nothing written: " if res.dry_run else ""
    lines = [f"{head}import of {', '.join(res.agents) or 'no agents'} as of {res.as_of}"]
    lines += [f"cold    {c.agent:<12} {c.date[:10]} {c.title}" for c in res.cold]
    lines += [f"wiki    {c.agent:<12} {c.date[:10]} {c.title} → {', '.join(c.topics)}" for c in res.promoted]
    lines += [f"archive {c.agent:<12} {c.date[:10]} {c.title}" for c in res.archived]
    lines += [f"pinned  {p.agent:<12} → {p.topic}: {p.title} ({p.action})" for p in res.pinned]
    lines += [
        f"decided {d.agent:<12} {d.date[:10]} {d.title} → {d.topic} ({d.action})" for d in res.decisions
    ]
    lines += [f"skip    {n.source}:{n.lines} {n.title} ({n.reason})" for n in res.not_decisions]
    lines.append(
        f"{len(res.cold)} to cold, {len(res.promoted)} to wiki, {len(res.archived)} archived, "
        f"{len(res.pinned)} pinned, {len(res.decisions)} decisions"
        + (" proposed for review" if res.mode == "review" else "")
        + f", {len(res.not_decisions)} not decisions, {res.skipped} already imported"
        + (f", {n} warning{'s' if n != 1 else ''}" if (n := len(res.warnings)) else "")
    )
    return lines


def _as_of(value: str | None) -> datetime | None:
    """Parse --as-of (YYYY-MM-DD or ISO 8601); a bad date is the user's mistake (exit 2)."""
    from scribed.core.promote import parse_as_of

    if not value:
        return None
    try:
        return parse_as_of(value)
    except ValueError as exc:
        cli_mod.fail(f"--as-of: {exc}")


def register(main: click.Group) -> None:
    """Add the wiki commands to the ``scribed`` group."""

    @main.command("promote")
    @click.option("--root", type=click.Path(file_okay=False), help="Squad root (the folder holding .squad/).")
    @click.option(
        "--as-of", "as_of", metavar="DATE", help="Age entries as of DATE (YYYY-MM-DD or ISO; default now)."
    )
    @click.option("--dry-run", is_flag=True, help="Print the plan (entries, facts, topics); write nothing.")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
    @click.pass_context
    def promote_cmd(
        ctx: click.Context, root: str | None, as_of: str | None, dry_run: bool, as_json: bool
    ) -> None:
        """Move cold entries older than cold.ttl_days into the wiki (facts) and the archive."""
        if as_json:
            log_mod.no_bars()
        cfg = _cfg(ctx, root, writes=not dry_run)
        when = _as_of(as_of)
        with _scribe(cfg, dry_run=dry_run) as scribe:
            res = scribe.promote(as_of=when)
        _emit(res.to_json(), as_json, _promote_lines(res))

    _register_writes(main)

    @main.command("import")
    @click.argument("agents", nargs=-1)
    @click.option("--all", "all_", is_flag=True, help="Every agent under .squad/agents/, and decisions.md.")
    @click.option("--as-of", "as_of", metavar="DATE", help="Age entries as of DATE (default now).")
    @click.option("--dry-run", is_flag=True, help="Show what would be imported; write nothing.")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
    @click.option("--root", type=click.Path(file_okay=False), help="Squad root (the folder holding .squad/).")
    @click.pass_context
    def import_cmd(
        ctx: click.Context,
        *,
        agents: tuple[str, ...],
        all_: bool,
        as_of: str | None,
        dry_run: bool,
        as_json: bool,
        root: str | None,
    ) -> None:
        """Seed cold and wiki from a legacy Squad repo (history.md, decisions.md); never changes them."""
        from scribed.core.importer import ImportRefusedError

        if bool(agents) == all_:
            cli_mod.fail("name the agents to import, or pass --all (not both)")
        if as_json:
            log_mod.no_bars()
        cfg = _cfg(ctx, root, writes=not dry_run)
        when = _as_of(as_of)
        try:
            with _scribe(cfg, dry_run=dry_run) as scribe:
                res = scribe.import_squad(None if all_ else list(agents), as_of=when)
        except ImportRefusedError as exc:
            cli_mod.fail(str(exc))
        # Each warning is on stderr once, as the import's `import_warning` log line; a log level
        # that hides warnings (`error`) must not hide them, so they are printed here instead.
        if cfg.log.level == "error":
            for w in res.warnings:
                click.echo(f"scribed: warning: {w}", err=True)
        if all_ and not (res.agents or res.decisions or res.not_decisions or res.pinned or res.skipped):
            cli_mod.note(  # a zero line alone reads like a success
                f"nothing to import under {res.root}: no agent history (.squad/agents/*/history.md) "
                "and no decision (.squad/decisions.md, decisions-archive*.md, decisions/)"
            )
        _emit(res.to_json(), as_json, _import_lines(res))

    _register_review(main)


def _review_lines(rows: list[ProposalRow]) -> list[str]:
    if not rows:
        return ["no proposals waiting for review"]
    out = []
    for r in rows:
        where = r.file or r.source
        out.append(f"{r.id}  {r.topic:<12} {r.date}  {r.title}  ({r.action}: {where}, {r.agent or '-'})")
    out.append(
        f"{len(rows)} proposal{'s' if len(rows) != 1 else ''}: scribed review approve ID… | reject ID…"
    )
    return out


def _decide(
    ctx: click.Context, root: str | None, ids: tuple[str, ...], *, as_json: bool, what: str, reason: str
) -> None:
    """Approve or reject proposals under the root lock; unknown ids exit 2 (after the known ones)."""
    from scribed.tiers.wiki import WikiError

    try:
        with _scribe(_cfg(ctx, root)) as scribe:
            res = scribe.review(list(ids), approve=what == "approve", reason=reason)
    except WikiError as exc:
        cli_mod.fail(str(exc))
    lines = [
        f"{r.id}: {r.result}" + (f" ({r.topic}: {r.title})" if r.title is not None else "")
        for r in res.results
    ]
    _emit(res.to_json(), as_json, lines)
    unknown = res.unknown
    if unknown:
        cli_mod.fail(f"no such proposal: {', '.join(unknown)} (scribed review lists them)")


def _register_review(main: click.Group) -> None:
    @main.group("review", invoke_without_command=True)
    @click.option("--root", type=click.Path(file_okay=False), help="Squad root (the folder holding .squad/).")
    @click.option("--all", "everything", is_flag=True, help="Also list approved and rejected proposals.")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
    @click.pass_context
    def review_cmd(ctx: click.Context, root: str | None, everything: bool, as_json: bool) -> None:
        """List the wiki facts waiting for review ([promote] mode = "review")."""
        if ctx.invoked_subcommand is not None:
            ctx.obj["review_root"] = root
            return
        from scribed.curate import review

        rows = review.listing(Layout(_cfg(ctx, root, writes=False).root_path), everything=everything)
        _emit({"proposals": [r.to_json() for r in rows]}, as_json, _review_lines(rows))

    @review_cmd.command("approve")
    @click.argument("ids", nargs=-1, required=True)
    @click.option("--root", type=click.Path(file_okay=False), help="Squad root (the folder holding .squad/).")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
    @click.pass_context
    def approve_cmd(ctx: click.Context, ids: tuple[str, ...], root: str | None, as_json: bool) -> None:
        """Merge the proposals IDS into the wiki (each change goes to the audit log)."""
        _decide(ctx, root or ctx.obj.get("review_root"), ids, as_json=as_json, what="approve", reason="")

    @review_cmd.command("reject")
    @click.argument("ids", nargs=-1, required=True)
    @click.option("--reason", default="", help="Why (kept with the proposal).")
    @click.option("--root", type=click.Path(file_okay=False), help="Squad root (the folder holding .squad/).")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
    @click.pass_context
    def reject_cmd(
        ctx: click.Context, ids: tuple[str, ...], reason: str, root: str | None, as_json: bool
    ) -> None:
        """Reject the proposals IDS: they never reach the wiki and are never proposed again."""
        _decide(ctx, root or ctx.obj.get("review_root"), ids, as_json=as_json, what="reject", reason=reason)

    @main.group("wiki")
    def wiki_group() -> None:
        """Read the wiki's audit trail."""

    @wiki_group.command("history")
    @click.argument("topic")
    @click.option("--root", type=click.Path(file_okay=False), help="Squad root (the folder holding .squad/).")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
    @click.pass_context
    def wiki_history(ctx: click.Context, topic: str, root: str | None, as_json: bool) -> None:
        """Every recorded change to wiki/TOPIC.md, oldest first: when, what, which fact, from where."""
        from scribed.tiers import audit
        from scribed.tiers.wiki import valid_topic

        if valid_topic(topic) is None:
            cli_mod.fail(f"bad topic name {topic!r} (lowercase letters, digits, '-' and '_'; not 'index')")
        rows = audit.history(Layout(_cfg(ctx, root, writes=False).root_path), topic)
        lines = [
            f"{r.get('at', '?')}  {r.get('action', '?'):<10} {r.get('change', '?'):<10} {r.get('fact', '')}"
            + (f"  ← {r['source']}" if r.get("source") else "")
            + (f" ({r['file']})" if r.get("file") else "")
            + (f"  by {r['by']}" if r.get("by") else "")
            for r in rows
        ] or [f"no recorded changes to wiki/{topic}.md"]
        _emit({"topic": topic, "records": rows}, as_json, lines)


def _fact_text(file_: str | None) -> str:
    """The fact's text from FILE or stdin, read no further than the fact limit (a 20 MB log or
    ``/dev/urandom`` is refused, exit 2, without being held)."""
    from scribed.curate.agent_writes import read_fact
    from scribed.tiers.wiki import WikiError

    try:
        if file_:
            with Path(file_).open("rb") as f:
                raw = read_fact(f, f"--file {file_}")
        else:
            raw = read_fact(sys.stdin.buffer, "stdin")
    except WikiError as exc:
        cli_mod.fail(str(exc))
    except OSError as exc:
        cli_mod.fail(f"--file {file_}: cannot read it ({exc.strerror or exc})" if file_ else f"stdin: {exc}")
    return raw.decode("utf-8", "replace")


def _register_writes(main: click.Group) -> None:
    """``wiki-write`` and ``wiki-deprecate``."""

    @main.command("wiki-write")
    @click.argument("topic")
    @click.option("--agent", required=True, help="The author (an agent name).")
    @click.option("--title", default="", help="Block title (default: the text's first line).")
    @click.option(
        "--file", "file_", type=click.Path(dir_okay=False, exists=True), help="Read the text from FILE."
    )
    @click.option("--root", type=click.Path(file_okay=False), help="Squad root (the folder holding .squad/).")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
    @click.pass_context
    def wiki_write(
        ctx: click.Context,
        *,
        topic: str,
        agent: str,
        title: str,
        file_: str | None,
        root: str | None,
        as_json: bool,
    ) -> None:
        """Add a fact to wiki/TOPIC.md from FILE or stdin, stamped with its author and today's date."""
        from scribed.tiers.wiki import WikiError, valid_topic

        if valid_topic(topic) is None:
            cli_mod.fail(f"bad topic name {topic!r} (lowercase letters, digits, '-' and '_'; not 'index')")
        cfg = _cfg(ctx, root)
        if not file_ and (sys.stdin is None or sys.stdin.isatty()):
            cli_mod.fail("no text: pass --file FILE or pipe the text on stdin")
        text = _fact_text(file_)
        try:
            with _scribe(cfg) as scribe:
                data = scribe.write_fact(topic, agent, text, title=title).to_json()
        except WikiError as exc:
            cli_mod.fail(str(exc))
        _emit(
            data, as_json, [f"wiki/{data['topic']}.md: {data['action']} “{data['title']}” by {data['agent']}"]
        )

    @main.command("wiki-deprecate")
    @click.argument("topic")
    @click.argument("title")
    @click.option("--agent", required=True, help="Who deprecates it (an agent name).")
    @click.option("--reason", default="", help="Why it no longer holds.")
    @click.option("--root", type=click.Path(file_okay=False), help="Squad root (the folder holding .squad/).")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
    @click.pass_context
    def wiki_deprecate(
        ctx: click.Context,
        *,
        topic: str,
        title: str,
        agent: str,
        reason: str,
        root: str | None,
        as_json: bool,
    ) -> None:
        """Mark the block TITLE of wiki/TOPIC.md deprecated (it is kept, not deleted; a superseded
        one keeps its "superseded by" mark too)."""
        from scribed.tiers.wiki import WikiError
        from scribed.tiers.wiki_mark import state

        cfg = _cfg(ctx, root)
        try:
            with _scribe(cfg) as scribe:
                data = scribe.deprecate(topic, title, agent, reason=reason).to_json()
        except WikiError as exc:
            cli_mod.fail(str(exc))
        head = f"wiki/{data['topic']}.md: “{data['block']}”"
        if not data["changed"]:
            line = f"{head} was already {data['status']}; nothing changed"
        elif state(str(data["status"])) == "superseded":  # the mark names its successor: said first
            line = (
                f"{head} is now deprecated too, and still names the fact that replaced it: {data['status']}"
            )
        else:
            line = f"{head} is now {data['status']}"
        _emit(data, as_json, [line])

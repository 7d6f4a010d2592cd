"""What team memory's sync and the state branch did, said: each event with its file, its reason
and, where a person has something to do, the command. Kept apart from :class:`~scribed.core.scribe.Scribe`,
which drives the sync (under its lock) and the compaction: the words are one idea, the driving another."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from scribed import hint
from scribed.core import statebranch
from scribed.core.cold_sync import DAMAGED_FIX, SyncResult
from scribed.core.wikisync import WikiSync
from scribed.tiers.cold import Layout

if TYPE_CHECKING:
    from scribed.log import Logger


def branch(log: Logger, res: statebranch.BranchResult) -> None:
    """What a pull or a push of the state branch did (:mod:`scribed.core.statebranch`)."""
    if res.remote:
        log.info("state_branch_took_remote", remote=res.remote)
    if res.diverged:
        log.warning("state_branch_diverged", reason=res.diverged)
    if res.merged:
        log.info("state_branch_merged", files=res.merged)
    if res.commit:
        log.info("state_branch_committed", commit=res.commit[:12], branch=statebranch.BRANCH)


def synced(log: Logger, layout: Layout, res: SyncResult) -> None:
    """What a team sync did (:mod:`scribed.core.team_sync`): each file written back, repaired or
    left, each with why and, where a person has something to do, what."""
    _written_back(log, layout, res)
    _edits_dropped(log, res)
    for agent, why in res.failed.items():
        log.warning("cold_sync_failed", agent=agent, reason=why)
    for name in res.repaired:  # store files by name; wiki pages and hot files as wiki/…, hot/…
        tier = name.split("/", 1)[0] if "/" in name else ""
        event = {"wiki": "wiki_page_repaired", "hot": "hot_file_repaired"}.get(tier, "cold_file_repaired")
        log.warning(event, file=name)
        if name in res.unbased:  # git's markers without a base: no side picked, both kept
            log.warning(
                "conflict_repaired_without_base",
                file=name,
                conflicts=res.unbased[name] or None,
                kept="both versions of the lines both sides changed, one after the other",
                action="edit the file to keep what is right, then `git add` and commit it; "
                f"`{hint.cmd('git', 'setup')}` on this clone makes git merge team memory entry by entry",
            )
    _wiki(log, res.wiki)
    _left(log, res)
    if res.git_failed:
        log.warning(
            "git_check_failed",
            reason=res.git_failed,
            action="files missing since the last sync were written back, as outside git",
        )
    for page in res.wiki.left:
        log.info("wiki_page_left_by_git", page=page, reason="git removed it")


def _left(log: Logger, res: SyncResult) -> None:
    """The entries a sync took out of the views without a loss: git removed them, or they told
    a session a second time."""
    _each(
        log.info,
        "cold_entries_told_twice",
        res.told_twice,
        ("agent", "retired"),
        reason="entries of one session whose lines overlap (two clones cut it at different "
        "points): the finer cut kept, else merged into one; listed in retired.txt",
    )
    _each(
        log.info,
        "cold_entry_left_by_git",
        res.git_removed,
        ("agent", "entries"),
        reason="git removed its file",
    )


def _each(
    say: Callable[..., object],
    event: str,
    found: Mapping[str, list[str]],
    names: tuple[str, str],
    **words: str,
) -> None:
    """One event per agent or page in ``found`` (named by ``names``: its own field, then its list's),
    each with the same ``words``: a reader greps one agent's or page's line, not a table of them."""
    key, listed = names
    for name, items in found.items():
        say(event, **{key: name, listed: items}, **words)


def _edits_dropped(log: Logger, res: SyncResult) -> None:
    """Each hand edit a removal by hand won over (a modify/delete conflict), with where its text
    stays: the run deletes the file, so this is said once."""
    for k, (agent, d) in res.edits_dropped.items():
        log.warning(
            "cold_edit_dropped",
            entry=k,
            agent=agent,
            file=d.file,
            edited_by=d.edited_by or None,
            removed_by=d.removed_by or None,
            reason="edited on one side of a merge while `scribed cold-remove` removed it on the other "
            "(a modify/delete conflict): the removal wins, and its file is deleted",
            action=(
                f"its edited text stays in git: `{d.show}`" if d.show else "git has no commit of the edit"
            )
            + "; to keep what it says, write it where it belongs (the wiki: scribed wiki-write)",
        )


def _written_back(log: Logger, layout: Layout, res: SyncResult) -> None:
    """The sync's cold entries written back (each with its file and why), and damaged files it
    could not mend."""
    for k, r in res.restored.items():
        log.warning("cold_entry_restored", entry=k, file=r.file, reason=r.why)
    for name, why in res.unrestored.items():
        log.warning(
            "cold_file_damaged",
            file=name,
            reason=f"{why}: neither this machine's view nor git's history holds its entry",
            action="its session is compacted again if this machine has its transcript; else "
            + DAMAGED_FIX.replace("FILE", shlex.quote(str((layout.memory / name).relative_to(layout.root)))),
        )
    if res.unexplained:
        log.warning(
            "cold_view_restored",
            entries=len(res.unexplained),
            reason="gone from this machine's view without a fold or promotion: kept and shown again",
        )


def _wiki(log: Logger, res: WikiSync) -> None:
    """What the team sync did to the wiki pages (:mod:`scribed.core.wikisync`)."""
    for page, titles in res.restored.items():
        topic = page.removesuffix(".md")
        log.warning(
            "wiki_block_restored",
            page=page,
            blocks=titles,
            reason="missing since the last sync (scribed never deletes a block: a merge or a "
            "`git revert` of a wiki-write took it, and either is undone)",
            action="to retire a fact, deprecate it (kept under ## Superseded): "
            + "; ".join(
                hint.cmd(
                    "wiki-deprecate", topic, t.removeprefix("### "), "--agent", "AGENT", "--reason", "WHY"
                )
                for t in titles
            ),
        )
    _each(
        log.warning,
        "wiki_block_placed",
        res.placed,
        ("page", "blocks"),
        reason="it sat on the wrong side of ## Superseded (a text merge put it there): a block "
        "is retired by its *Status:* line, and moved to where that line says",
        action="to retire a fact, deprecate it: scribed wiki-deprecate TOPIC TITLE --agent AGENT",
    )
    for page in res.deduped:
        log.warning("wiki_page_deduplicated", page=page, reason="a block was there twice (a text merge)")

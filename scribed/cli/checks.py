"""The one validation of a config: what ``scribed run`` refuses to start with is exactly what
``scribed check-config`` reports as an error, in the same words (the file and the key named).

Before this, ``check-config`` said "ok" for a cron line or a time zone the daemon then refused
(exit 2, no file named), so a systemd unit restarted in a loop. Both commands now call
:func:`problems`; ``run`` exits :data:`EX_CONFIG` (78) on any error, and the shipped units do not
restart on that status.

Errors (``fatal``): what ``run`` cannot start with (agent names, the root and its ``.squad/``,
scribed's state folders and whether its user can write in them, the promotion cron line and time
zone, an LLM backend it cannot reach by configuration, a Squad state backend scribed cannot write). Warnings: what it starts with and
works around (a source folder that does not exist, with its remedy; half an ``[llm]`` table
leaves summaries extractive; a Claude Code project folder read with no ``workspace``, which another
repository's sessions can share: :func:`unscoped`). Notes (``watched``): a Claude Code project folder that does not exist
yet in an existing ``projects/`` folder (``~/.claude/projects/<repo>`` before the first session
there, which ``scribed setup`` writes and says is watched for): Claude Code creates it, the daemon
picks it up, nothing is wrong.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

import click

from scribed.cli.common import (
    fail,
    init_requested,
    load_config,
    note,
    require_squad,
    root_origin,
    root_problem,
    warn,
)
from scribed.config import Config, ConfigError
from scribed.config_light import bad_agents, source_label

if TYPE_CHECKING:
    from scribed.core.file_names import Overlap
    from scribed.tiers.layout import Layout


@dataclass(frozen=True, slots=True)
class Problem:
    """One line to show: ``fatal`` ones stop ``scribed run`` (and fail ``check-config``);
    ``watched`` ones are notes, not warnings: a source folder the agent has not created yet."""

    message: str
    fatal: bool
    watched: bool = False


def _where(cfg: Config) -> str:
    return f"{cfg.path}: " if cfg.path else ""


Daemon = Literal["no", "warn", "refuse"]


def problems(
    cfg: Config,
    *,
    from_flag: bool,
    init: bool,
    init_here: bool = False,
    writes: bool = True,
    daemon: Daemon = "no",
) -> list[Problem]:
    """Every problem of ``cfg`` as ``scribed run`` would meet it, errors first.

    ``from_flag``: the root came from ``--root``; ``init``: ``--init`` was given (a missing
    ``.squad/`` is then created, not refused); ``init_here``: a message may say "pass --init" (the
    command creates a root with it) rather than name ``scribed --init run-once``; ``writes``: the
    command writes the memory, so a folder its user cannot write in is an error (``scribed mcp``
    serves reads too: its wiki_write says so itself); ``daemon``: what only ``scribed run`` refuses
    (a quiet time that cuts live sessions, see :func:`quiet_problem`) is an error ("refuse", run),
    a warning ("warn", check-config) or not looked at ("no": run-once compacts finished files).
    """
    out: list[Problem] = []
    if daemon != "no":
        out += quiet_problem(cfg, fatal=daemon == "refuse")
    out += [Problem(line, True) for line in bad_agents(cfg.sources, cfg.path)]
    out += _root(cfg, from_flag=from_flag, init=init, init_here=init_here, writes=writes)
    out += _schedule(cfg)
    out += _llm(cfg)
    out += source_problems(cfg)
    return sorted(out, key=lambda p: not p.fatal)


def enforce(
    cfg: Config,
    *,
    from_flag: bool,
    init: bool,
    code: int = 2,
    warnings: bool = False,
    init_here: bool = False,
    writes: bool = True,
    daemon: Daemon = "no",
) -> list[Problem]:
    """Stop (exit ``code``) on what ``scribed run`` refuses, each error on its own line; every
    driver that works on a root calls it before working. ``warnings``: print the warnings (when
    there is no error); ``writes``: see :func:`problems`."""
    found = problems(cfg, from_flag=from_flag, init=init, init_here=init_here, writes=writes, daemon=daemon)
    errors = [p.message for p in found if p.fatal]
    if errors:  # the errors alone: what to fix first, each on its own line
        fail("\n".join(errors), code)
    if warnings:
        for p in found:
            (note if p.watched else warn)(p.message)
    return found


def load_checked(
    ctx: click.Context, root: str | None = None, *, warnings: bool = False, writes: bool = True
) -> Config:
    """The config as :func:`scribed.cli.common.load_config` loads it, then the one validation
    (:func:`enforce`, exit 2 on what ``scribed run`` refuses), then ``.squad/`` (``--init`` creates
    it): what every command that works on a root calls before working. ``warnings``: print them;
    ``writes``: see :func:`problems`."""
    cfg = load_config(ctx, root, need_squad=False)
    init = init_requested(ctx)
    enforce(cfg, from_flag=bool(root), init=init, warnings=warnings, init_here=True, writes=writes)
    require_squad(cfg, init, bool(root))
    return cfg


def _root(
    cfg: Config, *, from_flag: bool, init: bool, init_here: bool = False, writes: bool = True
) -> list[Problem]:
    """The root folder, its ``.squad/``, scribed's state folders, whether scribed's user can write
    in them (``writes``), and Squad's state backend."""
    from scribed.core import backend
    from scribed.fsutil import UnsafePathError
    from scribed.tiers import access
    from scribed.tiers.layout import Layout

    root = cfg.root_path
    squad = root / ".squad"
    problem = root_problem(cfg, from_flag, init_here=init_here)
    if problem and not (init and not (root.exists() or root.is_symlink())):
        return [Problem(problem, True)]
    if not squad.is_dir():
        if init:
            unmade = access.folder_problem(squad) if writes else None
            if unmade is not None:
                return [Problem(unmade, True)]
            return [Problem(f"{squad} does not exist yet: --init creates it", False)]
        return [
            Problem(
                f"{root}: no .squad/ folder here (the root is {root_origin(cfg, from_flag)}: is that right?); "
                "pass --init to create it",
                True,
            )
        ]
    layout = Layout(root)
    unknown = layout.backend.startswith("?: ")  # .squad/config.json unreadable: maybe .squad/ itself
    cannot = access_problems(cfg, layout) if writes and (unknown or not layout.refused) else []
    if cannot:  # before the checks below, which cannot look into a folder its user may not enter
        return [Problem(line, True) for line in cannot]
    out: list[Problem] = []
    try:
        layout.check_state()
    except UnsafePathError as exc:
        out.append(Problem(str(exc.strerror or exc), True))
    except OSError as exc:  # a state folder scribed's user may not enter (a read-only command's)
        out.append(Problem(f"{exc.filename}: {exc.strerror or exc} (scribed runs as {access.user()})", True))
    refused = backend.refusal(layout)
    if refused:
        out.append(Problem(refused, True))
    return out


def access_problems(cfg: Config, layout: Layout | None = None) -> list[str]:
    """The folders and files a run writes that scribed's user cannot (see :mod:`scribed.tiers.access`):
    the memory's, and the transcript archive's where ``[archive] folder`` puts it elsewhere."""
    from scribed.tiers import access
    from scribed.tiers.layout import Layout

    layout = layout or Layout(cfg.root_path)
    elsewhere = cfg.archive.expanded if cfg.archive.transcripts else None
    return access.problems(layout, (elsewhere,) if elsewhere else ())


# The daemon's quiet time: under MIN_QUIET every write of a live session "finishes" it (0 is what
# run-once over finished transcripts uses); under LIVE_QUIET an agent's ordinary pause (a model's
# answer, a build, the user reading) does, and the session is told in fragments.
MIN_QUIET = 1.0
LIVE_QUIET = 60.0


def quiet_problem(cfg: Config, *, fatal: bool) -> list[Problem]:
    """``session.quiet_seconds`` as the daemon uses it: after that long without a write a live
    session counts as finished and is compacted, and its next write starts a continuation entry.
    Under :data:`MIN_QUIET` ``scribed run`` refuses it (``fatal``; check-config warns), under
    :data:`LIVE_QUIET` it is a warning."""
    q, where = cfg.session.quiet_seconds, _where(cfg)
    if q < MIN_QUIET:
        return [
            Problem(
                f"{where}bad value for 'session.quiet_seconds' for `scribed run`: {q:g} makes every "
                "write of a live session finish it (one session told in as many fragments as it has "
                f"writes); 0 is for `scribed run-once` over finished transcripts; the daemon needs at "
                f"least {MIN_QUIET:g} (the default, 1800, suits live sessions)",
                fatal,
            )
        ]
    if q < LIVE_QUIET:
        return [
            Problem(
                f"{where}'session.quiet_seconds' = {q:g}: the daemon takes a session as finished after "
                f"{q:g} s without a write, so an agent pausing longer (a model's answer, a build, the "
                "user reading) has its session told in several entries; 1800 (the default) suits "
                "live sessions",
                False,
            )
        ]
    return []


def _schedule(cfg: Config) -> list[Problem]:
    """The nightly promotion's cron line and time zone, parsed as the daemon parses them; a line
    that names no date there is (``0 3 31 2 *``: February 31) is a warning: the daemon runs, its
    cold memory is never promoted (``"off"`` says that on purpose)."""
    from datetime import UTC, datetime

    from scribed.daemon.schedule import next_fire, promotion_trigger

    try:
        trigger = promotion_trigger(cfg)
    except ConfigError as exc:
        return [Problem(str(exc), True)]
    if trigger is not None and next_fire(trigger, datetime.now(UTC)) is None:
        return [
            Problem(
                f"{_where(cfg)}'promote.schedule' never fires (got {cfg.promote.schedule!r}: no such "
                "date comes): the cold memory is never promoted to the wiki; fix the day or month "
                "(cron: minute hour day month weekday, e.g. '0 3 * * *'), or write \"off\" if "
                "another machine promotes",
                False,
            )
        ]
    return []


def _llm(cfg: Config) -> list[Problem]:
    """``[llm]`` as the compressor will use it: an unusable URL or a backend that cannot work."""
    llm, where = cfg.llm, _where(cfg)
    out: list[Problem] = []
    if llm.base_url:
        parts = urlsplit(llm.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            out.append(
                Problem(
                    f"{where}bad value for 'llm.base_url': not an http(s) URL with a host "
                    f"(got {llm.base_url!r}; e.g. http://127.0.0.1:11434/v1)",
                    True,
                )
            )
    if cfg.compress.backend == "llm" and not llm.configured:
        missing = " and ".join(k for k in ("llm.base_url", "llm.model") if not getattr(llm, k[4:]))
        out.append(
            Problem(
                f"{where}bad value for 'compress.backend': \"llm\" needs {missing} "
                '(set them in [llm], or use backend = "auto" to fall back to extractive)',
                True,
            )
        )
    elif bool(llm.base_url) != bool(llm.model):
        have, lack = ("llm.base_url", "llm.model") if llm.base_url else ("llm.model", "llm.base_url")
        out.append(
            Problem(
                f"{where}{have} is set but {lack} is empty: the LLM is not used, summaries are extractive",
                False,
            )
        )
    if llm.configured and llm.api_key_env and llm.api_key_env not in os.environ:
        from scribed.compress.llm_endpoint import is_openai_host

        if is_openai_host(llm.base_url):
            out.append(
                Problem(
                    f"{where}'llm.api_key_env' names {llm.api_key_env}, which is not set in this "
                    "environment (the service's environment may differ)",
                    False,
                )
            )
    return out


def watched_for(kind: str, path: Path) -> bool:
    """A transcript folder the agent creates at its first session, not there yet in an agent home
    that is (:data:`scribed.sources.homes.HOMES`): a Claude Code project folder
    (``~/.claude/projects/<the repository's path, dashed>``, ``projects/`` itself maybe not created
    yet), Copilot CLI's ``session-state/``, Codex's ``sessions/``, Squad's ``.squad/sessions/``. What
    ``scribed setup`` writes and says is watched for. Any other missing source folder (a typo in its
    name too) is a warning."""
    from scribed.sources import homes, missing

    if not missing(path):
        return False
    if kind == "claude":  # one folder a repository inside projects/
        parent = path.parent
        return homes.transcripts_in(kind, parent.parent) == parent and (
            os.path.isdir(parent) or os.path.isdir(parent.parent)
        )
    return homes.transcripts_in(kind, path.parent) == path and os.path.isdir(path.parent)


def source_problems(cfg: Config) -> list[Problem]:
    """Source folders that do not exist or are files, each with what to do, and sources that
    reach an earlier one's folder (both named: the first reads the files both list). A Claude
    Code project folder not created yet (:func:`watched_for`) is a note: the daemon watches for it."""
    from scribed.core.file_names import overlaps

    found = overlaps(cfg)
    out = [p for i in range(len(cfg.sources)) if (p := source_problem(cfg, i, found)) is not None]
    return out + [p for i in range(len(cfg.sources)) if (p := unscoped(cfg, i)) is not None]


def unscoped(cfg: Config, i: int) -> Problem | None:
    """A ``claude`` source on Claude Code's ``projects/`` folder, or one folder in it, with no
    ``workspace``: a warning. Claude Code names a project folder by the session's working directory
    with every character that is not a letter or digit as ``-``, so ``/x/app/api`` and the sibling
    repository ``/x/app-api`` share ``-x-app-api``; unscoped, the other repository's sessions there
    are compacted into this root's committed memory. ``scribed setup`` writes the ``workspace``."""
    from scribed.sources import homes

    s = cfg.sources[i]
    if s.kind != "claude" or s.workspace:
        return None
    path = s.expanded
    label = f"{_where(cfg)}{source_label(i)} ({s.kind})"
    root = cfg.root_path
    fix = f"add `workspace = {json.dumps(_as_written(root, cfg))}` to it (the root: only "
    fix += "the sessions run in it are taken, the others skipped and counted)"
    if homes.transcripts_in(s.kind, path.parent) == path:  # ~/.claude/projects itself
        return Problem(
            f"{label}: {path} holds the Claude Code project folders of every repository and the "
            f"source has no `workspace`, so all their sessions are compacted into this root's memory; {fix}",
            False,
        )
    name = path.name  # two '-' at least: one folder name stands for several paths ("-app" is /app alone)
    if homes.transcripts_in(s.kind, path.parent.parent) == path.parent and _shared_name(name):
        return Problem(
            f"{label}: {path} is a Claude Code project folder, which other folders' sessions share "
            "(Claude Code names it by the path with every character that is not a letter or digit "
            "as '-': /x/app/api and the sibling repository /x/app-api both get -x-app-api); with no "
            f"`workspace` theirs are compacted into this root's memory too: {fix}",
            False,
        )
    return None


def _as_written(root: Path, cfg: Config) -> str:
    """``root`` as a ``workspace`` in ``cfg``'s file names it (relative to the file's folder)."""
    here = cfg.path.parent.absolute() if cfg.path else None
    if here is not None and (root == here or here in root.parents):
        return str(root.relative_to(here))
    return str(root)


def _shared_name(name: str) -> bool:
    """Whether ``name`` is a Claude Code project folder's name that several folders map to."""
    return re.fullmatch(r"[A-Za-z0-9-]+", name) is not None and name.count("-") > 1


def source_problem(cfg: Config, i: int, found: list[Overlap] | None = None) -> Problem | None:
    """The problem of ``cfg.sources[i]``'s folder (see :func:`source_problems`; ``found``: the
    config's overlaps, when known), or None."""
    problem = _folder_problem(cfg, i)
    if problem is not None:
        return problem
    if found is None:
        from scribed.core.file_names import overlaps

        found = overlaps(cfg)
    o = next((o for o in found if o.later == i), None)
    return Problem(f"{_where(cfg)}{o.reason}", False) if o is not None else None


def _folder_problem(cfg: Config, i: int) -> Problem | None:
    from scribed.sources import globs, missing

    s = cfg.sources[i]
    path, label = s.expanded, f"{_where(cfg)}{source_label(i)} ({s.kind})"
    bad_glob = globs.problem(s.glob, str(path))
    if bad_glob:  # the source would read nothing, whatever its folder holds
        return Problem(f"{_where(cfg)}bad value for 'glob' in {source_label(i)}: {bad_glob}", True)
    if watched_for(s.kind, path):
        return Problem(
            f"{label}: {path} does not exist yet: watched for (the agent creates it at its first session)",
            False,
            watched=True,
        )
    if missing(path):
        return Problem(
            f"{label}: path does not exist: {path}; fix `path =` there (or remove the "
            "source); the daemon watches for it meanwhile",
            False,
        )
    if os.path.exists(path) and not os.path.isdir(path):  # (a folder it cannot reach: discovery says it)
        return Problem(f"{label}: not a folder: {path}; point `path =` at its folder", False)
    return None


@dataclass(frozen=True, slots=True)
class Listing:
    """One source's folder as discovery lists it: its files, and its warnings as each run logs them
    (a folder it cannot read, the source above its tool's transcript folder or matching nothing, a
    broken or folder symlink), each prefixed with the source as ``check-config`` names it."""

    files: int
    warnings: list[str]


def listing(cfg: Config, i: int) -> Listing | None:
    """``cfg.sources[i]`` listed as a run lists it (None: its folder is missing or not a folder,
    said by :func:`source_problem`); what ``check-config`` shows beside the config's own checks."""
    from scribed import sources

    s = cfg.sources[i]
    if sources.missing(s.expanded) or (os.path.exists(s.expanded) and not os.path.isdir(s.expanded)):
        return None
    notes: list[sources.Note] = []
    n = sum(1 for _ in sources.discover(s.kind, s.expanded, s.glob, notes))
    label = f"{_where(cfg)}{source_label(i)} ({s.kind})"
    return Listing(n, [f"{label}: {_shown(x.path, x.reason)}" for x in notes if x.warn])


def _shown(path: Path, reason: str) -> str:
    return reason if str(path) in reason else f"{path}: {reason}"

"""``scribed setup``: find the agents' transcript folders on this machine, propose a config for one
repository root, write it, register ``scribed mcp`` with the agents that take MCP servers, and
optionally install the systemd user unit. Idempotent: a second run finds nothing to change.

:func:`plan` only reads (a dry run prints it); :func:`apply` writes what it lists, each file
atomically and only if it still holds what :func:`plan` read. Where each tool keeps its
transcripts (``docs`` of each tool, summarized in docs/formats.md and docs/setup.md; the folder
names are :data:`scribed.sources.homes.HOMES`, which discovery also reads):

* Claude Code: ``~/.claude/projects/<cwd with every non-alphanumeric character as ->/``
  (``$CLAUDE_CONFIG_DIR`` replaces ``~/.claude``); sessions started in a sub-folder of the
  repository have a folder of their own, recognized by the ``cwd`` their records carry;
* Copilot CLI: ``~/.copilot/session-state/`` (``$COPILOT_HOME``), every repository's sessions;
* Codex: ``~/.codex/sessions/`` (``$CODEX_HOME``), every repository's sessions;
* in the repository: Aider's ``.aider.chat.history.md``, SpecStory's ``.specstory/history/``,
  Squad's REPL sessions ``.squad/sessions/``.

A home folder given explicitly (``--home``, the tests' fake home) is used alone: the environment's
``*_HOME`` variables then do not apply.
"""

from __future__ import annotations

import codecs
import contextlib
import dataclasses
import json
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from scribed import sources
from scribed.config import ConfigError, from_dict
from scribed.config_light import GLOBAL_KINDS, decode_config
from scribed.core import setup_mcp
from scribed.core.setup_mcp import Registration
from scribed.core.setup_unit import plan_unit, unit_text
from scribed.fsutil import UnsafePathError, atomic_write, ensure_dir
from scribed.sources.homes import HOMES

CWD_PROBE_LINES = 20  # records read from one transcript to learn the folder its session ran in
CWD_PROBE_FOLDERS = 200  # sibling project folders probed at most


@dataclass(frozen=True, slots=True)
class Homes:
    """Where each tool keeps its files on this machine."""

    home: Path
    claude: Path
    copilot: Path
    codex: Path
    config: Path  # XDG config home (the systemd user unit goes under it)

    @classmethod
    def of(cls, home: Path | None, environ: Mapping[str, str]) -> Homes:
        env = {} if home is not None else environ  # an explicit home is used alone
        h = (home or Path.home()).absolute()

        def pick(var: str, default: Path) -> Path:
            return Path(env[var]).expanduser().absolute() if env.get(var) else default

        return cls(
            h,
            pick("CLAUDE_CONFIG_DIR", h / HOMES["claude"].name),
            pick("COPILOT_HOME", h / HOMES["copilot"].name),
            pick("CODEX_HOME", h / HOMES["codex"].name),
            pick("XDG_CONFIG_HOME", h / ".config"),
        )

    def shown(self, path: Path) -> str:
        """``~/…`` when under the real home (the config expands ``~``), else the absolute path."""
        if self.home == Path.home().absolute():
            with contextlib.suppress(ValueError):
                return "~/" + str(path.relative_to(self.home))
        return str(path)


@dataclass(frozen=True, slots=True)
class Found:
    """One transcript source found: the tool, the ``[[sources]]`` block, how many files it has now."""

    tool: str
    kind: str
    path: Path
    shown: str  # the path as the config writes it
    glob: str = ""
    agent: str = ""
    files: int = 0
    note: str = ""
    workspace: str = ""  # the root as the config writes it, for a folder other repositories' sessions reach
    instead: str = ""  # a kind that reads the files this source does not (markdown logs in .squad/sessions)

    def suggestion(self) -> str:
        """The source to use in place of this one, as lines to paste (a ``[[sources]]`` beside it
        on the same folder would be an overlap warning, and this one's empty folder another)."""
        if not self.instead:
            return ""
        return (
            f"for a session log to remember, use this source in place of the {self.kind} one:\n"
            f"[[sources]]\nkind = {json.dumps(self.instead)}\n"
            f"path = {json.dumps(self.shown)}\nagent = {json.dumps(self.agent or 'squad')}\n"
        )

    def block(self) -> str:
        lines = [f"# {self.tool}: {self.files} transcript file{'s' * (self.files != 1)} now"]
        if self.note:
            lines.append(f"# {self.note}")
        lines += [f"#   {ln}" for ln in self.suggestion().splitlines()]
        lines += ["[[sources]]", f"kind = {json.dumps(self.kind)}", f"path = {json.dumps(self.shown)}"]
        if self.glob:
            lines.append(f"glob = {json.dumps(self.glob)}")
        if self.agent:
            lines.append(f"agent = {json.dumps(self.agent)}")
        if self.workspace:
            lines.append(f"workspace = {json.dumps(self.workspace)}  # {SCOPED}")
        return "\n".join(lines) + "\n"


def dashed(path: Path) -> str:
    """Claude Code's project folder name for a working directory."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(path))


def _count(kind: str, path: Path, glob: str) -> int:
    return sum(1 for _ in sources.discover(kind, path, glob))


def _session_cwd(folder: Path) -> Path | None:
    """The ``cwd`` the first records of one of ``folder``'s transcripts carry (Claude Code)."""
    for p in sources.discover("claude", folder):
        with contextlib.suppress(OSError), p.open("rb") as fh:
            for _, raw in zip(range(CWD_PROBE_LINES), fh, strict=False):
                with contextlib.suppress(ValueError):
                    rec = json.loads(raw)
                    if isinstance(rec, dict) and isinstance(rec.get("cwd"), str):
                        return Path(rec["cwd"])
        return None
    return None


def _claude(homes: Homes, root: Path) -> list[Found]:
    projects = homes.claude / HOMES["claude"].transcripts
    if not homes.claude.is_dir():
        return []
    own = projects / dashed(root)
    found = [
        Found(
            "Claude Code",
            "claude",
            own,
            homes.shown(own),
            files=_count("claude", own, ""),
            note="" if own.is_dir() else "no session in this repository yet: the folder is watched for",
        )
    ]
    prefix = dashed(root) + "-"  # a sub-folder's sessions, or a sibling's ("/repo-x"): the cwd decides
    with contextlib.suppress(OSError):
        names = sorted(p.name for p in projects.iterdir() if p.name.startswith(prefix) and p.is_dir())
        for name in names[:CWD_PROBE_FOLDERS]:
            cwd = _session_cwd(projects / name)
            if cwd is not None and (cwd == root or root in cwd.parents):
                sub = projects / name
                note = f"sessions started in {cwd.relative_to(root)}/"
                found.append(
                    Found(
                        "Claude Code",
                        "claude",
                        sub,
                        homes.shown(sub),
                        files=_count("claude", sub, ""),
                        note=note,
                    )
                )
    return found


# The kinds whose folder other repositories' sessions reach: Codex's and Copilot's hold every
# repository's; Claude Code names a project folder by its cwd with every character that is not a
# letter or digit as "-", so /x/app/api (a sub-folder) and /x/app-api (a sibling repository) share
# one. Setup scopes their sources to the root, so only the sessions run in it are compacted.
ROOT_SCOPED = (*GLOBAL_KINDS, "claude")
ALL_REPOS = "this folder holds every repository's sessions: only those run inside this root are compacted"
SCOPED = "only sessions run in this folder (their recorded cwd); other repositories' are skipped"


def find(homes: Homes, root: Path) -> list[Found]:
    """Every transcript source of the agents installed here (their folders exist) for ``root``."""
    out = _claude(homes, root)
    if homes.copilot.is_dir():
        state = homes.copilot / HOMES["copilot"].transcripts
        out.append(
            Found(
                "Copilot CLI",
                "copilot",
                state,
                homes.shown(state),
                files=_count("copilot", state, ""),
                note=ALL_REPOS,
            )
        )
    if homes.codex.is_dir():
        sess = homes.codex / HOMES["codex"].transcripts
        out.append(
            Found("Codex", "codex", sess, homes.shown(sess), files=_count("codex", sess, ""), note=ALL_REPOS)
        )
    aider = root / ".aider.chat.history.md"
    if aider.is_file():
        out.append(Found("Aider", "markdown", root, ".", ".aider.chat.history.md", "aider", 1))
    spec = root / ".specstory" / "history"
    if spec.is_dir():
        out.append(
            Found(
                "SpecStory",
                "markdown",
                spec,
                ".specstory/history",
                "",
                "specstory",
                _count("markdown", spec, ""),
            )
        )
    repl = root / HOMES["squad-repl"].name / HOMES["squad-repl"].transcripts
    if repl.is_dir():
        n = _count("squad-repl", repl, "")
        note, md = _unread(repl) if not n else ("", 0)
        found = Found("Squad REPL", "squad-repl", repl, ".squad/sessions", files=n, note=note)
        out.append(dataclasses.replace(found, instead="markdown") if md else found)
    return out


def _unread(repl: Path) -> tuple[str, int]:
    """What Squad's session folder holds that its source does not read (a markdown session log a
    Squad version or an agent wrote there), and how many of them a markdown source reads (then
    :meth:`Found.suggestion` offers one); ("", 0) if nothing."""
    try:
        names = sorted(e.name for e in os.scandir(repl) if e.is_file() and not sources.is_temp(e.name))
    except OSError:
        return "", 0
    if not names:
        return "", 0
    n = len(names)
    held = names[0] if n == 1 else f"{n} other files ({names[0]}, for one)"
    md = _count("markdown", repl, "")
    log = f"; {'they are' if md > 1 else 'it is'} markdown, which a markdown source reads" if md else ""
    return f"it holds {held}, not Squad REPL sessions (*.json): not read{log}", md


# --- the config -----------------------------------------------------------------------------------
def _in_config(found: Found, config_dir: Path, root: Path) -> Found:
    """``found`` with its path as the config at ``config_dir`` writes it (relative inside that
    folder), and, for a folder other repositories' sessions reach (:data:`ROOT_SCOPED`), the root
    as its ``workspace``."""
    if found.kind in ROOT_SCOPED:
        found = dataclasses.replace(found, workspace=_shown_in(root, config_dir))
    if found.shown.startswith("~"):
        return found
    try:
        rel = found.path.relative_to(config_dir)
    except ValueError:
        return dataclasses.replace(found, shown=str(found.path))
    return dataclasses.replace(found, shown=str(rel))


def in_config(found: Found, config_path: Path, root: Path) -> Found:
    """``found`` as the config at ``config_path`` writes it (its path relative to that file)."""
    return _in_config(found, config_path.parent.absolute(), root)


def _shown_in(root: Path, config_dir: Path) -> str:
    """The root as a config in ``config_dir`` names it: "." beside it, else absolute."""
    return "." if root == config_dir else str(root)


def config_text(root: Path, config_path: Path, found: list[Found]) -> str:
    """A new config for ``root``: its root, then one ``[[sources]]`` block per source found."""
    here = config_path.parent.absolute()
    rel_root = _shown_in(root, here)
    tools = ", ".join(dict.fromkeys(f.tool for f in found)) or "no agent"
    head = (
        f"# scribed config written by `scribed setup` for {root}: found {tools}.\n"
        "# Every key with its default: config.example.toml. Check it with `scribed check-config`.\n"
        "# Relative paths are relative to this file.\n\n"
        f"root = {json.dumps(rel_root)}\n"
    )
    return head + "".join("\n" + _in_config(f, here, root).block() for f in found)


def _same_source(a: object, kind: str, path: Path, glob: str) -> bool:
    return (
        getattr(a, "kind", None) == kind
        and getattr(a, "expanded", None) == path
        and (getattr(a, "glob", "") or "") == glob
    )


@dataclass(slots=True)
class ConfigChange:
    """What happens to the config file: ``new_text`` to write (None: nothing), or a ``problem``."""

    path: Path
    proposal: str  # the whole config a fresh setup writes (what --dry-run prints)
    new_text: str | None = None
    before: bytes | None = None
    added: list[Found] = field(default_factory=list)
    problem: str = ""


def plan_config(root: Path, config_path: Path, found: list[Found]) -> ConfigChange:
    """Write a new config, or append the sources an existing one lacks (its text otherwise kept)."""
    proposal = config_text(root, config_path, found)
    try:
        before = config_path.read_bytes()
    except FileNotFoundError:
        _validate(proposal, config_path)
        return ConfigChange(config_path, proposal, proposal, None, list(found))
    except OSError as exc:
        return ConfigChange(config_path, proposal, problem=f"cannot read it: {exc.strerror or exc}")
    if config_path.is_symlink():
        return ConfigChange(
            config_path, proposal, before=before, problem="it is a symlink (not written through)"
        )
    bom = "\ufeff" if before.startswith(codecs.BOM_UTF8) else ""  # Notepad's: kept as the file had it
    try:
        text = decode_config(before, config_path)
        cfg = from_dict(tomllib.loads(text), config_path.absolute())
    except (tomllib.TOMLDecodeError, ConfigError) as exc:
        return ConfigChange(
            config_path, proposal, before=before, problem=f"it is not a valid config ({exc}): fix it first"
        )
    if cfg.root_path != root:
        return ConfigChange(
            config_path,
            proposal,
            before=before,
            problem=f"it is the config of root {cfg.root_path}; pass --config PATH for a config of {root}",
        )
    here = config_path.parent.absolute()
    missing = [f for f in found if not any(_same_source(s, f.kind, f.path, f.glob) for s in cfg.sources)]
    if not missing:
        return ConfigChange(config_path, proposal, before=before)
    sep = "" if text.endswith("\n") else "\n"
    new_text = text + sep + "".join("\n" + _in_config(f, here, root).block() for f in missing)
    try:
        new = from_dict(tomllib.loads(new_text), config_path.absolute())
    except (tomllib.TOMLDecodeError, ConfigError):
        new = None
    if new is None or len(new.sources) != len(cfg.sources) + len(missing):
        return ConfigChange(
            config_path, proposal, before=before, added=missing,
            problem="appending [[sources]] blocks would not parse as intended (sources written inline?)",
        )  # fmt: skip
    return ConfigChange(config_path, proposal, bom + new_text, before, missing)


def _validate(text: str, path: Path) -> None:
    """Our own proposal must be a valid config (a bug here must not write a broken file)."""
    from_dict(tomllib.loads(text), path.absolute())


# --- MCP ---------------------------------------------------------------------------------------------
def registrations(
    homes: Homes, root: Path, found: list[Found], command: list[str], shared: list[str]
) -> list[Registration]:
    """``scribed mcp`` registered with each installed tool that takes MCP servers: ``command``
    in the repository's own ``.mcp.json`` (Claude Code), ``shared`` in the files one user's every
    repository shares (Copilot CLI, Codex): it finds the root from the folder the agent starts it
    in, so a second repository's setup finds it in place."""
    tools = {f.tool for f in found}
    out: list[Registration] = []
    entry: dict[str, object]
    if "Claude Code" in tools:
        entry = {"type": "stdio", "command": command[0], "args": command[1:]}
        out.append(setup_mcp.json_registration("Claude Code", root / ".mcp.json", entry))
    if "Copilot CLI" in tools:
        entry = {"type": "local", "command": shared[0], "args": shared[1:], "tools": ["*"]}
        path = homes.copilot / "mcp-config.json"
        out.append(setup_mcp.json_registration("Copilot CLI", path, entry, replace_tied=True))
    if "Codex" in tools:
        out.append(setup_mcp.toml_registration("Codex", homes.codex / "config.toml", shared))
    return out


# --- the plan and its application --------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Step:
    """One change ``apply`` makes (``text`` None: a folder), or one the user makes by hand."""

    what: str  # a line for the user: "write …", "add the MCP server … to …"
    path: Path
    text: str | None = None
    before: bytes | None = None
    problem: str = ""  # set: not written; ``snippet`` is what to paste
    snippet: str = ""


@dataclass(slots=True)
class Plan:
    """Everything ``setup`` found and would change, read-only."""

    root: Path
    config_path: Path
    found: list[Found]
    config: ConfigChange
    steps: list[Step]  # what apply writes, in order
    manual: list[Step]  # what it cannot write safely: the user pastes the snippet
    registered: list[Registration]
    unit: Path | None = None  # with --systemd: this repository's unit (or the earlier one serving it)

    @property
    def changes(self) -> bool:
        return bool(self.steps)


def plan(
    root: Path,
    *,
    homes: Homes,
    config_path: Path,
    command: list[str],
    mcp: bool = True,
    systemd: bool = False,
) -> Plan:
    """What ``scribed setup`` would do for ``root``; reads only. ``command`` starts scribed (its
    executable, or the interpreter and ``-m scribed``)."""
    root = root.absolute()
    found = find(homes, root)
    cfg = plan_config(root, config_path.absolute(), found)
    steps: list[Step] = []
    manual: list[Step] = []
    if not (root / ".squad").is_dir():
        steps.append(
            Step(f"create {root / '.squad'}/ (scribed's memory lives in .squad/memory/)", root / ".squad")
        )
    if cfg.problem:
        manual.append(Step(f"config {cfg.path}", cfg.path, problem=cfg.problem, snippet=cfg.proposal))
    elif cfg.new_text is not None:
        what = "write" if cfg.before is None else f"add {len(cfg.added)} [[sources]] to"
        steps.append(Step(f"{what} {cfg.path} ({_tools(cfg.added)})", cfg.path, cfg.new_text, cfg.before))
    serve = [*command, "--config", str(cfg.path), "mcp", "--root", str(root)]
    regs = registrations(homes, root, found, serve, [*command, "mcp"]) if mcp else []
    for r in regs:
        what = f'register MCP server "{setup_mcp.SERVER}" for {r.tool} in {r.path}'
        if r.replaces:
            what = (
                f'replace MCP server "{setup_mcp.SERVER}" for {r.tool} in {r.path} (it served only '
                f"{r.replaces}; the new one serves the repository the agent runs in)"
            )
        if r.problem:
            manual.append(Step(what, r.path, problem=r.problem, snippet=r.snippet))
        elif r.new_text is not None:
            steps.append(Step(what, r.path, r.new_text, r.before, snippet=r.snippet))
    unit_path: Path | None = None
    if systemd:
        unit = plan_unit(homes.config, command, cfg.path, root)
        unit_path = unit.path
        if unit.problem:
            manual.append(
                Step(
                    f"systemd user unit {unit.path}",
                    unit.path,
                    problem=unit.problem,
                    snippet=unit_text(command, cfg.path, unit.path.name),
                )
            )
        elif unit.new_text is not None:
            steps.append(
                Step(f"install the systemd user unit {unit.path}", unit.path, unit.new_text, unit.before)
            )
    return Plan(root, cfg.path, found, cfg, steps, manual, regs, unit_path)


def _tools(found: list[Found]) -> str:
    return ", ".join(f"{f.tool} {f.kind}" for f in found) or "no sources"


@dataclass(frozen=True, slots=True)
class Applied:
    step: Step
    ok: bool
    problem: str = ""


def apply(p: Plan) -> list[Applied]:
    """Make the plan's changes, each file atomically and only if it still holds what was read."""
    out: list[Applied] = []
    for step in p.steps:
        try:
            if step.text is None:
                ensure_dir(step.path)
            else:
                _write(step)
        except (OSError, _ChangedError) as exc:
            why = str(exc) if isinstance(exc, _ChangedError) else str(exc.strerror or exc)
            out.append(Applied(step, False, why))
            continue
        out.append(Applied(step, True))
    return out


class _ChangedError(Exception):
    """The file changed between the plan and the write: left as it is now."""


def _write(step: Step) -> None:
    assert step.text is not None
    try:
        now: bytes | None = step.path.read_bytes()
        mode: int | None = step.path.stat().st_mode & 0o777
    except FileNotFoundError:
        now, mode = None, None
    if now != step.before:
        raise _ChangedError(f"{step.path} changed since it was read; run `scribed setup` again")
    if step.path.is_symlink():
        raise UnsafePathError(40, "refusing to write through a symlink", str(step.path))
    atomic_write(step.path, step.text)
    if mode is not None:
        os.chmod(step.path, mode)  # the user's file keeps its mode (atomic_write makes 0600)

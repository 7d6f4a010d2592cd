"""What ``scribed setup`` finds on this machine: the agents' transcript folders for one repository
root, each as a ``[[sources]]`` block to write. Reads only; :mod:`scribed.core.setup` plans and
writes the config from it. Where each tool keeps its transcripts (``docs`` of each tool,
summarized in docs/formats.md and docs/setup.md; the folder names are
:data:`scribed.sources.homes.HOMES`, which discovery also reads):

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

import contextlib
import dataclasses
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from scribed import sources
from scribed.config_light import GLOBAL_KINDS
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

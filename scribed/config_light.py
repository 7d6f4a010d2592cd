"""The config as a spawn reads it: the lookup and the TOML read of :mod:`scribed.config`, without pydantic.

``scribed context`` runs at every agent spawn and needs only the root, the log settings and the
sources' agent names, yet importing pydantic and building the models costs more than the whole
rest of the command. :func:`load` checks the file against :data:`SCHEMA` (the pydantic models'
keys, types, bounds and defaults, kept in step by ``tests/test_config_light.py``) and, only when
it is certainly valid, answers with a light :class:`LightConfig`. Anything else (an unknown key,
a bad value, a value pydantic would coerce) makes :func:`light` answer None and the caller hands
it to :func:`scribed.config.from_dict`, so every error message and coerced value is pydantic's own.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any


class ConfigError(Exception):
    """A config file is missing, unreadable or invalid. The message is one line."""


# sysexits.h EX_CONFIG: `scribed run` exits with it on a config it cannot start with, and the shipped
# systemd units do not restart on it (RestartPreventExitStatus=78): a restart would fail the same way.
EX_CONFIG = 78


# (type, lower bound, lower bound inclusive, upper bound (inclusive), allowed values, default).
# type "int" takes an int (not a bool); "float" an int or a float; "str" a str; "bool" a bool.
Spec = tuple[str, float | None, bool, float | None, tuple[str, ...], Any]
_DAY = 86400  # the bounds of the durations: see scribed.config (MAX_QUIET, DAY, MAX_DAYS)
_CENTURY = 36500

SCHEMA: dict[str, dict[str, Spec]] = {
    "session": {
        "quiet_seconds": ("float", 0, True, 30 * _DAY, (), 1800),
        "max_line_bytes": ("int", 64 << 10, True, 1 << 30, (), 64 << 20),
    },
    "compress": {
        "backend": ("str", None, True, None, ("auto", "llm", "extractive"), "auto"),
        "ratio": ("float", 0, False, 1, (), 0.10),
        "min_bytes": ("int", 200, True, None, (), 600),
        "max_bytes": ("int", 400, True, None, (), 65536),
        "workers": ("int", 1, True, 64, (), min(os.cpu_count() or 1, 64)),  # = config.CompressCfg's factory
    },
    "llm": {
        "base_url": ("str", None, True, None, (), ""),
        "model": ("str", None, True, None, (), ""),
        "api_key_env": ("str", None, True, None, (), "OPENAI_API_KEY"),
        "timeout_seconds": ("float", 0, False, _DAY, (), 120),
        "max_retries": ("int", 0, True, 10, (), 2),
        "context_tokens": ("int", 512, True, None, (), 8192),
        "max_concurrency": ("int", 1, True, None, (), 2),
        "temperature": ("float", 0, True, 2, (), 0.0),
        "response_format": ("str", None, True, None, ("auto", "json_schema", "json_object", "text"), "auto"),
        "max_response_bytes": ("int", 1024, True, None, (), 1_048_576),
    },
    "cold": {
        "ttl_days": ("int", 1, True, _CENTURY, (), 30),
        "max_bytes": ("int", 1024, True, None, (), 196608),
    },
    "log": {
        "format": ("str", None, True, None, ("auto", "console", "json"), "auto"),
        "level": ("str", None, True, None, ("debug", "info", "warning", "error"), "info"),
    },
    "watch": {
        "mode": ("str", None, True, None, ("auto", "inotify", "polling"), "auto"),
        "poll_interval": ("float", 0, False, _DAY, (), 5.0),
    },
    "daemon": {
        "workers": ("int", 1, True, 64, (), 2),
        "max_attempts": ("int", 1, True, None, (), 5),
        "shutdown_grace": ("float", 0, True, _DAY, (), 20.0),
        "queue_max": ("int", 1, True, None, (), 1000),
    },
    "promote": {
        "schedule": ("str", None, True, None, (), "0 3 * * *"),
        "timezone": ("str", None, True, None, (), "UTC"),
        "mode": ("str", None, True, None, ("auto", "review"), "auto"),
        "squad_inbox": ("bool", None, True, None, (), False),
    },
    "archive": {
        "transcripts": ("bool", None, True, None, (), True),
        "retention_days": ("int", 1, True, _CENTURY, (), 365),
        "folder": ("str", None, True, None, (), ""),
    },
}
SOURCE_KINDS = ("copilot", "claude", "codex", "squad-repl", "markdown")
# A source's keys: kind and path are required (path not blank); agent, glob, workspace default to "".
SOURCE_KEYS = ("kind", "path", "agent", "glob", "workspace")
# The kinds whose sessions record the folder they ran in (cwd, git root): a ``workspace`` applies.
SCOPED_KINDS = ("copilot", "claude", "codex")
# The kinds whose folder holds every repository's sessions (~/.codex/sessions,
# ~/.copilot/session-state): scoped to the root unless ``workspace`` says otherwise.
GLOBAL_KINDS = ("copilot", "codex")
EVERY_SESSION = "*"


def source_scope(kind: str, workspace: str | list[str], root: Path) -> tuple[str, ...] | None:
    """The absolute folders a source's sessions must have run in, or None for every session:
    ``"*"``, or no ``workspace`` on a kind whose folder is the repository's own."""
    items = [workspace] if isinstance(workspace, str) else list(workspace)
    items = [i for i in items if i.strip()]
    if items == [EVERY_SESSION]:
        return None
    if not items:
        return (os.path.normpath(root.absolute()),) if kind in GLOBAL_KINDS else None
    return tuple(dict.fromkeys(os.path.normpath(_expand(i).absolute()) for i in items))


def _expand(p: str) -> Path:
    return Path(os.path.expandvars(os.path.expanduser(p)))


# Plain classes, not dataclasses: importing dataclasses (and inspect) cost a spawn ~40 M instructions.
class LightLog:
    __slots__ = ("format", "level")

    def __init__(self, format: str = "auto", level: str = "info") -> None:
        self.format, self.level = format, level

    def __repr__(self) -> str:
        return f"LightLog(format={self.format!r}, level={self.level!r})"


class LightSource:
    __slots__ = ("agent", "glob", "kind", "path", "workspace")

    def __init__(self, kind: str, path: str, agent: str = "", glob: str = "", workspace: str = "") -> None:
        self.kind, self.path, self.agent, self.glob = kind, path, agent, glob
        self.workspace = workspace

    def __repr__(self) -> str:
        return (
            f"LightSource(kind={self.kind!r}, path={self.path!r}, agent={self.agent!r}, glob={self.glob!r})"
        )

    @property
    def expanded(self) -> Path:
        return _expand(self.path)


class LightConfig:
    """What a spawn reads of a config that :data:`SCHEMA` accepted: same names as :class:`Config`."""

    __slots__ = ("log", "path", "root", "root_set", "sources")

    def __init__(
        self,
        root: str = ".",
        log: LightLog | None = None,
        sources: list[LightSource] | None = None,
        path: Path | None = None,
        root_set: bool = False,
    ) -> None:
        self.root, self.path, self.root_set = root, path, root_set
        self.log = LightLog() if log is None else log
        self.sources: list[LightSource] = [] if sources is None else sources

    def __repr__(self) -> str:
        return (
            f"LightConfig(root={self.root!r}, log={self.log!r}, sources={self.sources!r}, path={self.path!r})"
        )

    @property
    def root_path(self) -> Path:
        return _expand(self.root).absolute()


def candidate_paths(explicit: str | None = None, root: str | None = None) -> list[Path]:
    """The lookup order: --config, $SCRIBED_CONFIG, then ROOT/scribed.toml when ``--root ROOT`` is
    given (the config `scribed setup` wrote for that root wins over an unrelated ./scribed.toml),
    ./scribed.toml, XDG, /etc. The first two name one file, which must exist."""
    if explicit:
        return [Path(explicit)]
    env = os.environ.get("SCRIBED_CONFIG")
    if env:
        return [Path(env)]
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    here = [Path("scribed.toml"), Path(xdg) / "scribed" / "config.toml", Path("/etc/scribed/config.toml")]
    if root:
        own = Path(os.path.abspath(root)) / "scribed.toml"
        return [own, *(p for p in here if p.absolute() != own)]
    return here


def squad_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` that holds ``.squad/``, not looking past the top of
    the git repository ``start`` is in (another repository's memory is not this one's); None."""
    for folder in (start, *start.parents):
        if (folder / ".squad").is_dir():
            return folder
        if (folder / ".git").exists():
            return None
    return None


def implied_root(explicit: str | None, root: str | None, *, init: bool = False) -> str | None:
    """The root a command run from inside a repository's subfolder means: with no ``--root``, no
    ``--init`` (it makes the current folder a root), no config file named or found and no
    ``.squad/`` here, the nearest folder up holding ``.squad/`` inside this git repository
    (:func:`squad_root`; outside one nothing is looked for: a ``~/.squad`` is no project's),
    whose ``scribed.toml`` is then the config, as git finds ``.git``; else None."""
    if root or explicit or init or os.environ.get("SCRIBED_CONFIG"):
        return None
    here = Path.cwd()
    if (here / ".squad").is_dir() or any(p.exists() for p in candidate_paths()):
        return None
    if not any((d / ".git").exists() for d in (here, *here.parents)):
        return None
    found = squad_root(here)
    return str(found) if found is not None else None


def looked_for(explicit: str | None = None, root: str | None = None) -> str:
    """The files the lookup tried, for the line that says no config was found."""
    return ", ".join(str(p) for p in candidate_paths(explicit, root))


def read(explicit: str | None = None, root: str | None = None) -> tuple[dict[str, Any], Path | None]:
    """The config file's TOML table and its absolute path; ``({}, None)`` when no file is found.
    ``root``: the ``--root`` given, whose ``scribed.toml`` is looked for first."""
    named = bool(explicit or os.environ.get("SCRIBED_CONFIG"))
    for p in candidate_paths(explicit, root):
        if not p.exists():
            if named:
                raise ConfigError(f"{p}: config file not found")
            continue
        import tomllib  # only when there is a file: importing it costs a spawn ~8 ms

        try:
            raw = decode_config(p.read_bytes(), p)
        except OSError as exc:
            raise ConfigError(f"{p}: cannot read config: {exc}") from None
        try:
            data = tomllib.loads(raw)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{p}: invalid TOML: {exc}") from None
        return data, p.absolute()
    return {}, None


def decode_config(data: bytes, path: Path) -> str:
    """A TOML file's text: UTF-8, with or without the byte-order mark Windows editors write
    (Notepad saves one, and TOML parsers refuse it). Other bytes are the user's to fix: a
    ConfigError naming the file, the encoding it has or the first byte that is not UTF-8, and the fix."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ConfigError(
            f'{path}: cannot read config: it is UTF-16 text (Notepad\'s "Unicode"); save it as UTF-8'
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{path}: cannot read config: it is not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); "
            "save it as UTF-8"
        ) from None


def _value_ok(spec: Spec, v: Any) -> bool:
    """Whether pydantic certainly accepts ``v`` as it is (no coercion, inside the bounds)."""
    kind, lo, lo_inclusive, hi, choices, _ = spec
    if kind == "bool":
        return type(v) is bool
    if kind == "str":
        return type(v) is str and (not choices or v in choices)
    if type(v) is not int and not (kind == "float" and type(v) is float):
        return False
    if kind == "float" and not math.isfinite(v):  # pydantic refuses inf and NaN
        return False
    if lo is not None and (v < lo if lo_inclusive else v <= lo):
        return False
    return hi is None or v <= hi


def _sources_ok(raw: Any) -> bool:
    if type(raw) is not list:
        return False
    for s in raw:
        if type(s) is not dict or not set(s) <= set(SOURCE_KEYS) or not {"kind", "path"} <= set(s):
            return False
        if any(type(v) is not str for v in s.values()):
            return False
        if s["kind"] not in SOURCE_KINDS or not s["path"].strip():
            return False
        if s.get("workspace") and s["kind"] not in SCOPED_KINDS:
            return False  # an error: pydantic's message names it
    return True


def certainly_valid(data: dict[str, Any]) -> bool:
    """True only when pydantic would accept ``data`` unchanged; False also means "not sure"."""
    for key, value in data.items():
        if key == "root":
            if type(value) is not str:
                return False
        elif key == "sources":
            if not _sources_ok(value):
                return False
        elif key in SCHEMA:
            section = SCHEMA[key]
            if type(value) is not dict:
                return False
            for k, v in value.items():
                if k not in section or not _value_ok(section[k], v):
                    return False
        else:
            return False
    return True


def light(data: dict[str, Any], path: Path | None = None) -> LightConfig | None:
    """:func:`scribed.config.from_dict` for a certainly valid ``data`` (relative paths resolve
    against the file); None when pydantic must judge it (the caller then calls ``from_dict``)."""
    if not certainly_valid(data):
        return None
    log = data.get("log", {})
    cfg = LightConfig(
        root=data.get("root", "."),
        log=LightLog(log.get("format", "auto"), log.get("level", "info")),
        sources=[LightSource(**s) for s in data.get("sources", [])],
        path=path,
        root_set="root" in data,
    )
    anchor_to_file(cfg, path)
    return cfg


def source_label(i: int) -> str:
    """A source as its user counts it: ``[[sources]] #1`` is the first block in the file."""
    return f"[[sources]] #{i + 1}"


def bad_agents(sources: Any, path: Path | None = None) -> list[str]:
    """One line per source whose ``agent`` is not a valid agent name, naming the file and the
    source as a user counts it (``sources`` may be the raw TOML list: anything else is skipped)."""
    from scribed.names import normalize_name

    where = f"{path}: " if path else ""
    out: list[str] = []
    for i, src in enumerate(sources if isinstance(sources, list) else []):
        agent = src.get("agent") if isinstance(src, dict) else getattr(src, "agent", "")
        if isinstance(agent, str) and agent and normalize_name(agent) is None:
            out.append(
                f"{where}bad value for 'agent' in {source_label(i)}: {agent!r} is not a valid agent name "
                "(lowercase letters, digits, '-' and '_')"
            )
    return out


def bad_agent(cfg: Any) -> str | None:
    """Every source whose ``agent`` is not a valid agent name, one line each (worded as
    :func:`scribed.config.from_dict` words a bad value: file, source, key); None when all are."""
    return "\n".join(bad_agents(cfg.sources, cfg.path)) or None


def anchor_to_file(cfg: Any, path: Path | None) -> None:
    """A relative root or source path in a config file is relative to that file, not to wherever
    scribed was started (both config readers, this one and :func:`scribed.config.from_dict`)."""
    if path is None:
        return
    if not Path(os.path.expanduser(cfg.root)).is_absolute():
        cfg.root = str((path.parent / os.path.expanduser(cfg.root)).absolute())
    for src in cfg.sources:
        if not src.expanded.is_absolute():
            src.path = str((path.parent / src.expanded).absolute())
        ws = getattr(src, "workspace", "")
        if ws:
            src.workspace = _anchored(ws, path.parent)


def _anchored(workspace: str | list[str], folder: Path) -> str | list[str]:
    """A source's ``workspace`` folders with the relative ones made relative to ``folder``."""

    def one(w: str) -> str:
        if w == EVERY_SESSION or not w.strip() or _expand(w).is_absolute():
            return w
        return str((folder / _expand(w)).absolute())

    return one(workspace) if isinstance(workspace, str) else [one(w) for w in workspace]

"""Configuration: TOML found by a fixed lookup order, validated by pydantic.

Unknown keys and bad values are the user's mistake: :class:`ConfigError` carries a one-line
message naming the file and the dotted key, and the CLI turns it into exit 2.
"""

from __future__ import annotations

import difflib
import math
import os
from pathlib import Path
from types import UnionType
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

# The lookup, the file read and the error type live in the pydantic-free module a spawn loads.
from scribed.config_light import (
    SCOPED_KINDS,
    SOURCE_KINDS,
    ConfigError,
    anchor_to_file,
    bad_agents,
    candidate_paths,
    read,
    source_label,
    source_scope,
)

__all__ = ["SOURCE_KINDS", "Config", "ConfigError", "candidate_paths", "from_dict", "load"]


# Durations are bounded where a larger one means nothing and overflows something (a date, a
# sleep, an "after N min" line): 30 days of quiet, a day for one wait, a century of days.
DAY = 86400
MAX_QUIET = 30 * DAY
MAX_DAYS = 36500

# What a number or true/false setting takes, in a user's words (TOML has real numbers and booleans).
_EXPECTED = {int: "a whole number", float: "a number", bool: "true or false"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    @field_validator("*", mode="before")
    @classmethod
    def _typed(cls, v: Any, info: ValidationInfo) -> Any:
        """A number setting takes a TOML number, a true/false one a TOML boolean: pydantic's lax mode
        read ``quiet_seconds = true`` as 1 s and ``ratio = "0.1"`` as 0.1, silently. A float must
        be finite (``inf`` passed, then overflowed where it was used, naming no key)."""
        kind = cls.model_fields[info.field_name or ""].annotation
        if kind not in _EXPECTED:
            return v
        if kind is bool and type(v) is not bool:
            raise PydanticCustomError("bool_type", "expected true or false")
        if kind is not bool and isinstance(v, bool | str):
            raise PydanticCustomError("number_type", f"expected {_EXPECTED[kind]}")
        if isinstance(v, float) and not math.isfinite(v):
            raise PydanticCustomError("finite_number", "expected a finite number")
        return v


class SessionCfg(_Strict):
    quiet_seconds: float = Field(default=1800, ge=0, le=MAX_QUIET)
    # One transcript record (a JSONL line) longer than this is skipped and named in a warning; a
    # line is held whole in memory while it is read, hence the bound (see sources.common).
    max_line_bytes: int = Field(default=64 << 20, ge=64 << 10, le=1 << 30)


class CompressCfg(_Strict):
    backend: Literal["auto", "llm", "extractive"] = "auto"
    ratio: float = Field(default=0.10, gt=0, le=1)
    min_bytes: int = Field(default=600, ge=200)
    # A guard for giant sessions only: a session under max_bytes / ratio gets its full ratio.
    max_bytes: int = Field(default=65536, ge=400)
    # Processes compacting a run-once backlog (extractive only); 1 = in-process (see core/pool.py).
    workers: int = Field(default_factory=lambda: min(os.cpu_count() or 1, 64), ge=1, le=64)


class LlmCfg(_Strict):
    base_url: str = ""
    model: str = ""
    api_key_env: str = "OPENAI_API_KEY"
    timeout_seconds: float = Field(default=120, gt=0, le=DAY)
    max_retries: int = Field(default=2, ge=0, le=10)
    context_tokens: int = Field(default=8192, ge=512)
    max_concurrency: int = Field(default=2, ge=1)
    temperature: float = Field(default=0.0, ge=0, le=2)
    response_format: Literal["auto", "json_schema", "json_object", "text"] = "auto"
    # An answer is read as it arrives and abandoned past this (a 100 MB answer never sits in memory).
    max_response_bytes: int = Field(default=1_048_576, ge=1024)

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.model)


class ColdCfg(_Strict):
    ttl_days: int = Field(default=30, ge=1, le=MAX_DAYS)
    # Fold threshold of one agent's cold file: 16 × the 12 KB a spawn loads with --include-cold.
    max_bytes: int = Field(default=196608, ge=1024)


class LogCfg(_Strict):
    format: Literal["auto", "console", "json"] = "auto"
    level: Literal["debug", "info", "warning", "error"] = "info"


class WatchCfg(_Strict):
    mode: Literal["auto", "inotify", "polling"] = "auto"
    poll_interval: float = Field(default=5.0, gt=0, le=DAY)


class DaemonCfg(_Strict):
    workers: int = Field(default=2, ge=1, le=64)
    max_attempts: int = Field(default=5, ge=1)
    shutdown_grace: float = Field(default=20.0, ge=0, le=DAY)
    queue_max: int = Field(default=1000, ge=1)


class PromoteCfg(_Strict):
    schedule: str = "0 3 * * *"
    timezone: str = "UTC"
    # review: promotion and import write proposals (scribed review approve/reject), not wiki facts
    mode: Literal["auto", "review"] = "auto"
    # each decision promotion adds to the wiki is also proposed to Squad's team log, as the inbox
    # file `squad memory write --class DECISION` writes (`squad nap` merges it into decisions.md)
    squad_inbox: bool = False


class ArchiveCfg(_Strict):
    # A redacted, zstd-compressed copy of each compacted transcript, kept after the tool deletes it.
    transcripts: bool = True
    retention_days: int = Field(default=365, ge=1, le=MAX_DAYS)
    folder: str = ""  # default: <root>/.squad/memory/.scribed/transcripts

    @property
    def expanded(self) -> Path | None:
        return Path(os.path.expandvars(os.path.expanduser(self.folder))) if self.folder.strip() else None


class SourceCfg(_Strict):
    kind: Literal["copilot", "claude", "codex", "squad-repl", "markdown"]
    path: str
    agent: str = ""
    glob: str = ""  # optional override of the kind's file pattern
    # The folders whose sessions this source takes: a session recorded (cwd, else git root) as run
    # outside them is skipped, so another repository's sessions never reach this root's memory.
    # "" (the default): the root for the kinds whose folder holds every repository's sessions
    # (codex, copilot), no scope for the others; "*": every session (see docs/configuration.md).
    workspace: str | list[str] = ""

    @field_validator("path")
    @classmethod
    def _nonempty(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        return v

    @field_validator("workspace")
    @classmethod
    def _folders(cls, v: str | list[str]) -> str | list[str]:
        items = [v] if isinstance(v, str) else v
        if isinstance(v, list) and (not v or any(not i.strip() for i in items)):
            raise ValueError("a list of folders, none blank")
        if "*" in items and items != ["*"]:
            raise ValueError('"*" (every session) stands alone')
        return v

    @model_validator(mode="after")
    def _scoped_kind(self) -> SourceCfg:
        if self.workspace and self.kind not in SCOPED_KINDS:
            raise ValueError(
                f"workspace: {self.kind} sessions record no working directory "
                f"(only {', '.join(SCOPED_KINDS)} ones do)"
            )
        return self

    def scope(self, root: Path) -> tuple[str, ...] | None:
        """The folders this source's sessions must have run in (absolute), or None: any."""
        return source_scope(self.kind, self.workspace, root)

    @property
    def expanded(self) -> Path:
        return Path(os.path.expandvars(os.path.expanduser(self.path)))


class Config(_Strict):
    root: str = "."
    session: SessionCfg = Field(default_factory=SessionCfg)
    compress: CompressCfg = Field(default_factory=CompressCfg)
    llm: LlmCfg = Field(default_factory=LlmCfg)
    cold: ColdCfg = Field(default_factory=ColdCfg)
    log: LogCfg = Field(default_factory=LogCfg)
    watch: WatchCfg = Field(default_factory=WatchCfg)
    daemon: DaemonCfg = Field(default_factory=DaemonCfg)
    promote: PromoteCfg = Field(default_factory=PromoteCfg)
    archive: ArchiveCfg = Field(default_factory=ArchiveCfg)
    sources: list[SourceCfg] = Field(default_factory=list)

    # Where the config came from and whether it sets `root =` (not TOML keys).
    _path: Path | None = None
    _root_set: bool = False

    @property
    def root_path(self) -> Path:
        return Path(os.path.expandvars(os.path.expanduser(self.root))).absolute()

    @property
    def path(self) -> Path | None:
        return self._path

    @property
    def root_set(self) -> bool:
        """The file has a ``root =`` line (else the root is the file's folder)."""
        return self._root_set


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model whose keys a table at ``loc`` takes (``("session",)``, ``("sources", 2)``)."""
    model: type[BaseModel] = Config
    for part in loc:
        if isinstance(part, int):
            continue  # a list's item: the list field's item model is taken below
        field = model.model_fields.get(str(part))
        ann = field.annotation if field else None
        inner = getattr(ann, "__args__", (ann,))[0]
        if not (isinstance(inner, type) and issubclass(inner, BaseModel)):
            return None
        model = inner
    return model


def _key(loc: tuple[Any, ...]) -> tuple[str, str]:
    """(the dotted key, `` in [[sources]] #N`` for a key of a source, counted from 1)."""
    if loc[:1] == ("sources",) and len(loc) > 1 and isinstance(loc[1], int):
        return ".".join(str(p) for p in loc[2:]) or "(the block)", f" in {source_label(loc[1])}"
    return ".".join(str(p) for p in loc) or "(top level)", ""


def _error_lines(path: Path | None, exc: ValidationError, data: dict[str, Any]) -> list[str]:
    """One line per problem pydantic found, then one per bad agent name: every problem at once.
    An unknown key says which key it most likely meant; that key's "missing" line is then left out."""
    where = f"{path}: " if path else ""
    lines: list[str] = []
    meant: set[tuple[Any, ...]] = set()
    for err in exc.errors():
        if err["type"] != "extra_forbidden":
            continue
        loc = tuple(err["loc"])
        key, in_source = _key(loc)
        model = _model_at(loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), list(model.model_fields) if model else [], n=1)
        hint = ""
        if close:
            meant.add((*loc[:-1], close[0]))
            shown = close[0] if in_source or len(loc) == 1 else ".".join([*map(str, loc[:-1]), close[0]])
            hint = f" (did you mean '{shown}'?)"
        lines.append(f"{where}unknown key '{key}'{in_source}{hint}")
    unions = _union_errors(exc)  # a key of several types: one line for it, once
    for found in exc.errors():
        loc = tuple(found["loc"])
        bad: dict[str, Any] = dict(found)
        if (at := _union_at(loc)) is not None:
            if loc[:at] not in unions:
                continue
            loc, bad = loc[:at], unions.pop(loc[:at])
        key, in_source = _key(loc)
        if bad["type"] == "extra_forbidden" or (bad["type"] == "missing" and loc in meant):
            continue
        if bad["type"] == "missing":
            lines.append(f"{where}missing key '{key}'{in_source} (it is required)")
            continue
        if bad["type"] == "model_type":  # "valid dictionary or instance of SessionCfg": our class's name
            table = f"[[{loc[0]}]]" if loc[:1] == ("sources",) else f"[{key}]"
            bad = {**bad, "msg": f"should be a table: a {table} section with its keys"}
        value = bad.get("input")
        shown = "" if isinstance(value, dict | list) else f" (got {_shown(value)})"
        lines.append(f"{where}bad value for '{key}'{in_source}: {bad['msg']}{shown}")
    return lines + bad_agents(data.get("sources"), path)


def _shown(value: Any) -> str:
    """A value as the user wrote it: TOML's ``true``/``false``, else Python's repr."""
    return str(value).lower() if isinstance(value, bool) else repr(value)


# pydantic names a member of a ``str | list[str]`` key by its type: the words a user reads instead.
_TYPE_WORDS = {
    "str": "a string",
    "list[str]": "a list of strings",
    "int": "a whole number",
    "float": "a number",
    "bool": "true or false",
}


def _union_errors(exc: ValidationError) -> dict[tuple[Any, ...], dict[str, Any]]:
    """A key that takes several types (``str | list[str]``) → one error for it: pydantic gives one
    per type, named by the type (``workspace.list[str].0``); a user reads "should be a string or a
    list of strings" and which item is wrong."""
    words: dict[tuple[Any, ...], list[str]] = {}
    items: dict[tuple[Any, ...], list[str]] = {}
    got: dict[tuple[Any, ...], Any] = {}
    for err in exc.errors():
        loc = tuple(err["loc"])
        if err["type"] == "extra_forbidden" or (at := _union_at(loc)) is None:
            continue
        key, word = loc[:at], _TYPE_WORDS.get(str(loc[at]), str(loc[at]))
        words.setdefault(key, []).extend([word] if word not in words.get(key, []) else [])
        got.setdefault(key, err.get("input"))
        if len(loc) > at + 1 and isinstance(n := loc[at + 1], int):
            items.setdefault(key, []).append(f"item {n + 1} is {err.get('input')!r}")
    return {
        k: {
            "type": "union",
            "msg": "should be " + " or ".join(w) + ("; " + ", ".join(items[k]) if k in items else ""),
            "input": {} if k in items else got[k],
        }
        for k, w in words.items()
    }


def _union_at(loc: tuple[Any, ...]) -> int | None:
    """Where in ``loc`` a type's name follows a key that takes several types (pydantic's location of
    one member of a union: ``(..., "workspace", "list[str]")``, or of an item of it: ``(...,
    "workspace", "list[str]", 0)``); None when it names no such member."""
    for at in range(1, len(loc)):
        if not isinstance(loc[at], str) or (loc[at] not in _TYPE_WORDS and "[" not in loc[at]):
            continue
        model = _model_at(loc[: at - 1])
        field = model.model_fields.get(str(loc[at - 1])) if model else None
        kinds = [
            t for t in getattr(field.annotation if field else None, "__args__", ()) if t is not type(None)
        ]
        if field and isinstance(field.annotation, UnionType) and len(kinds) > 1:
            return at
    return None


def from_dict(data: dict[str, Any], path: Path | None = None) -> Config:
    """Validate a config mapping; raises ConfigError with one line per problem."""
    try:
        cfg = Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError("\n".join(_error_lines(path, exc, data))) from None
    cfg._path = path
    cfg._root_set = "root" in data
    anchor_to_file(cfg, path)
    return cfg


def load(explicit: str | None = None, root: str | None = None) -> Config:
    """Find and load the config (``root``: the ``--root`` given, whose ``scribed.toml`` is looked
    for first). No file found (and none named) = all defaults."""
    data, path = read(explicit, root)
    return from_dict(data, path)

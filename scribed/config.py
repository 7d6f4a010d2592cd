"""Configuration: TOML found by a fixed lookup order, validated by pydantic.

Unknown keys and bad values are the user's mistake: :class:`ConfigError` carries a one-line
message naming the file and the dotted key, and the CLI turns it into exit 2.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

# The lookup, the file read and the error type live in the pydantic-free module a spawn loads.
from scribed.config_light import SOURCE_KINDS, ConfigError, anchor_to_file, candidate_paths, read

__all__ = ["SOURCE_KINDS", "Config", "ConfigError", "candidate_paths", "from_dict", "load"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class SessionCfg(_Strict):
    quiet_seconds: float = Field(default=1800, ge=0)
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
    timeout_seconds: float = Field(default=120, gt=0)
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
    ttl_days: int = Field(default=30, ge=1)
    # Fold threshold of one agent's cold file: 16 × the 12 KB a spawn loads with --include-cold.
    max_bytes: int = Field(default=196608, ge=1024)


class LogCfg(_Strict):
    format: Literal["auto", "console", "json"] = "auto"
    level: Literal["debug", "info", "warning", "error"] = "info"


class WatchCfg(_Strict):
    mode: Literal["auto", "inotify", "polling"] = "auto"
    poll_interval: float = Field(default=5.0, gt=0)


class DaemonCfg(_Strict):
    workers: int = Field(default=2, ge=1, le=64)
    max_attempts: int = Field(default=5, ge=1)
    shutdown_grace: float = Field(default=20.0, ge=0)
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
    retention_days: int = Field(default=365, ge=1)
    folder: str = ""  # default: <root>/.squad/memory/.scribed/transcripts

    @property
    def expanded(self) -> Path | None:
        return Path(os.path.expandvars(os.path.expanduser(self.folder))) if self.folder.strip() else None


class SourceCfg(_Strict):
    kind: Literal["copilot", "claude", "codex", "squad-repl", "markdown"]
    path: str
    agent: str = ""
    glob: str = ""  # optional override of the kind's file pattern

    @field_validator("path")
    @classmethod
    def _nonempty(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        return v

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

    # Where the config came from (not a TOML key).
    _path: Path | None = None

    @property
    def root_path(self) -> Path:
        return Path(os.path.expandvars(os.path.expanduser(self.root))).absolute()

    @property
    def path(self) -> Path | None:
        return self._path


def _format_error(path: Path | None, exc: ValidationError) -> str:
    err = exc.errors()[0]
    key = ".".join(str(p) for p in err["loc"]) or "(top level)"
    where = f"{path}: " if path else ""
    if err["type"] == "extra_forbidden":
        return f"{where}unknown key '{key}'"
    value = err.get("input")
    shown = "" if isinstance(value, dict | list) else f" (got {value!r})"
    more = f" (+{len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
    return f"{where}bad value for '{key}': {err['msg']}{shown}{more}"


def from_dict(data: dict[str, Any], path: Path | None = None) -> Config:
    """Validate a config mapping; raises ConfigError with a one-line message."""
    try:
        cfg = Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_error(path, exc)) from None
    cfg._path = path
    anchor_to_file(cfg, path)
    return cfg


def load(explicit: str | None = None, root: str | None = None) -> Config:
    """Find and load the config (``root``: the ``--root`` given, whose ``scribed.toml`` is looked
    for first). No file found (and none named) = all defaults."""
    data, path = read(explicit, root)
    return from_dict(data, path)

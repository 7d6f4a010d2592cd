"""The spawn's pydantic-free config reader agrees with the pydantic models: same keys, defaults,
bounds and choices, and it never accepts a file pydantic rejects (it defers, so messages stay pydantic's)."""

from __future__ import annotations

import itertools
import math
import typing
from pathlib import Path
from typing import Any

import annotated_types as at
import pytest
from click.testing import CliRunner

from scribed import config, config_light
from scribed.cli.main import main

SECTIONS = {name: f for name, f in config.Config.model_fields.items() if name not in ("root", "sources")}


def _bounds(info: Any) -> tuple[float | None, bool, float | None]:
    lo: float | None = None
    inclusive = True
    hi: float | None = None
    for m in info.metadata:
        if isinstance(m, at.Ge):
            lo, inclusive = m.ge, True
        elif isinstance(m, at.Gt):
            lo, inclusive = m.gt, False
        elif isinstance(m, at.Le):
            hi = m.le
        else:
            raise AssertionError(f"a bound the light reader does not know: {m!r}")
    return lo, inclusive, hi


def _kind(info: Any) -> tuple[str, tuple[str, ...]]:
    ann = info.annotation
    if typing.get_origin(ann) is typing.Literal:
        return "str", tuple(typing.get_args(ann))
    return {int: "int", float: "float", str: "str", bool: "bool"}[ann], ()


def test_the_light_schema_is_the_models_keys_types_bounds_and_defaults() -> None:
    assert set(config.Config.model_fields) == {"root", "sources", *config_light.SCHEMA}
    for name, f in SECTIONS.items():
        model = f.annotation
        assert set(model.model_fields) == set(config_light.SCHEMA[name]), name
        for key, info in model.model_fields.items():
            kind, lo, inclusive, hi, choices, default = config_light.SCHEMA[name][key]
            assert (kind, choices) == _kind(info), f"{name}.{key}"
            assert (lo, inclusive, hi) == _bounds(info) or kind in ("str", "bool"), f"{name}.{key}"
            want = info.get_default(call_default_factory=True)
            assert default == want and type(default) in (type(want), int), f"{name}.{key}"
    src = config.SourceCfg.model_fields
    assert tuple(src) == config_light.SOURCE_KEYS
    assert _kind(src["kind"])[1] == config_light.SOURCE_KINDS == config.SOURCE_KINDS
    assert config.Config.model_fields["root"].default == config_light.LightConfig().root
    log = config.LogCfg()
    assert (log.format, log.level) == (config_light.LightLog().format, config_light.LightLog().level)


def _values(spec: config_light.Spec) -> list[Any]:
    """Values on and around every bound and choice, plus ones pydantic would coerce."""
    _, lo, _, hi, choices, default = spec
    out: list[Any] = [default, None, True, False, "5", "", "x", 3, 2.5, [1], {"a": 1}]
    for b in (lo, hi):
        if b is not None:
            out += [b, b - 1, b + 1, b - 0.5, b + 0.5, float(b), int(b)]
    out += [*choices, *(c.upper() for c in choices), -math.inf, math.inf, math.nan, 10**20]
    return out


def _pydantic_ok(data: dict[str, Any]) -> bool:
    try:
        config.from_dict(data)
    except config.ConfigError:
        return False
    return True


CASES: list[dict[str, Any]] = [
    {section: {key: v}}
    for section, keys in config_light.SCHEMA.items()
    for key, spec in keys.items()
    for v in _values(spec)
]
CASES += [{"root": v} for v in ("/r", "", 3, True, ["/r"])]
CASES += [{"bogus": 1}, {"session": 3}, {"session": {"quiet": 1}}, {"sources": {}}, {"sources": "x"}]
CASES += [
    {"sources": [s]}
    for s in (
        {"kind": "codex", "path": "/t"},
        {"kind": "codex", "path": "/t", "agent": "data", "glob": "*.jsonl"},
        {"kind": "codex", "path": "  "},
        {"kind": "vim", "path": "/t"},
        {"kind": "codex"},
        {"path": "/t"},
        {"kind": "codex", "path": "/t", "other": 1},
        {"kind": "codex", "path": 3},
        {"kind": "codex", "path": "/t", "agent": 3},
        "codex",
    )
]


@pytest.mark.parametrize("data", CASES, ids=[repr(c)[:60] for c in CASES])
def test_light_accepts_only_what_pydantic_accepts(data: dict[str, Any]) -> None:
    if config_light.certainly_valid(data):
        assert _pydantic_ok(data), data


def test_light_takes_the_plain_valid_files_and_reads_them_as_pydantic_does(tmp_path: Path) -> None:
    full = config.Config().model_dump(exclude={"sources"})
    sources = [{"kind": k, "path": f"t/{k}", "agent": "data", "glob": ""} for k in config_light.SOURCE_KINDS]
    bounds = {
        s: {k: spec[1] if spec[2] and spec[1] is not None else spec[5] for k, spec in keys.items()}
        for s, keys in config_light.SCHEMA.items()
    }
    for data in ({}, full, {**full, "sources": sources}, bounds, {"root": "sub", "log": {"level": "debug"}}):
        path = tmp_path / "c.toml"
        for p in (None, path):
            light = config_light.light(data, p)
            assert light is not None, data
            cfg = config.from_dict(data, p)
            assert light.root_path == cfg.root_path and light.path == cfg.path
            assert (light.log.format, light.log.level) == (cfg.log.format, cfg.log.level)
            assert [(s.kind, s.path, s.agent, s.glob) for s in light.sources] == [
                (s.kind, s.path, s.agent, s.glob) for s in cfg.sources
            ]


def test_light_accepts_a_healthy_share_of_the_cases() -> None:
    """A reader that defers everything would pass the agreement test and speed nothing up."""
    took = [c for c in CASES if config_light.certainly_valid(c)]
    ok = [c for c in CASES if _pydantic_ok(c)]
    assert len(took) >= len(ok) * 0.5, (len(took), len(ok))


@pytest.mark.parametrize(
    "text",
    [
        "bogus = 1\n",
        "[compress]\nratio = 2\n",
        '[log]\nlevel = "loud"\n',
        '[[sources]]\nkind = "codex"\n',
        '[[sources]]\nkind = "codex"\npath = "/t"\nagent = "Bad Name!"\n',
        "root = [\n",
    ],
)
def test_context_says_what_check_config_says_about_a_bad_file(tmp_path: Path, text: str) -> None:
    (tmp_path / ".squad").mkdir()
    p = tmp_path / "bad.toml"
    p.write_text(text)
    runner = CliRunner()
    ctx = runner.invoke(main, ["--config", str(p), "context", "data", "--root", str(tmp_path)])
    chk = runner.invoke(main, ["--config", str(p), "check-config"])
    assert ctx.exit_code == chk.exit_code == 2
    assert ctx.stderr == chk.stderr and ctx.stderr.startswith("scribed: error: ")


def test_every_case_pairs_a_section_once() -> None:
    """The generated cases cover every key of every section (so a new key cannot slip past)."""
    seen = {(s, k) for c in CASES for s, v in c.items() if isinstance(v, dict) for k in v}
    want = set(
        itertools.chain.from_iterable(((s, k) for k in keys) for s, keys in config_light.SCHEMA.items())
    )
    assert want <= seen

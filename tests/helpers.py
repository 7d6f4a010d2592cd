"""Shared test helpers: run the real CLI in a subprocess, walk a squad tree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def run_cli(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    input: bytes | None = None,
) -> subprocess.CompletedProcess[bytes]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "scribed", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        timeout=timeout,
        input=input,
    )


def run_json(*args: str, **kw: Any) -> tuple[int, dict[str, Any], str]:
    p = run_cli(*args, "--json", **kw)
    err = p.stderr.decode()
    try:
        data = json.loads(p.stdout.decode())
    except json.JSONDecodeError:
        raise AssertionError(f"not JSON (exit {p.returncode}): {p.stdout!r}\nstderr: {err}") from None
    return p.returncode, data, err


def tree_bytes(folder: Path, *, skip: tuple[str, ...] = ()) -> dict[str, bytes]:
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and not p.is_symlink() and not any(s in p.parts for s in skip):
            out[str(p.relative_to(folder))] = p.read_bytes()
    return out

"""The follow-up commands scribed prints for a person to run (``scribed run-once --force``), with
the options this invocation was given: a user on a config other than the default who pasted a hint
ran it against another root. The CLI records ``--config`` and ``--root`` once (:func:`given`);
every hint is built here, each word shell-quoted (``shlex.join``, as the setup and demo ``next:``
lines quote their paths), so it pastes as it reads."""

from __future__ import annotations

import shlex

_given: dict[str, str] = {}


def given(*, config: str | None = None, root: str | None = None) -> None:
    """Record the options a user gave this command (None: not given); the CLI calls it."""
    _given.clear()
    if config:
        _given["--config"] = config
    if root:
        _given["--root"] = root


def cmd(*words: str) -> str:
    """``scribed [--config C] WORDS… [--root R]``: the group's option before the subcommand,
    ``--root`` (every subcommand's) after its words."""
    head = ["--config", _given["--config"]] if "--config" in _given else []
    tail = ["--root", _given["--root"]] if "--root" in _given else []
    return shlex.join(["scribed", *head, *words, *tail])

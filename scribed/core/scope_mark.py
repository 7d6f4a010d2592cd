"""How the ledger remembers a source file skipped as another repository's (see ``workspace`` in
docs/configuration.md): its row is ``done`` at the file's size, with ``last_error`` naming the
reason and a digest of the scope it was judged against. The file is not read again until it
changes or the scope does (a widened ``workspace`` asks it again); each run counts it again.
No recorded folder is stored: the ledger keeps nothing of the other repository."""

from __future__ import annotations

import hashlib

PREFIX = "outside workspace: "


def digest(scope: tuple[str, ...]) -> str:
    return hashlib.sha256("\n".join(scope).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def text(why: str, scope: tuple[str, ...]) -> str:
    """The row's ``last_error`` for a file skipped for ``why`` under ``scope``."""
    return f"{PREFIX}{why} {digest(scope)}"


def skipped(last_error: str, scope: tuple[str, ...] | None) -> str | None:
    """For a ``done`` row: None when it was not skipped for its place (compacted, or nothing to
    compact); the reason when it was, under the same ``scope``; "" when under another scope."""
    if not last_error.startswith(PREFIX):
        return None
    why, _, was = last_error[len(PREFIX) :].partition(" ")
    return why if scope is not None and was == digest(scope) else ""


def is_skipped(last_error: str) -> bool:
    return last_error.startswith(PREFIX)

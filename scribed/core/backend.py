"""Squad's state backends: where a team keeps ``.squad/`` state decides where scribed keeps its tiers.

``local`` (or unset): in the working tree, ``.squad/memory/``. ``orphan`` and ``two-layer``: Squad
keeps state on the ``squad-state`` branch and its pre-commit hook refuses state files in the working
tree, so scribed keeps its tiers in the clone's ``.git/scribed/memory/`` and shares them through
that branch (:mod:`scribed.core.statebranch`). Where that cannot be done (the root is not the top
of a clone with a ``.git`` folder) every command that reads or writes tiers refuses before it
writes anything, with one line (exit 2), the same for every command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scribed.tiers.layout import STATE_BRANCH_BACKENDS as STATE_BRANCH_BACKENDS
from scribed.tiers.layout import state_backend as state_backend

if TYPE_CHECKING:
    from scribed.tiers.layout import Layout


def refusal(layout: Layout) -> str | None:
    """The one-line refusal where the tiers cannot be kept as the backend asks, else None."""
    return layout.refused or None

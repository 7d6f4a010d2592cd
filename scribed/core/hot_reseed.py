"""Hot files seeded again when a team sync changed the entries under them.

The hot file (``hot/{agent}.md``, this machine's, git-ignored) is seeded from the agent's newest
cold entry. A sync can change which entry that is without a compaction here: a pull brings a newer
one, a removal by hand (here or by a teammate) or by git (a checkout, a pulled deletion) takes one
away. :func:`after_sync` seeds the hot files again under the seeding rules of
:mod:`scribed.tiers.hot_seed`: a hot file edited by hand, or a running session's live view, is
never rewritten.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from scribed.session.door import redacted
from scribed.tiers import cold, cold_store, hot_seed, live, seed_text

if TYPE_CHECKING:
    from datetime import datetime

    from scribed.compress.entry import Entry
    from scribed.core.cold_sync import SyncResult
    from scribed.log import Logger
    from scribed.tiers.layout import Layout

_KIND = re.compile(r"source=`[^`]*` \((?P<kind>[a-z0-9_-]+)\)")
_SESSION = re.compile(r" · session=(?P<s>[^·\n]+?) · ")


def _seed_of(e: Entry) -> tuple[str, str] | None:
    """The source kind and session an entry's provenance names: what a seed of it is marked with."""
    head = "\n".join(e.text.splitlines()[1:6])
    kind, session = _KIND.search(head), _SESSION.search(head)
    if kind is None or session is None:
        return None
    return kind.group("kind"), session.group("s").strip()


def reseed_pulled(
    layout: Layout, agent: str, keys: list[str], log: Logger, *, now: datetime | None = None
) -> bool:
    """A pull brought ``keys`` into the agent's view: when one of them is now its newest entry, the
    hot file (this machine's, git-ignored) is seeded from it, under the seeding rules (an edited
    hot file or another session's live view is left alone; an entry a teammate's wrong clock dated
    past ``now`` is not the newest: :func:`seed_text.newest_entry`)."""
    newest = seed_text.newest_entry(layout, agent, now=now)
    if newest is None or cold_store.key(newest) not in keys:
        return False
    seed = _seed_of(newest)
    if seed is None:
        return False
    return hot_seed.reseed(layout, agent, seed[0], redacted(seed[1]), log, now=now)


def reseed_removed(
    layout: Layout, agent: str, gone: list[str], log: Logger, *, now: datetime | None = None
) -> bool:
    """Entries ``gone`` left the agent's view on purpose (removed by hand here or by a teammate,
    or by git: a checkout, a pulled deletion): scribed's own seed is written again, from its entry
    when that is still there (a seed also shows an earlier entry's decisions and open items), else
    from the newest entry left, or cleared when none is, so no spawn is served what was removed.
    A hot file edited by hand, or a running session's live view, is never rewritten: one that
    names a removed entry is warned about. Never raises for file problems."""

    def make(before: bytes | None) -> hot_seed.Seeding:
        if before is None:
            return None
        fields = live.live_fields(before)
        named, value = fields.get("entry", ""), fields.get(live.MARKER, "")
        if not value.startswith(live.SEED_PREFIX) or not live.owned(before):
            if named in gone:
                log.warning(
                    "hot_file_names_removed_entry",
                    file=str(layout.hot_file(agent)),
                    entry=named,
                    action="edit it by hand: scribed rewrites only its own, unedited seed",
                )
            return None
        _, entries = cold.parsed(layout.cold_file(agent))
        e = next((x for x in entries if x.entry_id == named), None) if named not in gone else None
        if e is None:
            e = seed_text.newest_entry(layout, agent, now=now)
            seed = _seed_of(e) if e is not None else None
            value = seed_text.marker(seed[0], redacted(seed[1])) if seed else ""
        if e is not None and value:
            text = seed_text.render(agent, value, seed_text.last_session(layout, agent, e))
        else:
            text = live.TEMPLATE.format(agent=agent)
        return text, {"entry": e.entry_id if e else None, "reason": "an entry was removed"}

    return hot_seed.swap_seed(layout, agent, log, "hot_reseeded", make)


def after_sync(layout: Layout, res: SyncResult, log: Logger, *, now: datetime | None = None) -> None:
    """The hot files a sync changed the ground under: pulled entries seed them when newest, and a
    seed of an entry removed (by hand, by git) is written again without it (``now``: the run's clock)."""
    for a, keys in res.pulled.items():
        reseed_pulled(layout, a, keys, log, now=now)
    for removed in (res.hand_removed, res.git_removed, res.told_twice):
        for a, keys in removed.items():
            reseed_removed(layout, a, keys, log, now=now)

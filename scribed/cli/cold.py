"""``scribed cold-remove``: take cold entries out of the team's memory (a secret the redactor
missed, a customer's name, a wrong decision), on every clone that pulls the change.

Deleting an entry's file and committing is what git does to a checkout, and a checkout that lacks
an entry must not lose it for good (switching back brings it back): only ``retired.txt`` says an
entry left on purpose, so this command writes the line (see :func:`scribed.core.cold_remove.remove`).
Exit codes as everywhere: 0 ok (an entry removed already is said so), 2 an id that no agent's
cold memory has, or a bad config (nothing is removed then).
"""

from __future__ import annotations

import json
import re

import click

from scribed.cli import common as cli_mod
from scribed.hint import cmd as scribed_cmd

_DIGEST = re.compile(r"\bd-[0-9a-f]{6,40}\b")  # the digest an entry was folded or merged into
# the entries that tell an entry's session instead (scribed.tiers.cold_overlap)
_TOLD = re.compile(
    r"\b(?:covered by|merged into|folded into) (?P<ids>e-[0-9a-f]{6,40}(?:,e-[0-9a-f]{6,40})*)"
)


def register(main: click.Group) -> None:
    @main.command("cold-remove")
    @click.argument("entries", nargs=-1, required=True, metavar="ENTRY...")
    @click.option("--root", type=click.Path(file_okay=False), help="Squad root (the folder holding .squad/).")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
    @click.pass_context
    def cold_remove(ctx: click.Context, *, entries: tuple[str, ...], root: str | None, as_json: bool) -> None:
        """Remove cold entries (ENTRY: an id, e-…, or the entry's file) for the whole team."""
        from scribed.cli.checks import load_checked
        from scribed.core.cold_remove import RemoveError
        from scribed.core.scribe import Scribe
        from scribed.tiers.cold_store import by_hand

        cfg = load_checked(ctx, root)
        scribe = Scribe(cfg)
        try:
            rows = scribe.remove_cold(list(entries))
        except RemoveError as exc:
            cli_mod.fail(str(exc))
        finally:
            scribe.close()
        cold = scribe.layout.cold
        where = cold.relative_to(cfg.root_path) if cold.is_relative_to(cfg.root_path) else cold
        removed = [r for r in rows if not r.left]
        hint = (
            f"commit {where}/ and push: each teammate's next run drops it too. Its text stays in git's "
            "history and in this machine's transcript copy (docs/teams.md, 'Removing a cold entry')"
        )
        if as_json:
            data = {"removed": [r.to_json() for r in removed], "left": [r.to_json() for r in rows if r.left]}
            click.echo(json.dumps({**data, "next": hint if removed else ""}, indent=2, ensure_ascii=False))
            return
        for r in rows:
            if r.left:
                why = r.left.split(" · ")[0]
                if by_hand(r.left):
                    click.echo(f"{r.id}: already removed from {r.agent}'s cold memory ({why}); nothing to do")
                else:  # folded into a digest (remove that), or promoted (deprecate its wiki facts)
                    click.echo(f"{r.id}: left {r.agent}'s cold memory already ({why}); nothing removed")
                    digest = _DIGEST.search(why)
                    told = _TOLD.search(why)
                    if told:
                        ids = told.group("ids").replace(",", " ")
                        click.echo(
                            f"  its session is told by {ids} (two clones compacted it at different points): "
                            f"`{scribed_cmd('cold-remove', *ids.split())}` removes it there"
                        )
                    elif digest:
                        click.echo(
                            f"  its text is still served from the digest {digest.group()}: "
                            f"`{scribed_cmd('cold-remove', digest.group())}` removes that digest (and what it folded)"
                        )
                    elif "left cold" in why:
                        click.echo(
                            "  promoted: facts drawn from it may be in the wiki "
                            f"(`{scribed_cmd('wiki-deprecate', 'TOPIC', 'TITLE', '--agent', 'AGENT')}` retires one)"
                        )
                continue
            files = ", ".join(r.files) or "no store file"
            hot = "; hot file seeded again without it" if r.hot else ""
            click.echo(
                f"{r.id}: removed from {r.agent}'s cold memory ({files} deleted; "
                f"listed in {where}/{r.agent}/retired.txt as removed by hand){hot}"
            )
        if removed:
            click.echo(hint[0].upper() + hint[1:] + ".")

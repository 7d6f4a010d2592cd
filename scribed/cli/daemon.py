"""``scribed run``, ``healthcheck`` and ``status``: the service's commands.

Kept apart from :mod:`scribed.cli.main` so the one-shot commands do not import watchdog/APScheduler.
``healthcheck`` and ``status`` read only files (the heartbeat and the ledger, read-only): they
work from a Docker HEALTHCHECK, a second shell or another user without talking to the daemon.
``healthcheck`` judges the daemon, not the config file: a config broken after the daemon started
(the daemon keeps the one it loaded) still finds the root leniently and reads the heartbeat.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
import time
import tomllib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from scribed import config as config_mod
from scribed import hint
from scribed.cli.common import fail, load_config, no_config, note, root_problem, warn
from scribed.config import Config, ConfigError
from scribed.core.results import ago, duration
from scribed.core.status import ledger_status, waiting
from scribed.log import misnamed, utf8_named
from scribed.names import normalize_name
from scribed.tiers.cold import Layout

HOT_BUDGET = 4096
_ROOT_HELP = "Squad root (the folder holding .squad/)."
_ROOT_LINE = re.compile(r"""^\s*root\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.MULTILINE)


def _read_heartbeat(path: Path) -> tuple[dict[str, Any] | None, str]:
    """The heartbeat's JSON object, or None and why it cannot be had."""
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None, f"no daemon: no heartbeat at {path}"
    except (OSError, ValueError) as exc:
        return None, f"heartbeat unreadable: {exc}"
    if not isinstance(data, dict):
        return None, "heartbeat unreadable: not a JSON object"
    return data, ""


def _pid_gone(data: dict[str, Any], pid: int) -> bool:
    """The heartbeat's pid is not running here (another host's pid means nothing here)."""
    if data.get("host", socket.gethostname()) != socket.gethostname():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # alive, owned by another user
    return False


def daemon_health(layout: Layout, now: float | None = None) -> tuple[bool, str, dict[str, Any]]:
    """(alive, one-line reason, heartbeat) from ``{state}/heartbeat``: fresh and its pid running."""
    data, why = _read_heartbeat(layout.state / "heartbeat")
    if data is None:
        return False, why, {}
    if data.get("stopped"):
        return False, f"daemon stopped at {data.get('time', '?')}", data
    try:
        interval = float(data.get("interval", 5.0))
        age = (time.time() if now is None else now) - float(data["unix"])
        pid = int(data["pid"])
    except (KeyError, TypeError, ValueError):
        return False, "heartbeat unreadable: missing pid/unix", data
    limit = max(30.0, 3 * interval)
    if age > limit:
        return False, f"heartbeat stale: {age:.0f} s old (limit {limit:.0f} s)", data
    if pid <= 0:
        return False, f"heartbeat names a bad pid {pid}", data
    if _pid_gone(data, pid):
        return False, f"daemon pid {pid} is not running", data
    return True, f"ok: pid {pid}, heartbeat {max(age, 0):.0f} s old, queue {data.get('queue', 0)}", data


def _size(path: Path) -> int:
    try:
        return path.stat().st_size if path.is_file() else 0
    except OSError:
        return 0


def tier_bytes(layout: Layout, cfg: Config) -> dict[str, Any]:
    """Per-agent hot/cold bytes against their budgets, and the wiki's total (it is per topic, not agent)."""
    agents: dict[str, dict[str, int]] = {}
    for tier, folder in (("hot", layout.hot), ("cold", layout.cold)):
        for p in utf8_named(sorted(folder.glob("*.md"))) if folder.is_dir() else []:
            if (name := normalize_name(p.stem)) is None:
                misnamed(p, "agent")
            elif not p.name.startswith("."):
                agents.setdefault(name, {"hot": 0, "cold": 0})[tier] = _size(p)
    wiki_pages = (
        utf8_named(p for p in layout.wiki.rglob("*.md") if not p.name.startswith("."))
        if layout.wiki.is_dir()
        else []
    )
    return {
        "budgets": {"hot": HOT_BUDGET, "cold": cfg.cold.max_bytes},
        "agents": [
            {"agent": a, **v, "hot_over": v["hot"] > HOT_BUDGET, "cold_over": v["cold"] > cfg.cold.max_bytes}
            for a, v in sorted(agents.items())
        ],
        "wiki": {"pages": len(wiki_pages), "bytes": sum(_size(p) for p in wiki_pages)},
    }


def collect_status(cfg: Config) -> dict[str, Any]:
    layout = Layout(cfg.root_path)
    alive, reason, hb = daemon_health(layout)
    st = ledger_status(layout)
    waits = waiting(cfg, layout, datetime.now(UTC))
    counts, hot_counts, last_entry, last_promo = st.counts, st.hot_counts, st.last_entry, st.last_promotion
    ledger_error, retrying = st.error, st.retrying
    nxt: str | None = None
    promo_error = None
    try:
        from scribed.daemon.schedule import next_fire, promotion_trigger

        fire = next_fire(promotion_trigger(cfg), datetime.now(UTC))
        nxt = fire.isoformat() if fire else None
    except ConfigError as exc:
        promo_error = str(exc)
    return {
        "root": str(cfg.root_path),
        "daemon": {
            "alive": alive,
            "reason": reason,
            "pid": hb.get("pid") if alive else None,
            "queue": hb.get("queue", 0) if alive else 0,
            "pending": hb.get("pending", 0) if alive else 0,
            "watch": hb.get("watch") if alive else None,
            "last_result": hb.get("last_result") if alive else None,
            "catch_up": hb.get("catch_up") if alive else None,
        },
        "sources": counts,
        "sources_outside": st.outside,
        "hot_files": hot_counts,
        "waiting": waits.to_json(),
        "retrying": retrying,
        "ledger_error": ledger_error,
        "last_compaction": last_entry,
        "last_promotion": last_promo,
        "next_promotion": nxt,
        "promotion_schedule": f"{cfg.promote.schedule} {cfg.promote.timezone}",
        "promotion_error": promo_error,
        "tiers": tier_bytes(layout, cfg),
        "hot_withheld": _hot_withheld(layout),
        "told_twice": _told_twice(layout),
    }


def _told_twice(layout: Layout) -> list[dict[str, object]]:
    """Sessions told twice in cold memory, which the next run makes one (imported here:
    ``healthcheck`` needs no tier code)."""
    from scribed.core.team_doctor import told_twice

    return told_twice(layout)


def _hot_withheld(layout: Layout) -> list[dict[str, str]]:
    """Hot files an edit keeps from their seeds (imported here: ``healthcheck`` needs no tier code)."""
    from scribed.tiers.hot_seed import withheld

    return [w.to_json() for w in withheld(layout)]


def _counts(c: dict[str, int]) -> str:
    return f"{c['done']} done, {c['pending']} pending, {c['failed']} failed, {c['quarantined']} quarantined"


def _waiting(w: dict[str, Any]) -> str:
    """Files holding sessions not compacted yet: changed within the quiet time, or ready."""
    if not (w["active"] or w["ready"]):
        return "nothing: every source file is compacted as far as it goes"
    parts = []
    if w["active"]:
        last = datetime.fromisoformat(w["last_change"]).timestamp() if w["last_change"] else time.time()
        parts.append(
            f"{w['active']} file{'s' * (w['active'] != 1)} with sessions still active (last change "
            f"{ago(time.time() - last)}; finished after {duration(w['quiet_seconds'])} quiet, or at an "
            f"end marker — `{hint.cmd('run-once', '--force')}` compacts them now)"
        )
    if w["ready"]:
        parts.append(f"{w['ready']} file{'s' * (w['ready'] != 1)} finished, compacted by the next run")
    return "; ".join(parts)


def _say(label: str, value: str) -> None:
    click.echo(f"{label + ':':<18}{value}")


def _print_status(d: dict[str, Any]) -> None:
    """The text form of :func:`collect_status`: one labelled line each, values in one column.

    The ledger counts files, not sessions (one transcript file can hold several, as run-once's
    "N sessions" shows), by their state; the agent table is bytes against each tier's budget."""
    dm = d["daemon"]
    _say("root", d["root"])
    if dm["alive"]:
        watch = dm["watch"] or "starting"  # the first heartbeat is written before the watcher runs
        _say("daemon", f"running (pid {dm['pid']}, queue {dm['queue']}, watch {watch})")
        if isinstance(dm.get("catch_up"), dict):
            from scribed.progress import describe

            _say("catching up", describe(dm["catch_up"]))
    else:
        _say("daemon", f"not running ({dm['reason']})")
    ledger = f" (ledger: {d['ledger_error']})" if d["ledger_error"] else ""
    outside = d.get("sources_outside", 0)
    elsewhere = (
        f" ({outside} of them skipped: sessions of other repositories, or with no recorded folder)"
        if outside
        else ""
    )
    _say("transcript files", _counts(d["sources"]) + elsewhere + ledger)
    _say("hot files", _counts(d["hot_files"]))
    if d.get("hot_withheld"):
        from scribed.tiers.hot_seed import Withheld

        for w in d["hot_withheld"]:
            _say("hot file edited", Withheld(**w).line())
    _say("waiting", _waiting(d["waiting"]))
    if d.get("told_twice"):
        from scribed.cli.transcripts import told_twice_line

        for o in d["told_twice"]:
            _say("cold memory", told_twice_line(o))
    for r in d["retrying"]:
        when = f"next {r['next_retry']}" if r["next_retry"] else "on the next run"
        _say("retrying", f"{r['source']} (attempt {r['attempts']}, {when}): {r['reason']}")
    _say("last compaction", d["last_compaction"] or "never")
    nxt = d["next_promotion"] or d["promotion_error"] or "none"
    _say("promotion", f"last {d['last_promotion'] or 'never'}, next {nxt} ({d['promotion_schedule']})")
    t = d["tiers"]
    if t["agents"]:
        click.echo(f"{'agent':<16} {'hot bytes/budget':>18} {'cold bytes/budget':>20}")
        for a in t["agents"]:
            hot = f"{a['hot']}/{t['budgets']['hot']}" + ("!" if a["hot_over"] else "")
            cold = f"{a['cold']}/{t['budgets']['cold']}" + ("!" if a["cold_over"] else "")
            click.echo(f"{a['agent']:<16} {hot:>18} {cold:>20}")
    _say("wiki", f"{t['wiki']['pages']} pages, {t['wiki']['bytes']} bytes")


def _say_if_empty(cfg: Config, d: dict[str, Any], from_flag: bool) -> None:
    """Status of a root holding nothing yet: say why on stderr (stdout keeps its usual shape)."""
    squad = cfg.root_path / ".squad"
    problem = root_problem(cfg, from_flag, init_here=False)
    if problem:
        note(problem)
        return
    if not squad.is_dir():
        note(
            f"{cfg.root_path} has no .squad/ folder: not a squad root yet (is root right? --init creates it)"
        )
        return
    seen = sum(d["sources"].values()) + sum(d["hot_files"].values())
    if not seen and not d["tiers"]["agents"] and not d["tiers"]["wiki"]["pages"]:
        w = d["waiting"]
        if w["active"] or w["ready"]:
            note(f"nothing compacted yet: {w['active'] + w['ready']} source files wait (see `waiting`)")
        else:
            note(f"nothing here yet: no session compacted and no memory file under {squad / 'memory'}")


@click.command("run")
@click.option("--root", type=click.Path(file_okay=False), help=_ROOT_HELP)
@click.pass_context
def run_cmd(ctx: click.Context, root: str | None) -> None:
    """Run as a service: watch the sources and compact sessions as they finish (until SIGTERM).

    A config it cannot start with exits 78 (EX_CONFIG) with each problem on its own line, the
    same lines `scribed check-config` prints; the shipped systemd units do not restart on 78."""
    from scribed.cli import checks
    from scribed.cli.common import EX_CONFIG, init_requested, require_squad
    from scribed.daemon.instance import AlreadyRunningError
    from scribed.daemon.service import Daemon

    cfg = load_config(ctx, root, need_squad=False, error_code=EX_CONFIG)
    checks.enforce(
        cfg, from_flag=bool(root), init=init_requested(ctx), code=EX_CONFIG, warnings=True, daemon="refuse"
    )
    require_squad(cfg, init_requested(ctx), bool(root))  # --init: creates .squad/
    try:
        daemon = Daemon(cfg, root_override=cfg.root if root else None)
    except ConfigError as exc:  # what the checks cannot see before the core is built
        fail(str(exc), EX_CONFIG)
    try:
        code = daemon.run()
    except AlreadyRunningError as exc:
        fail(str(exc))
    except ConfigError as exc:  # a write its user may not make (see scribed.tiers.access.refusal)
        fail(str(exc), EX_CONFIG)
    sys.exit(code)


def lenient_root(explicit: str | None, root: str | None = None) -> Path | None:
    """The ``root`` a config file names, read without validating the rest (it may be broken).

    Same lookup order and relative-path rule as :func:`scribed.config.load`; a file that is not
    even TOML gives its ``root = "..."`` line. None when no config file can be read.
    """
    for p in config_mod.candidate_paths(explicit, root):
        try:
            raw = p.read_bytes().decode("utf-8-sig", "replace")  # a BOM is Notepad's, not TOML
        except OSError:
            continue
        value: Any = "."
        try:
            value = tomllib.loads(raw).get("root", ".")
        except tomllib.TOMLDecodeError:
            m = _ROOT_LINE.search(raw)
            value = (m.group(1) if m.group(1) is not None else m.group(2)) if m else "."
        if not isinstance(value, str):
            value = "."
        path = Path(os.path.expandvars(os.path.expanduser(value)))
        return path if path.is_absolute() else (p.absolute().parent / path).absolute()
    return None


def health_root(ctx: click.Context, root: str | None) -> tuple[Path, str | None]:
    """(the root whose daemon to check, the config's problem if it is broken)."""
    if root:
        return Path(root).absolute(), None  # the heartbeat is the root's: no config needed
    obj = ctx.find_root().obj
    explicit = obj.get("config_path") if isinstance(obj, dict) else None
    try:
        return config_mod.load(explicit).root_path, None
    except ConfigError as exc:
        found = lenient_root(explicit)
        if found is None:
            fail(f"{exc}; pass --root to name the squad root to check")
        return found, str(exc)


@click.command("healthcheck")
@click.option("--root", type=click.Path(file_okay=False), help=_ROOT_HELP)
@click.pass_context
def healthcheck_cmd(ctx: click.Context, root: str | None) -> None:
    """Exit 0 if a daemon for this root is alive (fresh heartbeat, pid running), else 1 with the reason.

    Only the daemon's heartbeat decides: a config file broken since the daemon started is a warning.
    """
    where, config_problem = health_root(ctx, root)
    alive, reason, _ = daemon_health(Layout(where))
    if config_problem:
        warn(f"{config_problem} (a running daemon keeps the config it loaded; fix it before a restart)")
    click.echo(reason if alive else f"unhealthy: {reason}", err=not alive)
    sys.exit(0 if alive else 1)


@click.command("status")
@click.option("--root", type=click.Path(file_okay=False), help=_ROOT_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def status_cmd(ctx: click.Context, root: str | None, as_json: bool) -> None:
    """Show the daemon, the ledger's counts, promotion times and each agent's memory size."""
    cfg = load_config(ctx, root, need_squad=False)
    data = collect_status(cfg)
    missing = no_config(ctx, cfg, root)
    if missing:
        note(missing)
    _say_if_empty(cfg, data, bool(root))
    if as_json:
        click.echo(json.dumps(data, indent=2))
    else:
        _print_status(data)


def register(main: click.Group) -> None:
    """Add the service commands to the ``scribed`` group (idempotent)."""
    for cmd in (run_cmd, healthcheck_cmd, status_cmd):
        if cmd.name not in main.commands:
            main.add_command(cmd)

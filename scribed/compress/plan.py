"""The agent's own plan: its todo list and plan-mode plan, read from the tool calls that set them.

Every agent that keeps a plan states what is done and what is left; that is memory, not chatter.
The shapes read (as the adapters render the calls: ``name {json}``, see ``sources.common.render_call``):

* Claude Code ``TodoWrite`` ``{"todos": [{"content", "status", "activeForm"}]}`` (older: ``{id,
  content, status, priority}``), each call the whole list; SpecStory's rendering of it as a
  checklist (``- [X]``, ``- [⚡]`` in progress, ``- [ ]``); Cursor's ``todo_write`` (``merge``: by id);
* the plan-mode plan ``ExitPlanMode`` ``{"plan": markdown}`` (Copilot CLI: ``exit_plan_mode`` and
  its ``exit_plan_mode.requested`` event's ``planContent``): its steps have no status, so they are
  "planned"; a plan the user rejected (the tool's result is an error) is not the plan;
* Codex ``update_plan`` ``{"explanation", "plan": [{"step", "status"}]}``;
* Copilot CLI ``update_todo`` (``todos``: a markdown checklist or a list) and its ``sql`` tool on the
  ``todos`` table (``INSERT``, ``UPDATE … SET status``, ``DELETE``), replayed in order;
* Claude Code's task tools, which newer versions use instead of ``TodoWrite``: ``TaskCreate``
  ``{"subject", "description", "activeForm"}`` (ids are numbered from 1 in order of creation) and
  ``TaskUpdate`` ``{"taskId", "status", "subject"}`` (``deleted`` removes one), replayed in order.

The last state in the session wins. Completed items are the session's progress; in-progress,
pending, blocked and planned items are left open; cancelled ones are neither.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from scribed.models import Summary, Turn

PENDING, IN_PROGRESS, DONE, BLOCKED, PLANNED, CANCELLED = (
    "pending", "in_progress", "completed", "blocked", "planned", "cancelled",
)  # fmt: skip
_STATUS = {
    **dict.fromkeys(("completed", "complete", "done", "finished", "x", "closed", "resolved"), DONE),
    **dict.fromkeys(
        (
            "in_progress",
            "in-progress",
            "inprogress",
            "active",
            "doing",
            "started",
            "running",
            "wip",
            "⚡",
            "~",
            ">",
            "-",
        ),
        IN_PROGRESS,
    ),
    **dict.fromkeys(
        ("cancelled", "canceled", "skipped", "dropped", "removed", "abandoned", "obsolete"), CANCELLED
    ),
    **dict.fromkeys(("blocked", "waiting", "on_hold", "on-hold"), BLOCKED),
}
# Shown before an open item's text (a pending item is shown as it is).
MARK = {IN_PROGRESS: "(in progress) ", BLOCKED: "(blocked) ", PLANNED: "(planned) "}
_OPEN_ORDER = (IN_PROGRESS, PENDING, BLOCKED, PLANNED)
_TODO_TOOLS = frozenset(
    {"todowrite", "todo_write", "write_todos", "update_todo", "update_todos", "todos", "manage_todo_list"}
)
_PLAN_TOOLS = frozenset({"exitplanmode", "exit_plan_mode"})
_UPDATE_PLAN = frozenset({"update_plan"})
_SQL_TOOLS = frozenset({"sql"})
_TASK_TOOLS = frozenset({"taskcreate", "taskupdate"})
# = sources.common.PLAN_TOOLS (a test checks)
PLAN_TOOLS = _TODO_TOOLS | _PLAN_TOOLS | _UPDATE_PLAN | _SQL_TOOLS | _TASK_TOOLS
_LIST_KEYS = ("todos", "plan", "todoList", "todo_list", "items", "tasks", "steps")
_TEXT_KEYS = ("content", "step", "title", "task", "text", "description", "name")
_CHECK = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+\[(?P<box>[^\]]{0,2})\]\s+(?P<t>\S.*)$")
_STEP = re.compile(r"^(?P<indent>\s*)(?:[-*+]|\d{1,3}[.)])\s+(?P<t>\S.*)$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(?P<t>.+)$")
_LEAD = re.compile(r"^[^\w`'\"(\[]+")  # a leading emoji or symbol (SpecStory's priority marks)
MAX_ITEMS = 60
MAX_ITEM_CHARS = 600


@dataclass(slots=True)
class Item:
    text: str
    status: str
    key: str = ""  # an id, when the tool gives one (Copilot's sql rows, Cursor's merges)


@dataclass(slots=True)
class Plan:
    """One state of the agent's plan and the line of the call that set it."""

    items: list[Item] = field(default_factory=list)
    line: int = 0
    tool: str = ""

    def open(self) -> list[str]:
        """The items left open, in progress first, each with its status mark."""
        return [MARK.get(s, "") + i.text for s in _OPEN_ORDER for i in self.items if i.status == s]

    def done(self) -> list[str]:
        return [i.text for i in self.items if i.status == DONE]

    def current(self) -> list[Item]:
        """What is in progress, else what comes next."""
        now = [i for i in self.items if i.status == IN_PROGRESS]
        return now or [i for i in self.items if i.status in (PENDING, PLANNED)][:1]


def _clean(text: str) -> str:
    text = _LEAD.sub("", " ".join(text.split()))
    if len(text) <= MAX_ITEM_CHARS:
        return text
    head = text[: MAX_ITEM_CHARS - 1]
    return head.rsplit(" ", 1)[0] + "…" if " " in head else head + "…"


def status_of(raw: object) -> str:
    s = str(raw).strip().lower().replace(" ", "_") if raw is not None else ""
    return _STATUS.get(s, PENDING)


def _args(t: Turn) -> tuple[str, str]:
    """(tool name lowercased, the call's text after its name)."""
    name = (t.tool_name or t.text.split(None, 1)[0] if t.text.strip() else "").strip()
    rest = t.text[len(name) :] if t.text.startswith(name) else t.text
    return name.lower(), rest.strip()


def _json(rest: str) -> object:
    if not rest.startswith(("{", "[")):
        return None
    try:
        return json.loads(rest)
    except ValueError:
        return None


def items_of(value: object) -> list[Item] | None:
    """Items from a JSON list of objects or strings, or a markdown checklist string."""
    if isinstance(value, str):
        return checklist(value)
    if not isinstance(value, list):
        return None
    out: list[Item] = []
    for obj in value[:MAX_ITEMS]:
        if isinstance(obj, str) and obj.strip():
            out.append(Item(_clean(obj), PENDING))
            continue
        if not isinstance(obj, dict):
            continue
        text = next((obj[k] for k in _TEXT_KEYS if isinstance(obj.get(k), str) and obj[k].strip()), "")
        if text:
            key = obj.get("id")
            out.append(Item(_clean(text), status_of(obj.get("status", obj.get("state"))), str(key or "")))
    return out


def checklist(text: str) -> list[Item]:
    """The ``- [x] item`` lines of a markdown text."""
    out = []
    for line in text.splitlines():
        m = _CHECK.match(line)
        if m:
            box = m.group("box").strip()
            out.append(Item(_clean(m.group("t")), status_of(box) if box else PENDING))
    return out[:MAX_ITEMS]


def plan_steps(markdown: str) -> list[Item]:
    """The steps of a plan-mode plan: its checklist if it has one (with their statuses), else its
    outermost numbered or bulleted items, else its headings; "planned" unless a box says otherwise."""
    boxes = checklist(markdown)
    if boxes:
        return [Item(i.text, PLANNED if i.status == PENDING else i.status) for i in boxes]
    steps = [(m.group("indent"), m.group("t")) for m in map(_STEP.match, markdown.splitlines()) if m]
    if steps:
        outer = min(len(ind.expandtabs()) for ind, _ in steps)
        return [Item(_clean(t), PLANNED) for ind, t in steps if len(ind.expandtabs()) == outer][:MAX_ITEMS]
    heads = [m.group("t") for m in map(_HEADING.match, markdown.splitlines()) if m]
    return [Item(_clean(h), PLANNED) for h in heads[1:]][:MAX_ITEMS]


def _todo_call(rest: str, prev: Plan | None) -> list[Item] | None:
    parsed = _json(rest)
    if parsed is None:
        return checklist(rest) or None  # SpecStory's "**Agent task list:**" checklist
    if isinstance(parsed, list):
        return items_of(parsed)
    if not isinstance(parsed, dict):
        return None
    value = next((parsed[k] for k in _LIST_KEYS if k in parsed), None)
    items = items_of(value)
    if items is not None and parsed.get("merge") is True and prev is not None:
        return _merged(prev.items, items)
    return items


def _merged(old: list[Item], new: list[Item]) -> list[Item]:
    """``new`` merged into ``old`` by id (Cursor's ``merge: true``); items without an id are added."""
    out = [Item(i.text, i.status, i.key) for i in old]
    by_key = {i.key: i for i in out if i.key}
    for i in new:
        if i.key and i.key in by_key:
            by_key[i.key].status = i.status
            by_key[i.key].text = i.text or by_key[i.key].text
        else:
            out.append(i)
    return out


def _plan_call(rest: str) -> list[Item] | None:
    parsed = _json(rest)
    text = ""
    if isinstance(parsed, dict):
        text = next(
            (parsed[k] for k in ("plan", "planContent", "plan_content") if isinstance(parsed.get(k), str)), ""
        )
    elif parsed is None:
        text = rest
    steps = plan_steps(text) if text.strip() else []
    return steps or None


def states(turns: Sequence[Turn]) -> Iterable[Plan]:
    """Each state the plan takes in ``turns``, in order."""
    current: Plan | None = None
    sql = SqlTodos()
    tasks = ClaudeTasks()
    proposed: tuple[Plan | None, Plan] | None = None  # (state before, plan awaiting approval)
    for t in turns:
        if t.kind == "tool_result" and proposed is not None and (t.tool_name or "").lower() in _PLAN_TOOLS:
            if t.text.lstrip().lower().startswith("error"):
                current = proposed[0]  # the user rejected the plan
                if current is not None:
                    yield current
            proposed = None
            continue
        if t.kind != "tool_call":
            continue
        name, rest = _args(t)
        items: list[Item] | None = None
        if name in _TODO_TOOLS or name in _UPDATE_PLAN:
            items = _todo_call(rest, current)
        elif name in _PLAN_TOOLS:
            items = _plan_call(rest)
            if items is not None:
                proposed = (current, Plan(items, t.line, name))
        elif name in _SQL_TOOLS and "todos" in rest.lower():
            items = sql.apply(rest)
        elif name in _TASK_TOOLS:
            items = tasks.apply(name, rest)
        if items is not None:
            current = Plan(items, t.line, name)
            yield current


def final(turns: Sequence[Turn]) -> Plan | None:
    """The plan's last state in ``turns`` (None: the agent kept no plan)."""
    last = None
    for p in states(turns):
        last = p
    return last if last is not None and last.items else None


# --- Copilot CLI's sql tool on its todos table ----------------------------------------------------
_STATEMENT = re.compile(
    r"\b(?:insert\s+(?:or\s+\w+\s+)?into\s+todos\s*\((?P<cols>[^)]*)\)\s*values\s*(?P<vals>.+)"
    r"|update\s+todos\s+set\s+(?P<set>.+?)(?:\s+where\s+(?P<where>.+))?"
    r"|delete\s+from\s+todos(?:\s+where\s+(?P<dwhere>.+))?)\s*$",
    re.IGNORECASE | re.DOTALL,
)
_LITERAL = re.compile(r"'((?:[^']|'')*)'|(-?\d+(?:\.\d+)?)|(null)\b", re.IGNORECASE)
_ASSIGN = re.compile(r"(\w+)\s*=\s*(?:'((?:[^']|'')*)'|(-?\d+)|(null))", re.IGNORECASE)
_IN = re.compile(r"(\w+)\s+in\s*\(([^)]*)\)", re.IGNORECASE)


def _split_sql(query: str) -> list[str]:
    """Statements of a query, split at semicolons outside string literals."""
    out: list[str] = []
    cur: list[str] = []
    quoted = False
    for ch in query:
        if ch == "'":
            quoted = not quoted
        if ch == ";" and not quoted:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [s.strip() for s in out if s.strip()]


def _tuples(values: str) -> list[list[str | None]]:
    """The rows of ``VALUES (…), (…)``: each a list of literals (None for NULL)."""
    rows: list[list[str | None]] = []
    depth, quoted, start = 0, False, 0
    for i, ch in enumerate(values):
        if ch == "'":
            quoted = not quoted
        elif not quoted and ch == "(":
            depth += 1
            if depth == 1:
                start = i + 1
        elif not quoted and ch == ")":
            depth -= 1
            if depth == 0:
                row = [
                    m.group(1).replace("''", "'")
                    if m.group(1) is not None
                    else (m.group(2) if m.group(2) else None)
                    for m in _LITERAL.finditer(values[start:i])
                ]
                rows.append(row)
    return rows


@dataclass(slots=True)
class SqlTodos:
    """Copilot CLI's ``todos`` table, as the session's sql calls changed it."""

    rows: dict[str, Item] = field(default_factory=dict)

    def apply(self, call: str) -> list[Item] | None:
        parsed = _json(call)
        query = parsed.get("query") if isinstance(parsed, dict) else call
        if not isinstance(query, str):
            return None
        changed = False
        for stmt in _split_sql(query):
            m = _STATEMENT.search(stmt)
            if m is None:
                continue
            if m.group("cols") is not None:
                changed |= self._insert(m.group("cols"), m.group("vals"))
            elif m.group("set") is not None:
                changed |= self._update(m.group("set"), m.group("where") or "")
            else:
                changed |= self._delete(m.group("dwhere") or "")
        return list(self.rows.values())[:MAX_ITEMS] if changed else None

    def _insert(self, cols: str, values: str) -> bool:
        names = [c.strip().strip('"`[]').lower() for c in cols.split(",")]
        done = False
        for row in _tuples(values):
            rec = dict(zip(names, row, strict=False))
            key = rec.get("id") or f"#{len(self.rows) + 1}"
            text = rec.get("title") or rec.get("description") or key
            self.rows[key] = Item(_clean(text), status_of(rec.get("status")), key)
            done = True
        return done

    def _match(self, where: str) -> list[Item]:
        """The rows a WHERE clause of ``col = 'v'`` / ``col IN (…)`` terms joined by AND picks."""
        if not where.strip():
            return list(self.rows.values())
        terms: list[tuple[str, set[str]]] = [
            (m.group(1).lower(), {v.replace("''", "'") for v in re.findall(r"'((?:[^']|'')*)'", m.group(2))})
            for m in _IN.finditer(where)
        ]
        terms += [
            (m.group(1).lower(), {(m.group(2) or m.group(3) or "").replace("''", "'")})
            for m in _ASSIGN.finditer(where)
        ]
        if not terms:
            return []
        out = []
        for key, item in self.rows.items():
            fields = {"id": key, "title": item.text, "status": item.status}
            if all(
                col in fields
                and (fields[col] in vals or (col == "status" and item.status in {status_of(v) for v in vals}))
                for col, vals in terms
            ):
                out.append(item)
        return out

    def _update(self, sets: str, where: str) -> bool:
        changes = {
            m.group(1).lower(): (m.group(2) or m.group(3) or "").replace("''", "'")
            for m in _ASSIGN.finditer(sets)
        }
        rows = self._match(where)
        for item in rows:
            if "status" in changes:
                item.status = status_of(changes["status"])
            if changes.get("title"):
                item.text = _clean(changes["title"])
        return bool(rows and changes)

    def _delete(self, where: str) -> bool:
        rows = self._match(where)
        for item in rows:
            self.rows = {k: v for k, v in self.rows.items() if v is not item}
        return bool(rows)


def fill(summary: Summary, turns: Sequence[Turn], todo: Sequence[str]) -> None:
    """Give a summary another compressor wrote (an LLM's) the plan as the extractive one has it: the
    plan's completed items as progress when it has none, and every open item of ``todo`` (the todo
    anchors, plan first) it does not list yet under Open items."""
    plan = final(turns)
    if plan is not None and not summary.progress:
        summary.progress = plan.done()
    have = {" ".join(x.lower().split()) for x in summary.open_items}
    summary.open_items += [x for x in todo if " ".join(x.lower().split()) not in have]


@dataclass(slots=True)
class ClaudeTasks:
    """Claude Code's task list, as the session's ``TaskCreate`` and ``TaskUpdate`` calls changed it."""

    rows: dict[str, Item] = field(default_factory=dict)
    created: int = 0

    def apply(self, name: str, call: str) -> list[Item] | None:
        args = _json(call)
        if not isinstance(args, dict):
            return None
        if name == "taskcreate":
            subject = args.get("subject") or args.get("description")
            if not isinstance(subject, str) or not subject.strip():
                return None
            self.created += 1
            key = str(self.created)
            self.rows[key] = Item(_clean(subject), status_of(args.get("status")), key)
        else:
            item = self.rows.get(str(args.get("taskId", "")).strip().lstrip("#"))
            if item is None:
                return None
            status = args.get("status")
            if isinstance(status, str) and status.strip().lower() == "deleted":
                self.rows = {k: v for k, v in self.rows.items() if v is not item}
            elif isinstance(status, str) and status.strip():
                item.status = status_of(status)
            if isinstance(args.get("subject"), str) and args["subject"].strip():
                item.text = _clean(args["subject"])
        return list(self.rows.values())[:MAX_ITEMS]

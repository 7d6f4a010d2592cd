"""The package layout says the flow: folders import only from their left, and nothing imports in a circle.

See docs/architecture.md. Imports inside functions count too: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import scribed

ROOT = Path(scribed.__file__).parent
ORDER = ["sources", "session", "compress", "squad", "tiers", "curate", "recall", "core", "cli", "daemon"]


def _rank(module: str) -> int:
    """Leaves rank -1; the two drivers share the last rank."""
    parts = module.split(".")
    if len(parts) < 3 and (len(parts) < 2 or parts[1] not in ORDER):
        return -1
    return min(ORDER.index(parts[1]), ORDER.index("cli"))


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        name = ".".join(rel.parts)
        out[name.removesuffix(".__init__")] = path
    return out


def _imports(path: Path, known: dict[str, Path]) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("scribed"):
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found.add(full if full in known else node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("scribed"))
    return found


def graph() -> dict[str, set[str]]:
    known = _modules()
    return {
        name: {d for d in _imports(path, known) if d not in (name, "scribed")} for name, path in known.items()
    }


def test_folders_import_only_from_their_left() -> None:
    allowed = {("scribed.log", "scribed.session.redact")}  # logs are scrubbed by the one redaction engine
    bad = sorted(
        (mod, dep)
        for mod, deps in graph().items()
        for dep in deps
        if _rank(dep) > _rank(mod) and (mod, dep) not in allowed and not mod.endswith("__main__")
    )
    assert bad == []


def test_no_import_circles() -> None:
    g = graph()
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for dep in sorted(g.get(node, ())):
            if state.get(dep) == 1:
                cycles.append([*stack[stack.index(dep) :], dep])
            elif dep not in state:
                visit(dep, [*stack, dep])
        state[node] = 2

    for name in sorted(g):
        if name not in state:
            visit(name, [name])
    assert cycles == []

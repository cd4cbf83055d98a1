"""The house rules of the source tree (DESIGN.md 'Shape', issue 19), as functions of a tree's root so
that tests/test_architecture.py can run them on the real tree and on deliberately broken ones.

Each rule returns a list of violations (strings naming the file and line); [] means it holds.

1. private_imports: outside a package, code imports only what the package's `__init__` (or a public
   subpackage's `__init__`) exports: no `_private` module or name of another package.
2. import_cycles: no circle of imports between modules (imports inside functions count too: a
   circle there is a circle of dependencies all the same).
3. write_sql_outside_the_store: SQL that writes (INSERT, UPDATE, DELETE, CREATE, ALTER, DROP) stands
   only under ingest/store/ and ingest/runs/.
4. ingest_names_app / audit_imports_siblings / imports_of_app: `ingest` never imports or names
   `app`; `audit` imports from `ingest` only the store's read-only connection module, and nothing of
   `train` or `app`; nothing outside `app` imports `app`.
5. long_files: no source file over 450 lines.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

PACKAGES = ("app", "audit", "ingest", "train")
MAX_LINES = 450
WRITERS = ("ingest/store/", "ingest/runs/")
AUDIT_MAY_IMPORT = {"ingest.store.connection"}
WRITE_SQL = re.compile(
    r"\b(INSERT\s+INTO|UPDATE\s+\w+(\s+\w+)?\s+SET|DELETE\s+FROM|CREATE\s+(OR\s+REPLACE\s+)?(TEMP\w*\s+)?"
    r"(UNIQUE\s+)?(TABLE|VIEW|INDEX|SEQUENCE|MACRO|TYPE|SCHEMA)|ALTER\s+TABLE|DROP\s+(TABLE|VIEW|INDEX|"
    r"SEQUENCE|MACRO|TYPE|SCHEMA))\b", re.IGNORECASE)


def modules(root: Path) -> dict[str, Path]:
    """Every module of the packages: dotted name -> file (a package is its __init__.py)."""
    out = {}
    for pkg in PACKAGES:
        for f in sorted((root / pkg).rglob("*.py")):
            parts = list(f.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = f
    return out


def _imports(name: str, path: Path, known: dict[str, Path]) -> list[tuple[str, int]]:
    """(module imported, line) for each import in the file, relative ones resolved; `from m import x`
    counts as an import of m.x when that is a module, else of m (and of m.x as a name, for rule 1)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for a in node.names:
                full = f"{target}.{a.name}"
                out.append((full if full in known or a.name.startswith("_") else target, node.lineno))
    return [(t, line) for t, line in out if t.split(".")[0] in PACKAGES]


def _private_owner(target: str, known: dict[str, Path]) -> str | None:
    """The package a private part of `target` belongs to (a.b._c -> a.b; a private name of the module
    a.m belongs to a), or None if every part is public."""
    parts = target.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            owner = ".".join(parts[:i])
            if owner in known and known[owner].name != "__init__.py":
                owner = owner.rpartition(".")[0]
            return owner
    return None


def private_imports(root: Path) -> list[str]:
    known = modules(root)
    bad = []
    for name, path in known.items():
        for target, line in _imports(name, path, known):
            owner = _private_owner(target, known)
            if owner is not None and not (name == owner or name.startswith(owner + ".")):
                bad.append(f"{path.relative_to(root)}:{line} imports {target}")
    return bad


def _graph(root: Path) -> dict[str, set[str]]:
    """module -> the project modules it imports (a submodule's import runs its packages' __init__ too)."""
    known = modules(root)
    graph = {}
    for name, path in known.items():
        edges = set()
        for target, _ in _imports(name, path, known):
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                t = ".".join(parts[:i])
                if t in known and t != name and not name.startswith(t + "."):
                    edges.add(t)
        graph[name] = edges
    return graph


def import_cycles(root: Path) -> list[str]:
    """The strongly connected components of more than one module (Tarjan), each as a sorted list."""
    graph = _graph(root)
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append("circle: " + " <-> ".join(sorted(component)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _strings(path: Path) -> list[tuple[str, int]]:
    """The string literals of a Python file (docstrings too) with their first line; a .sql file whole."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".sql":
        return [(text, 1)]
    return [(tok.string, tok.start[0]) for tok in tokenize.generate_tokens(io.StringIO(text).readline)
            if tok.type == tokenize.STRING or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1)]


def write_sql_outside_the_store(root: Path) -> list[str]:
    bad = []
    for pkg in PACKAGES:
        for f in sorted((root / pkg).rglob("*")):
            rel = f.relative_to(root).as_posix()
            if f.suffix not in (".py", ".sql") or rel.startswith(WRITERS):
                continue
            for text, line in _strings(f):
                m = WRITE_SQL.search(text)
                if m:
                    bad.append(f"{rel}:{line + text[:m.start()].count(chr(10))} writes: {m.group(0)!r}")
    return bad


def ingest_names_app(root: Path) -> list[str]:
    """An import of app, or a string naming an app module (`app.cli`, `-m app`), in ingest's code."""
    known = modules(root)
    bad = [f"{path.relative_to(root)}:{line} imports {t}" for name, path in known.items() if name.startswith("ingest")
           for t, line in _imports(name, path, known) if t.split(".")[0] == "app"]
    for name, path in known.items():
        if name.startswith("ingest"):
            for text, line in _strings(path):
                if re.search(r"\bapp\.(cli|data|views|main)\b|-m app\b", text):
                    bad.append(f"{path.relative_to(root)}:{line} names the app: {text.strip()[:60]!r}")
    return bad


def audit_imports_siblings(root: Path) -> list[str]:
    known = modules(root)
    return [f"{path.relative_to(root)}:{line} imports {t}" for name, path in known.items() if name.startswith("audit")
            for t, line in _imports(name, path, known)
            if t.split(".")[0] in ("ingest", "train", "app") and t not in AUDIT_MAY_IMPORT]


def imports_of_app(root: Path) -> list[str]:
    known = modules(root)
    return [f"{path.relative_to(root)}:{line} imports {t}" for name, path in known.items()
            if not name.startswith("app") for t, line in _imports(name, path, known) if t.split(".")[0] == "app"]


def long_files(root: Path) -> list[str]:
    out = []
    for path in modules(root).values():
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES:
            out.append(f"{path.relative_to(root)}: {n} lines")
    return out


RULES = (private_imports, import_cycles, write_sql_outside_the_store, ingest_names_app, audit_imports_siblings,
         imports_of_app, long_files)


def report(root: Path) -> dict[str, list[str]]:
    """Every rule's violations on the tree at root (run as a script: `python tests/layout_rules.py`)."""
    return {rule.__name__: rule(root) for rule in RULES}


if __name__ == "__main__":
    import json
    import sys
    found = report(Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]))
    print(json.dumps(found, indent=1))
    sys.exit(1 if any(found.values()) else 0)

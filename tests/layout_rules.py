"""The house rules of the source tree (DESIGN.md 'Shape', issue 19), as functions of a tree's root so
that tests/test_architecture.py can run them on the real tree and on deliberately broken ones.

Each rule returns a list of violations (strings naming the file and line); [] means it holds.

1. private_imports: outside a package, code imports only what the package's `__init__` (or a public
   subpackage's `__init__`) exports: no `_private` module or name of another package.
2. import_cycles: no circle of imports between modules (imports inside functions count too: a
   circle there is a circle of dependencies all the same).
3. write_sql_outside_the_store: SQL that writes (INSERT, UPDATE, DELETE, CREATE, ALTER, DROP) stands
   only under ingest/store/ (background runs write through the store too, since issue 25).
4. ingest_names_app / audit_imports_siblings / imports_of_app: `ingest` never imports or names
   `app`; `audit` imports from `ingest` only the store's read-only connection module, and nothing of
   `train` or `app`; nothing outside `app` imports `app`.
5. long_files: no source file over 450 lines.
6. One door to the database (DESIGN.md 'One word per thing, one door to the database', issue 25):
   duckdb_outside_the_store: only ingest/store/ opens a DuckDB connection (`duckdb.connect`);
   raw_store_helpers: nothing outside ingest/store/ imports the store's raw helpers (a connection,
   a transaction, a query runner), and the store's face does not export them;
   sql_in_python: SQL statements live in .sql files (ingest/store/sql/, audit/sql/), not in string
   literals of .py files, but for the store's own plumbing (its migrations table and id marks).
7. long_pages: a page of the dashboard (app/views/<page>/page.py) stays under about 80 lines; its
   helpers sit beside it.
8. environment_outside_settings: only ingest/settings.py reads (or writes) the environment.
9. connections_outside_the_store: outside ingest/store/, no module imports duckdb and no code calls a
   connection's query methods (`.sql`, `.execute`, `.register`, ...): the audit reads through the
   store's handle (ingest/store/database.py). sql_built_from_text: nowhere is SQL built from text: no
   f-string that holds a statement, no SQL text passed through `.replace` or `.format`.
10. derived_machinery_in_app: the derived results' machinery (fingerprints, storing, the in-flight
   computations) lives in audit/derived/; app/ imports none of the store's derived-results verbs and
   holds no module named after them.
11. faces_listed_once: a package's `__init__.py` assigns `__all__` once (no `+=`, no second assignment)
   and binds no name twice (no import that replaces an earlier one).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

PACKAGES = ("app", "audit", "ingest", "train")
MAX_LINES = 450
WRITERS = ("ingest/store/",)
AUDIT_MAY_IMPORT = {"ingest.store.database"}
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


STORE = "ingest/store/"
RAW_HELPERS = {"writer", "reader", "frame", "one", "transaction", "next_id", "open_with_retry", "migrate",
               "IN_PROCESS", "_database"}
SQL_PLUMBING = {"ingest/store/_database.py", "ingest/store/connection.py"}
SQL_STATEMENT = re.compile(r'^[rfbRFB]*("""|\'\'\'|"|\')\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|WITH|COPY|'
                           r'ATTACH|PRAGMA|CHECKPOINT)\b')
MAX_PAGE_LINES = 80


def _files(root: Path):
    for path in modules(root).values():
        yield path.relative_to(root).as_posix(), path


def duckdb_outside_the_store(root: Path) -> list[str]:
    """A call of duckdb.connect (or an import of `connect` from duckdb) outside ingest/store/."""
    bad = []
    for rel, path in _files(root):
        if rel.startswith(STORE):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and node.attr == "connect" and isinstance(node.value, ast.Name)
                    and node.value.id == "duckdb") or (isinstance(node, ast.ImportFrom) and node.module == "duckdb"
                                                       and any(a.name == "connect" for a in node.names)):
                bad.append(f"{rel}:{node.lineno} opens DuckDB")
    return bad


def raw_store_helpers(root: Path) -> list[str]:
    """An import of a raw helper from the store outside it, or the store's face exporting one."""
    known = modules(root)
    bad = []
    for name, path in known.items():
        rel = path.relative_to(root).as_posix()
        if rel.startswith(STORE):
            continue
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            target = node.module or ""
            if node.level:
                target = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
            if target.startswith("ingest.store"):
                for a in node.names:
                    if a.name in RAW_HELPERS or target.endswith("._database"):
                        bad.append(f"{rel}:{node.lineno} imports {a.name} from {target}")
    face = root / "ingest" / "store" / "__init__.py"
    if face.exists():
        for node in ast.walk(ast.parse(face.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in RAW_HELPERS - {"_database"}:
                bad.append(f"ingest/store/__init__.py:{node.lineno} exports {node.value}")
    return bad


def sql_in_python(root: Path) -> list[str]:
    """Each string literal of a .py file that starts an SQL statement, outside the store's plumbing."""
    bad = []
    skip = (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)
    for rel, path in _files(root):
        if rel in SQL_PLUMBING:
            continue
        previous = None
        for tok in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
            # a literal right after another is the same (implicitly concatenated) statement
            if tok.type == tokenize.STRING and SQL_STATEMENT.match(tok.string) and previous != tokenize.STRING:
                bad.append(f"{rel}:{tok.start[0]} holds SQL: {tok.string[:50]!r}")
            if tok.type not in skip:
                previous = tok.type
    return bad


def long_pages(root: Path) -> list[str]:
    out = []
    for path in sorted((root / "app" / "views").glob("*/page.py")):
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_PAGE_LINES:
            out.append(f"{path.relative_to(root).as_posix()}: {n} lines")
    return out


SETTINGS = "ingest/settings.py"


def environment_outside_settings(root: Path) -> list[str]:
    """Each read or write of the environment (os.environ, os.getenv, os.putenv, os.unsetenv, an import
    of environ) outside ingest/settings.py."""
    bad = []
    for rel, path in _files(root):
        if rel == SETTINGS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os"
                    and node.attr in ("environ", "getenv", "putenv", "unsetenv", "environb")) or (
                    isinstance(node, ast.ImportFrom) and node.module == "os"
                    and any(a.name in ("environ", "getenv", "putenv") for a in node.names)):
                bad.append(f"{rel}:{node.lineno} reads the environment")
    return bad


CONNECTION_METHODS = {"sql", "execute", "executemany", "register", "unregister", "fetchall", "fetchone",
                      "fetchnumpy", "fetch_record_batch", "fetch_arrow_table", "cursor", "query"}


def connections_outside_the_store(root: Path) -> list[str]:
    """Outside ingest/store/: an import of duckdb, or a call of a connection's query method."""
    bad = []
    for rel, path in _files(root):
        if rel.startswith(STORE):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "duckdb" for a in node.names) or (
                    isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "duckdb"):
                bad.append(f"{rel}:{node.lineno} imports duckdb")
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in CONNECTION_METHODS):
                bad.append(f"{rel}:{node.lineno} calls .{node.func.attr}()")
    return bad


SQL_WORDS = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP)\b[\s\S]*\b(FROM|INTO|SET|TABLE|VIEW|WHERE)\b")


def sql_built_from_text(root: Path) -> list[str]:
    """Anywhere (the store too): an f-string holding an SQL statement, or `.replace`/`.format` called
    on text read from an .sql file (a call whose receiver names sql or a query's text)."""
    bad = []
    for rel, path in _files(root):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.JoinedStr):
                text = "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
                if SQL_WORDS.search(text):
                    bad.append(f"{rel}:{node.lineno} builds SQL in an f-string")
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in ("replace", "format")):
                receiver = ast.unparse(node.func.value)
                if re.search(r"\bsql\b|query_text|_sql\.text|\btext\(", receiver):
                    bad.append(f"{rel}:{node.lineno} edits SQL text with .{node.func.attr}()")
    return bad


DERIVED_VERBS = {"derived_mark", "derived_judging_marks", "derived_parts", "derived_result", "save_derived",
                 "save_derived_parts", "params_json", "derived_fingerprints", "derived_marks_now", "save_derived_many"}


def derived_machinery_in_app(root: Path) -> list[str]:
    """In app/: a module named derived*, or an import (or attribute use) of the store's derived-results
    verbs: the machinery is audit/derived/'s."""
    bad = []
    for rel, path in _files(root):
        if not rel.startswith("app/"):
            continue
        if Path(rel).stem.startswith("derived"):
            bad.append(f"{rel}: a derived-results module in the dashboard")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.ImportFrom) else \
                [node.attr] if isinstance(node, ast.Attribute) else []
            for name in names:
                if name in DERIVED_VERBS:
                    bad.append(f"{rel}:{node.lineno} uses {name}")
    return bad


def faces_listed_once(root: Path) -> list[str]:
    """A package face (`__init__.py`) that extends or reassigns `__all__`, or binds a name twice."""
    bad = []
    for rel, path in _files(root):
        if not rel.endswith("__init__.py"):
            continue
        seen: dict[str, int] = {}
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.AugAssign) and getattr(node.target, "id", None) == "__all__":
                bad.append(f"{rel}:{node.lineno} extends __all__")
            names = [a.asname or a.name.split(".")[0] for a in node.names] if isinstance(node, (ast.Import, ast.ImportFrom)) \
                else [t.id for t in node.targets if isinstance(t, ast.Name)] if isinstance(node, ast.Assign) else []
            for name in names:
                if name in seen:
                    bad.append(f"{rel}:{node.lineno} binds {name} again (first at line {seen[name]})")
                seen.setdefault(name, node.lineno)
    return bad


RULES = (private_imports, import_cycles, write_sql_outside_the_store, ingest_names_app, audit_imports_siblings,
         imports_of_app, long_files, duckdb_outside_the_store, raw_store_helpers, sql_in_python, long_pages,
         environment_outside_settings, connections_outside_the_store, sql_built_from_text, derived_machinery_in_app,
         faces_listed_once)


def report(root: Path) -> dict[str, list[str]]:
    """Every rule's violations on the tree at root (run as a script: `python tests/layout_rules.py`)."""
    return {rule.__name__: rule(root) for rule in RULES}


if __name__ == "__main__":
    import json
    import sys
    found = report(Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]))
    print(json.dumps(found, indent=1))
    sys.exit(1 if any(found.values()) else 0)

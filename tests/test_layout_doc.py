"""docs/layout.md against the tree, and the code's citations against the repository.

- docs/layout.md names every migration in ingest/store/schema/ and every table the migrations leave,
  every package and room it lists exists and every package directory is listed, and every `path` in
  backticks that looks like a repository path exists (a `tests/FILE.py::test_name` names a test that
  is there);
- no .py or .sql file in app/, audit/, ingest/, train/ cites a file outside the repository
  (DESIGN.md, STYLE.md, ../shared, shared/) or names an issue number; every docs/PAGE.md#anchor it
  cites is a heading of that page.

Each check is a function of a root folder, so each is also run on a small tree with a planted
violation, which it must report.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


CODE_FOLDERS = ("app", "audit", "ingest", "train")
OUTSIDE = re.compile(r"DESIGN\.md|STYLE\.md|\.\./shared|(?<![\w.-])shared/", re.IGNORECASE)
ISSUE = re.compile(r"\bissues? #?\d+\b", re.IGNORECASE)
DOC_LINK = re.compile(r"docs/([\w.-]+\.md)(?:#([\w-]+))?")
TOP_LEVEL_FILES = {"Makefile", "README.md", "pyproject.toml"}


# --- the checks, as functions of a root ---------------------------------------------------------

def code_files(root: Path, skip: frozenset[str] = frozenset()) -> list[Path]:
    """The .py and .sql files under the code folders of root, but those in skip (relative paths)."""
    out = []
    for folder in CODE_FOLDERS:
        for p in sorted((root / folder).rglob("*")):
            if p.suffix in (".py", ".sql") and p.relative_to(root).as_posix() not in skip:
                out.append(p)
    return out


def matches(root: Path, pattern: re.Pattern, skip: frozenset[str] = frozenset()) -> list[str]:
    """'path:line: text' for each line of a code file that matches pattern."""
    found = []
    for p in code_files(root, skip):
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                found.append(f"{p.relative_to(root).as_posix()}:{n}: {line.strip()}")
    return found


def outside_citations(root: Path, skip: frozenset[str] = frozenset()) -> list[str]:
    """Lines of code that cite a file outside the repository (the design notes, the style guide, ../shared)."""
    return matches(root, OUTSIDE, skip)


def issue_numbers(root: Path, skip: frozenset[str] = frozenset()) -> list[str]:
    """Lines of code that name an issue by its number."""
    return matches(root, ISSUE, skip)


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a Markdown page's headings (fenced code blocks left out)."""
    found, fenced = set(), False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            found.add(slug(line.lstrip("#")))
    return found


def broken_doc_links(root: Path) -> list[str]:
    """Citations docs/PAGE.md#anchor in code whose page is not in docs/ or has no such heading."""
    pages = {p.name: anchors(p) for p in (root / "docs").glob("*.md")}
    bad = []
    for p in code_files(root):
        for m in DOC_LINK.finditer(p.read_text(encoding="utf-8")):
            page, anchor = m.group(1), m.group(2)
            if page not in pages or (anchor and anchor not in pages[page]):
                bad.append(f"{p.relative_to(root).as_posix()}: {m.group(0)}")
    return bad


def layout_text(root: Path) -> str:
    return (root / "docs" / "layout.md").read_text(encoding="utf-8")


def section(text: str, heading: str) -> str:
    """The text under a '## heading' up to the next heading of level 2."""
    m = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert m, f"docs/layout.md has no section '## {heading}'"
    return m.group(1)


def migrations_missing(root: Path) -> list[str]:
    """Migration files not named in docs/layout.md, and migrations it names that are not files."""
    text = layout_text(root)
    real = {p.name for p in (root / "ingest" / "store" / "schema").glob("*.sql")}
    named = set(re.findall(r"\b\d{3}_\w+\.sql\b", text))
    return ([f"not in docs/layout.md: {n}" for n in sorted(real - named)]
            + [f"named in docs/layout.md, no such migration: {n}" for n in sorted(named - real)])


def tables_after_migrations(root: Path) -> set[str]:
    """The tables the migrations leave, read off their CREATE, DROP and RENAME TO statements in order."""
    tables: set[str] = set()
    statement = re.compile(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+)|DROP TABLE (?:IF EXISTS )?(\w+)"
                           r"|ALTER TABLE (\w+) RENAME TO (\w+)", re.IGNORECASE)
    for p in sorted((root / "ingest" / "store" / "schema").glob("*.sql")):
        sql = "\n".join(line.split("--")[0] for line in p.read_text(encoding="utf-8").splitlines())
        for created, dropped, old, new in statement.findall(sql):
            if created:
                tables.add(created)
            elif dropped:
                tables.discard(dropped)
            else:
                tables.discard(old)
                tables.add(new)
    return tables


def tables_missing(root: Path) -> list[str]:
    """Tables the migrations leave that docs/layout.md's database section does not name in backticks."""
    named = set(re.findall(r"`(\w+)`", section(layout_text(root), "The database")))
    return sorted(tables_after_migrations(root) - named - {"_migrations"} | ({"_migrations"} - named))


def packages_block(root: Path) -> str:
    m = re.search(r"```\n(.*?)```", section(layout_text(root), "Packages and rooms"), re.DOTALL)
    assert m, "docs/layout.md's 'Packages and rooms' has no tree block"
    return m.group(1)


def package_problems(root: Path) -> list[str]:
    """Packages and ingest's rooms the tree block lists that are not folders, and package folders
    (a folder with __init__.py at the top or in ingest/) it does not list."""
    block = packages_block(root)
    top = set(re.findall(r"^(\w+)/ ", block, re.MULTILINE))
    rooms = set(re.findall(r"^  (\w+)/ ", block, re.MULTILINE))
    problems = [f"listed, no such folder: {n}/" for n in sorted(top) if not (root / n).is_dir()]
    problems += [f"listed, no such room: ingest/{n}/" for n in sorted(rooms) if not (root / "ingest" / n).is_dir()]
    real_top = {p.parent.name for p in root.glob("*/__init__.py")} - {"tests"}
    real_rooms = {p.parent.name for p in (root / "ingest").glob("*/__init__.py")}
    problems += [f"package not listed: {n}/" for n in sorted(real_top - top)]
    problems += [f"room not listed: ingest/{n}/" for n in sorted(real_rooms - rooms)]
    m = re.search(r"\bin (\w+) rooms\b", block)
    words = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
    if m and words.get(m.group(1)) != len(rooms):
        problems.append(f"ingest is said to have {m.group(1)} rooms; {len(rooms)} are listed")
    return problems


def cli_modules_missing(root: Path) -> list[str]:
    """Command modules of app/cli/ (app/cli/<area>.py, not private) that the tree block does not name."""
    block = packages_block(root)
    cli = block[block.index("cli/"):]
    cli = cli[:cli.index("the Streamlit dashboard")]
    named = set(re.findall(r"\w+", cli))
    return [f"app/cli/{p.name} not named" for p in sorted((root / "app" / "cli").glob("[!_]*.py"))
            if p.stem not in named]


def backticked_paths(text: str) -> list[str]:
    """Every `...` of text that looks like a repository path: it starts with a folder of the repository
    or is a top-level file, and holds no placeholder (<page>, NNN, *, FILE, ...)."""
    out = []
    for token in re.findall(r"`([^`\s]+)`", text):
        path = token.split("::")[0].split("#")[0]
        first = path.split("/")[0]
        if "/" not in path and path not in TOP_LEVEL_FILES:
            continue
        if first not in ("app", "audit", "ingest", "train", "tests", "docs") and path not in TOP_LEVEL_FILES:
            continue
        if re.search(r"[<>*]|NNN|FILE|PATH|PAGE|\.\.\.", path):
            continue
        out.append(token)
    return out


def paths_missing(root: Path) -> list[str]:
    """Backticked repository paths of docs/layout.md that do not exist; a `FILE.py::test` must name a
    test function of that file, a `docs/PAGE.md#anchor` a heading of that page."""
    bad = []
    for token in backticked_paths(layout_text(root)):
        path, _, test = token.partition("::")
        path, _, anchor = path.partition("#")
        p = root / path
        if not p.exists():
            bad.append(f"no such path: {token}")
        elif anchor and anchor not in anchors(p):
            bad.append(f"no such heading: {token}")
        elif test and not re.search(rf"^\s*(async )?def {re.escape(test)}\(", p.read_text(encoding="utf-8"),
                                    re.MULTILINE):
            bad.append(f"no such test: {token}")
    return bad


# --- on the real tree ----------------------------------------------------------------------------

def test_code_cites_no_file_outside_the_repository():
    assert outside_citations(ROOT) == []


def test_code_names_no_issue_number():
    assert issue_numbers(ROOT) == []


def test_docs_cited_by_code_have_their_headings():
    assert broken_doc_links(ROOT) == []


def test_layout_names_every_migration():
    assert migrations_missing(ROOT) == []


def test_layout_names_every_table():
    assert tables_missing(ROOT) == []


def test_layout_lists_every_package_and_room_and_only_those():
    assert package_problems(ROOT) == []


def test_layout_names_every_command_module():
    assert cli_modules_missing(ROOT) == []


def test_layout_paths_exist():
    assert backticked_paths(layout_text(ROOT)), "no path found: the reader of backticked paths is broken"
    assert paths_missing(ROOT) == []


# --- each check catches a broken tree ----------------------------------------------------------------

LAYOUT = """# Layout

## Packages and rooms

```
app/      the front doors. cli/: one module per area (pools, scoring) over _common.py;
          the Streamlit dashboard: main.py
audit/    metrics
ingest/   everything that writes, in two rooms:
  store/    the database
  runs/     background runs
train/    curation
```

See `app/main.py`, `tests/test_x.py::test_one` and `docs/layout.md#the-database`.

## The database

Migrations: `001_initial.sql` ... `002_more.sql`.

| table | one row per |
|---|---|
| `pools`, `verdicts` | pool; call |
| `_migrations` | applied migration |

## Tests
"""


def planted_tree(tmp_path: Path, layout: str = LAYOUT) -> Path:
    """A small tree the layout above describes truly; each test then breaks one thing."""
    files = {
        "app/__init__.py": "", "app/main.py": '"""The dashboard (docs/layout.md#layout)."""\n',
        "app/cli/__init__.py": "", "app/cli/_common.py": "", "app/cli/pools.py": "", "app/cli/scoring.py": "",
        "audit/__init__.py": "", "audit/sql/cells.sql": "-- one row per cell\nSELECT 1;\n",
        "ingest/__init__.py": "", "ingest/store/__init__.py": "", "ingest/runs/__init__.py": "",
        "ingest/store/schema/001_initial.sql": "CREATE TABLE pools (id INTEGER);\nCREATE TABLE old (id INTEGER);\n",
        "ingest/store/schema/002_more.sql": "CREATE TABLE calls (id INTEGER);\nDROP TABLE old;\n"
                                            "ALTER TABLE calls RENAME TO verdicts;\n",
        "train/__init__.py": "", "tests/test_x.py": "def test_one():\n    pass\n",
        "docs/layout.md": layout,
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_the_planted_tree_is_clean(tmp_path):
    root = planted_tree(tmp_path)
    assert outside_citations(root) == [] and issue_numbers(root) == [] and broken_doc_links(root) == []
    assert migrations_missing(root) == [] and tables_missing(root) == [] and package_problems(root) == []
    assert cli_modules_missing(root) == [] and paths_missing(root) == []


@pytest.mark.parametrize("line", ['"""See DESIGN.md \'Metric definitions\'."""',
                                  "# as STYLE.md says", "-- from ../shared/data", '"""In shared/DESIGN.md."""',
                                  "# the design notes in shared/ beside the repository"])
def test_an_outside_citation_is_caught(tmp_path, line):
    root = planted_tree(tmp_path)
    (root / "audit" / "sql" / "cells.sql" if line.startswith("--") else root / "audit" / "_x.py").write_text(
        line + "\n", encoding="utf-8")
    assert len(outside_citations(root)) == 1
    name = "audit/sql/cells.sql" if line.startswith("--") else "audit/_x.py"
    assert outside_citations(root, frozenset({name})) == []        # a listed exception is skipped


def test_words_like_shared_are_not_citations(tmp_path):
    root = planted_tree(tmp_path)
    (root / "train" / "x.py").write_text('"""the shared prefix, a shared link, shared_model/ (not a path)."""\n')
    assert outside_citations(root) == []


@pytest.mark.parametrize("line", ["# issue 29: the derived results", '"""Juries (Issue 28)."""',
                                  "-- (issues 21)", "# see issue #7", "# issue 13's nine"])
def test_an_issue_number_is_caught(tmp_path, line):
    root = planted_tree(tmp_path)
    target = root / "ingest" / "store" / "schema" / "002_more.sql" if line.startswith("--") else root / "train" / "x.py"
    target.write_text(line + "\n" + (target.read_text() if target.exists() else ""), encoding="utf-8")
    assert len(issue_numbers(root)) == 1


def test_a_broken_doc_link_is_caught(tmp_path):
    root = planted_tree(tmp_path)
    (root / "audit" / "_x.py").write_text('"""See docs/layout.md#no-such-heading and docs/nope.md."""\n')
    assert broken_doc_links(root) == ["audit/_x.py: docs/layout.md#no-such-heading", "audit/_x.py: docs/nope.md"]


def test_a_migration_missing_from_the_doc_is_caught(tmp_path):
    root = planted_tree(tmp_path)
    (root / "ingest" / "store" / "schema" / "003_new.sql").write_text("CREATE TABLE labels (id INTEGER);\n")
    assert migrations_missing(root) == ["not in docs/layout.md: 003_new.sql"]
    assert tables_missing(root) == ["labels"]


def test_a_migration_the_doc_invents_is_caught(tmp_path):
    root = planted_tree(tmp_path, LAYOUT.replace("`002_more.sql`", "`003_more.sql`"))
    assert migrations_missing(root) == ["not in docs/layout.md: 002_more.sql",
                                        "named in docs/layout.md, no such migration: 003_more.sql"]


def test_a_dropped_or_renamed_table_needs_no_row(tmp_path):
    root = planted_tree(tmp_path)
    assert tables_after_migrations(root) == {"pools", "verdicts"}


def test_a_package_or_room_missing_from_the_doc_is_caught(tmp_path):
    root = planted_tree(tmp_path)
    (root / "ingest" / "files").mkdir()
    (root / "ingest" / "files" / "__init__.py").write_text("")
    (root / "eval").mkdir()
    (root / "eval" / "__init__.py").write_text("")
    assert package_problems(root) == ["package not listed: eval/", "room not listed: ingest/files/"]


def test_a_package_or_room_the_doc_invents_is_caught(tmp_path):
    root = planted_tree(tmp_path, LAYOUT.replace("  runs/     background runs\n",
                                                 "  runs/     background runs\n  demo/     the demo\n"))
    assert package_problems(root) == ["listed, no such room: ingest/demo/",
                                      "ingest is said to have two rooms; 3 are listed"]


def test_a_command_module_missing_from_the_doc_is_caught(tmp_path):
    root = planted_tree(tmp_path)
    (root / "app" / "cli" / "derive.py").write_text("")
    assert cli_modules_missing(root) == ["app/cli/derive.py not named"]


def test_a_path_or_test_that_is_not_there_is_caught(tmp_path):
    root = planted_tree(tmp_path, LAYOUT.replace("`app/main.py`", "`app/main.py`, `audit/_gone.py`, `tests/`")
                        .replace("::test_one", "::test_two").replace("#the-database", "#the-db"))
    assert paths_missing(root) == ["no such path: audit/_gone.py", "no such test: tests/test_x.py::test_two",
                                   "no such heading: docs/layout.md#the-db"]

"""The store is the bottom room of ingest: it imports nothing from the rooms above it (scoring, runs)
nor from the packages above ingest (app, audit, train). Each ingest/store/*.py is parsed with `ast`,
so an import inside a function counts as much as one at the top, and a relative import is resolved
against the module's own package. ingest.files stays allowed: it sits below the store (it imports
nothing of ingest but _errors), and the store's import_pool and import_labels read files through it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STORE = ROOT / "ingest" / "store"
ABOVE_THE_STORE = ("ingest.scoring", "ingest.runs", "app", "audit", "train")


def imported_modules(source: str, module: str) -> list[tuple[int, str]]:
    """(line, dotted name) of everything the source of `module` (a dotted name, e.g.
    ingest.store._verdicts) imports; `from X import a` names X.a too, as `a` may be a module."""
    package = module.rsplit(".", 1)[0].split(".")
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            name = ".".join([*base, *([node.module] if node.module else [])])
            found.append((node.lineno, name))
            found += [(node.lineno, f"{name}.{alias.name}") for alias in node.names]
    return found


def bad_imports(path: Path, module: str) -> list[str]:
    """'path:line imports NAME' for each import of the file that reaches above the store."""
    return [f"{path}:{line} imports {name}" for line, name in imported_modules(path.read_text(), module)
            if any(name == top or name.startswith(top + ".") for top in ABOVE_THE_STORE)]


def test_the_store_imports_nothing_above_it():
    files = sorted(STORE.glob("*.py"))
    assert len(files) > 10
    bad = [b for f in files for b in bad_imports(f, f"ingest.store.{f.stem}")]
    assert bad == []


@pytest.mark.parametrize("line", [
    "from ..scoring import _imported",
    "from ..scoring._imported import _Import",
    "from .. import scoring",
    "from ...audit import juries",
    "from ingest.runs import running",
    "import train.curate",
    "def later():\n    from ...app import data\n",
])
def test_a_planted_import_from_above_is_caught(tmp_path, line):
    path = tmp_path / "_planted.py"
    path.write_text(f'"""A store module that reaches up."""\nfrom . import _sql\n{line}\n')
    bad = bad_imports(path, "ingest.store._planted")
    assert bad and all(b.startswith(f"{path}:{3 if 'def' not in line else 4} imports ") for b in bad)


def test_the_store_s_own_imports_and_those_below_it_pass(tmp_path):
    path = tmp_path / "_fine.py"
    path.write_text("from . import _sql\nfrom ._database import reader\nfrom .._errors import UserError\n"
                    "from ..files import file_sha256\nimport polars as pl\nfrom .connection import db_path\n")
    assert bad_imports(path, "ingest.store._fine") == []

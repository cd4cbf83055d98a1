"""Layout rules from DESIGN.md / STYLE.md that code review would otherwise have to remember."""

import subprocess
import sys
from importlib import resources

import duckdb

from ingest import migrate


def test_audit_and_app_do_not_load_torch_or_httpx():
    code = ("import sys, audit, app, app.cli, app.data; "
            "bad = [m for m in ('torch', 'httpx', 'transformers', 'peft') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_audit_imports_no_sibling_package():
    code = ("import sys, audit; bad = [m for m in sys.modules if m.split('.')[0] in "
            "('ingest', 'app', 'train', 'streamlit')]; print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_sql_file_runs_on_an_empty_migrated_database(tmp_path):
    con = duckdb.connect(str(tmp_path / "empty.duckdb"))
    migrate(con)
    params = {"pool_id": 1, "judge_id": 1, "format_id": 1, "decoding": "greedy", "expected": False}
    files = [f for f in (resources.files("audit") / "sql").iterdir() if f.name.endswith(".sql")]
    assert len(files) >= 6
    for f in files:
        text = f.read_text()
        assert text.startswith("--"), f"{f.name} should start with a comment saying what a row is"
        used = {k: v for k, v in params.items() if f"${k}" in text}
        con.execute(text, used).fetchall()


def test_migrations_are_recorded_and_idempotent(tmp_path):
    con = duckdb.connect(str(tmp_path / "m.duckdb"))
    first = migrate(con)
    assert first and migrate(con) == []
    assert con.execute("SELECT count(*) FROM _migrations").fetchall() == [(len(first),)]


def test_app_modules_do_not_share_a_public_function_name():
    # one name, one meaning: app.reading.binned_means (a frame) and app.charts.binned_means_chart (a
    # chart). app/data.py is left out: its cached wrappers carry the names of what they wrap.
    import ast
    from collections import defaultdict
    from pathlib import Path
    where = defaultdict(list)
    for f in sorted((Path(__file__).resolve().parents[1] / "app").glob("*.py")):
        if f.name == "data.py":
            continue
        for node in ast.parse(f.read_text()).body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                where[node.name].append(f.name)
    assert {n: fs for n, fs in where.items() if len(fs) > 1} == {}


def test_other_packages_use_audits_public_names_only():
    # audit's modules are private (audit/_x.py): app and train import what audit/__init__.py exports
    import ast
    from pathlib import Path
    repo = Path(__file__).resolve().parents[1]
    bad = []
    for f in sorted(p for pkg in ("app", "train", "ingest") for p in (repo / pkg).rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            if any(n.startswith("audit._") for n in names):
                bad.append(f"{f.relative_to(repo)}:{node.lineno}")
    assert bad == []


def test_only_the_model_modules_import_torch_peft_or_transformers():
    # STYLE.md: torch, peft and transformers live in train/finetune.py and the model helper
    # train/_model.py (and the bundled judge ingest/judges/local.py); tests and benchmarks may use them.
    import ast
    from pathlib import Path
    repo = Path(__file__).resolve().parents[1]
    allowed = {"train/finetune.py", "train/_model.py", "ingest/judges/local.py"}
    heavy = {"torch", "peft", "transformers"}
    bad = []
    for f in sorted(p for pkg in ("app", "audit", "ingest", "train") for p in (repo / pkg).rglob("*.py")):
        rel = f.relative_to(repo).as_posix()
        if rel in allowed:
            continue
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            if any(n.split(".")[0] in heavy for n in names):
                bad.append(f"{rel}:{node.lineno}")
    assert bad == []

"""The house rules (docs/layout.md) that code review would otherwise have to remember."""

import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import duckdb
import pytest

from ingest.store._database import migrate
from tests import layout_rules

REPO = Path(__file__).resolve().parents[1]


def test_audit_and_app_do_not_load_torch_or_httpx():
    # audit's face is lazy (a name's module loads when it is asked for): every name is asked for
    code = ("import sys, audit, app, app.cli, app.data; [getattr(audit, n) for n in audit.__all__]; "
            "bad = [m for m in ('torch', 'httpx', 'transformers', 'peft') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_audit_loads_only_the_stores_database_handle_of_its_siblings():
    # audit's code imports ingest.store.database alone (the handle, with the connection rules and the
    # settings it reads); importing it runs the light ingest and ingest.store package files, which load
    # no formats, judges, runs or torch
    # no torch, httpx or siblings' modules, nor SciPy's statistics, for the audit's cells alone (its face is lazy)
    cells = subprocess.run([sys.executable, "-c", "import sys; from audit import audit_cells, intransitivity; "
                            "print('scipy.stats' in sys.modules)"], capture_output=True, text=True, check=True)
    assert cells.stdout.strip() == "False"
    code = ("import sys, audit; [getattr(audit, n) for n in audit.__all__]; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('ingest', 'app', 'train', 'streamlit')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(eval(proc.stdout))
    light = {"ingest", "ingest._errors", "ingest._paths", "ingest._redact", "ingest.store"}
    assert loaded - light == {"ingest.store.database", "ingest.store.connection", "ingest.settings"}


def test_ingest_itself_is_light():
    code = ("import sys, ingest; print(sorted(m for m in sys.modules if m.startswith(('ingest.', 'torch', "
            "'httpx', 'transformers'))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert set(eval(proc.stdout)) <= {"ingest._errors", "ingest._paths", "ingest._redact", "ingest.store",
                                      "ingest.store.connection", "ingest.store.database", "ingest.settings"}


@pytest.mark.parametrize("rule", layout_rules.RULES, ids=lambda r: r.__name__)
def test_the_house_rules_hold(rule):
    assert rule(REPO) == []


def _tree(root, files: dict[str, str]):
    """A small source tree with the four packages, for the rules to judge."""
    for pkg in layout_rules.PACKAGES:
        (root / pkg).mkdir(parents=True, exist_ok=True)
        (root / pkg / "__init__.py").write_text("")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_the_rules_catch_a_broken_tree(tmp_path):
    tree = _tree(tmp_path, {
        "ingest/_secret.py": "X = 1\n",
        "ingest/store/__init__.py": "",
        "ingest/store/_database.py": "Y = 1\n",
        "ingest/scoring.py": "from .store._database import Y\nfrom ._secret import X\n",   # 1 cross, 1 inside
        "app/views.py": "from ingest._secret import X\nfrom app import helpers\n",              # 1 cross
        "app/helpers.py": "import app.views\nfrom app.views import _page\n",                    # a circle; same package
        "audit/_m.py": "import ingest.scoring\nfrom ingest.store.database import Database\n"
                       "Q = 'INSERT INTO verdicts VALUES (1)'\n",
        "ingest/runs/__init__.py": "import subprocess\nsubprocess.run(['python', '-m', 'app.cli'])\n",
        "train/long.py": "x = 1\n" * 451,
        "ingest/store/ok.py": "Q = 'DELETE FROM verdicts'\n",                                  # the store may write
    })
    found = layout_rules.report(tree)
    assert sorted(found["private_imports"]) == ["app/views.py:1 imports ingest._secret",
                                                "ingest/scoring.py:1 imports ingest.store._database"]
    assert found["import_cycles"] == ["circle: app.helpers <-> app.views"]
    assert found["write_sql_outside_the_store"] == ["audit/_m.py:3 writes: 'INSERT INTO'"]
    assert found["ingest_names_app"] and found["ingest_names_app"][0].startswith("ingest/runs/__init__.py:2")
    assert found["audit_imports_siblings"] == ["audit/_m.py:1 imports ingest.scoring"]
    assert found["long_files"] == ["train/long.py: 451 lines"]
    tree2 = _tree(tmp_path / "two", {"train/x.py": "from app import views\n"})
    assert layout_rules.imports_of_app(tree2) == ["train/x.py:1 imports app"]


def test_the_one_door_rules_catch_a_broken_tree(tmp_path):
    tree = _tree(tmp_path, {
        "ingest/store/__init__.py": '_EXPORTS = {"_database": ["migrate", "writer"], "_pools": ["import_pool"]}\n',
        "ingest/store/_database.py": "import duckdb\ncon = duckdb.connect('x')\nQ = 'CREATE TABLE _migrations (id INT)'\n",
        "ingest/store/_pools.py": "Q = 'SELECT 1'\n",                                 # inside the store: SQL...
        "ingest/demo/build.py": "import duckdb\ncon = duckdb.connect('x')\n",          # ...outside: a door
        "ingest/scoring/_runner.py": "from ..store import writer, import_pool\nfrom ..store._database import one\n",
        "train/t.py": "from duckdb import connect\nQ = f\"SELECT {1}\"\n",
        "audit/a.py": "from ingest.store import connection\nQ = ('WITH x AS (SELECT 1) '\n     'SELECT * FROM x')\n",
        "app/views/score/page.py": "x = 1\n" * 81,
        "app/views/pool/page.py": "x = 1\n" * 80,
    })
    assert layout_rules.duckdb_outside_the_store(tree) == ["ingest/demo/build.py:2 opens DuckDB",
                                                           "train/t.py:1 opens DuckDB"]
    assert layout_rules.raw_store_helpers(tree) == [
        "ingest/scoring/_runner.py:1 imports writer from ingest.store",
        "ingest/scoring/_runner.py:2 imports one from ingest.store._database",
        "ingest/store/__init__.py:1 exports migrate", "ingest/store/__init__.py:1 exports writer"]
    assert [v.split(" holds")[0] for v in layout_rules.sql_in_python(tree)] == [
        "audit/a.py:2", "ingest/store/_pools.py:1", "train/t.py:2"]        # the store's _database.py may
    assert layout_rules.long_pages(tree) == ["app/views/score/page.py: 81 lines"]


def test_the_rules_of_settings_handle_and_derived_results_catch_a_broken_tree(tmp_path):
    tree = _tree(tmp_path, {
        "ingest/settings.py": "import os\nDB = os.environ.get('JUDGEAUDIT_DB')\n",          # the one place
        "ingest/runs/_registry.py": "import os\nfrom os import getenv\nslots = os.environ['X_SLOTS']\n",
        "train/t.py": "import os\nos.environ.setdefault('HF_HUB_OFFLINE', '1')\n",
        "audit/_a.py": "import duckdb\ndef f(con):\n    return con.sql('x').pl()\n",
        "audit/_b.py": "def g(read, frame):\n    read.register('w', frame)\n",
        "ingest/store/_ok.py": "import duckdb\ndef h(con):\n    return con.execute('x')\n",   # the store may
        "ingest/store/_ids.py": "def i(con, t):\n    return con.execute(f'SELECT max(id) FROM {t}')\n",
        "audit/_c.py": "def j(sql):\n    return sql('counts').replace('/* x */', sql('rows'))\n",
        "app/derived.py": "X = 1\n",
        "app/data.py": "from ingest.store import save_derived, import_pool\nimport ingest.store as s\nm = s.derived_mark\n",
    })
    assert layout_rules.environment_outside_settings(tree) == [
        "ingest/runs/_registry.py:2 reads the environment", "ingest/runs/_registry.py:3 reads the environment",
        "train/t.py:2 reads the environment"]
    assert layout_rules.connections_outside_the_store(tree) == [
        "audit/_a.py:1 imports duckdb", "audit/_a.py:3 calls .sql()", "audit/_b.py:2 calls .register()"]
    assert layout_rules.sql_built_from_text(tree) == [
        "audit/_c.py:2 edits SQL text with .replace()", "ingest/store/_ids.py:2 builds SQL in an f-string"]
    assert layout_rules.derived_machinery_in_app(tree) == [
        "app/data.py:1 uses save_derived", "app/data.py:3 uses derived_mark",
        "app/derived.py: a derived-results module in the dashboard"]
    faces = _tree(tmp_path / "faces", {
        "audit/__init__.py": "from ._r import rank\n__all__ = ['rank']\nfrom ._rc import rank  # noqa: F811\n"
                             "__all__ += ['more']\n",
        "train/__init__.py": "from .a import x\n__all__ = ['x']\n",                # listed once: fine
    })
    assert layout_rules.faces_listed_once(faces) == [
        "audit/__init__.py:3 binds rank again (first at line 1)", "audit/__init__.py:4 extends __all__"]


def test_every_sql_file_runs_on_an_empty_migrated_database(tmp_path):
    con = duckdb.connect(str(tmp_path / "empty.duckdb"))
    migrate(con)
    params = {"pool_id": 1, "judge_id": 1, "format_id": 1, "decoding": "greedy", "expected": False,
              "study": "s", "study_id": 1, "pool": None, "sha256": None, "prompt_lo": 0, "prompt_hi": 0, "judge": "j"}
    params |= {"queue_id": 1, "annotator": "a"}           # the label queues' reads
    params |= {"baseline": "b", "by_prompt": False}       # the estimate's and the style fit's reads (issue 29)
    params |= {"decodings": ["greedy"], "n_formats": 1, "n_prompts": 1}   # the style fit's calls (_style_cells)
    params |= {"against_id": 2, "lo": 1, "hi": 1, "format": "likert5", "limit": 10}   # drift against a judge
    params |= {"versions": True, **{f"{side}_{part}": "x" for side in ("new", "old")      # or of its own versions
                                    for part in ("model", "template", "settings")}}
    params |= {"strata": "score-bin"}                     # the stratified estimate's reads
    params |= {"scoped": False}                           # drift_pair_parts' scope (false: every judging)
    files = [f for f in (resources.files("audit") / "sql").iterdir() if f.name.endswith(".sql")]
    assert len(files) >= 6
    con.execute("CREATE TEMP TABLE wanted_df (cand_idx BIGINT, ord BIGINT)")   # candidate_texts' frame
    con.execute("CREATE TEMP TABLE tournament_cells (judge_id INTEGER, format_id INTEGER, decoding VARCHAR, "
                "cell BIGINT)")                           # intransitive_calls' frame (audit/_intransitive.py)
    from ingest.store.connection import verdict_source
    assert verdict_source(con) == {}     # the audit reads verdicts through this view (a Database's reading)
    for f in files:
        text = f.read_text()
        assert text.startswith("--"), f"{f.name} should start with a comment saying what a row is"
        used = {k: v for k, v in params.items() if re.search(rf"\${k}\b", text)}
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


def test_only_the_model_modules_import_torch_peft_or_transformers():
    # STYLE.md: torch, peft and transformers live in train/finetune.py and the model helper
    # train/_model.py (and the bundled judge ingest/scoring/judges/local.py); tests and benchmarks may use them.
    import ast
    from pathlib import Path
    repo = Path(__file__).resolve().parents[1]
    allowed = {"train/finetune.py", "train/_trainer.py", "train/_progress.py", "train/_model.py", "train/_dpo.py",
               "ingest/scoring/judges/local.py"}
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

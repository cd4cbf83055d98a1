"""The command line imports pool and verdict files of any size (issue 29): the row and byte caps are
for browser uploads. CI runs the command-line path with a cap far below the file (JUDGEAUDIT_MAX_ROWS
in the environment the console script inherits): the same code a 10M-row file takes, at 12 prompts."""

import json

import pytest

from ingest import UserError
from ingest.scoring import import_verdicts
from ingest.store import import_pool
from tests.app.test_cli import run
from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl


def test_cli_imports_files_over_the_upload_cap(tmp_path, monkeypatch):
    rows = synthetic_pool(12, seed=3)
    verdict_rows = synthetic_verdicts(rows, seed=3)
    pool = write_jsonl(tmp_path / "pool.jsonl", rows)
    verdicts = write_jsonl(tmp_path / "verdicts.jsonl", verdict_rows)
    parquet = tmp_path / "verdicts.parquet"
    import polars as pl
    pl.DataFrame(verdict_rows).write_parquet(parquet)
    cap = len(rows) - 1                       # one row under the pool file: both files are over it
    assert len(verdict_rows) > cap
    monkeypatch.setenv("JUDGEAUDIT_MAX_ROWS", str(cap))
    monkeypatch.setenv("JUDGEAUDIT_MAX_BYTES", "1000")   # and far under their bytes

    # the upload path (the Pool page calls import_pool with its default cap) refuses them
    with pytest.raises(UserError, match=f"over the limit|more than"):
        import_pool(None, pool, "s")
    with pytest.raises(UserError, match="over the limit|more than"):
        import_verdicts(None, verdicts, "s")

    # the command line takes them whole
    shape = json.loads(run("import-pool", pool, "--pool", "s", "--json").stdout)
    assert shape["n_candidates"] == len(rows) and shape["n_prompts"] == 12
    done = json.loads(run("import-verdicts", verdicts, "--pool", "s", "--json").stdout)
    assert done["rows_in_file"] == len(verdict_rows) and done["imported"] == len(verdict_rows)
    again = json.loads(run("import-verdicts", parquet, "--pool", "s", "--json").stdout)   # Parquet too
    assert again["rows_in_file"] == len(verdict_rows) and again["skipped_existing"] == len(verdict_rows)

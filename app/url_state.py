"""What the address bar keeps, so a reload, a bookmark or a shared link opens the same view: the
sidebar's pool on every page, and the form choices on the page that owns them.

Streamlit binds a keyed widget to the query parameter of the same name (`bind="query-params"`): a
choice is written to the URL when it changes, read back when a new session opens the address, and
left out while it equals the widget's default, so `?pool=mine&formats=binary&formats=likert5`
is the whole state of the Score page. The pool alone is written by the sidebar itself on every
run (app/main.py), never left out: a link must name its pool even when it is the default one. The widget keys below are therefore the parameter names;
they live here, once, so that no two pages bind the same name. Pure (no Streamlit): the rule for a
pool the database does not hold is tested without a browser (tests/app/test_url_state.py)."""

from __future__ import annotations

POOL = "pool"          # the sidebar (app/main.py), on every page
FORMATS = "formats"    # Score: the formats to score
SWAP = "swap"          # Score: the swap sample (N or all)
DECODING = "decoding"  # Score: greedy or constrained
SCHEDULE = "schedule"  # Score: the tournament schedule
CONCURRENCY = "concurrency"   # Score: calls in flight
POLICY = "policy"      # Curate & Train: the selection policy
RATE = "rate"          # Curate & Train: the share of prompts kept
SEEDS = "seeds"        # Curate & Train: the curation and training seeds
JUDGE = "judge"        # Curate & Train: the judge of the curated cell
FORMAT = "format"      # Curate & Train: its format
PRESET = "preset"      # Curate & Train: the training preset
STEPS = "steps"        # Curate & Train: Max steps (0: epochs)
ANNOTATOR = "annotator"   # Label: who is labelling
QUEUE = "queue"        # Label: the queue being labelled
QUEUE_KIND = "queue_kind"          # Label: a new queue's kind (pair | accept)
QUEUE_STRATEGY = "queue_strategy"  # Label: a new queue's strategy (random | active)
QUEUE_ITEMS = "queue_items"        # Label: a new queue's number of items
QUEUE_CELL = "queue_cell"          # Label: the judged items a new queue draws from
OVERVIEW_JUDGE = "overview_judge"   # Overview: the judge whose headline shows
FORMATS_JUDGE = "formats_judge"     # Formats: the judge whose histograms show
RANKINGS_CELL = "rankings_cell"     # Rankings: the judge / format / decoding ranked
SAMPLES = "samples"    # Score: samples per call
TEMPERATURE = "temperature"   # Score: the temperature sent with every call
DRIFT_JUDGE = "drift_judge"       # Drift: the newer version
DRIFT_AGAINST = "drift_against"   # Drift: the version it is compared with

PAGE_PARAMS = {"main.py": (POOL,), "score.py": (FORMATS, DECODING, SCHEDULE, CONCURRENCY, SWAP),
               "curate.py": (POLICY, JUDGE, FORMAT, RATE, SEEDS, PRESET, STEPS)}
PAGE_PARAMS.update({"score.py": PAGE_PARAMS["score.py"] + (SAMPLES, TEMPERATURE), "label.py": (ANNOTATOR, QUEUE),
                    "overview.py": (OVERVIEW_JUDGE,), "formats.py": (FORMATS_JUDGE,), "rankings.py": (RANKINGS_CELL,)})


def pool_notice(asked: str | None, names: list[str], default: str | None) -> str | None:
    """The notice for a URL that names a pool this database does not hold (the sidebar then opens
    on `default`); None when the URL names none or one that exists."""
    if asked is None or asked in names:
        return None
    if not names:
        return f"Pool '{asked}' from the address is not in this database, and no pool is yet."
    return f"Pool '{asked}' from the address is not in this database: showing '{default}' instead."


def opening_pool(asked: str | None, names: list[str], default: str | None) -> str | None:
    """The pool a new session opens on: the URL's, where the database holds it, else `default`."""
    return asked if asked in names else default


def default_pool(names: list[str], preferred: str) -> str | None:
    """The pool a session opens on when its URL names none: `preferred` (the bundled five-format
    demo) where the database holds it, else the first pool, else None."""
    return preferred if preferred in names else (names[0] if names else None)

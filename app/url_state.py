"""What the address bar keeps, so a reload, a bookmark or a shared link opens the same view: the
sidebar's pool on every page, and every form field on the page that owns it (Score, with every judge
kind and the jury; Curate & Train; Label, the queue drawn included; Probes; Evaluate; Align), and the
reading pages' choices (the Judges page's ±H and ε among them).

Streamlit binds a keyed widget to the query parameter of the same name (`bind="query-params"`): a
choice is written to the URL when it changes, read back when a new session opens the address, and
left out while it equals the widget's default, so `?pool=mine&formats=binary&formats=likert5`
is the whole state of the Score page. The pool alone is written by the sidebar itself on every
run (app/main.py), never left out: a link must name its pool even when it is the default one. The widget keys below are therefore the parameter names;
they live here, once, so that no two pages bind the same name. Pure (no Streamlit): the rule for a
pool the database does not hold is tested without a browser (tests/app/test_url_state.py)."""

from __future__ import annotations

POOL = "pool"          # the sidebar (app/main.py), on every page
# Score: the judge of every kind, then the run's settings, then the jury form
PROVIDER = "provider"  # Score: the judge's kind (endpoint, custom, simulated, bundled)
ENDPOINT = "endpoint"  # Score: a configured endpoint and model
BASE_URL = "base_url"  # Score: a typed endpoint's base URL
MODEL = "model"        # Score: a typed endpoint's model
NOISE = "noise"        # Score: the simulated judge's noise
SLOT_BIAS = "slot_bias"    # Score: the simulated judge's slot bias
LATENCY = "latency"    # Score: the simulated judge's latency (ms per call)
SIM_NAME = "sim_name"  # Score: the simulated judge's name
FORMATS = "formats"    # Score: the formats to score
SWAP = "swap"          # Score: the swap sample (N or all)
DECODING = "decoding"  # Score: greedy or constrained
SCHEDULE = "schedule"  # Score: the tournament schedule
CONCURRENCY = "concurrency"   # Score: calls in flight
SAMPLES = "samples"    # Score: samples per call
TEMPERATURE = "temperature"   # Score: the temperature sent with every call
JURY_MEMBERS = "jury_members"  # Score: a jury's members
JURY_NAME = "jury_name"        # Score: its name
JURY_VOTE = "jury_vote"        # Score: its vote
# Curate & Train: the curation, the training, the preference pairs and the grid
POLICY = "policy"      # Curate & Train: the selection policy
RATE = "rate"          # Curate & Train: the share of prompts kept
SEEDS = "seeds"        # Curate & Train: the curation and training seeds
JUDGE = "judge"        # Curate & Train: the judge of the curated cell
FORMAT = "format"      # Curate & Train: its format
CURATE_DECODING = "curate_decoding"   # Curate & Train: its decoding, where the cell has two
PRESET = "preset"      # Curate & Train: the training preset
STEPS = "steps"        # Curate & Train: Max steps (0: epochs)
BASE = "base"          # Curate & Train: the base model
HYPER = "hp_"          # Curate & Train: each hyper-parameter as hp_NAME (app/views/curate/training.py HYPER)
METHOD = "method"      # Curate & Train: SFT or DPO
MIN_MARGIN = "min_margin"      # Curate & Train: the preference pairs' minimum margin
BOTH_ORDERS = "both_orders"    # Curate & Train: pairs judged in both orders only
GRID_FORMATS = "grid_formats"  # Curate & Train: the grid's formats
GRID_RATES = "grid_rates"      # Curate & Train: the grid's rates
DISTIL_CELL = "distil_cell"            # Curate & Train: the teacher cell a student is distilled from
DISTIL_FEATURES = "distil_features"    # Curate & Train: the student's features (hashing | model)
DISTIL_SHARE = "distil_share"          # Curate & Train: the share of prompts held out
DISTIL_RUN = "distil_run"              # Curate & Train: the finished distil run whose student shows
DISTIL_SHARDS = "distil_shards"        # Curate & Train: the glob of Parquet shards a student is applied to
DISTIL_OUT = "distil_out"              # Curate & Train: the folder the applied verdicts go to (empty: the student's)
# Label: who labels, the queue, and a new queue's fields
ANNOTATOR = "annotator"   # Label: who is labelling
QUEUE = "queue"        # Label: the queue being labelled
QUEUE_KIND = "queue_kind"          # Label: a new queue's kind (pair | accept)
QUEUE_STRATEGY = "queue_strategy"  # Label: a new queue's strategy (random | active)
QUEUE_ITEMS = "queue_items"        # Label: a new queue's number of items
QUEUE_CELL = "queue_cell"          # Label: the judged items a new queue draws from
LABEL_H = "label_h"    # Label: the ±H the "more labels to reach ±H" line plans for
# Probes & mitigations, and Evaluate: the judge picker binds PREFIX_provider, PREFIX_endpoint,
# PREFIX_base_url, PREFIX_model and PREFIX_sim (app/judge_picker.py)
PROBE = "probe"        # Probes: the judge picker's prefix
PROBE_POOL = "probe_pool"          # Probes: the probe pool shown
PROBE_JUDGES = "probe_judges"      # Probes: the judges shown
PROBE_STRATEGY = "probe_strategy"  # Probes: a run's mitigation strategy
PROBE_SAMPLE = "probe_sample"      # Probes: a run's pairs per probe type
EVAL = "eval"          # Evaluate: the judge picker's prefix
EVAL_RUNS = "eval_runs"            # Evaluate: the training runs to evaluate
EVAL_STUDY = "eval_study"          # Evaluate: the study it stores
EVAL_MAX_NEW = "eval_max_new"      # Evaluate: max new tokens
EVAL_BATCH = "eval_batch"          # Evaluate: batch size
EVAL_MAX_PROMPTS = "eval_max_prompts"   # Evaluate: max prompts (0 = all)
STUDY = "study"        # Evaluate: the study read
BOOT = "boot"          # Evaluate: its bootstrap resamples
BOOT_SEED = "boot_seed"   # Evaluate: its bootstrap seed
CONTRAST = "contrast"  # Evaluate: the contrast read prompt by prompt
ALIGN_CELL = "align_cell"      # Align: the cell aligned (judge / format / decoding)
ALIGN_K = "align_k"            # Align: demonstrations
ALIGN_BUDGET = "align_budget"  # Align: the budget in judge calls
ALIGN_SHARE = "align_share"    # Align: the held-out share
# the reading pages' choices
OVERVIEW_JUDGE = "overview_judge"   # Overview: the judge whose headline shows
FORMATS_JUDGE = "formats_judge"     # Formats: the judge whose histograms show
RANKINGS_CELL = "rankings_cell"     # Rankings: the judge / format / decoding ranked
DRIFT_JUDGE = "drift_judge"       # Drift: the newer version
DRIFT_AGAINST = "drift_against"   # Drift: the version it is compared with
DECISION_H = "decision_h"         # Judges: the ±H the decision prices
DECISION_EPSILON = "decision_epsilon"   # Judges: the alternative annotator test's ε
REPORT_H = "report_h"             # Report: the ±H the decision prices
REPORT_EPSILON = "report_epsilon"   # Report: the alternative annotator test's ε

PICKED = ("provider", "endpoint", "base_url", "model", "sim")   # the judge picker's fields, after its prefix


def picker_keys(prefix: str) -> dict[str, str]:
    """The judge picker's parameter names for a page: {"provider": "probe_provider", ...}."""
    return {field: f"{prefix}_{field}" for field in PICKED}


HYPER_NAMES = ("epochs", "learning_rate", "batch_size", "micro_batch_size", "lora_r", "lora_alpha", "lora_dropout",
               "max_length")
PAGE_PARAMS = {
    "main.py": (POOL,),
    "score.py": (PROVIDER, ENDPOINT, BASE_URL, MODEL, NOISE, SLOT_BIAS, LATENCY, SIM_NAME, FORMATS, DECODING, SCHEDULE,
                 CONCURRENCY, SWAP, SAMPLES, TEMPERATURE, JURY_MEMBERS, JURY_NAME, JURY_VOTE),
    "curate.py": (POLICY, JUDGE, FORMAT, CURATE_DECODING, RATE, SEEDS, BASE, PRESET, STEPS,
                  *(HYPER + h for h in HYPER_NAMES), METHOD, MIN_MARGIN, BOTH_ORDERS, GRID_FORMATS, GRID_RATES,
                  DISTIL_CELL, DISTIL_FEATURES, DISTIL_SHARE, DISTIL_RUN, DISTIL_SHARDS, DISTIL_OUT),
    "label.py": (ANNOTATOR, QUEUE, QUEUE_KIND, QUEUE_STRATEGY, QUEUE_ITEMS, QUEUE_CELL, LABEL_H),
    "probes.py": (PROBE_POOL, PROBE_JUDGES, *picker_keys(PROBE).values(), PROBE_STRATEGY, PROBE_SAMPLE),
    "evaluate.py": (*picker_keys(EVAL).values(), EVAL_RUNS, EVAL_STUDY, EVAL_MAX_NEW, EVAL_BATCH, EVAL_MAX_PROMPTS,
                    STUDY, BOOT, BOOT_SEED, CONTRAST),
    "align.py": (ALIGN_CELL, ALIGN_K, ALIGN_BUDGET, ALIGN_SHARE),
    "overview.py": (OVERVIEW_JUDGE,), "formats.py": (FORMATS_JUDGE,), "rankings.py": (RANKINGS_CELL,),
    "drift.py": (DRIFT_JUDGE, DRIFT_AGAINST), "judges.py": (DECISION_H, DECISION_EPSILON),
    "report.py": (REPORT_H, REPORT_EPSILON),
}


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

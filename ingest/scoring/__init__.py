"""Scoring: plan a pool's judge calls, make them concurrently with retries, and store every answer
(the runner); check a judge with one call first (the pre-flight); import verdicts made elsewhere
through the same checks. The judge providers live in `judges/`, the scoring formats in `formats/`,
the built-in bias probes in `probes/`."""

from ._anchor import reference_anchors, seeded_anchors
from ._attached import attach_verdicts
from ._batch import custom_id, export_batch
from ._batch_import import import_batch
from ._calls import Caller, messages
from ._imported import import_verdicts
from ._journal import ROW_SCHEMA, replay_journal
from ._progress import end_open_line
from ._estimate import Estimate, estimate_time, from_timings, machine_load, plan_chars
from ._preflight import check_call, count_calls
from ._request import DECODINGS, ScoreRequest, check_samples, decoding_settings, ensure_spec_judge, identity_decoding
from ._runner import score
from ._schedule import SCHEDULES, plan_calls

__all__ = ["Caller", "DECODINGS", "Estimate", "ROW_SCHEMA", "SCHEDULES", "ScoreRequest", "attach_verdicts",
           "check_call", "check_samples", "count_calls", "custom_id", "decoding_settings", "end_open_line",
           "ensure_spec_judge", "estimate_time", "export_batch", "from_timings", "identity_decoding", "import_batch",
           "import_verdicts", "machine_load", "messages", "plan_calls", "plan_chars", "reference_anchors",
           "replay_journal", "score", "seeded_anchors"]

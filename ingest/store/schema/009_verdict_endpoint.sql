-- Version 9: each verdict records the endpoint that answered it (docs/scale.md#several-endpoints). A
-- judge may spread its calls over several OpenAI-compatible servers, so the judge's one stored endpoint
-- no longer says which server gave a verdict: a slow or faulty server must be traceable to its answers.
-- `endpoint` is the public URL (ingest.scoring.judges.public_endpoint: no credentials, query string or
-- fragment), null for the local model, simulated and imported judges, and for calls stored before this
-- version (an export then falls back to the judge's stored endpoint, which answered every call of a
-- single-endpoint run). The column is nullable and added at the end, so no stored row is rewritten.
ALTER TABLE verdicts ADD COLUMN endpoint VARCHAR;

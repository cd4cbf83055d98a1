-- One row per format and decoding of a run of the provider on the host, the latest runs first: what it
-- measured (calls, their characters, call seconds, the judge's load seconds, the machine's load per
-- core at its start: a column from schema/022 on, absent from a database not yet upgraded).
SELECT * EXCLUDE (host, provider, model, recorded_at)
FROM judge_timings
WHERE provider = $provider AND host = $host
ORDER BY run_id DESC, format, decoding

-- One row per format and decoding of a run of the provider on the host, the latest runs first: what it
-- measured (calls, their characters, call seconds, the judge's load seconds).
SELECT run_id, format, decoding, calls, chars, call_s, load_s
FROM judge_timings
WHERE provider = $provider AND host = $host
ORDER BY run_id DESC, format, decoding

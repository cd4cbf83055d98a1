-- Version 21: what a scoring run measured of its judge's speed on this machine. The Score page used to
-- estimate the bundled model's time from rates measured once on another machine (and no load time),
-- and was ten times off; a run of an in-process judge now records how long the judge took to be ready
-- (from the run's process start: Python, torch and the model) and, per format and decoding, how many
-- calls it made, how many characters they gave the judge (its prompt template, the prompt, the
-- response or responses: a judge's time grows with its input, and pools differ) and in how many seconds. Estimates rest on the latest of these rows of the machine they
-- are made on, and say how many runs that is (docs/scoring.md#time-estimates). Raw measurements: a
-- rate is derived when read. A new table, so no stored row changes.
CREATE TABLE judge_timings (
    run_id      INTEGER NOT NULL,     -- the background run that measured it (runs.run_id)
    host        VARCHAR NOT NULL,     -- the machine it ran on
    provider    VARCHAR NOT NULL,     -- 'local': the bundled model
    model       VARCHAR,
    format      VARCHAR NOT NULL,
    decoding    VARCHAR NOT NULL,     -- greedy | sampled | constrained
    calls       INTEGER NOT NULL,     -- calls of this format the run made
    chars       BIGINT NOT NULL,      -- characters of their texts (template, prompt, response(s))
    call_s      DOUBLE NOT NULL,      -- seconds the judge spent on them
    load_s      DOUBLE NOT NULL,      -- seconds from the run's process start to its judge ready (each of a run's rows)
    recorded_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (run_id, format, decoding)
);

-- Version 15: juries (docs/command-line.md#judgeaudit-jury). A jury is a named
-- panel of judges whose verdict on a call key (format, decoding, prompt, slot A, slot B) is the vote
-- over its members' parsed sample-0 values: mean, median or majority. The jury is itself a judge
-- (provider 'jury', its identity the vote and the members), and its verdicts are rows of `verdicts`
-- the store combines from the members' votes (ingest/store/_juries.py), in cell runs of source
-- 'jury', so every cell-wise command reads them as it reads any judge's. They are not calls: raw,
-- endpoint, tokens and latency stay null (the leaderboard takes those from the members).
--
-- `juries`: one row per (pool, jury); `mark` fingerprints the members' verdicts the jury's rows were
-- combined from (their latest cell run, calls and parsed calls), so a refresh knows when they moved.
-- `jury_members`: the members in the order given.
CREATE TABLE juries (
    pool_id      INTEGER NOT NULL,
    judge_id     INTEGER NOT NULL,     -- the jury's own judge row (provider 'jury')
    vote         VARCHAR NOT NULL,     -- 'mean' | 'median' | 'majority'
    mark         VARCHAR,              -- the members' fingerprint at the last refresh
    created_at   TIMESTAMP NOT NULL DEFAULT current_timestamp,
    refreshed_at TIMESTAMP
);

CREATE TABLE jury_members (
    pool_id   INTEGER NOT NULL,
    judge_id  INTEGER NOT NULL,        -- the jury
    member_id INTEGER NOT NULL,        -- a member judge
    position  INTEGER NOT NULL         -- its place in the order given, from 0
);

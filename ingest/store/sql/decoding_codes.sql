-- The decoding as a small code, for queries that group the pool's calls by integer keys (measured at 1M
-- candidates, about half the time of grouping by its text): decoding_code is 0, 1 or 2 for the three known
-- modes (NULL for another), decoding_other the text of another (NULL for the three), decoding_name the
-- text again from both. Made beside the verdict views (connection.verdict_source), for the audit's reads.
CREATE OR REPLACE TEMP MACRO decoding_code(d) AS
    CASE d WHEN 'greedy' THEN 0 WHEN 'constrained' THEN 1 WHEN 'sampled' THEN 2 END;
CREATE OR REPLACE TEMP MACRO decoding_other(d) AS
    CASE WHEN d NOT IN ('greedy', 'constrained', 'sampled') THEN d END;
CREATE OR REPLACE TEMP MACRO decoding_name(code, other) AS
    coalesce(other, CASE code WHEN 0 THEN 'greedy' WHEN 1 THEN 'constrained' WHEN 2 THEN 'sampled' END);

-- The audit's one verdict source: one row per judge call, the stored verdicts and the rows of the attached files
-- (attached_raw.sql's attached_rows) as the verdicts table holds them: ids from the pool, the judging's judge,
-- format and cell run (attached_judgings.sql's attached_file_judgings: the files joined on their path, so a filter on a
-- judging reads only the files that can hold it), each answer's parse (the cell run's attached.parses, made once by
-- its format's parser when attached), and a tournament call marked swapped when the later-listed candidate is in
-- slot A, as an import marks it. The prompt is matched on one key of pool and name, which the row has only once
-- joined to its file's judging: DuckDB then joins the rows to their judgings first, never the pool's prompts to
-- every file's judging (measured: that build side, prompts x files, made the join about 2x slower at 2M rows); slot B is
-- looked up only in pools with comparative judgings attached (an empty lookup costs nothing).
CREATE OR REPLACE TEMP VIEW verdict_source_all AS
SELECT * FROM verdicts
UNION ALL BY NAME
SELECT c.cell_run_id, c.pool_id, c.judge_id, c.format_id, coalesce(r.decoding, 'greedy') AS decoding,
       p.prompt_idx, ca.cand_idx AS a_idx, cb.cand_idx AS b_idx,
       coalesce(ca.position > cb.position, false) AS swapped,
       coalesce(r.sample, 0)::INTEGER AS sample, r.raw, x.answer, x.value,
       CASE WHEN r.raw IS NULL AND r.error IS NOT NULL THEN 'failed' WHEN r.raw IS NULL THEN 'empty'
            ELSE x.status END AS status,
       r.error, 1 AS attempts, r.latency_ms::DOUBLE AS latency_ms, r.tokens_in::INTEGER AS tokens_in,
       r.tokens_out::INTEGER AS tokens_out
FROM attached_rows r
JOIN attached_file_judgings c ON c.path = r.path AND c.judge = coalesce(c.hive_judge, r.file_judge)
                          AND c.format = coalesce(c.hive_format, r.file_format)
JOIN prompts p ON concat(p.pool_id, ':', p.prompt_id) = concat(c.pool_id, ':', r.prompt_id)
JOIN candidates ca ON ca.pool_id = p.pool_id AND ca.prompt_idx = p.prompt_idx AND ca.candidate_id = r.a_id
LEFT JOIN (SELECT * FROM candidates WHERE pool_id IN (SELECT pool_id FROM attached_judgings WHERE kind = 'comparative')) cb
       ON c.kind = 'comparative' AND cb.pool_id = p.pool_id AND cb.prompt_idx = p.prompt_idx AND cb.candidate_id = r.b_id
LEFT JOIN (SELECT cell_run_id, unnest(attached.parses, recursive := true)
           FROM cell_runs WHERE attached IS NOT NULL) x ON x.cell_run_id = c.cell_run_id AND x.raw = r.raw

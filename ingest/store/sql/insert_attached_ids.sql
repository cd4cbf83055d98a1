-- Maps the rows of one judging (its cell run, $cell_run_id) of the pool's attached files (attached_raw.sql's
-- attached_rows) to the pool's ids once, at attach (schema/026): one row of attached_ids per file row whose prompt
-- and candidates the pool holds, with its judging's cell run (slot B looked up for comparative judgings alone, and
-- required there). Written one judging at a time (the caller runs this once per cell run), so each judging's rows
-- lie in row groups of their own and a read of one cell skips the others' (written at once, every row group held
-- every judging's rows, and each cell's read scanned them all); within a judging, in the files' order, not sorted
-- (a sort would hold every attached row at once): a filter on the prompts skips the mapping's row groups where
-- the files list their calls by prompt. The join on the file's place reads only the files that can hold the
-- judging. A row naming what the pool lacks gets no mapping row:
-- the caller compares the count written with the files' rows and names the first such row
-- (attached_unknown_call.sql). The prompts and candidates are the pool's alone, so their joins never build
-- prompts x files. With the ids, what the audit scores the row by (schema/030): its decoding and sample, as
-- verdict_source_attached.sql reads them from the file, and its answer's parsed value, looked up in its cell run's
-- parses (recorded first) by (cell run, answer), as verdict_source_attached.sql looks it up; null where the row
-- has no answer or its answer did not parse.
INSERT INTO attached_ids
SELECT r.pool_id, c.cell_run_id, r.file_no, r.file_row, p.prompt_idx, ca.cand_idx AS a_idx, cb.cand_idx AS b_idx,
       coalesce(ca.position > cb.position, false) AS swapped, coalesce(r.decoding, 'greedy') AS decoding,
       coalesce(r.sample, 0)::INTEGER AS sample, x.value
FROM attached_rows r
JOIN attached_file_judgings c ON c.file_index = r.file_index AND c.judge = coalesce(c.hive_judge, r.file_judge)
                          AND c.format = coalesce(c.hive_format, r.file_format)
JOIN (SELECT prompt_id, prompt_idx FROM prompts WHERE pool_id = $pool_id) p ON p.prompt_id = r.prompt_id
JOIN (SELECT prompt_idx, candidate_id, cand_idx, position FROM candidates WHERE pool_id = $pool_id) ca
  ON ca.prompt_idx = p.prompt_idx AND ca.candidate_id = r.a_id
LEFT JOIN (SELECT prompt_idx, candidate_id, cand_idx, position FROM candidates WHERE pool_id = $pool_id) cb
       ON c.kind = 'comparative' AND cb.prompt_idx = p.prompt_idx AND cb.candidate_id = r.b_id
LEFT JOIN (SELECT cell_run_id, parse.raw, parse.value
           FROM (SELECT cell_run_id, unnest(attached.parses) AS parse FROM cell_runs
                 WHERE attached IS NOT NULL AND pool_id = $pool_id)) x
       ON x.cell_run_id = c.cell_run_id AND x.raw = r.raw
WHERE r.pool_id = $pool_id AND c.pool_id = $pool_id AND c.cell_run_id = $cell_run_id
  AND (c.kind <> 'comparative' OR cb.cand_idx IS NOT NULL)

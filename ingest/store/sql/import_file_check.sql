-- One row over the file of import_file_rows.sql: its rows, the rows that are no verdict of the pool as
-- import-verdicts reads them (a missing or blank judge, format or prompt; an unknown format, prompt or
-- candidate; a missing slot; a negative sample or measure; a decoding not known), the rows with a label
-- distribution, and the hashes of a call held by more than one row (one hash per call: a call repeats, or
-- two hashes meet; a GROUP BY, which runs on every thread where a count of distinct values does not). The
-- importer reads a file with any of these the slow way, which names the row.
SELECT count(*) AS n_rows,
       count(*) FILTER (WHERE judge IS NULL OR trim(judge, E' \t\n\r\x0B\x0C') = ''
                           OR format IS NULL OR trim(format, E' \t\n\r\x0B\x0C') = ''
                           OR prompt_id IS NULL OR trim(prompt_id, E' \t\n\r\x0B\x0C') = ''
                           OR kind IS NULL OR prompt_idx IS NULL OR a_idx IS NULL
                           OR (kind <> 'pointwise' AND b_id IS NULL)
                           OR (b_id IS NOT NULL AND b_idx IS NULL)
                           OR sample < 0 OR NOT coalesce(decoding IN ('greedy', 'sampled', 'constrained'), true)
                           OR tokens_in < 0 OR tokens_out < 0 OR latency_ms < 0 OR isinf(latency_ms))
         AS n_bad,
       count(*) FILTER (WHERE has_probs) AS n_probs,
       (SELECT count(*) FROM (SELECT 1 FROM import_rows r LEFT JOIN import_formats f ON f.format = r.format
                              GROUP BY hash(r.judge, r.format, coalesce(r.decoding, 'greedy'), r.prompt_id,
                                            CASE WHEN f.kind = 'pointwise' THEN r.candidate_id ELSE r.a_id END,
                                            r.b_id, coalesce(r.sample, 0))
                              HAVING count(*) > 1)) AS n_repeated
FROM import_placed

-- Appends the verdicts of the file of import_file_rows.sql whose call the pool does not hold yet, each
-- under its judging's cell run (import_judgings: judge, format, judge_id, format_id, held, cell_run_id; only the
-- judgings that held verdicts before, `held`, are looked up in `verdicts`), parsed (import_answers: format, raw, answer, value,
-- status), its endpoint without credentials (import_endpoints: endpoint, public) and oriented: an anchored
-- call is swapped when its prompt's anchor (import_reference_anchors: prompt_idx, anchor_idx, from references) is in
-- slot A against another candidate (a prompt without one is oriented after, from the file's votes), a
-- tournament call when the later-listed candidate is in slot A.
-- A row that is no verdict of the pool as import-verdicts reads it stops the statement by a NOT NULL
-- constraint: an unknown (or blank) prompt or candidate has no index; a missing slot, a negative sample or
-- measure, a decoding not known or a answer distribution (whose expected value is Python's) gets no status.
-- The importer then rolls back and reads the file the batch way, which names the row; it has checked the
-- file's few judges and formats itself. One pass over the file checks and stores.
INSERT INTO verdicts (cell_run_id, pool_id, judge_id, format_id, prompt_idx, a_idx, b_idx, swapped, sample, raw,
                      answer, value, status, error, attempts, latency_ms, tokens_in, tokens_out, answer_probs,
                      expected, decoding, endpoint)
SELECT c.cell_run_id, getvariable('import_pool'), c.judge_id, c.format_id, r.prompt_idx, r.a_idx, r.b_idx,
       CASE r.pairing
           WHEN 'anchored' THEN coalesce(r.a_idx = an.anchor_idx AND r.b_idx <> r.a_idx, false)
           WHEN 'tournament' THEN coalesce(r.a_position > r.b_position, false)
           ELSE false END,
       coalesce(r.sample, 0), r.raw, x.answer, x.value,
       CASE WHEN (r.kind <> 'pointwise' AND r.b_id IS NULL) OR (r.b_id IS NOT NULL AND r.b_idx IS NULL)
              OR r.sample < 0 OR NOT coalesce(r.decoding IN ('greedy', 'sampled', 'constrained'), true)
              OR r.tokens_in < 0 OR r.tokens_out < 0 OR r.latency_ms < 0 OR isinf(r.latency_ms) OR r.has_probs
            THEN NULL
            WHEN r.raw IS NULL AND r.error IS NOT NULL THEN 'failed' WHEN r.raw IS NULL THEN 'empty'
            ELSE x.status END,
       r.error, 1, r.latency_ms, r.tokens_in, r.tokens_out, NULL, NULL, coalesce(r.decoding, 'greedy'), e.public
FROM import_placed r
JOIN import_judgings c ON c.judge = r.judge AND c.format = r.format
LEFT JOIN import_answers x ON x.format = r.format AND x.raw = r.raw
LEFT JOIN import_endpoints e ON e.endpoint = r.endpoint
LEFT JOIN import_reference_anchors an ON an.prompt_idx = r.prompt_idx AND r.pairing = 'anchored'
WHERE NOT c.held OR NOT EXISTS (
    SELECT 1 FROM verdicts v
    WHERE v.pool_id = getvariable('import_pool') AND v.judge_id = c.judge_id AND v.format_id = c.format_id
      AND v.decoding = coalesce(r.decoding, 'greedy') AND v.prompt_idx = r.prompt_idx AND v.a_idx = r.a_idx
      AND v.b_idx IS NOT DISTINCT FROM r.b_idx AND v.sample = coalesce(r.sample, 0))

-- Version 13: `sampled` decoding has its own name (docs/glossary.md#how-a-judge-is-asked: greedy
-- is the free answer at temperature 0, sampled the free answer at a temperature above 0,
-- constrained the answer restricted to the format's labels). Until now a run with --temperature
-- above 0 stored its verdicts as 'greedy', and every output called a sampled judge greedy.
--
-- The calls a cell run made with decoding settings of a temperature above 0 and mode 'greedy' are
-- rewritten to 'sampled': their verdicts, their exported batch calls, and the mode in the cell
-- run's (and batch export's) recorded settings. A curated subset of such a cell follows it when its
-- judge, format and pool keep no greedy verdict. Constrained calls stay constrained at any
-- temperature. Imported verdicts (no settings recorded) keep the decoding their file gave.
-- The judge identity is untouched: it binds the temperature, never the mode.
UPDATE verdicts SET decoding = 'sampled'
WHERE decoding = 'greedy' AND cell_run_id IN (
    SELECT cell_run_id FROM cell_runs
    WHERE TRY_CAST(json_extract_string(decoding_settings, '$.temperature') AS DOUBLE) > 0
      AND coalesce(json_extract_string(decoding_settings, '$.mode'), 'greedy') = 'greedy');
UPDATE batch_calls SET decoding = 'sampled'
WHERE decoding = 'greedy' AND cell_run_id IN (
    SELECT cell_run_id FROM cell_runs
    WHERE TRY_CAST(json_extract_string(decoding_settings, '$.temperature') AS DOUBLE) > 0
      AND coalesce(json_extract_string(decoding_settings, '$.mode'), 'greedy') = 'greedy');
UPDATE cell_runs SET decoding_settings = json_merge_patch(decoding_settings, '{"mode": "sampled"}')
WHERE TRY_CAST(json_extract_string(decoding_settings, '$.temperature') AS DOUBLE) > 0
  AND coalesce(json_extract_string(decoding_settings, '$.mode'), 'greedy') = 'greedy';
UPDATE batch_exports SET decoding_settings = json_merge_patch(decoding_settings, '{"mode": "sampled"}')
WHERE TRY_CAST(json_extract_string(decoding_settings, '$.temperature') AS DOUBLE) > 0
  AND coalesce(json_extract_string(decoding_settings, '$.mode'), 'greedy') = 'greedy';
UPDATE subsets SET decoding = 'sampled'
WHERE decoding = 'greedy'
  AND EXISTS (SELECT 1 FROM verdicts v WHERE v.pool_id = subsets.pool_id AND v.judge_id = subsets.judge_id
                AND v.format_id = subsets.format_id AND v.decoding = 'sampled')
  AND NOT EXISTS (SELECT 1 FROM verdicts v WHERE v.pool_id = subsets.pool_id AND v.judge_id = subsets.judge_id
                    AND v.format_id = subsets.format_id AND v.decoding = 'greedy');
-- The bundled demo's `smollm2-demo-t0.7` (imported from mtbench-formats-t07-verdicts.jsonl, real
-- samples at temperature 0.7) came in as greedy in a demo database seeded before its file said
-- sampled; it is the one imported judge whose temperature is known, so its calls are renamed too.
UPDATE verdicts SET decoding = 'sampled'
WHERE decoding = 'greedy'
  AND judge_id IN (SELECT judge_id FROM judges WHERE name = 'smollm2-demo-t0.7' AND provider = 'imported')
  AND pool_id IN (SELECT pool_id FROM pools WHERE name = 'mtbench-formats');

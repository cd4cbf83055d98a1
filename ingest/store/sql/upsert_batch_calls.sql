-- Maps each exported call's custom_id to its call and export, from the frame registered as batch_rows; a
-- call exported before keeps its id and now points to this export and its cell run.
INSERT INTO batch_calls (custom_id, cell_run_id, pool_id, judge_id, format_id, decoding, prompt_idx, a_idx, b_idx,
                         swapped, sample, export_id)
SELECT custom_id, cell_run_id, pool_id, judge_id, format_id, decoding, prompt_idx, a_idx, b_idx, swapped, sample,
       export_id
FROM batch_rows
ON CONFLICT (custom_id) DO UPDATE SET export_id = excluded.export_id, cell_run_id = excluded.cell_run_id

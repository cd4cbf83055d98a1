-- Deletes the stored outcomes that the frame registered as eval_df judges again and that had a failed
-- call, so the new attempt replaces them (an outcome of two answered calls is kept).
DELETE FROM evaluations e USING eval_df n
WHERE e.study_id = n.study_id AND e.condition = n.condition AND e.seed = n.seed AND e.prompt_idx = n.prompt_idx
  AND e.judge_id = n.judge_id AND (e.status_ab = 'failed' OR e.status_ba = 'failed')

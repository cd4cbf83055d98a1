-- Stores judged outcomes from the frame registered as eval_df; an outcome already stored for its key is kept.
INSERT INTO evaluations (study_id, condition, seed, prompt_idx, judge_id, raw_ab, value_ab, status_ab, error_ab,
                         raw_ba, value_ba, status_ba, error_ba, outcome, run_id)
SELECT study_id, condition, seed, prompt_idx, judge_id, raw_ab, value_ab, status_ab, error_ab, raw_ba, value_ba,
       status_ba, error_ba, outcome, run_id
FROM eval_df
ON CONFLICT DO NOTHING

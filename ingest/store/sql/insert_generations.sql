-- Stores generated answers from the frame registered as gen_df; an answer already stored for its key
-- (study, condition, seed, prompt) is kept.
INSERT INTO generations (study_id, condition, seed, train_run, base_model, prompt_idx, answer, answer_len, ref_idx,
                         ref_len, markdown, tokens_out, truncated, run_id)
SELECT study_id, condition, seed, train_run, base_model, prompt_idx, answer, answer_len, ref_idx, ref_len,
       markdown, tokens_out, truncated, run_id
FROM gen_df
ON CONFLICT DO NOTHING

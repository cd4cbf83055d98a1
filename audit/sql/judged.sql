-- One row per (condition, seed, prompt) that evaluation judge $judge_id has judged in study $study_id:
-- both orders' raw output, value, parse status and error (an order whose call failed is 'failed').
SELECT condition, seed::BIGINT AS seed, prompt_idx::BIGINT AS prompt_idx,
       raw_ab, value_ab, status_ab, error_ab, raw_ba, value_ba, status_ba, error_ba
FROM evaluations
WHERE study_id = $study_id AND judge_id = $judge_id

-- One row per answer stored so far in an evaluation study ($study_id): its condition, seed, prompt and reference.
SELECT condition, seed::BIGINT AS seed, prompt_idx::BIGINT AS prompt_idx, answer, ref_idx
FROM generations
WHERE study_id = $study_id

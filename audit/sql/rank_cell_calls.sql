-- One row per parsed call of one comparative cell between two different candidates, as integers for
-- numpy (audit._rank_cells groups them into the prompts' kinds): its prompt (prompt_idx), the
-- candidates in slot A and slot B (cand_idx), whether it is swapped (the reverse orientation of its
-- item; unknown counts as swapped, so the single order leaves it out) and slot A's credit in halves
-- (a margin > 0 a win: 2, < 0 a loss: 0, else a tie: 1; compared here, as DuckDB orders a NaN).
-- Read from verdict_values: an attached call is its row of attached_ids, its file not read.
SELECT prompt_idx, a_idx, b_idx, coalesce(swapped, true) AS swapped,
       (CASE WHEN value > 0 THEN 2 WHEN value < 0 THEN 0 ELSE 1 END)::UTINYINT AS credit
FROM verdict_values
WHERE pool_id = $pool_id AND judge_id = $judge_id AND format_id = $format_id AND decoding = $decoding
  AND a_idx <> b_idx AND value IS NOT NULL

-- One row per prompt of the pool that has candidates, in the order of its first candidate: its id
-- and whether the pool marks it held out (any candidate with split 'heldout'): what curation's
-- held-out rule reads, without a row per candidate. Grouped by the integer alone, then joined.
SELECT m.prompt_idx, p.prompt_id, m.marked_heldout
FROM (SELECT prompt_idx, min(cand_idx) AS first_cand,
             coalesce(bool_or(split = 'heldout'), false) AS marked_heldout
      FROM candidates
      WHERE pool_id = $pool_id
      GROUP BY prompt_idx) m
JOIN prompts p ON p.pool_id = $pool_id AND p.prompt_idx = m.prompt_idx
ORDER BY m.first_cand

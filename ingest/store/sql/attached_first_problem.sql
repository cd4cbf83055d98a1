-- The first row of the pool's attached files that is no verdict (its file, row, field and what is wrong); none when every row is one.
SELECT path, row_number,
       CASE WHEN coalesce(trim(judge), '') = '' THEN 'judge'
            WHEN coalesce(trim(format), '') = '' THEN 'format'
            WHEN coalesce(trim(prompt_id), '') = '' THEN 'prompt_id'
            WHEN decoding NOT IN ('greedy', 'constrained') THEN 'decoding'
            WHEN sample < 0 THEN 'sample'
            ELSE 'label_probs' END AS field,
       CASE WHEN coalesce(trim(judge), '') = '' OR coalesce(trim(format), '') = '' OR coalesce(trim(prompt_id), '') = ''
                 THEN 'missing or empty'
            WHEN decoding NOT IN ('greedy', 'constrained') THEN 'one of greedy, constrained, not ''' || decoding || ''''
            WHEN sample < 0 THEN 'must be a non-negative integer, not ' || sample
            ELSE 'attached files carry no label distributions (import this file instead)' END AS problem
FROM attached_raw
WHERE pool_id = $pool_id
  AND (coalesce(trim(judge), '') = '' OR coalesce(trim(format), '') = '' OR coalesce(trim(prompt_id), '') = ''
       OR decoding NOT IN ('greedy', 'constrained') OR sample < 0 OR has_probs)
ORDER BY path, row_number
LIMIT 1

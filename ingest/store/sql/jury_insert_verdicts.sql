-- Writes a jury's verdicts on one (format, decoding) of the pool as cell run $cell_run_id: one row per
-- call key (prompt, slot A, slot B) on which any member has a sample-0 call. n = the jury's members; a
-- member without a call on the key, or whose call did not parse, is missing (never a zero). The key is
-- parsed ('ok') when more than half of the n members parsed it; its value is then the vote over the
-- parsed values: $vote = 'mean', 'median' (the middle value; the mean of the two middle ones for an
-- even count) or 'majority': the value more than half of the members that parsed the key gave (a
-- member that failed has no vote); where no value has that, a comparative key on which as many of them
-- favour slot A as slot B is a tie (value 0: an even split, never decided by the members' order), any
-- other key 'no_majority'.
-- answer: the members' answer of the voted value, null when no member gave it (a mean between labels);
-- answer_probs: each answer's share among the members' parsed calls. Not a call: raw, endpoint, tokens
-- and latency stay null. The members' calls are read through verdict_source: stored or attached.
INSERT INTO verdicts (cell_run_id, pool_id, judge_id, format_id, decoding, prompt_idx, a_idx, b_idx, swapped,
                      sample, raw, answer, value, status, error, attempts, answer_probs)
WITH n AS (
    SELECT count(*) AS n_members FROM jury_members WHERE pool_id = $pool_id AND judge_id = $judge_id
),
calls AS (
    SELECT v.prompt_idx, v.a_idx, v.b_idx, v.swapped, v.answer,
           CASE WHEN v.status = 'ok' THEN round(v.value, 12) END AS value
    FROM verdict_source v
    JOIN jury_members jm ON jm.pool_id = v.pool_id AND jm.member_id = v.judge_id
    WHERE jm.pool_id = $pool_id AND jm.judge_id = $judge_id
      AND v.format_id = $format_id AND v.decoding = $decoding AND v.sample = 0
),
keys AS (
    SELECT prompt_idx, a_idx, b_idx, bool_or(swapped) AS swapped, count(value) AS n_parsed,
           avg(value) AS mean_value, quantile_cont(value, 0.5) AS median_value,
           count(value) FILTER (WHERE value > 0) AS n_for_a, count(value) FILTER (WHERE value < 0) AS n_for_b
    FROM calls
    GROUP BY prompt_idx, a_idx, b_idx
),
tally AS (
    SELECT prompt_idx, a_idx, b_idx, value, min(answer) AS answer, count(*) AS votes
    FROM calls
    WHERE value IS NOT NULL
    GROUP BY prompt_idx, a_idx, b_idx, value
),
shares AS (
    SELECT t.prompt_idx, t.a_idx, t.b_idx,
           to_json(map(list(t.answer ORDER BY t.answer), list(t.votes / k.n_parsed ORDER BY t.answer))) AS answer_probs,
           max(t.value) FILTER (WHERE 2 * t.votes > k.n_parsed) AS majority_value
    FROM tally t
    JOIN keys k ON k.prompt_idx = t.prompt_idx AND k.a_idx = t.a_idx AND k.b_idx IS NOT DISTINCT FROM t.b_idx
    GROUP BY t.prompt_idx, t.a_idx, t.b_idx
),
voted AS (
    SELECT k.*, s.answer_probs, n.n_members,
           CASE WHEN 2 * k.n_parsed <= n.n_members THEN NULL
                WHEN $vote = 'mean' THEN round(k.mean_value, 12)
                WHEN $vote = 'median' THEN round(k.median_value, 12)
                WHEN s.majority_value IS NOT NULL THEN s.majority_value
                WHEN (SELECT kind FROM formats WHERE format_id = $format_id) = 'comparative'
                     AND k.n_for_a = k.n_for_b THEN 0.0
                END AS value
    FROM keys k
    CROSS JOIN n
    LEFT JOIN shares s ON s.prompt_idx = k.prompt_idx AND s.a_idx = k.a_idx AND s.b_idx IS NOT DISTINCT FROM k.b_idx
)
SELECT $cell_run_id, $pool_id, $judge_id, $format_id, $decoding, v.prompt_idx, v.a_idx, v.b_idx, v.swapped,
       0, NULL, t.answer, v.value,
       CASE WHEN v.value IS NOT NULL THEN 'ok' WHEN 2 * v.n_parsed <= v.n_members THEN 'no_quorum'
            ELSE 'no_majority' END,
       CASE WHEN v.value IS NOT NULL THEN NULL
            WHEN 2 * v.n_parsed <= v.n_members
                THEN 'parsed by ' || v.n_parsed || ' of ' || v.n_members || ' members'
            ELSE 'no value given by more than half of the ' || v.n_parsed || ' members that parsed' END,
       1, v.answer_probs
FROM voted v
LEFT JOIN tally t ON t.prompt_idx = v.prompt_idx AND t.a_idx = v.a_idx AND t.b_idx IS NOT DISTINCT FROM v.b_idx
                 AND t.value = v.value
ORDER BY v.prompt_idx, v.a_idx, v.b_idx NULLS FIRST

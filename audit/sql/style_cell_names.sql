-- One row per stored judge and per format: what it is ('judge' or 'format'), its id and its name (the
-- names of the style fit's cells, which it reads as ids: style_rank_calls).
SELECT 'judge' AS what, judge_id::INTEGER AS id, name FROM judges
UNION ALL
SELECT 'format' AS what, format_id::INTEGER AS id, name FROM formats

-- The judgings a reading is scoped to (judge and format ids; none when the reading sees every judging),
-- given as two lists of names read pairwise ($judges[i] with $formats[i]): a derived result's part is
-- computed from these judgings' calls alone.
CREATE OR REPLACE TEMP TABLE scope_judgings AS
SELECT j.judge_id, f.format_id
FROM (SELECT unnest($judges::VARCHAR[]) AS judge, unnest($formats::VARCHAR[]) AS format) s
JOIN judges j ON j.name = s.judge
JOIN formats f ON f.name = s.format

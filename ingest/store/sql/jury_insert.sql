-- Stores a jury of a pool: its judge and its vote (the members follow in jury_insert_member).
INSERT INTO juries (pool_id, judge_id, vote) VALUES ($pool_id, $judge_id, $vote)

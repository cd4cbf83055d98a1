-- Stores one member of a jury of a pool, at its place in the order given.
INSERT INTO jury_members (pool_id, judge_id, member_id, position) VALUES ($pool_id, $judge_id, $member_id, $position)

-- Stores a subset's members, one row per kept candidate with how it was picked, from the frame
-- registered as members_df.
INSERT INTO subset_members (subset_id, cand_idx, prompt_idx, value, pick_tied, cut_tied)
SELECT subset_id, cand_idx, prompt_idx, value, pick_tied, cut_tied FROM members_df

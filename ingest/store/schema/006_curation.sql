-- Version 6: curation subsets record how they were made (docs/training.md#curating):
-- the cell (judge and format by name, decoding, score kind), the stage counts with
-- their tie-breaks, and the exported file with its hash (a training run finds its subset by it).
ALTER TABLE subsets ADD COLUMN judge VARCHAR;
ALTER TABLE subsets ADD COLUMN format VARCHAR;
ALTER TABLE subsets ADD COLUMN decoding VARCHAR;      -- the cell's decoding (greedy | constrained)
ALTER TABLE subsets ADD COLUMN score VARCHAR;         -- the cell's score kind (label | expected)
ALTER TABLE subsets ADD COLUMN n_eligible INTEGER;
ALTER TABLE subsets ADD COLUMN n_selected INTEGER;
ALTER TABLE subsets ADD COLUMN n_pick_tied INTEGER;   -- selected prompts whose response was a tie-break
ALTER TABLE subsets ADD COLUMN n_cut_tied INTEGER;    -- selected prompts kept by the coin at the cut
ALTER TABLE subsets ADD COLUMN n_heldout_prompts INTEGER;
ALTER TABLE subsets ADD COLUMN cut_value DOUBLE;
ALTER TABLE subsets ADD COLUMN sha256 VARCHAR;        -- of the exported JSONL
ALTER TABLE subsets ADD COLUMN export_path VARCHAR;
ALTER TABLE subset_members ADD COLUMN prompt_idx INTEGER;
ALTER TABLE subset_members ADD COLUMN value DOUBLE;   -- the selecting value of the pick
ALTER TABLE subset_members ADD COLUMN pick_tied BOOLEAN;
ALTER TABLE subset_members ADD COLUMN cut_tied BOOLEAN;

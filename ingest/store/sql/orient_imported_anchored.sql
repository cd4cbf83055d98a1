-- Orients the verdicts of the given cell runs ($cell_run_ids) in the given anchored formats ($format_ids) of
-- a pool whose prompt's anchor an import found from its file's votes (the frame registered as import_anchors:
-- prompt_idx, anchor_idx): a call is swapped when the anchor is in slot A against another candidate.
UPDATE verdicts SET swapped = coalesce(verdicts.a_idx = a.anchor_idx AND verdicts.b_idx <> verdicts.a_idx, false)
FROM import_anchors a
WHERE verdicts.pool_id = $pool_id AND list_contains($cell_run_ids, verdicts.cell_run_id)
  AND list_contains($format_ids, verdicts.format_id) AND verdicts.prompt_idx = a.prompt_idx

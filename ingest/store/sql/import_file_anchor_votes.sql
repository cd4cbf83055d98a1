-- Per prompt of the file of import_file_rows.sql without a reference anchor (import_reference_anchors), the candidates
-- its anchored calls show in slot B and how often: forward calls always show the anchor as B, so the most
-- shown is the prompt's anchor.
SELECT r.prompt_idx, r.b_idx, count(*) AS len
FROM import_placed r
WHERE r.pairing = 'anchored' AND r.prompt_idx NOT IN (SELECT prompt_idx FROM import_reference_anchors)
GROUP BY r.prompt_idx, r.b_idx

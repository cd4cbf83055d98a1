-- Version 26: an attach maps its files' names to the pool's ids once, and keeps the mapping. Before, every
-- query through verdict_source joined each attached row's prompt_id and candidate_id (text) to the pool's
-- prompts and candidates: measured on 100M attached verdicts, `audit --json` took 143.9 s against 15.3 s for
-- the same rows imported, the audit's per-block, per-cell reads each repeating those joins over a cell's files.
-- Now attach-verdicts writes one row per attached file row: its pool and judging (the attach's cell run of its
-- judge and format), its file (file_no: its place among the pool's attached files sorted by path, as
-- cell_runs.attached.files lists them) and row (0-based, as read_parquet's file_row_number counts), and the ids
-- the names stand for (prompt, slot A and B candidates, and whether the later-listed candidate sits in slot A). Readers join a file's rows to it on integers, and a
-- filter on the prompts reaches the files' row groups through it. The rows are written in (file, prompt) order
-- and deleted with the attach (detach-verdicts, attach-verdicts again, the pool replaced). A file changed since
-- is refused by its size, modification time and row count before the mapping is read. No key: an index over
-- every attached row would cost more than the mapping.
CREATE TABLE attached_ids (
    pool_id INTEGER NOT NULL,
    cell_run_id INTEGER NOT NULL,
    file_no INTEGER NOT NULL,
    file_row BIGINT NOT NULL,
    prompt_idx INTEGER NOT NULL,
    a_idx INTEGER NOT NULL,
    b_idx INTEGER,
    swapped BOOLEAN NOT NULL
);

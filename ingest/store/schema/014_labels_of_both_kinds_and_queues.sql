-- Version 14: human labels of both kinds, and the queues that ask for them
-- (docs/glossary.md#what-human-labels-are-worth, docs/command-line.md#what-human-labels-are-worth).
--
-- Until now a label was a pairwise verdict ('A' | 'B' | 'tie' on a pair of candidates) whose
-- annotator was '' when the file did not say who labelled. From here on:
-- * every label names its annotator: '' becomes 'import' (the default of a file without one), and
--   a label made on the Label page names its annotator and the queue it answered (`queue_id`);
-- * pointwise labels (accept | reject on one candidate) live in `accept_labels`, beside the
--   pairwise `labels` (whose readers, `calibrate` and the style fit, stay as they were);
-- * one row per (item, annotator) in both tables: an annotator's later label of an item replaces
--   their earlier one (the store deletes the earlier row in the same transaction);
-- * a label queue is a draw of items for one annotator with each item's inclusion probability
--   `pi` (the probability that the draw included it), so the estimate can weight it by 1/pi;
-- * the order in which an annotator sees a pair's two responses is drawn once and kept.
-- Existing labels keep every row; only the empty annotator is renamed.
UPDATE labels SET annotator = 'import' WHERE annotator = '';
ALTER TABLE labels ALTER COLUMN annotator SET DEFAULT 'import';
ALTER TABLE labels ADD COLUMN queue_id INTEGER;

-- One row per annotator's accept/reject label of one candidate (the latest they gave).
CREATE TABLE accept_labels (
    pool_id       INTEGER NOT NULL,
    prompt_idx    INTEGER NOT NULL,
    cand_idx      INTEGER NOT NULL,
    label         VARCHAR NOT NULL,    -- 'accept' | 'reject'
    annotator     VARCHAR NOT NULL DEFAULT 'import',
    source        VARCHAR NOT NULL,    -- 'jsonl' | 'app'
    source_file   VARCHAR,
    source_sha256 VARCHAR,
    line          INTEGER,             -- the line of the source file (null from the app)
    queue_id      INTEGER,             -- the queue the label answered (null from a file)
    imported_at   TIMESTAMP NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (pool_id, cand_idx, annotator)
);

-- One row per label queue: N items drawn for one annotator from one cell's judged items.
CREATE TABLE label_queues (
    queue_id    INTEGER NOT NULL PRIMARY KEY,
    pool_id     INTEGER NOT NULL,
    annotator   VARCHAR NOT NULL,
    kind        VARCHAR NOT NULL,      -- 'pair' | 'accept'
    strategy    VARCHAR NOT NULL,      -- 'random' | 'active' (which stays uniform before 40 labels)
    judge       VARCHAR,               -- the cell the items come from (null: every candidate / pair)
    format      VARCHAR,
    decoding    VARCHAR,
    seed        INTEGER NOT NULL,
    n_frame     INTEGER NOT NULL,      -- the items the draw chose among (judged, not yet labelled by the annotator)
    active      BOOLEAN NOT NULL,      -- whether the inclusion probabilities followed the residuals
    created_at  TIMESTAMP NOT NULL DEFAULT current_timestamp
);
INSERT INTO id_marks VALUES ('label_queues', 0);

-- One row per item of a queue, in the order the annotator is shown them. A pair item is the
-- candidates a_idx, b_idx (cand_idx null); an accept item the candidate cand_idx (a_idx, b_idx null).
-- state: 'pending' | 'labelled' | 'skipped'.
CREATE TABLE label_queue_items (
    queue_id    INTEGER NOT NULL,
    pool_id     INTEGER NOT NULL,      -- the queue's pool (so deleting a pool finds its queues' items)
    position    INTEGER NOT NULL,
    prompt_idx  INTEGER NOT NULL,
    a_idx       INTEGER,
    b_idx       INTEGER,
    cand_idx    INTEGER,
    pi          DOUBLE NOT NULL,       -- inclusion probability of the item in this queue's draw
    state       VARCHAR NOT NULL DEFAULT 'pending',
    PRIMARY KEY (queue_id, position)
);

-- One row per (annotator, pair) shown on the Label page: whether the pair's later-listed candidate
-- (the greater cand_idx) is shown as Response A. Drawn once, so a reload shows the same order.
CREATE TABLE label_orders (
    pool_id     INTEGER NOT NULL,
    annotator   VARCHAR NOT NULL,
    prompt_idx  INTEGER NOT NULL,
    lo_idx      INTEGER NOT NULL,
    hi_idx      INTEGER NOT NULL,
    hi_first    BOOLEAN NOT NULL,
    PRIMARY KEY (pool_id, annotator, lo_idx, hi_idx)
);

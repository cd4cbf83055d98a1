-- Version 20: one meaning per word (docs/glossary.md#words-not-used). "Label" is the human's word
-- alone: a format's parsed answer is an **answer**.
--
-- * verdicts.label -> answer and verdicts.label_probs -> answer_probs: the answer the format's parser
--   read from the raw output, and the judge's probability of each of the format's answers;
-- * the attached cell runs' parses (cell_runs.attached.parses, schema/018) name the same field
--   `answer`;
-- * the human labels of pairs, `labels`, become `pair_labels`, beside `accept_labels` (labels of one
--   candidate); their `label` column stays: it is a human label.
--
-- The files the tool reads and writes keep their columns (docs/files.md#verdict-file): a verdict file's
-- and `export-verdicts`' `label` and `label_probs` are the answer and its distribution. A format's spec
-- keeps its `labels` table (its hash is the format's identity). Renames only: no row is rewritten.
ALTER TABLE verdicts RENAME COLUMN label TO answer;
ALTER TABLE verdicts RENAME COLUMN label_probs TO answer_probs;
ALTER TABLE cell_runs ALTER attached TYPE STRUCT(
    files STRUCT(path VARCHAR, size BIGINT, mtime_ns BIGINT, n_rows BIGINT, judge VARCHAR, format VARCHAR)[],
    parses STRUCT(raw VARCHAR, answer VARCHAR, value DOUBLE, status VARCHAR)[])
USING CASE WHEN attached IS NULL THEN NULL ELSE {
    'files': attached.files,
    'parses': list_transform(attached.parses, lambda p:
                             {'raw': p.raw, 'answer': p.label, 'value': p.value, 'status': p.status})} END;
-- DuckDB renames no table an index depends on: the index is dropped and made again, unchanged but
-- for its name, in the same transaction.
DROP INDEX labels_one_per_annotator;
ALTER TABLE labels RENAME TO pair_labels;
CREATE UNIQUE INDEX pair_labels_one_per_annotator ON pair_labels
    (pool_id, prompt_idx, least(a_idx, b_idx), greatest(a_idx, b_idx), annotator);

-- Version 30: an attach keeps, beside each attached row's ids (schema/026), what the audit scores it by: its
-- decoding and sample (from the file, 'greedy' and 0 where it names none) and its parsed value (its answer's
-- parse, made once by the format's parser when attached and held in the cell run; null where unparsed). The
-- audit's reads of a cell's values and of its counts (verdict_values) then read this table alone, as they read
-- the verdicts table of the same rows imported, and open no file: measured at 1M candidates (10M attached
-- verdicts), those reads took 5.9 s against 1.0 s imported, each joining a cell's ids to its files' rows and
-- their answers to the parses. A file changed since it was attached is refused (size, modification time, row
-- count) before anything of it is read, so the values kept are its rows'. An attach made before this version
-- kept none (decoding null): its pool is refused until attached again.
ALTER TABLE attached_ids ADD COLUMN decoding VARCHAR;
ALTER TABLE attached_ids ADD COLUMN sample INTEGER;
ALTER TABLE attached_ids ADD COLUMN value DOUBLE;

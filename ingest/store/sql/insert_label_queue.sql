-- Stores one label queue: who it is for, what it draws (kind, strategy, cell) and how (seed, frame size).
INSERT INTO label_queues (queue_id, pool_id, annotator, kind, strategy, judge, format, decoding, seed, n_frame, active)
VALUES ($queue_id, $pool_id, $annotator, $kind, $strategy, $judge, $format, $decoding, $seed, $n_frame, $active)

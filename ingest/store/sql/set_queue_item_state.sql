-- Sets the state of one queue item: 'pending', 'labelled' or 'skipped'.
UPDATE label_queue_items SET state = $state WHERE queue_id = $queue_id AND position = $position

-- Version 2: probability-weighted (expected) scores from token log-probabilities, where a judge
-- returns them: the label distribution as JSON and its expected value on the format's scale.
ALTER TABLE verdicts ADD COLUMN label_probs JSON;
ALTER TABLE verdicts ADD COLUMN expected DOUBLE;

"""audit/_label_queue.py: which items to ask a person about next: the inclusion probabilities
(uniform, or following the residuals of the labels so far), capped at 1, and the systematic draw
with probability proportional to pi, by hand and by counting seeded draws."""

import numpy as np
import pytest

from audit._estimate import tuned_lambda
from audit._label_queue import bins, capped, inclusion, residual_rates, systematic_draw


def test_active_rates_by_hand():
    # labels: five at f = 0 all rejected (residual 0), five at f = 1 with Y = 1, 0, 1, 0, 1.
    # bin 0: msr 0; bin 9: msr m9 = (3 (1 - l)^2 + 2 l^2) / 5; bin 5 has < 5 labels: the overall
    # mean, m9 / 2. Frame f = (0, 1, 0.5): rates (0, sqrt(m9), sqrt(m9 / 2)), and the first is floored
    # at a tenth of their mean.
    f_lab = np.array([0.0] * 5 + [1.0] * 5)
    y = np.array([0.0] * 5 + [1, 0, 1, 0, 1])
    frame = np.array([0.0, 1.0, 0.5])
    lam = tuned_lambda(y, f_lab, np.concatenate([f_lab, frame]))
    m9 = (3 * (1 - lam) ** 2 + 2 * lam ** 2) / 5
    raw = np.array([0.0, np.sqrt(m9), np.sqrt(m9 / 2)])
    assert residual_rates(frame, f_lab, y) == pytest.approx(np.maximum(raw, 0.1 * raw.mean()))
    # fewer than 40 labels: uniform whatever the residuals; 40 or more: proportional to the rates
    pi, followed = inclusion(frame, 2, f_lab, y, "active")
    assert not followed and pi == pytest.approx([2 / 3] * 3)
    big_f, big_y = np.repeat(f_lab, 4), np.repeat(y, 4)
    pi, followed = inclusion(frame, 1, big_f, big_y, "active")
    rates = residual_rates(frame, big_f, big_y)
    assert followed and pi == pytest.approx(rates / rates.sum())
    # a probability above 1 is set to 1 and the rest share what is left: rates (8, 1, 1), n = 2
    assert capped(np.array([8.0, 1.0, 1.0]), 2) == pytest.approx([1.0, 0.5, 0.5])


def test_bins_are_tenths_of_the_unit_interval_with_one_in_the_last():
    # floor(10 f), 1.0 in bin 9 (not 10), values outside [0, 1] clipped into the end bins
    assert bins(np.array([0.0, 0.05, 0.1, 0.55, 0.99, 1.0, -0.3, 1.7])).tolist() == [0, 0, 1, 5, 9, 9, 0, 9]


def test_random_inclusion_is_n_over_m_and_never_more_than_the_frame():
    pi, followed = inclusion(np.linspace(0, 1, 8), 3)
    assert not followed and pi.tolist() == pytest.approx([3 / 8] * 8)
    pi, _ = inclusion(np.array([0.2, 0.4]), 5)             # n larger than the frame: every item, once
    assert pi.tolist() == [1.0, 1.0]
    assert inclusion(np.zeros(0), 4)[0].size == 0
    # capping twice: rates (10, 9, 1, 1, 1), n = 3: 10 and 9 go to 1 in turn, the last 1 is shared by
    # three equal rates -> 1/3 each
    assert capped(np.array([10.0, 9.0, 1.0, 1.0, 1.0]), 3) == pytest.approx([1, 1, 1 / 3, 1 / 3, 1 / 3])


def test_a_systematic_draw_takes_n_items_each_with_its_probability():
    # pi sums to 2: every draw takes exactly two distinct items; over 20,000 seeded draws each item's
    # share is its pi (the binomial sd of a share is at most 0.0036: 5 sd = 0.018)
    pi = np.array([0.9, 0.5, 0.3, 0.2, 0.1])
    rng = np.random.default_rng(7)
    counts = np.zeros(pi.size)
    for _ in range(20_000):
        take = systematic_draw(pi, rng)
        assert take.size == 2 and len(set(take.tolist())) == 2
        counts[take] += 1
    assert counts / 20_000 == pytest.approx(pi, abs=0.018)
    # an item of probability 1 is in every draw
    assert all(0 in systematic_draw(np.array([1.0, 0.5, 0.5]), np.random.default_rng(s)) for s in range(50))

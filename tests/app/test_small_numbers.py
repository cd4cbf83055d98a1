"""Numbers that say how sure they are (issue 26 item 3): the judge's style coefficient is "above
the humans'" only when the paired interval of the difference excludes 0, and a contrast from fewer
than five prompts is flagged on the Evaluate page."""

import polars as pl

from app.views.rankings.style_charts import excess_words, style_sentences


def _cell(excess: dict) -> pl.DataFrame:
    rows = [dict(part="coefficient", name="length", value=1.10, lo=0.60, hi=1.70, n=120, converged=True,
                 boot_unconverged=0),
            dict(part="human", name="length", value=0.54, lo=0.10, hi=0.90, n=40, converged=True, boot_unconverged=0),
            dict(part="excess", name="length", n=40, converged=True, boot_unconverged=0, **excess)]
    return pl.DataFrame(rows)


def test_the_excess_is_stated_only_when_its_interval_excludes_zero():
    # 1.10 - 0.54 = 0.56 with an interval of -0.04 to +1.33: it includes 0, so no "0.56 above"
    unclear = {"value": 0.56, "lo": -0.04, "hi": 1.33}
    assert excess_words(unclear) == ("shows **no clear difference** from the humans' (−0.04 to +1.33: the 95% "
                                     "interval of the difference, paired bootstrap over prompts, includes 0)")
    words = " ".join(style_sentences(_cell(unclear)))
    assert "0.56 above" not in words and "no clear difference" in words
    # the same difference with an interval of +0.20 to +0.90 excludes 0: stated, with its interval
    clear = {"value": 0.56, "lo": 0.20, "hi": 0.90}
    assert excess_words(clear) == ("is **0.56 above** the humans' (95% interval +0.20 to +0.90, paired bootstrap "
                                   "over prompts)")
    assert "this judge's length coefficient is **0.56 above** the humans'" in " ".join(style_sentences(_cell(clear)))
    below = {"value": -0.3, "lo": -0.5, "hi": -0.1}
    assert excess_words(below).startswith("is **0.30 below** the humans'")
    # an interval end exactly at 0 does not exclude it
    assert "no clear difference" in excess_words({"value": 0.4, "lo": 0.0, "hi": 0.8})


def test_contrasts_from_fewer_than_five_prompts_are_flagged():
    from app.views.evaluate.small_n import best_and_worst_count, flag_small
    table = pl.DataFrame({"judge": ["j1", "j1", "j2"], "a": ["lora", "lora", "lora"], "b": ["base", "rand", "base"],
                          "diff": [0.0, 0.0, 0.2], "lo": [0.0, 0.0, 0.05], "hi": [0.0, 0.0, 0.35], "p": [1.0, 1.0, 0.01]})
    friedman = [{"judge": "j1", "statistic": None, "p": None, "n_blocks": 1, "k": 3},
                {"judge": "j2", "statistic": 4.0, "p": 0.13, "n_blocks": 12, "k": 3}]
    out, note = flag_small(table, friedman)
    assert out["prompts"].to_list() == [1, 1, 12] and out["too_few"].to_list() == [True, True, False]
    assert note == ("Too few to say: these contrasts rest on fewer than 5 held-out prompts (j1: 1 held-out prompt). "
                    "Their difference, interval and p are shown, but they are not a finding; evaluate on more "
                    "held-out prompts.")
    # five prompts are enough: no flag
    five = [{**f, "n_blocks": 5} for f in friedman]
    assert flag_small(table, five)[1] is None
    # best and worst never list the same prompt: one prompt has neither, two have one each, 7 have 3 each
    assert [best_and_worst_count(n) for n in (0, 1, 2, 3, 7)] == [0, 0, 1, 1, 3]

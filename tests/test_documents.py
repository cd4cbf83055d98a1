"""The comparer of stored and printed documents (tests/documents.py): floats to relative 1e-9 or
absolute 1e-12, whichever is looser; keys, strings and the rest exactly."""

from tests.documents import close, differences, keeps, text_differences


def test_the_amd_bound_agrees_with_the_stored_one():
    # |a - b| = 4.4e-16: relative 4.4e-16 / 8.1e-8 = 5.4e-9 is over 1e-9, but absolute 4.4e-16 <= 1e-12
    assert close(8.102417164e-08, 8.102417120e-08)
    assert keeps({"lo": 8.102417120e-08}, {"lo": 8.102417164e-08}) == []


def test_a_relative_difference_of_1e_minus_6_is_refused():
    # 2.0 vs 2.000002: |a - b| = 2e-6 > max(1e-9 * 2.000002, 1e-12) = 2.000002e-9
    assert not close(2.0, 2.000002)
    assert keeps({"a": [1, {"b": 2.0}]}, {"a": [1, {"b": 2.000002}]}) == ["document.a[1].b: 2.0 became 2.000002"]
    # a relative 1e-10 passes: 1e-10 * 3 = 3e-10 <= 1e-9 * 3
    assert close(3.0, 3.0 * (1 + 1e-10))
    # near zero the absolute bound: 1e-13 apart passes, 1e-11 apart does not
    assert close(0.0, 1e-13) and not close(0.0, 1e-11)


def test_a_changed_string_or_key_or_kind_is_refused():
    assert keeps({"id": "beta"}, {"id": "gamma"}) == ["document.id: 'beta' became 'gamma'"]
    assert keeps({"lo": 0.5}, {"low": 0.5}) == ["document.lo: missing"]
    assert differences({"lo": 0.5}, {"lo": 0.5, "hi": 1.0}) == ["document.hi: new"]
    assert keeps({"lo": 0.5}, {"lo": 0.5, "hi": 1.0}) == []          # keeps: new keys are allowed
    assert keeps({"n": 1}, {"n": True}) == ["document.n: 1 became True"]
    assert keeps({"n": None}, {"n": 0.0}) == ["document.n: None became 0.0"]
    assert keeps({"n": 3}, {"n": 4}) == ["document.n: 3 became 4"]    # ints exactly
    assert keeps([1.0, 2.0], [1.0]) == ["document: 2 items became 1"]
    assert keeps({"x": float("nan")}, {"x": float("nan")}) == [] and not close(float("nan"), 1.0)


def test_text_compares_its_numbers_to_the_tolerance_and_the_rest_exactly():
    assert text_differences("lo 8.102417120e-08 hi 0.55 (n=6)", "lo 8.102417164e-08 hi 0.55 (n=6)") == []
    assert text_differences("hi 2.0", "hi 2.000002") == ["number 0: 2.0 became 2.000002"]
    assert text_differences("n=6", "n=7") == ["number 0: 6 became 7"]
    assert text_differences("judge sim", "judge sin") == ["text: 'judge sim' became 'judge sin'"]
    assert text_differences("a 1.0 b", "a 1.0 c") == ["text: ' b' became ' c'"]
    assert text_differences("a 1.0", "a 1.0 2.0") != []
    assert text_differences("model-v2 at 0.5", "model-v2 at 0.5") == []

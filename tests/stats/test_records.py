"""candor_eval/stats/records.py: p-values to 6 significant digits (:func:`p6`), and the one error of a
malformed stored record (:func:`decoded`)."""
from __future__ import annotations

import pytest

from candor_eval.common.errors import InputError
from candor_eval.stats.records import decoded, p6


@pytest.mark.parametrize("p,expected", [
    (0.000123456789, 0.000123457),      # a small p keeps its magnitude (6 decimals would give 0.000123)
    (2 / 3, 0.666667),
    (1.0, 1.0),
    (0.0625, 0.0625),                   # exact: nothing to round
    (1.23456789e-12, 1.23457e-12),      # 6 decimals would round it to 0.0
    (0.99999949, 0.999999),
    (0.99999951, 1.0),                  # rounds up to the next magnitude
    (0.0, 0.0),
])
def test_p6_keeps_six_significant_digits(p, expected):
    """``p6(p)``: ``p`` to 6 significant digits, not 6 decimals."""
    got = p6(p)
    assert got == expected and isinstance(got, float)


def test_decoded_returns_what_build_builds():
    """``decoded(where, what, build)`` is ``build()`` when the document has the shape."""
    assert decoded("x.json", "a pair", lambda: (1, 2)) == (1, 2)


@pytest.mark.parametrize("err", [KeyError("k"), TypeError("t"), ValueError("v"), AttributeError("a")])
def test_a_malformed_document_is_an_input_error_naming_the_file(err):
    """A missing key, a wrong type or a bad value while building is an InputError naming ``where``,
    saying what was expected and what went wrong, with the command that regenerates the file."""
    def build():
        raise err
    with pytest.raises(InputError) as info:
        decoded("metrics/x.json:rates.a", "a rate {k, n}", build)
    (problem,) = info.value.problems
    assert problem.where == "metrics/x.json:rates.a" and problem.what == "not a rate {k, n}"
    assert problem.got == repr(f"{type(err).__name__}: {err}")
    assert info.value.hint == "regenerate it with its stage (dvc repro)"
    assert info.value.__cause__ is None and info.value.__suppress_context__     # raised from None


def test_other_errors_are_not_turned_into_input_errors():
    """Only the errors of a wrongly shaped document are decoded; a bug (say ZeroDivisionError) surfaces."""
    with pytest.raises(ZeroDivisionError):
        decoded("x.json", "a rate", lambda: 1 / 0)

"""The text forest plot (candor_eval/review/text_forest.py): bars by hand on small axes."""
from __future__ import annotations

from candor_eval.review.text_forest import TextRow, axis, bar, cell, nice_top, text_forest


def test_cells_split_the_axis_evenly_and_clamp():
    # 10 cells on [0, 1]: cell i covers [i/10, (i+1)/10)
    assert [cell(x, top=1, width=10) for x in (0, 0.09, 0.1, 0.55, 0.99, 1.0, 1.7, -0.2)] == [0, 0, 1, 5, 9, 9, 9, 0]
    assert cell(15, top=20, width=10) == 7                     # a mean axis: 15 of 20


def test_a_bar_marks_the_interval_and_the_estimate():
    assert bar(TextRow("a", 0.35, 0.1, 0.6), top=1, width=10) == "| [-o--]   |"
    assert bar(TextRow("a", 0.0, 0.0, 0.25), top=1, width=10) == "|o-]       |"    # the estimate overwrites an end
    assert bar(TextRow("a", 0.5, 0.5, 0.5), top=1, width=10) == "|     o    |"     # a point interval


def test_the_forest_aligns_labels_and_draws_one_axis():
    lines = text_forest([TextRow("ref", 0.5, 0.25, 0.75), TextRow("longer", 0.1, 0.0, 0.3, "worse, p=0.01")],
                        width=20)
    assert lines == ["ref      0.500  |     [----o----]    |",
                     "longer   0.100  |[-o---]             |  worse, p=0.01",
                     "                 0    0.25 0.5  0.75 1"]
    assert lines[-1].index("0") == lines[0].index("|") + 1     # the axis starts at the first cell
    assert text_forest([]) == []


def test_a_mean_axis_ends_at_a_round_number():
    assert [nice_top(x) for x in (0.07, 1, 1.2, 2.2, 18.16, 51, 0)] == [0.1, 1, 2, 2.5, 20, 100, 1]
    assert axis(top=20, width=20) == " 0    5    10   15  20"      # the end value ends under the last "|"

"""detection_plots: CSV views and PNG figures (parallel rendering gives the serial bytes)."""
from __future__ import annotations

import numpy as np
import pytest

from candor_eval.detection.scoring import plots as dp
from candor_eval.detection.scoring.records import Curve


def test_safe_name_replaces_path_characters():
    assert dp.safe_name("a/b c") == "a_b_c"
    assert dp.safe_name("") == "_"


def test_confusion_csv_has_every_cell_and_the_share_of_its_row():
    """Every (actual, predicted) cell, zeros included (so two models share their columns), with the
    count over its row's total: cat row 2 + 0 + 1 = 3; the empty dog row has no share."""
    mat = np.array([[2, 0, 1], [0, 0, 0], [1, 0, 0]])
    text = dp.confusion_csv(mat, ("cat", "dog"))
    assert text.splitlines() == [
        "actual,predicted,count,row_share",
        "cat,cat,2,0.666667", "cat,dog,0,0", "cat,background,1,0.333333",
        "dog,cat,0,", "dog,dog,0,", "dog,background,0,",
        "background,cat,1,1", "background,dog,0,0", "background,background,0,0"]


def _per_class():
    return {"cat": {"f1": 0.5, "support": 4, "qualified": True}, "dog": {"f1": None, "support": 0, "qualified": False}}


def test_nearest_row_takes_the_lower_threshold_on_a_tie():
    assert dp.nearest_row([0.1, 0.2, 0.3], 0.15) == 0
    assert dp.nearest_row([0.1, 0.2, 0.3], 0.26) == 2
    assert dp.nearest_row([0.1, 0.2, 0.3], 0.9) == 2


def _curve(tp):
    return Curve(grid=np.array([0.1, 0.5]), tp=np.array(tp), fp=np.array([1, 0]), fn=np.array([1, 2]))


def _fig(model, *, per_class=None, tp=(2, 1)):
    curves = {"all": _curve(list(tp)), "cat": _curve(list(tp))}
    return dp.FigureInputs(model=model, curves=curves, matrix=np.array([[2, 1, 0], [0, 0, 0], [1, 0, 0]]),
                           classes=("cat", "dog"), per_class=per_class or _per_class(),
                           served_by_class={"cat": 0.5, "dog": 0.5}, min_support=3, split_curves=curves)


def test_parallel_rendering_gives_the_serial_bytes():
    jobs = {f"png/{k}.png": (dp.png_compare_per_class, ([_fig(k)], {}),
                             {"set_name": "s", "split": "test", "confidence": 0.95}) for k in "abc"}
    serial = dp.render(jobs, workers=1)
    parallel = dp.render(jobs, workers=2)
    assert list(parallel) == list(jobs) and parallel == serial
    assert serial["png/a.png"] != serial["png/b.png"]          # the model name is in the legend
    assert all(b.startswith(b"\x89PNG") and b"Software" not in b for b in serial.values())


def _boom(**_):
    raise ValueError("figure failed")


def test_a_figure_failing_in_a_worker_fails_the_render():
    ok = (dp.png_compare_per_class, ([_fig("a")], {}), {"set_name": "s", "split": "test", "confidence": 0.95})
    with pytest.raises(ValueError, match="figure failed"):
        dp.render({"x": ok, "y": (_boom, (), {})}, workers=2)     # the second group runs in a worker


def test_figure_jobs_names_one_figure_per_comparison_of_a_set():
    figs = [_fig("m/1"), _fig("m2", tp=(1, 1))]
    jobs = dp.figure_jobs("s", figs, intervals={"m/1": {"cat": (0.5, 0.2, 0.8)}}, confidence=0.95)
    out = dp.render(jobs, workers=1)
    assert sorted(out) == ["compare-confusion.png", "compare-f1.png", "compare-per_class.png", "compare-pr.png"]
    assert all(b.startswith(b"\x89PNG") for b in out.values())
    assert jobs["compare-pr.png"][2]["split"] == "test"                 # the headline split by default
    # both models are drawn: one model alone gives other bytes
    assert dp.render({"one": (dp.png_compare_curves, (figs[:1],), {"set_name": "s", "kind": "pr", "split": "test"})},
                     workers=1)["one"] != out["compare-pr.png"]


def _count(png: bytes, colour: tuple[int, int, int]) -> int:
    """How many pixels of the PNG have exactly ``colour``."""
    import io

    from PIL import Image
    with Image.open(io.BytesIO(png)) as im:
        return sum(n for n, c in im.convert("RGB").getcolors(1 << 20) if c == colour)


def test_an_unqualified_class_is_drawn_grey():
    """A class with support below min_support is drawn in grey (its dot and interval), not in the
    model's colour (tab:blue): only the legend's swatch stays blue."""
    blue, grey = (31, 119, 180), (154, 154, 154)
    unqualified = {"cat": {"f1": 0.5, "support": 2, "qualified": False}}
    qualified = {"cat": {"f1": 0.5, "support": 4, "qualified": True}}
    iv = {"m": {"cat": (0.5, 0.2, 0.8)}}
    kw = {"set_name": "s", "split": "test", "confidence": 0.95}
    greyed = dp.png_compare_per_class([_fig("m", per_class=unqualified)], iv, **kw)
    coloured = dp.png_compare_per_class([_fig("m", per_class=qualified)], iv, **kw)
    assert _count(coloured, blue) > 3 * _count(greyed, blue)
    assert _count(greyed, grey) > 3 * _count(coloured, grey)


def test_series_styles_stay_apart_for_twelve_series():
    styles = [dp.series_style(k) for k in range(12)]
    assert len({(s["color"], s["linestyle"], s["marker"]) for s in styles}) == 12
    assert len({(s["color"], s["linestyle"]) for s in styles}) == 12    # lines alone too (no markers)


def test_pr_and_f1_files_keep_the_points_whose_rates_are_defined():
    """tp (2, 0), fp (1, 0), fn (0, 0): at 0.5 nothing is kept and nothing is missed, so no rate is defined;
    a rate of 0 is a point (0.9: no TP, one FN)."""
    curve = Curve(grid=np.array([0.1, 0.5, 0.9]), tp=np.array([2, 0, 0]), fp=np.array([1, 0, 0]),
                  fn=np.array([0, 0, 1]))
    assert dp.curve_text(curve) == (["0.1", "0.5", "0.9"], ["0.666667", "", ""], ["1", "", "0"], ["0.8", "", "0"])
    assert dp.pr_csv(curve).splitlines() == ["threshold,precision,recall", "0.1,0.666667,1"]
    assert dp.f1_csv(curve).splitlines() == ["threshold,f1,precision,recall", "0.1,0.8,0.666667,1", "0.9,0,,0"]
    assert dp.f1_csv(curve, dp.curve_text(curve)) == dp.f1_csv(curve)


@pytest.mark.parametrize("seed", range(5))
def test_curve_text_is_the_formatted_rows_of_the_curve(seed):
    """curve_text formats each distinct rate once, off numpy's quotients: the texts of Curve.rows, point for point
    (rates of small and large counts, ties, zeros and undefined ones; the empty curve)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 200))
    top = int(10 ** rng.integers(1, 9))
    tp, fp, fn = (rng.integers(0, top, n) * (rng.random(n) < 0.8) for _ in range(3))
    curve = Curve(grid=np.round(np.linspace(0.05, 1, n), 2), tp=tp, fp=fp, fn=fn)
    want = tuple([dp._fmt(v) for v in col] for col in zip(*curve.rows())) if n else ([], [], [], [])
    memo: dict = {}
    assert dp.curve_text(curve, memo) == want
    assert dp.curve_text(curve, memo) == want                   # and again from a filled memo


def test_set_plot_files_put_every_model_in_one_file():
    def curve(tp):
        return Curve(grid=np.array([0.1, 0.5]), tp=np.array(tp), fp=np.array([1, 0]), fn=np.array([1, 2]))

    files = dp.set_plot_files({"a": {"all": curve([3, 1]), "deer": curve([1, 0])},
                               "b": {"all": curve([2, 0]), "deer": curve([2, 1])}},
                              {"a": {"localisation": 2, "both": 0}, "b": {"localisation": 1, "both": 3}},
                              per_class={"a": _per_class(), "b": {"cat": _per_class()["cat"]}},
                              served={"a": {"deer": 0.4}, "b": {"deer": 0.2}})
    assert list(files["pr_models"]) == ["all.csv", "deer.csv"]
    # "all" has no served point: each class has its own threshold
    assert files["pr_models"]["all.csv"].decode().splitlines() == [
        "model,threshold,precision,recall,served", "a,0.1,0.75,0.75,0", "a,0.5,1,0.333333,0",
        "b,0.1,0.666667,0.666667,0"]
    # deer: b served at 0.2 -> the grid point 0.1 (P 2/3, R 2/3); a at 0.4 -> 0.5, where a keeps no
    # detection (precision undefined, no PR point): a has no served point
    assert files["pr_models"]["deer.csv"].decode().splitlines() == [
        "model,threshold,precision,recall,served", "a,0.1,0.5,0.5,0",
        "b,0.1,0.666667,0.666667,1", "b,0.5,1,0.333333,0"]
    assert files["f1_models"]["all.csv"].decode().splitlines()[-1] == "b,0.5,0,"
    assert files["f1_models"]["deer.csv"].decode().splitlines()[1:] == [
        "a,0.1,0.5,0.4", "a,0.5,0,0.4", "b,0.1,0.666667,0.2", "b,0.5,0.5,0.2"]
    assert files["anatomy"]["fp.csv"].decode().splitlines() == [
        "model,kind,count", "a,localisation,2", "a,both,0", "b,localisation,1", "b,both,3"]
    assert files["per_class"]["f1.csv"].decode().splitlines() == [
        "model,class,f1,support,qualified", "a,cat,0.5,4,yes", "a,dog,,0,no", "b,cat,0.5,4,yes"]

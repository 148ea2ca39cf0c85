"""detection_plots: CSV views and PNG figures (parallel rendering gives the serial bytes)."""
from __future__ import annotations

import numpy as np
import pytest

from candor_eval.detection.scoring import plots as dp
from candor_eval.detection.scoring.records import Curve


def test_safe_name_replaces_path_characters():
    assert dp.safe_name("a/b c") == "a_b_c"
    assert dp.safe_name("") == "_"


def test_confusion_csv_has_one_row_per_counted_box():
    mat = np.array([[2, 0, 1], [0, 0, 0], [1, 0, 0]])
    text = dp.confusion_csv(mat, ("cat", "dog"))
    assert text.splitlines() == ["actual,predicted", "cat,cat", "cat,cat", "cat,background", "background,cat"]


def _per_class():
    return {"cat": {"f1": 0.5, "support": 4, "qualified": True}, "dog": {"f1": None, "support": 0, "qualified": False}}


def test_per_class_csv_leaves_undefined_f1_empty():
    assert dp.per_class_csv(_per_class()).splitlines() == ["class,f1,support", "cat,0.5,4", "dog,,0"]


def test_parallel_rendering_gives_the_serial_bytes():
    jobs = {f"png/{k}.png": (dp.png_per_class, (_per_class(),), {"model": k, "min_support": 3}) for k in "abc"}
    serial = dp.render(jobs, workers=1)
    parallel = dp.render(jobs, workers=2)
    assert list(parallel) == list(jobs) and parallel == serial
    assert serial["png/a.png"] != serial["png/b.png"]          # the model name is in the title
    assert all(b.startswith(b"\x89PNG") and b"Software" not in b for b in serial.values())


def _boom(**_):
    raise ValueError("figure failed")


def test_a_figure_failing_in_a_worker_fails_the_render():
    ok = (dp.png_per_class, (_per_class(),), {"model": "a", "min_support": 3})
    with pytest.raises(ValueError, match="figure failed"):
        dp.render({"x": ok, "y": (_boom, (), {})}, workers=2)     # the second group runs in a worker


def test_figure_jobs_names_the_four_figures_of_a_model():
    curve = Curve(grid=np.array([0.1, 0.5]), tp=np.array([2, 1]), fp=np.array([2, 0]), fn=np.array([0, 1]))
    fig = dp.FigureInputs(model="m/1", curves={"all": curve, "cat": curve}, matrix=np.zeros((2, 2), int),
                          classes=("cat",), per_class={"cat": _per_class()["cat"]}, served_by_class={"cat": 0.5},
                          min_support=3)
    figs = dp.render(dp.figure_jobs(fig), workers=1)
    assert sorted(figs) == ["m_1-confusion.png", "m_1-f1.png", "m_1-per_class.png", "m_1-pr.png"]
    assert all(b.startswith(b"\x89PNG") for b in figs.values())


def test_set_plot_files_put_every_model_in_one_file():
    def curve(tp):
        return Curve(grid=np.array([0.1, 0.5]), tp=np.array(tp), fp=np.array([1, 0]), fn=np.array([1, 2]))

    files = dp.set_plot_files({"a": {"all": curve([3, 1]), "deer": curve([1, 0])}, "b": {"all": curve([2, 0])}},
                              {"a": {"localisation": 2, "both": 0}, "b": {"localisation": 1, "both": 3}})
    assert list(files["pr_models"]) == ["all.csv"]              # only the classes every model has
    assert files["pr_models"]["all.csv"].decode().splitlines() == [
        "model,threshold,precision,recall", "a,0.1,0.75,0.75", "a,0.5,1,0.333333", "b,0.1,0.666667,0.666667"]
    assert files["f1_models"]["all.csv"].decode().splitlines()[-1] == "b,0.5,0"
    assert files["anatomy"]["fp.csv"].decode().splitlines() == [
        "model,kind,count", "a,localisation,2", "a,both,0", "b,localisation,1", "b,both,3"]

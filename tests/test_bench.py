"""Smoke test of the bench code (the full bench is ``make bench``, not part of the test suite)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from candor_eval.common.errors import run_main
from candor_eval.stages import coco_eval
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

import make_coco  # noqa: E402 - after the sys.path line above
import report  # noqa: E402 - after the sys.path line above


def test_generator_is_seeded_and_scaled():
    gt, dt = make_coco.make(20, seed=3)
    again, dt_again = make_coco.make(20, seed=3)
    assert gt == again and dt == dt_again
    assert len(gt["images"]) == 20 and len(gt["categories"]) == 60
    assert 1000 <= len(dt) <= 2000 and 80 <= len(gt["annotations"]) <= 220   # ~100 boxes, ~7.2 labels a frame
    assert all(a["iscrowd"] == 0 for a in gt["annotations"])


def test_candor_tp_equals_pycocotools_on_a_generated_set(tmp_path):
    pytest.importorskip("pycocotools")
    import peers

    gt, dt = make_coco.make(20, seed=1)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "dt.json").write_text(json.dumps(dt))
    assert run_main(coco_eval.main, ["--coco-gt", str(tmp_path / "gt.json"), "--coco-results",
                                     str(tmp_path / "dt.json"), "--out", str(tmp_path / "c.json")]) == 0
    mine = json.loads((tmp_path / "c.json").read_text())["all"]["per_class"]
    _, _, ev = peers.run_pycocotools(str(tmp_path / "gt.json"), str(tmp_path / "dt.json"))
    ref = peers.pycocotools_counts(ev)
    assert ref, "pycocotools evaluated nothing"
    for cid, counts in ref.items():
        assert {k: mine[f"class_{int(cid) - 1:02d}"][k] for k in ("tp", "fp", "fn")} == counts, cid
    assert sum(c["tp"] for c in ref.values()) > 0


def test_report_states_unmet_targets(tmp_path):
    tool = {"total_s": 2.0, "load_s": 1.0, "score_s": 0.5, "peak_rss_mb": 600.0}
    results = {"machine": {"cpu": "cpu", "cores": 2, "os": "os", "python": "3.11"}, "date": "2026-01-01",
               "command": "python bench/run.py", "repeats": 3,
               "scoring": {"candor": tool, "faster-coco-eval": tool, "pycocotools": tool,
                           "ratios": {"end_to_end_vs_faster": 6.0, "end_to_end_vs_pycocotools": 20.0,
                                      "core_vs_faster_evaluate": 12.0},
                           "agreement": {"classes": 60, "identical": True, "tp_candor": 5, "tp_pycocotools": 5}}}
    report.write_results(results, tmp_path / "R.md")
    text = (tmp_path / "R.md").read_text()
    assert "| end to end vs faster-coco-eval >= 5x | 6.00x | met |" in text
    assert "| end to end vs pycocotools >= 30x | 20.00x | **not met** |" in text
    assert "| peak RSS <= 500 MB | 600 MB | **not met** |" in text and "median of 3 runs" in text


def test_runs_are_interleaved_rounds():
    import run

    calls = []
    runs = run.interleaved({k: (lambda k=k: calls.append(k) or {"k": k}) for k in ("a", "b", "c")}, 2)
    assert calls == ["a", "b", "c", "a", "b", "c"]
    assert runs == {k: [{"k": k}, {"k": k}] for k in ("a", "b", "c")}


def test_sweep_report_splits_the_step_into_dvc_and_the_stages():
    sweep = {"noop_repro_s": 1.0, "literal_exp_run_s": 2.0, "ratio_literal": 2.0, "exp_run_s": 3.6, "ratio": 3.6,
             "edit_params_repro_s": 2.0, "ratio_edit_params_repro": 2.0, "values": [0.21],
             "stages_rerun": ["score-detection@detector", "stats"], "inference_rerun": False,
             "copy_commands_exp_run_s": 2.5, "copy_commands_literal_exp_run_s": 2.0, "lock_refreshed": False,
             "project_share_paired": {"median": 0.25, "q1": 0.2, "q3": 0.3},
             "project_share_cpu": {"median": 0.3, "q1": 0.28, "q3": 0.32},
             "exp_run_cpu_s": 4.1, "copy_commands_exp_run_cpu_s": 2.9,
             "inside_share": {"median": 0.21, "q1": 0.2, "q3": 0.22},
             "inside_share_cpu": {"median": 0.19, "q1": 0.18, "q3": 0.2}, "timer_cost_s": {"wall": 0.011, "cpu": 0.009},
             "stage_alone": {"stats": {"cmd": "candor stats run", "wall_s": 0.61,
                                       "imports_s": {"scipy": 0.2, "numpy": 0.1, "total": 0.45}}}}
    text = "\n".join(report._sweep(sweep))
    assert "literal no-op experiment (DVC's own bookkeeping, the floor): 1.80x; target <= 1.5x: **not met**" in text
    assert "makes the copy-command step 1.25x its literal experiment" in text
    assert "Within 1.5x the stages would have 0.50 s" in text
    # the verdict is the share timed inside the step, in wall and CPU time alike: 21% of the wall time is over
    assert ("timed from inside it (a third clone whose rerun stages' commands run under `bench/stage_timer.py`; "
            "what the timer itself adds, 0.011 s a stage, is taken out of the step): median 21.0% (quartiles "
            "20.0-22.0%) of the step's wall time, median 19.0% (quartiles 18.0-20.0%) of its CPU time; target <= 20% "
            "(in wall and in CPU time alike): **not met**") in text
    # (3.6 - 2.5) / 3.6 = 30.6% of the medians, and the round-by-round shares, shown beside it
    assert ("the 2 stage processes take 1.10 s: (real - copy-command) / real = 30.6% of the step. Round by round "
            "(each real step against the copy-command step right after it): median 25.0% (quartiles 20.0-30.0%) "
            "in wall time, median 30.0% (quartiles 28.0-32.0%) in CPU time (medians: 4.10 s of CPU for a real step, "
            "2.90 s for a copy-command step).") in text
    assert "| stats | 0.61 | 0.45 | scipy 0.200, numpy 0.100 |" in text
    assert "ran `candor lock`" not in text
    low = {"median": 0.194, "q1": 0.15, "q3": 0.22}
    cpu_over = "\n".join(report._sweep({**sweep, "inside_share": low, "inside_share_cpu": sweep["inside_share"]}))
    assert "median 19.4% (quartiles 15.0-22.0%) of the step's wall time" in cpu_over
    assert "alike): **not met**" in cpu_over
    met = "\n".join(report._sweep({**sweep, "inside_share": low, "lock_refreshed": True}))
    assert "CPU time alike): met." in met and "ran `candor lock` in its clones" in met


def test_paired_share_is_the_median_of_each_rounds_share():
    import sweep

    # rounds: (4 - 3) / 4 = 0.25, (5 - 4.5) / 5 = 0.1, (2 - 1) / 2 = 0.5; sorted 0.1, 0.25, 0.5
    assert sweep.paired_share([4.0, 5.0, 2.0], [3.0, 4.5, 1.0]) == {"median": 0.25, "q1": 0.175, "q3": 0.375}
    assert sweep.paired_share([4.0], [3.0]) == {"median": 0.25, "q1": 0.25, "q3": 0.25}


def test_inside_share_takes_the_timers_cost_out_of_the_step():
    import sweep

    # two stages of 0.5 and 0.7 s in a 5.02 s step whose two timers cost 0.01 s each: 1.2 / 5.0
    assert abs(sweep.inside_share(5.02, [0.5, 0.7], 0.01) - 0.24) < 1e-12
    assert sweep.quartiles([0.3, 0.1, 0.2]) == {"median": 0.2, "q1": 0.15, "q3": 0.25}


def test_stage_timer_logs_the_command_and_keeps_its_exit_code(tmp_path):
    log = tmp_path / "stages.log"
    spin = "import sys, time\nt = time.process_time()\nwhile time.process_time() - t < 0.2: pass\nsys.exit(3)"
    timer = ROOT / "bench" / "stage_timer.py"
    done = subprocess.run([sys.executable, "-S", str(timer), str(log), sys.executable, "-c", spin])
    assert done.returncode == 3
    name, wall, cpu = log.read_text().split()
    assert name == "-c" and float(wall) >= 0.2 and 0.2 <= float(cpu) < 2


def test_import_times_sum_each_packages_own_times():
    import sweep

    trace = ("import time: self [us] | cumulative | imported package\n"
             "import time:      1500 |       1500 |     scipy.special._ufuncs\n"
             "import time:       500 |       2000 |   scipy.special\n"
             "import time:      4000 |       4000 |   numpy\n"
             "import time:     25000 |      31000 | candor_eval.stats.rates\n"
             "INFO candor: not an import line\n")
    assert sweep.import_times(trace) == {"candor_eval": 0.025, "numpy": 0.004, "scipy": 0.002, "total": 0.031}


def test_ap_report_and_sections_kept_from_an_earlier_run(tmp_path):
    tool = {"total_s": 2.0, "load_s": 1.0, "score_s": 0.5, "peak_rss_mb": 600.0}
    slow = {**tool, "total_s": 5.0, "peak_rss_mb": 800.0}
    head = {"machine": {"cpu": "cpu", "cores": 2, "os": "os", "python": "3.11"}, "repeats": 3}
    path = tmp_path / "R.md"
    path.write_text("# old\n\n- date: 2025-01-01\n- command: `python bench/run.py`\n\n## 1. Scoring\n\nold rows\n\n"
                    "## 2. Scaling\n\nold scaling\n")
    report.write_results({**head, "date": "2026-01-01", "command": "python bench/run.py --only ap",
                          "ap": {"candor": tool, "faster-coco-eval": slow, "pycocotools": slow,
                                 "ratios": {"end_to_end_vs_faster": 2.5, "end_to_end_vs_pycocotools": 2.5},
                                 "ap": {"map50": 0.7, "map50_95": 0.45,
                                        "max_abs_difference": {"faster-coco-eval": 2e-16, "pycocotools": 3e-9}}}}, path)
    text = path.read_text()
    assert "| end to end vs faster-coco-eval's AP-only run >= 6x | 2.50x | **not met** |" in text
    assert "| peak RSS below faster-coco-eval's | 600 vs 800 MB | met |" in text
    assert ("| same AP as pycocotools to 1e-9 (mAP50, mAP50-95 and every class) | max difference 3.0e-09 "
            "| **not met** |") in text
    # the sections this run did not measure keep their figures, marked with their own run
    assert ("## 1. Scoring\n\n(kept from the run of date: 2025-01-01 command: `python bench/run.py`: "
            "not rerun since)") in text
    assert "old scaling" in text and text.index("## 1. ") < text.index("## 1b. ") < text.index("## 2. ")


def test_a_peer_not_installed_is_reported_not_measured_never_guessed(tmp_path):
    tool = {"total_s": 2.0, "load_s": 1.0, "score_s": 0.5, "peak_rss_mb": 600.0}
    slow = {**tool, "total_s": 20.0, "score_s": 10.0}
    head = {"machine": {"cpu": "cpu", "cores": 2, "os": "os", "python": "3.11"}, "repeats": 3}
    path = tmp_path / "R.md"
    report.write_results({**head, "date": "2026-01-01", "command": "c",
                          "scoring": {"candor": tool, "pycocotools": slow, "missing": ["faster-coco-eval"],
                                      "ratios": {"end_to_end_vs_faster": None, "end_to_end_vs_pycocotools": 10.0,
                                                 "core_vs_faster_evaluate": None, "core_vs_pycocotools_evaluate": 20.0},
                                      "agreement": {"classes": 2, "identical": True, "tp_candor": 5,
                                                    "tp_pycocotools": 5}}}, path)
    text = path.read_text()
    assert "| faster-coco-eval | not installed in the bench's interpreter: not measured | | | |" in text
    assert ("| scoring core vs faster-coco-eval evaluate >= 10x | not measured (faster-coco-eval not installed) "
            "| not measured |") in text
    assert "| end to end vs pycocotools >= 30x | 10.00x | **not met** |" in text
    assert "Scoring core vs pycocotools' evaluate + accumulate (no target): 20.00x." in text


def test_a_section_of_a_bench_of_its_own_is_kept_as_it_is(tmp_path):
    head = {"machine": {"cpu": "cpu", "cores": 2, "os": "os", "python": "3.11"}, "repeats": 3}
    path = tmp_path / "R.md"
    path.write_text("# old\n\n- date: 2025-01-01\n\n## 2. Scaling\n\nold scaling\n\n## 6. Exec overhead\n\n"
                    "(run of 2025-02-02)\n\n| a |\n\n## How the figures are taken\n\nnotes\n")
    report.write_results({**head, "date": "2026-01-01", "command": "c"}, path)
    text = path.read_text()
    assert "## 6. Exec overhead\n\n(run of 2025-02-02)\n\n| a |\n" in text and "kept from the run of" in text
    assert "## How the figures" not in text                     # NOTES.md's, not the old file's

"""Whole-refresh timings: the format, the nearest-rank p95 and its distribution-free upper bound."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from candor_eval.common.errors import InputError
from candor_eval.detection.refresh import MIN_REFRESHES, parse_refresh, read_refresh, refresh_p95, upper_rank

HEAD = "refresh,model,host,scope,ms\n"


def rows(*ms: object, scope: str = "capture-to-handoff", host: str = "edge-1") -> str:
    return HEAD + "".join(f"r{i},demo-v2,{host},{scope},{m}\n" for i, m in enumerate(ms))


def test_a_file_reads_to_its_times_in_order():
    t = parse_refresh(rows(1200, 850.5, 0), where="t.csv")
    assert (t.model, t.host, t.ms) == ("demo-v2", "edge-1", (1200.0, 850.5, 0.0))


def test_the_p95_is_an_observed_time_by_nearest_rank():
    assert refresh_p95((10.0, 20.0)).p95 == 20.0                       # ceil(0.95 * 2) = 2
    assert refresh_p95(tuple(float(i) for i in range(1, 21))).p95 == 19.0  # ceil(19.0) = 19
    assert refresh_p95(tuple(float(i) for i in range(1, 101))).p95 == 95.0


def test_the_bound_needs_59_refreshes():
    assert MIN_REFRESHES == 59
    assert 1 - 0.95 ** 58 < 0.95 <= 1 - 0.95 ** 59                       # the largest of n bounds p95 from n = 59
    assert upper_rank(58) is None and upper_rank(59) == 59
    assert refresh_p95(tuple(float(i) for i in range(58))).upper is None


@pytest.mark.parametrize("n", [59, 60, 100, 200, 1000])
def test_the_rank_is_the_smallest_with_enough_confidence(n):
    k = upper_rank(n)
    assert binom.cdf(k - 1, n, 0.95) >= 0.95 > binom.cdf(k - 2, n, 0.95)


def test_the_bound_covers_the_true_p95_at_least_95_percent_of_the_time():
    rng = np.random.default_rng(7)
    true_p95 = float(np.exp(1.6448536269514722))               # lognormal(0, 1)
    covered = [refresh_p95(tuple(rng.lognormal(0.0, 1.0, 80))).upper >= true_p95 for _ in range(4000)]
    assert np.mean(covered) >= 0.94


@pytest.mark.parametrize("text, what", [
    (rows(100, scope="model-call"), "not a whole-refresh timing"),
    (rows(100, "-5"), "not a time"),
    (rows(100, "nan"), "not a time"),
    (rows(100, "1e999"), "not a time"),
    (HEAD + "r,demo-v2,a,capture-to-handoff,1\nr,demo-v2,a,capture-to-handoff,2\n", "repeated"),
    (HEAD + "r1,demo-v2,a,capture-to-handoff,1\nr2,demo-v2,b,capture-to-handoff,2\n", "host empty or not"),
    (HEAD, "no refreshes"),
    ("refresh,ms\nr1,5\n", "missing column"),
])
def test_bad_files_name_the_row_and_what_was_expected(text, what):
    with pytest.raises(InputError) as err:
        parse_refresh(text, where="timings.csv")
    assert what in err.value.message and "timings.csv" in err.value.message


def test_a_device_is_refused_not_read(tmp_path):
    link = tmp_path / "t.csv"
    link.symlink_to("/dev/zero")
    with pytest.raises(InputError, match="not a regular file"):
        read_refresh(link)

"""The fewest clusters an exact sign-flip test may run on, and the session check (by hand)."""
from __future__ import annotations

import pytest

from candor_eval.common.errors import InputError
from candor_eval.stats.clusters import check_session_clusters, min_clusters
from candor_eval.stats.signflip import signflip_p


@pytest.mark.parametrize("alpha,g", [(0.05, 6), (0.01, 8), (0.02, 7), (0.1, 5), (0.03125, 6), (0.031, 7),
                                     (0.5, 2), (0.9, 2), (1e-6, 21)])
def test_min_clusters_is_the_least_g_whose_best_p_reaches_alpha(alpha, g):
    """2 ** (1 - G) <= alpha: 0.05 -> 6 (2**-5 = 0.03125; 5 gives 0.0625), 0.01 -> 8 (2**-7)."""
    assert min_clusters(alpha) == g
    assert 2.0 ** (1 - g) <= alpha < 2.0 ** (2 - g) or g == 1


def test_min_clusters_agrees_with_the_sign_flip_test_itself():
    """At min_clusters every cluster moving one way reaches alpha; one cluster fewer never does."""
    for alpha in (0.05, 0.01, 0.2):
        g = min_clusters(alpha)
        assert signflip_p([1] * g) <= alpha < signflip_p([1] * (g - 1))


def rows(sessions: int, split: str = "test", frames_each: int = 2) -> list[tuple[str, str, str]]:
    return [(f"{split}-f{s}-{i}", f"{split}-s{s}", split) for s in range(sessions) for i in range(frames_each)]


def test_enough_named_sessions_in_every_split_pass():
    check_session_clusters(rows(6) + rows(6, "dev"), alpha=0.05, where="frames.csv")
    check_session_clusters(rows(8), alpha=0.01, where="frames.csv")
    check_session_clusters(None, alpha=0.05, where="frames.csv")          # no tables at all: nothing to check


def test_too_few_sessions_follow_alpha_and_name_the_split():
    check_session_clusters(rows(6), alpha=0.05, where="f.csv")
    with pytest.raises(InputError) as err:
        check_session_clusters(rows(6) + rows(7, "dev"), alpha=0.01, where="f.csv")
    assert [str(p) for p in err.value.problems] == [
        "f.csv (split dev): too few capture sessions for an exact test at alpha 0.01 (expected >= 8 sessions, got 7: "
        + ", ".join(f"dev-s{s}" for s in range(7)) + ")",
        "f.csv (split test): too few capture sessions for an exact test at alpha 0.01 (expected >= 8 sessions, "
        "got 6: " + ", ".join(f"test-s{s}" for s in range(6)) + ")"]


def test_an_empty_session_name_is_an_error_not_a_cluster():
    bad = rows(6) + [("x1", "", "test"), ("x1", " ", "test"), ("x2", "", "test")]
    with pytest.raises(InputError) as err:
        check_session_clusters(bad, alpha=0.05, where="f.csv")
    assert [str(p) for p in err.value.problems] == [
        "f.csv: frame with no session name, clustered by session: x1, x2 (expected a session name for every frame)"]


def test_label_outcomes_without_the_frame_table_are_an_error():
    with pytest.raises(InputError, match=r"f.csv: absent: the label outcomes are clustered by session"):
        check_session_clusters(None, alpha=0.05, where="f.csv", labels=True)

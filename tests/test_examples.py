"""The worked examples of README, "Benchmark your production code, not a copy of its prompt", run as a user runs
them, offline: production code that calls an OpenAI-compatible endpoint through the official ``openai`` SDK
(``examples/lots_analyzer.py``, against the loopback chat server of the tests) and the same code behind an HTTP
route (``examples/analyzer_route.py``, on 127.0.0.1) are recorded live, promoted, replayed byte-identically by
``dvc repro``; one changed line of the production module makes replay exit 2 naming the file, and ``dvc status``
lists both candidates' identify stages."""
from __future__ import annotations

import json
import shutil

import pytest

from candor_eval.lots.golden import load_golden
from tests.chat_server import chat_server
from tests.conftest import CANDOR
from tests.support_repo import add_candidates, repo_copy, sh

pytestmark = pytest.mark.slow

KEY = "sk-EXAMPLE-SENTINEL-2b7d11"
TOKEN = "tok-EXAMPLE-SENTINEL-90ac3e"
ANSWER = {"type": "item", "item": {"itemManufacturer": "Dell", "itemModel": "OptiPlex 7090", "itemType": "Desktop",
                                   "quantity": "3"}, "imageLabel": "3x Desktop", "imageNotes": "on a pallet"}


@pytest.fixture(scope="module")
def worked(tmp_path_factory):
    """The repository copy after both examples were recorded live and promoted, and what the runs printed."""
    from examples import analyzer_route

    repo = repo_copy(tmp_path_factory.mktemp("example") / "repo")
    fence = "```json\n" + json.dumps(ANSWER) + "\n```"                  # post-processing drops it
    script = [("ok", fence), ("status", 429, 0), ("ok", fence)]          # one rate limit: transient, retried
    with chat_server(script) as chat, pytest.MonkeyPatch.context() as mp:
        env = {"ANALYZER_BASE_URL": chat.url, "OPENAI_API_KEY": KEY, "WEBAPP_TOKEN": TOKEN,
               "WEBAPP_AUTH": f"Bearer {TOKEN}"}
        for k, v in env.items():                 # the route runs in this process and reads them, as the app would
            mp.setenv(k, v)
        route = analyzer_route.serve()
        try:
            url = f"http://127.0.0.1:{route.server_address[1]}{analyzer_route.ROUTE}"
            add_candidates(repo, {"example-analyzer": {"python": "examples.lots_analyzer:analyze"},
                                  "webapp": {"http": url, "headers": {"Authorization": "WEBAPP_AUTH"}}},
                           {"example-analyzer": "examples/lots_analyzer.py", "webapp": "examples"}, pause_s=0)
            runs = {c: sh([*CANDOR, "identify", "--candidate", c, "--mode", "live", "--record",
                           f"build/live/{c}.jsonl"], cwd=repo, env=env) for c in ("example-analyzer", "webapp")}
        finally:
            route.shutdown()
            route.server_close()
    for c in runs:
        shutil.copy(repo / f"build/live/{c}.jsonl", repo / f"data/lots/recordings/{c}.jsonl")     # promote
    return repo, runs, chat


def test_the_production_code_was_called_through_the_sdk_and_the_route(worked):
    repo, runs, chat = worked
    assert {r["headers"]["user-agent"].split("/")[0] for r in chat.requests} == {"OpenAI"}
    assert all(r["headers"]["authorization"] == f"Bearer {KEY}" for r in chat.requests)
    for c in ("example-analyzer", "webapp"):
        lines = [json.loads(x) for x in (repo / f"build/live/{c}.jsonl").read_text().splitlines()]
        assert len(lines) == len(load_golden(repo / "data/lots").ids()) * 3 and all(x["error"] is None for x in lines)
        assert {x["parsed"]["item"]["quantity"] for x in lines} == {3}     # the production post-processing ran
    web = [json.loads(x) for x in (repo / "build/live/webapp.jsonl").read_text().splitlines()]
    assert {(x["provider"], x["model"], x["version"]) for x in web} == {("http", "/api/analyze-image",
                                                                          "lots-analyzer 2026.12.1")}
    printed = "".join(r.stdout + r.stderr for r in runs.values())
    assert KEY not in printed and TOKEN not in printed
    assert not [p for p in repo.rglob("*") if p.is_file() and (KEY.encode() in p.read_bytes()
                                                               or TOKEN.encode() in p.read_bytes())]


def test_replay_is_byte_identical_and_a_changed_line_is_stale_for_dvc_and_for_replay(worked):
    repo, _, _ = worked
    out = sh(["dvc", "repro", "-s", "identify@example-analyzer", "identify@webapp"], cwd=repo)
    first = {c: (repo / f"build/answers/{c}.jsonl").read_bytes() for c in ("example-analyzer", "webapp")}
    for c in first:
        sh([*CANDOR, "identify", "--candidate", c, "--answers", f"build/answers/{c}.again.jsonl"],
           cwd=repo)
        assert (repo / f"build/answers/{c}.again.jsonl").read_bytes() == first[c]
    assert "didn't change" in sh(["dvc", "repro", "-s", "identify@example-analyzer"], cwd=repo).stdout, out.stdout

    module = repo / "examples/lots_analyzer.py"
    module.write_text(module.read_text().replace("temperature=0)", "temperature=0.2)"))       # one line
    status = sh(["dvc", "status", "identify@example-analyzer", "identify@webapp"], cwd=repo).stdout
    assert "identify@example-analyzer" in status and "identify@webapp" in status
    assert "modified:           examples/lots_analyzer.py" in status and "modified:           examples" in status
    replay = sh([*CANDOR, "identify", "--candidate", "example-analyzer"], cwd=repo, check=False)
    assert replay.returncode == 2 and "Traceback" not in replay.stderr
    assert ("data/lots/recordings/example-analyzer.jsonl: recorded with other production code: "
            "examples/lots_analyzer.py changed") in replay.stderr
    assert "record it again with `candor record example-analyzer` (add --force" in replay.stderr
    web = sh([*CANDOR, "identify", "--candidate", "webapp"], cwd=repo, check=False)
    assert web.returncode == 2 and "recorded with other production code: examples changed" in web.stderr

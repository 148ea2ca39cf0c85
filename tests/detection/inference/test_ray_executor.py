"""The detect stage on a real Ray cluster (candor_eval/detection/inference/ray_executor.py, ``detector.executor: ray``),
run as a user runs it: a head and a worker node started with Ray's own command line, the stage run as
``candor detect`` with ``RAY_ADDRESS`` pointing at the head; its files compared byte for byte
with ``executor: local``; then one worker node killed by its PID mid-run.

Loopback only: the cluster runs in a private network namespace (``unshare --user --net --uts``) whose
one interface is ``lo`` and whose host name is ``localhost``, so every Ray address is 127.0.0.1 (Ray
replaces a 127.0.0.1 given to ``ray start`` by the machine's outbound address when one exists) and
nothing is reachable from outside. Every process is stopped by its own PID; never ``ray stop``, which
stops every Ray process of the user on the machine.

Needs Ray (requirements-cluster.txt, installed by ``make test``) and unprivileged user namespaces: when
either is missing the test fails under ``CI=true`` and is skipped with the reason otherwise.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from candor_eval.common.errors import run_main
from candor_eval.detection.inference import ray_executor
from candor_eval.stages import detect, fetch
from tests.conftest import ROOT
from tests.support_detect import tiny_repo, ultralytics_output, write_card

FRAMES = 48                      # 8 shards of 6 frames on 2 worker nodes of 1 CPU each
SIDE = 256                       # model input; the work per frame is NMATMUL [768, 256] x [256, 256] products
NMATMUL = 48
PORT = 6380                      # free: the namespace is private (6379 is left to a local cluster)
PARAMS = ("detector:\n  sets: {detector: [tiny]}\n  floor: 0.05\n  nms_iou: 0.5\n"
          "  providers: [CPUExecutionProvider]\n  executor: EXECUTOR\n")
ROWS = [[128, 128, 64, 32, 0.1, 0.9, 0.0], [40, 80, 16, 16, 0.7, 0.0, 0.2]]


def missing(reason: str) -> None:
    """Fail under CI (nothing is skipped there), skip with the reason elsewhere."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason)
    pytest.skip(reason)


def slow_model(path: Path, output: np.ndarray) -> str:
    """An ONNX model whose output is ``output`` (+ 0 x a chain of matrix products of the input, so each
    frame costs milliseconds and cannot be folded away); returns its SHA-256."""
    x = helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, SIDE, SIDE])
    y = helper.make_tensor_value_info("output0", TensorProto.FLOAT, list(output.shape))
    inits = [numpy_helper.from_array(output.astype(np.float32), name="fixed"),
             numpy_helper.from_array(np.array(0.0, np.float32), name="zero"),
             numpy_helper.from_array(np.array([3 * SIDE, SIDE], np.int64), name="shape"),
             numpy_helper.from_array(0.5 * np.eye(SIDE, dtype=np.float32), name="w")]
    nodes = [helper.make_node("Reshape", ["images", "shape"], ["m0"])]
    nodes += [helper.make_node("MatMul", [f"m{i}", "w"], [f"m{i + 1}"]) for i in range(NMATMUL)]
    nodes += [helper.make_node("ReduceMax", [f"m{NMATMUL}"], ["top"], keepdims=0),
              helper.make_node("Mul", ["top", "zero"], ["z"]),
              helper.make_node("Add", ["fixed", "z"], ["output0"])]
    model = helper.make_model(helper.make_graph(nodes, "slow", [x], [y], initializer=inits),
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    data = model.SerializeToString()
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


class LoopbackCluster:
    """A Ray head and worker nodes started with ``ray start --block`` inside a private loopback network
    namespace; :meth:`run` runs a command in it. Each node is its own session (temp dir) and its own
    process group, whose leader's PID stops it."""

    def __init__(self) -> None:
        self.ray = str(Path(sys.executable).parent / "ray")
        self.env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "PYTHONPATH": str(ROOT),
                    "RAY_ADDRESS": f"127.0.0.1:{PORT}", "TQDM_MININTERVAL": "0",
                    # token authentication with a token of this cluster's own (never ~/.ray/auth_token)
                    "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32),
                    # a lost node is declared dead after ~1 s, not Ray's default ~30 s
                    "RAY_health_check_initial_delay_ms": "0", "RAY_health_check_period_ms": "300",
                    "RAY_health_check_timeout_ms": "300", "RAY_health_check_failure_threshold": "3"}
        self.holder = subprocess.Popen(
            ["unshare", "--user", "--map-root-user", "--net", "--uts", "sh", "-c",
             "ip link set lo up && hostname localhost && echo ready && exec sleep 600"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if self.holder.stdout.readline().strip() != "ready":
            self.holder.wait(5)
            raise OSError("unprivileged user and network namespaces are not available (unshare)")
        self.nodes: list[tuple[subprocess.Popen, Path, Path]] = []

    def command(self, *argv: str) -> list[str]:
        return ["nsenter", "--preserve-credentials", "-U", "-n", "-u", "-t", str(self.holder.pid), *argv]

    def start(self, *args: str) -> subprocess.Popen:
        """Start a node (``ray start ... --block``) and wait until it has joined."""
        tmp = Path(tempfile.mkdtemp(prefix="candor-ray-", dir="/tmp"))    # short: Ray's socket paths
        log = tmp / "start.log"
        with open(log, "w") as out:
            proc = subprocess.Popen(self.command(self.ray, "start", *args, f"--temp-dir={tmp}",
                                                 "--disable-usage-stats", "--block"),
                                    env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self.nodes.append((proc, tmp, log))
        deadline = time.monotonic() + 40
        while "Ray runtime started" not in log.read_text():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"ray start {' '.join(args)} failed:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        return proc

    def run(self, argv: list[str], cwd: Path, *, address: bool = True) -> subprocess.Popen:
        """Run ``argv`` in the namespace, with ``RAY_ADDRESS`` set to the head unless ``address`` is false."""
        env = self.env if address else {k: v for k, v in self.env.items() if k != "RAY_ADDRESS"}
        return subprocess.Popen(self.command(*argv), cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)

    def stop(self) -> None:
        """Stop every node by its PID (SIGTERM: ``ray start --block`` stops its own processes), then
        the namespace holder; SIGKILL to a node's process group if it lingers."""
        for proc, _, _ in reversed(self.nodes):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc, tmp, _ in reversed(self.nodes):
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
            shutil.rmtree(tmp, ignore_errors=True)
        self.holder.kill()
        self.holder.wait(5)


class Stderr:
    """The stderr of a running process, read in a thread, so a test can wait for a pattern in it."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.text = ""
        self.thread = threading.Thread(target=self.read, args=(proc,), daemon=True)
        self.thread.start()

    def read(self, proc: subprocess.Popen) -> None:
        while chunk := proc.stderr.read(1):
            self.text += chunk

    def wait_for(self, pattern: str, proc: subprocess.Popen, *, timeout: float) -> re.Match:
        deadline = time.monotonic() + timeout
        while (found := re.search(pattern, self.text)) is None:
            assert proc.poll() is None and time.monotonic() < deadline, f"no {pattern!r} in:\n{self.text[-3000:]}"
            time.sleep(0.01)
        return found


@pytest.fixture()
def loopback_cluster() -> Iterator[LoopbackCluster]:
    if importlib.util.find_spec("ray") is None:
        missing("ray is not installed: pip install -r requirements-cluster.txt (make test installs it)")
    if shutil.which("unshare") is None or shutil.which("nsenter") is None:
        missing("unshare/nsenter (util-linux) not found: the cluster runs in a private loopback namespace")
    try:
        ns = LoopbackCluster()
    except OSError as err:
        missing(str(err))
    try:
        ns.start("--head", "--node-ip-address=127.0.0.1", f"--port={PORT}", "--num-cpus=0",
                 "--include-dashboard=false")           # no task on the head: the workers run the shards
        yield ns
    finally:
        ns.stop()


@pytest.fixture()
def workspace(tmp_path: Path, monkeypatch) -> Path:
    """A verified workspace: FRAMES frames, the slow model ``tiny``, params for each executor."""
    monkeypatch.chdir(tmp_path)
    frames = {f"f{i:03d}": {"size": (320, 240)} for i in range(FRAMES)}
    tiny_repo(tmp_path, frames=frames, rows=ROWS, params=PARAMS.replace("EXECUTOR", "local"))
    sha = slow_model(tmp_path / "models" / "tiny.onnx", ultralytics_output(ROWS))
    write_card(tmp_path / "models", "tiny", sha, input_size=[SIDE, SIDE])
    assert run_main(fetch.main, ["verify", "--data", "data", "--models", "models", "--out", "build/verified"]) == 0
    (tmp_path / "params-ray.yaml").write_text(PARAMS.replace("EXECUTOR", "ray"))
    return tmp_path


def runs(node: Path) -> int:
    """Shards a node ran so far: Ray marks each task a worker runs in its log (the session folder
    ``session_<date>...``; ``session_latest`` links to it)."""
    return sum(p.read_text(errors="replace").count(":task_name:detect_shard")
               for p in node.glob("session_[0-9]*/logs/worker-*.out"))


def node_processes(group: int) -> dict[int, bytes]:
    """The processes of the node whose ``ray start`` leads process group ``group`` -> their titles:
    the group, and the worker processes its raylet started (each in a process group of its own). Ray
    titles a worker ``ray::<task name>`` while it runs that task, ``ray::IDLE`` otherwise."""
    procs = {}
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            state, ppid, pgrp = (proc / "stat").read_text().rsplit(")", 1)[1].split()[:3]
            if state != "Z":                                            # a zombie has exited
                procs[int(proc.name)] = int(ppid), int(pgrp), (proc / "cmdline").read_bytes().split(b"\0")[0]
        except (OSError, IndexError, ValueError):
            continue
    return {pid: title for pid, (ppid, pgrp, title) in procs.items()
            if pgrp == group or procs.get(ppid, (0, 0, b""))[1] == group}


def kill_node(group: int) -> list[int]:
    """SIGKILL every process of the node (:func:`node_processes`), by PID; returns the PIDs."""
    pids = list(node_processes(group))
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return pids


def detect_command(out: str) -> list[str]:
    return [sys.executable, "-m", "stages.detect", "--set", "detector", "--params", "params-ray.yaml", "--out", out]


@pytest.mark.slow
def test_cluster_run_equals_local_and_survives_a_lost_worker(workspace, loopback_cluster):
    t0 = time.monotonic()
    assert run_main(detect.main, ["--set", "detector", "--out", "local"]) == 0
    local = (workspace / "local" / "tiny.jsonl").read_bytes()
    assert len(local.splitlines()) == FRAMES + 1

    workers = [loopback_cluster.start(f"--address=127.0.0.1:{PORT}", "--num-cpus=1") for _ in range(2)]
    dirs = [tmp for _, tmp, _ in loopback_cluster.nodes[1:]]
    proc = loopback_cluster.run(detect_command("ray"), workspace)
    err = Stderr(proc)
    assert proc.wait(60) == 0, err.text[-3000:]
    err.thread.join(5)
    assert "3 node(s), 2 CPU(s)" in err.text and "in 8 shard(s) on 2 CPU(s)" in err.text
    assert all(runs(d) > 0 for d in dirs) and sum(runs(d) for d in dirs) == 8      # both workers ran shards
    assert (workspace / "ray" / "tiny.jsonl").read_bytes() == local

    # the same run; the first worker node seen running a shard is lost (SIGKILL to each of its processes)
    proc = loopback_cluster.run(detect_command("ray-killed"), workspace)
    err = Stderr(proc)
    deadline = time.monotonic() + 40
    while not (busy := [w for w in workers if any(t.startswith(b"ray::detect_shard")
                                                  for t in node_processes(w.pid).values())]):
        assert proc.poll() is None and time.monotonic() < deadline, err.text[-3000:]
        time.sleep(0.005)
    lost = busy[0]
    killed = kill_node(lost.pid)
    assert proc.poll() is None and lost.pid in killed                   # killed mid-run
    assert proc.wait(60) == 0, err.text[-3000:]
    err.thread.join(5)
    assert lost.wait(5) == -signal.SIGKILL
    assert not node_processes(lost.pid)
    assert (workspace / "ray-killed" / "tiny.jsonl").read_bytes() == local

    # no RAY_ADDRESS: a local cluster is started for the run (and stopped after it)
    proc = loopback_cluster.run(detect_command("ray-local"), workspace, address=False)
    err = Stderr(proc)
    assert proc.wait(60) == 0, err.text[-3000:]
    err.thread.join(5)
    assert "ray cluster started locally" in err.text
    assert (workspace / "ray-local" / "tiny.jsonl").read_bytes() == local
    assert time.monotonic() - t0 < 90


def test_shards_cover_the_frames_in_order():
    for n in (0, 1, 7, 48, 1001):
        size = ray_executor.shard_size(n, cpus=3)
        spans = ray_executor.shards(n, size=size)
        assert [i for a, b in spans for i in range(a, b)] == list(range(n))
        assert all(b - a == size for a, b in spans[:-1])


def test_ray_notices_are_off_unless_the_user_set_them():
    """Usage statistics off unless the user set them; the token-auth notice's logger at errors only."""
    import logging

    env: dict[str, str] = {}
    ray_executor.quiet_ray(env)
    assert env == {"RAY_USAGE_STATS_ENABLED": "0"}
    assert logging.getLogger(ray_executor.AUTH_NOTICE).getEffectiveLevel() == logging.ERROR
    mine = {"RAY_USAGE_STATS_ENABLED": "1"}
    ray_executor.quiet_ray(mine)
    assert mine == {"RAY_USAGE_STATS_ENABLED": "1"}


QUIET_RUN = """
import sys
from candor_eval.detection.inference.ray_executor import connected, import_ray
with connected():
    ray = import_ray()
    @ray.remote
    def noisy(x):
        print("[mutex.cc : 452] RAW: Lock blocking (a worker's own stderr)", file=sys.stderr)
        return x
    print(sum(ray.get([noisy.remote(i) for i in range(4)])))
"""


def test_a_local_ray_run_prints_neither_the_auth_warning_nor_the_workers_stderr():
    """A real local cluster: the run's console holds the answer and candor's own line, not Ray's token
    notice nor what a worker writes to its stderr (it stays in Ray's session logs)."""
    pytest.importorskip("ray")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")} | {"PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", QUIET_RUN], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "6"
    assert "Token authentication" not in done.stderr and "RAW: Lock blocking" not in done.stderr

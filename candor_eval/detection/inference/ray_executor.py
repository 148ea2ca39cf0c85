"""One model over the frames of a data set on a Ray cluster (``detector.executor: ray``): the
same frame lines as :func:`candor_eval.detection.inference.runner.iter_lines`, computed in shards.

- :func:`connected`: the cluster named by Ray's address variable ``RAY_ADDRESS``
  (``host:port`` of a head started with ``ray start --head``), or a local one started for the
  run when it is unset. Ray is an optional extra (``requirements-cluster.txt``), imported only here
  and only when this executor is chosen.
- :func:`shard_size` and :func:`shards`: the frames, sorted as the manifest gives them, cut into
  contiguous ``[start, stop)`` ranges of equal size (the last may be shorter).
- :func:`detect_shard`, the remote task: a worker opens the model itself with
  :func:`~candor_eval.detection.inference.onnx_model.open_model`, which reads the ONNX bytes on that
  worker, checks their SHA-256 against the card and hands *those bytes* to onnxruntime; the worker
  then refuses a model whose SHA-256 differs from the one the driver checked. A worker process keeps
  the model it opened for the next shards of the same card, SHA-256 and providers (the bytes it
  holds are bytes that hashed to that SHA-256). It returns the shard's
  :class:`~candor_eval.detection.detections_file.FrameBoxes` from
  :func:`~candor_eval.detection.inference.runner.iter_frames`, the code the ``local`` executor runs.
- :func:`iter_cluster_lines`: the file's lines from the driver's header and the shards' frames, put back in
  frame order by :func:`~candor_eval.detection.detections_file.file_lines` (so rounding, order
  and bytes are the local executor's); at most ``2 x`` the cluster's CPUs shards are in flight.

Workers read the card, the ONNX file, the fetch stage's records and the images at the driver's
absolute paths: every node needs the same checkout at the same path (one machine, or a shared
filesystem). A shard whose worker dies (process or node lost) is run again by Ray, up to
:data:`MAX_RETRIES` times; errors raised by the code (a hash mismatch, a bad image) are not retried.
Failures: a worker's :class:`~candor_eval.common.errors.InputError` is raised as is (exit 2);
anything else Ray reports after its retries is :class:`ClusterFailed` (the stage exits 1).
"""
from __future__ import annotations

import logging
import math
import os
import time
from collections import deque
from collections.abc import Iterator, MutableMapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import Any

from tqdm import tqdm

from candor_eval.common.errors import InputError, fail
from candor_eval.common.params import DEFAULT_PARAMS
from candor_eval.detection.detections_file import FrameBoxes, file_lines, header
from candor_eval.detection.inference.onnx_model import LoadedModel, open_model
from candor_eval.detection.inference.runner import iter_frames

log = logging.getLogger("candor.cluster")

ADDRESS_VARIABLE = "RAY_ADDRESS"
SHARDS_PER_CPU = 4       # shards per CPU of the cluster: enough to balance uneven frames and lost workers
MOST_FRAMES = 1000       # a shard never holds more frames than this (bounded memory per task and result)
IN_FLIGHT_PER_CPU = 2    # shards submitted ahead per CPU (bounded memory on the driver)
MAX_RETRIES = 3          # runs of a shard whose worker died, after the first


class ClusterFailed(RuntimeError):
    """The cluster could not finish the run (workers lost beyond the retries, cluster gone)."""


def import_ray(*, params_file: str | Path = DEFAULT_PARAMS) -> Any:
    """The ``ray`` module, or an InputError saying how to install it (naming ``detector.executor`` of
    ``params_file``, the params file that chose this executor)."""
    try:
        import ray
    except ImportError:
        raise fail(f"{params_file}:detector.executor", "executor ray needs Ray, which is not installed",
                   hint="pip install -r requirements-cluster.txt, or set detector.executor: local") from None
    return ray


@contextmanager
def connected(*, params_file: str | Path = DEFAULT_PARAMS) -> Iterator[None]:
    """Connect to the cluster at ``$RAY_ADDRESS``, or start a local one when it is unset; disconnect
    at the end (a local cluster is stopped). Ray's usage statistics are off unless
    ``RAY_USAGE_STATS_ENABLED`` says otherwise. ``params_file``: the params file that chose this
    executor (named when Ray is not installed).

    Kept out of the console and its progress bar (:func:`quiet_ray`): the workers' own output (their
    stderr stays in Ray's session logs; a task's error still reaches the driver with its traceback) and
    the notice that token authentication is on."""
    ray = import_ray(params_file=params_file)
    address = os.environ.get(ADDRESS_VARIABLE) or "local"
    quiet_ray(os.environ)
    local = {"include_dashboard": False} if address == "local" else {}
    try:
        ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False, **local)
    except (ConnectionError, ValueError) as err:
        raise fail(f"${ADDRESS_VARIABLE}", f"cannot connect to the Ray cluster: {err}", got=address,
                   hint="start one (ray start --head --port=6379) and set RAY_ADDRESS=<head>:6379, "
                        "or unset RAY_ADDRESS to start a local cluster for the run") from None
    log.info("ray cluster %s: %d node(s), %d CPU(s)", "started locally" if address == "local" else address,
             len([n for n in ray.nodes() if n["Alive"]]), cluster_cpus(ray))
    try:
        yield
    finally:
        ray.shutdown()


AUTH_NOTICE = "ray._private.authentication.authentication_token_setup"   # logs Ray's token-auth notices


def quiet_ray(env: MutableMapping[str, str]) -> None:
    """Ray's notices kept off the console: usage statistics off (``RAY_USAGE_STATS_ENABLED=0`` unless set)
    and the logger of its token-authentication notice (:data:`AUTH_NOTICE`: "Token authentication is
    enabled for this Ray cluster", printed whenever a local cluster starts) at errors only; the
    authentication itself is Ray's default, unchanged."""
    env.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    logging.getLogger(AUTH_NOTICE).setLevel(logging.ERROR)


def cluster_cpus(ray: Any) -> int:
    """The CPUs of the connected cluster (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def shard_size(n_frames: int, *, cpus: int) -> int:
    """Frames per shard: :data:`SHARDS_PER_CPU` shards per CPU, at most :data:`MOST_FRAMES`, at least 1.

    >>> shard_size(64, cpus=2), shard_size(1_000_000, cpus=16), shard_size(0, cpus=4)
    (8, 1000, 1)
    """
    return max(1, min(MOST_FRAMES, math.ceil(n_frames / (cpus * SHARDS_PER_CPU))))


def shards(n_frames: int, *, size: int) -> list[tuple[int, int]]:
    """Contiguous ``[start, stop)`` ranges covering ``range(n_frames)`` in order, ``size`` frames each
    (the last may be shorter); no range when there are no frames.

    >>> shards(7, size=3), shards(0, size=3)
    ([(0, 3), (3, 6), (6, 7)], [])
    """
    return [(start, min(start + size, n_frames)) for start in range(0, n_frames, size)]


@dataclass(frozen=True)
class ModelSource:
    """What a worker needs to open the model the driver checked: the card and the fetch stage's
    record (absolute paths), the providers, the SHA-256 of the bytes the driver loaded, and the
    params file the providers came from (named when a worker lacks one)."""

    card: str
    verified: str
    providers: tuple[str, ...]
    sha256: str
    params_file: str = str(DEFAULT_PARAMS)


@lru_cache(maxsize=2)
def worker_model(source: ModelSource) -> LoadedModel:
    """The model of ``source`` opened on this worker: bytes read here, hashed, checked, loaded."""
    model = open_model(Path(source.card), providers=list(source.providers), verified=Path(source.verified),
                       params_file=source.params_file)
    if model.sha256 != source.sha256:
        raise fail(source.card, "the model on this worker differs from the one the driver checked",
                   expected=source.sha256, got=model.sha256,
                   hint="every node must see the same model files (same checkout, same path)")
    return model


def detect_shard(source: ModelSource, frames: list[str], images: list[str], *, floor: float) -> list[FrameBoxes]:
    """The remote task: the raw boxes of ``frames`` (their images at ``images``), in order."""
    model = worker_model(source)
    return list(iter_frames(model, frames, {f: Path(p) for f, p in zip(frames, images)}, floor=floor))


def iter_cluster_lines(model: LoadedModel, frames: Sequence[str], images: dict[str, Path], *, floor: float,
               card: Path, verified: Path, providers: Sequence[str],
               params_file: str | Path = DEFAULT_PARAMS) -> Iterator[str]:
    """The raw-detections file's lines (without ``\\n``), equal to the local executor's: the header of
    the driver's ``model``, then one line per frame in ``frames`` order, computed in shards on the
    connected cluster (:func:`connected`). ``card`` and ``verified`` are the model's card and the
    fetch stage's record of it, opened again by each worker; ``providers`` were read from ``params_file``."""
    ray = import_ray(params_file=params_file)
    source = ModelSource(card=str(card.resolve()), verified=str(verified.resolve()), providers=tuple(providers),
                         sha256=model.sha256, params_file=str(params_file))
    cpus = cluster_cpus(ray)
    ranges = shards(len(frames), size=shard_size(len(frames), cpus=cpus))
    log.info("%s: %d frames in %d shard(s) on %d CPU(s)", model.name, len(frames), len(ranges), cpus)
    task = ray.remote(max_retries=MAX_RETRIES, retry_exceptions=False,
                      runtime_env={"env_vars": {"TQDM_DISABLE": "1"}})(detect_shard)

    def submit(span: tuple[int, int]) -> Any:
        part = list(frames[span[0]:span[1]])
        return task.remote(source, part, [str(images[f].resolve()) for f in part], floor=floor)

    return file_lines(header(model, floor=floor), in_order(ray, map(submit, ranges), window=IN_FLIGHT_PER_CPU * cpus,
                                                           total=len(frames), name=model.name))


def in_order(ray: Any, submitted: Iterator[Any], *, window: int, total: int, name: str) -> Iterator[FrameBoxes]:
    """The frames of each shard's result in submission order, keeping at most ``window`` shards in
    flight (``submitted`` is lazy: a shard is submitted when one is taken). Ray errors become
    :class:`ClusterFailed`; a worker's InputError is raised as is."""
    start = time.monotonic()
    pending = deque(islice(submitted, window))
    with tqdm(total=total, desc=f"detect {name} (ray)", unit="frame") as bar:
        while pending:
            try:
                done = ray.get(pending.popleft())
            except ray.exceptions.RayTaskError as err:
                if isinstance(err.cause, InputError):
                    raise err.cause from None
                raise ClusterFailed(f"a shard failed on the cluster: {err.cause!r}") from err
            except ray.exceptions.RayError as err:
                raise ClusterFailed(f"the cluster lost a shard after {MAX_RETRIES} retries: {err}") from err
            pending.extend(islice(submitted, 1))
            bar.update(len(done))
            yield from done
    seconds = time.monotonic() - start
    log.info("%s: %d frames in %.2f s on the cluster (%.1f frames/s)", name, total, seconds, total / max(seconds, 1e-9))

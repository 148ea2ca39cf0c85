"""What the stats and gate stages read from params alike: the gate's settings and the lots reference,
checked and resolved once.

Not a stage: the glue two stages share (``stages/cli_*.py``). The library takes the settings as a
value (:class:`candor_eval.review.gate_views.GateSettings`) and never reads params itself. The keys
that name candidates default to the one choice the project leaves (:func:`resolve_gate`,
:func:`lots_reference`); where there are several, the error names the key, the params file and
the names to choose from.
"""
from __future__ import annotations

from collections.abc import Sequence

from candor_eval.common.errors import fail
from candor_eval.common.params import section
from candor_eval.detection.config import DetectorParams, MatchParams
from candor_eval.detection.sets import find_set
from candor_eval.review.gate_views import GateSettings, MatchView, StatsView
from candor_eval.review.params import DeclaredGate, GateParams, StatsParams


def _choice(names: Sequence[str]) -> str:
    return "one of: " + ", ".join(names)


def resolve_gate(gate: GateParams, detector: DetectorParams, *, where: str) -> DeclaredGate | None:
    """The gate of ``gate`` with its set, reference and candidate named (``where``: the params file).

    ``gate.set`` unset: the one set of ``detector.sets`` when there is exactly one; ``None`` (no
    gate to evaluate) when there is none. ``gate.reference`` / ``gate.candidate`` unset: the set's
    first / second model when it has exactly two (a set's reference is its first model); ``None`` when
    both are unset and the set has one model (nothing to compare yet: a new project). Any other
    case of an unset key is an InputError naming ``<where>:gate.<key>`` and the names to choose
    from; a named set that is not one of ``detector.sets`` is an InputError too (the models and the
    split are checked when the gate is evaluated, :func:`candor_eval.review.gate_files.check_gate`).

    >>> d = DetectorParams(sets={"birds": ["m1", "m2"]})
    >>> g = resolve_gate(GateParams(), d, where="p.yaml")
    >>> (g.set, g.reference, g.candidate)
    ('birds', 'm1', 'm2')
    >>> resolve_gate(GateParams(), DetectorParams(), where="p.yaml") is None
    True
    >>> resolve_gate(GateParams(), DetectorParams(sets={"birds": ["m1"]}), where="p.yaml") is None
    True
    """
    sets = list(detector.sets)
    if gate.set is None and not sets:
        return None
    if gate.set is None and len(sets) > 1:
        raise fail(f"{where}:gate.set", f"not set, and detector.sets has {len(sets)} detection sets: name the one "
                   "the gate compares on", expected=_choice(sets))
    dset = find_set(detector, gate.set, where=where, key="gate.set")
    models = dset.models
    if len(models) == 1 and gate.reference is None and gate.candidate is None:
        return None
    named = {}
    for key, index in (("reference", 0), ("candidate", 1)):
        name = getattr(gate, key)
        if name is None and len(models) != 2:
            count = f"{len(models)} model" + ("s" if len(models) != 1 else "")
            raise fail(f"{where}:gate.{key}", f"not set, and detection set {dset.name!r} has {count}: name the "
                       "gate's reference and candidate", expected=_choice(models),
                       hint=None if len(models) > 2 else f"a gate compares two models: add the candidate to "
                                                         f"detector.sets.{dset.name}")
        named[key] = models[index] if name is None else name
    if named["reference"] == named["candidate"]:
        raise fail(f"{where}:gate.candidate", "the candidate is the reference", expected="another model of "
                   f"detection set {dset.name!r}: " + ", ".join(m for m in models if m != named["reference"]),
                   got=named["candidate"])
    return DeclaredGate(**{**gate.model_dump(), "set": dset.name, **named})


def lots_reference(stats: StatsParams, candidates: Sequence[str], *, where: str) -> str | None:
    """The lots tracks' reference: ``stats.reference.lots`` when set, else the one candidate of
    ``candidates`` (``identify.candidates``) when there is exactly one, else ``None`` when there is
    none (the project has no lots track); with more, an InputError naming
    ``<where>:stats.reference.lots`` and the candidates.

    >>> lots_reference(StatsParams(), ["ocr"], where="p.yaml"), lots_reference(StatsParams(), [], where="p.yaml")
    ('ocr', None)
    """
    if stats.reference.lots is not None:
        return stats.reference.lots
    if len(candidates) > 1:
        raise fail(f"{where}:stats.reference.lots", f"not set, and identify.candidates lists {len(candidates)} "
                   "candidates: name the reference the others are compared with", expected=_choice(candidates))
    return candidates[0] if candidates else None


def read_gate_settings(params: str) -> GateSettings | None:
    """The sections of the params file ``params`` the gate reads (``gate``; the views of ``stats`` and
    ``match``; ``detector``), the gate resolved (:func:`resolve_gate`); ``None`` when the project
    has no detection set and the gate names none (no gate to evaluate). ``stats`` and ``match`` are
    validated whole by their owners' models and the views taken from them, so a misspelled key the
    gate does not read (``match.critcal``) is an error naming the file and key here too, not a
    silent default when the gate runs alone (``candor gate run``)."""
    stats = section(StatsParams, "stats", path=params)
    match = section(MatchParams, "match", path=params)
    detector = section(DetectorParams, "detector", path=params)
    stats.cluster.check_sets(detector.sets, where=params)
    gate = resolve_gate(section(GateParams, "gate", path=params), detector, where=params)
    if gate is None:
        return None
    return GateSettings(gate=gate, stats=StatsView(confidence=stats.confidence, cluster=stats.cluster),
                        match=MatchView(critical=list(match.critical), min_support=match.min_support),
                        detector=detector, where=params)

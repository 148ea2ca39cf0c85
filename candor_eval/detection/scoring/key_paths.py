"""Nested metrics as dotted key paths: the paths ``dvc metrics diff`` shows (``all.micro.f1``).

- :func:`flatten`: the leaves of a nested dict by key path;
- :func:`compare_frozen`: a model card's frozen evaluation against reproduced metrics, key path by
  key path (numbers within a tolerance, other values equal).
"""
from __future__ import annotations


def flatten(doc: dict, prefix: str = "") -> dict[str, object]:
    """Leaves of a nested dict as ``{"a.b.c": value}`` (the key paths ``dvc metrics diff`` shows)."""
    out: dict[str, object] = {}
    for k, v in doc.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten(v, key + "."))
        else:
            out[key] = v
    return out


def compare_frozen(expected: dict, got: dict, *, tol: float = 1e-6) -> tuple[list[str], int]:
    """Field-for-field comparison of a frozen evaluation with reproduced metrics.

    ``expected`` uses the metrics JSON's nesting; a path whose first key is not a
    top-level block of ``got`` (``all``, ``dev``, ``test``) is looked up under
    ``all``. Numbers agree within ``tol`` (metrics are stored to 6 decimals);
    other values must be equal. Returns (sorted differing paths, fields compared).
    """
    flat_got = flatten(got)
    differing = []
    flat_exp = flatten(expected)
    for key, want in flat_exp.items():
        path = key if key.split(".", 1)[0] in got else f"all.{key}"
        have = flat_got.get(path, KeyError)
        num = (int, float)
        if (isinstance(want, num) and not isinstance(want, bool)
                and isinstance(have, num) and not isinstance(have, bool)):
            same = abs(float(want) - float(have)) <= tol
        else:
            same = want == have
        if not same:
            differing.append(key)
    return sorted(differing), len(flat_exp)

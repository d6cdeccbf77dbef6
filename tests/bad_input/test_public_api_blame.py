"""The public API names its own argument in every refusal: a sweep over the functions in the ``__all__``
of every theory module, each called with good values and then with one argument at a time replaced by a
bad value.  The call must either accept the value or raise ``ValueError`` whose message blames that
argument (the names before its first ``": "``, e.g. ``"n: ..."`` or ``"n, n_test, n_rep: ..."``, may
also be ``arg[i]`` or ``arg.field``); any other exception, or a message that blames another argument
(``X`` where the caller passed ``n``), fails.

A function is swept when every argument without a default has a good value in :data:`GOOD` (by name);
the test lists how many were swept, so that a function that loses its good call is seen."""

from __future__ import annotations

import importlib
import inspect
import re

import numpy as np
import pytest
from timeouts import within

MODULES = [
    "heads",
    "data",
    "montecarlo",
    "decomposition",
    "diversity",
    "covariance",
    "scaling",
    "derivation",
    "training",
]

_rng = np.random.default_rng(7)
_X = _rng.standard_normal((30, 4))


def _sample():
    from mhanw import data

    return data.data_model("aniso", "gaussian", "gaussian", 0.5).draw(np.random.default_rng(1), 30, 4, n_test=10)


def _config():
    from mhanw import heads

    return heads.HeadConfig(heads.orthogonal_heads(4, 2, 2), bandwidth=0.5)


#: A good value of each argument name (a function is called with them; a callable makes a fresh one).
GOOD = {
    "X": _X,
    "Y": _rng.standard_normal(30),
    "queries": _rng.standard_normal((5, 4)),
    "W": lambda: np.random.default_rng(2).standard_normal((2, 4, 2)),
    "W0": lambda: np.random.default_rng(2).standard_normal((2, 4, 2)),
    "projections": lambda: np.random.default_rng(2).standard_normal((2, 4, 2)),
    "W_j": np.eye(4)[:, :2],
    "W_jp": np.eye(4)[:, 2:],
    "A": np.eye(4)[:, :2],
    "B": np.eye(4)[:, 1:3],
    "estimates": _rng.standard_normal((2, 5)),
    "sample": _sample,
    "config": _config,
    "configs": lambda: [_config()],
    "n": 30,
    "n_test": 10,
    "n_rep": 3,
    "d": 4,
    "d_k": 2,
    "n_heads": 2,
    "d_v": 1,
    "bandwidth": 0.5,
    "sigma": 0.5,
    "regression": "aniso",
    "inputs": "gaussian",
    "noise": "gaussian",
    "seed": 0,
    "rng": lambda: np.random.default_rng(3),
    "theta": 0.3,
    "t": 0.5,
    "angles": [0.1, 0.4],
    "x": _rng.standard_normal((3, 4)),
    "n_steps": 2,
    "n_starts": 1,
    "budget": 64,
    "log10_n": 3.0,
    "lipschitz": 1.0,
    "point": np.zeros(4),
    "angle": 0.5,
}

#: Good values of one function where the table's by name do not fit it.
OVERRIDES = {
    "heads.concat_contributions": {
        "config": lambda: __import__("mhanw.heads").heads.HeadConfig(
            np.eye(4)[None, :, :2].repeat(2, axis=0), bandwidth=0.5, rule="concat", values="stream"
        )
    },
    "heads.star_heads": {"d": 6},
    "covariance.printed_covariance_bound": {"x": np.zeros(4)},
}

#: Bad values tried for every argument: not a number, negative, a string, non-finite, of the wrong shape.
BAD = [float("nan"), -3, "bad", np.full((3, 3, 3, 3), 0.5), 10**30]


def _public_functions():
    for name in MODULES:
        module = importlib.import_module(f"mhanw.{name}")
        for fn in getattr(module, "__all__", ()):
            obj = getattr(module, fn)
            if inspect.isfunction(obj):
                yield f"{name}.{fn}", obj


def _good(value):
    return value() if callable(value) else value


def _calls():
    out = []
    for label, fn in _public_functions():
        params = inspect.signature(fn).parameters
        required = [p for p in params.values() if p.default is inspect.Parameter.empty and p.kind <= 1]
        if not all(p.name in GOOD for p in required):
            continue
        out.append((label, fn, [p.name for p in required], [p.name for p in params.values() if p.name in GOOD]))
    return out


CALLS = _calls()


def _blamed(message: str) -> list[str]:
    """The argument names a message blames: the names before its first ': ', separated by commas or, for a
    product that is too large (:func:`mhanw.constants.check_entries`), by `` x ``; each without an index or
    field (``configs[0]`` -> ``configs``, ``sample.X`` -> ``sample``)."""
    head = message.split(": ", 1)[0]
    return [re.split(r"[\[.]", part.strip(), maxsplit=1)[0] for part in re.split(r",| x ", head)]


def test_the_sweep_covers_the_public_api():
    assert len(CALLS) >= 40, [c[0] for c in CALLS]


@pytest.mark.parametrize("label, fn, required, known", CALLS, ids=[c[0] for c in CALLS])
def test_every_refusal_names_the_argument_that_was_bad(label, fn, required, known):
    table = {**GOOD, **OVERRIDES.get(label, {})}
    for names in (required, known):  # the required arguments alone, else every one the table knows
        try:
            with within(20.0):
                fn(**{k: _good(table[k]) for k in names})
            break
        except (ValueError, TypeError):
            continue
    else:
        pytest.skip(f"{label}: no good call from the table (the sweep needs one)")
    wrong = []
    for arg in known:
        for bad in BAD:
            kwargs = {**{k: _good(table[k]) for k in names}, arg: bad}
            try:
                with within(20.0), np.errstate(all="ignore"):
                    fn(**kwargs)
            except ValueError as exc:
                if arg not in _blamed(str(exc)):
                    wrong.append(f"{arg}={bad!r:.30}: {str(exc)[:160]}")
            except Exception as exc:  # noqa: BLE001 - any other exception is a finding
                wrong.append(f"{arg}={bad!r:.30}: raw {type(exc).__name__}: {str(exc)[:120]}")
    assert not wrong, f"{label}:\n" + "\n".join(wrong)


@pytest.mark.parametrize("bandwidth", [-1.0, float("nan"), "wide"])
def test_a_bad_bandwidth_of_projection_arrays_is_blamed_on_bandwidth(bandwidth):
    """``configs[0]`` was named where the caller passed a bad ``bandwidth`` with arrays of projections."""
    from mhanw import heads, montecarlo

    W = heads.orthogonal_heads(4, 2, 2)
    with pytest.raises(ValueError, match=r"^bandwidth: "):
        montecarlo.integrated_mse([W], "aniso", n=30, n_test=5, n_rep=2, seed=0, bandwidth=bandwidth)
    with pytest.raises(ValueError, match=r"^bandwidth: "):
        montecarlo.pointwise_parts(W, "aniso", x=np.zeros((2, 4)), n=30, n_rep=2, seed=0, bandwidth=bandwidth)
    with pytest.raises(ValueError, match=r"^config: "):
        montecarlo.pointwise_parts(np.zeros((2, 4)), "aniso", x=np.zeros((2, 4)), n=30, n_rep=2, seed=0)

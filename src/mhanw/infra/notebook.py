"""Helpers every notebook uses: the sizes of a fidelity level.

A notebook's ``parameters`` cell holds only literals (``fidelity``, ``seed``,
output paths).  Everything derived from them is computed in the next cell, e.g.

>>> sizes = by_fidelity("quick", quick=dict(n_rep=20), paper=dict(n_rep=500))
>>> sizes["n_rep"]
20
"""

from __future__ import annotations

import os

from .validate import brief

FIDELITIES = ("quick", "paper")


def by_fidelity(fidelity: str, *, quick: dict, paper: dict) -> dict:
    """Return the settings of ``fidelity`` ("quick" for tests and CI, "paper" for the figures)."""
    if fidelity not in FIDELITIES:
        raise ValueError(f"fidelity: expected 'quick' or 'paper', got {brief(fidelity)}")
    for name, sizes in (("quick", quick), ("paper", paper)):
        if not isinstance(sizes, dict):
            raise ValueError(f"{name}: expected a dict of settings, got {type(sizes).__name__}")
    if set(quick) != set(paper):
        raise ValueError("quick, paper: both fidelity levels must set the same keys")
    return dict(quick if fidelity == "quick" else paper)


#: What an ill-typed notebook value raises deep in a chapter function that reads the notebook's values
#: (a missing key, an index out of range, a string where an array should be, a division by a zero count).
_ILL_TYPED = (LookupError, TypeError, AttributeError, ArithmeticError)


def _blame(bound, exc: BaseException) -> str:
    """The arguments of a call to name for ``exc``: for a missing key, the mappings among them that lack
    it; else every argument that holds a container (the notebook's tables and dicts), else all."""
    from collections.abc import Mapping

    args = dict(bound.arguments)
    if isinstance(exc, KeyError) and exc.args:
        lacking = [n for n, v in args.items() if isinstance(v, Mapping) and exc.args[0] not in v]
        if lacking:
            return ", ".join(lacking[:3])
    containers = [n for n, v in args.items() if not isinstance(v, (str, bytes, int, float, type(None), os.PathLike))]
    return ", ".join((containers or list(args) or ["arguments"])[:3])


def notebook_helper(fn):
    """Decorate a chapter's function that reads the notebook's values (a figure, a table, a takeaway, the
    closing bookkeeping): an ill-typed value -- a dict without the key the cells make, a list where an
    array should be -- raises one ``ValueError`` naming the argument(s) it came from (:func:`_blame`)
    instead of a ``KeyError`` or ``TypeError`` from deep inside, the original chained.  A call that does
    not match the signature raises as Python raises it."""
    import functools
    import inspect

    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        try:
            return fn(*args, **kwargs)
        except _ILL_TYPED as exc:
            raise ValueError(
                f"{_blame(bound, exc)}: a value is not what the notebook's cells make "
                f"({type(exc).__name__}: {brief(str(exc))})"
            ) from exc

    wrapper.reads_notebook_values = True
    return wrapper


class Namespace:
    """Attribute access to an executed notebook's variables (``globals()`` of a chapter), for a chapter
    module's closing bookkeeping: ``nb.table`` instead of ``nb["table"]``; a variable the notebook does
    not define raises ``ValueError`` naming it.  ``values``: a mapping of names to values."""

    def __init__(self, values):
        from collections.abc import Mapping

        if not isinstance(values, Mapping):
            raise ValueError(
                f"nb: expected the notebook's variables (a mapping such as globals()), got {brief(values)}"
            )
        self._values = dict(values)

    def __getattr__(self, name):
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise ValueError(f"nb: the notebook defines no {name!r}") from None


def start(namespace, parameters: dict, constraints, sizes: dict, n_streams: int) -> tuple:
    """The common start of a chapter's run: ``(params, sizes, streams)``.

    ``namespace``: the notebook's variables after its parameters cell (``globals()``), checked against
    the chapter's ``parameters`` and ``constraints`` (:func:`mhanw.infra.params.check_parameters`; the
    first bad one raises naming it); ``sizes``: the chapter's ``{"quick": {...}, "paper": {...}}``, of
    which the run's fidelity is returned (:func:`by_fidelity`); ``streams``: the ``n_streams`` children
    of ``numpy.random.SeedSequence(seed)``, one per experiment.  Also sets the figure style."""
    import numpy as np

    from . import figures
    from .params import check_parameters

    params = check_parameters(namespace, parameters, constraints)
    if not isinstance(sizes, dict) or set(sizes) != set(FIDELITIES):
        raise ValueError(f"sizes: expected a dict with the keys {', '.join(FIDELITIES)}, got {brief(sizes)}")
    chosen = by_fidelity(params["fidelity"], **{k: dict(v) for k, v in sizes.items()})
    if isinstance(n_streams, bool) or not isinstance(n_streams, int) or not 1 <= n_streams <= 64:
        raise ValueError(f"n_streams: expected a whole number of streams from 1 to 64, got {brief(n_streams)}")
    streams = np.random.SeedSequence(params["seed"]).spawn(n_streams)
    figures.use_style()
    return params, chosen, streams

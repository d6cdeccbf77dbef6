"""The chapter contract: parameters -> results -> claims -> outputs, the same for every chapter.

A chapter is a module ``mhanw.chapters.chNN_slug`` and a notebook ``notebooks/NN_slug.md``.  The module
declares, once:

- ``PARAMETERS`` and ``CONSTRAINTS``: each parameter's kind, bounds and the rules between parameters
  (:mod:`mhanw.infra.params`); the notebook's ``parameters`` cell holds their defaults, and one test checks
  that the two name the same parameters;
- ``SIZES``: the Monte Carlo sizes of each fidelity (``{"quick": {...}, "paper": {...}}``);
- ``STREAMS``: the names of its random streams, children of ``numpy.random.SeedSequence(seed)`` in this
  order (one per experiment, so that results do not depend on which experiments run);
- ``SECTION``: the paper's label of the section that reports it;
- ``STEPS``: the experiment, as functions ``step(ctx, **earlier)`` decorated with :func:`step`; each
  returns one subtree of the results (a mapping), stored under its name; a step's further parameters
  name the earlier steps whose results it takes;
- ``CLAIMS``: its verdict records, declared with the rules of :mod:`mhanw.infra.rules` (or a function
  ``claims(results) -> list of Verdict`` where the records depend on the results);
- optionally ``prose(results, records) -> mapping``: sentences for the paper decided by the numbers
  (stored in the results under ``prose``).

The notebook calls :func:`setup` with its parameters, then the steps one by one (the reader sees the
experiment, and the figures come right after the numbers they show), then :func:`close`, which decides
the records, corrects them for multiple testing within each claim (:func:`corrected`) and writes the chapter's two outputs from the one results tree
(:func:`mhanw.infra.results.write`).  A run that needs only the records (seeds, scenarios) calls
:func:`run_records`: the same steps and the same close, without figures.  Nothing reads the notebook's
namespace.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType, ModuleType

import numpy as np

from ..infra import figures
from ..infra.notebook import by_fidelity
from ..infra.params import check_parameters
from ..infra.results import Results
from ..infra.results import write as write_outputs
from ..infra.rules import correct, decide_all
from ..infra.verdicts import ROLES, Ledger, Verdict

__all__ = ["Context", "close", "load", "results_of", "run", "run_records", "setup", "step"]


@dataclass
class Context:
    """One run of a chapter: its checked ``params`` (read-only), the ``sizes`` of its fidelity, its named
    random ``streams`` (:class:`numpy.random.SeedSequence`), and the results of the steps run so far
    (``parts``, by step name; :func:`results_of` freezes them into the chapter's results)."""

    chapter: ModuleType
    params: Mapping
    sizes: Mapping
    streams: Mapping
    render: bool = True
    parts: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The chapter's name, ``NN_slug``."""
        return self.chapter.__name__.rsplit(".", 1)[1][2:]

    @property
    def number(self) -> str:
        """The chapter's number, ``NN`` (the namespace of its values in the paper)."""
        return self.name[:2]

    @property
    def fidelity(self) -> str:
        return self.params["fidelity"]

    @property
    def seed(self) -> int:
        return self.params["seed"]

    @property
    def figures_dir(self):
        """Where figures go (``None`` in a records run: figures are not drawn)."""
        return self.params["figures_dir"] if self.render else None

    def rng(self, stream: str) -> np.random.Generator:
        """A generator on the named stream (a new one at each call: the same numbers)."""
        return np.random.default_rng(self.streams[stream])


def step(fn):
    """Mark ``fn(ctx, **earlier)`` as a step of a chapter's experiment: its result (a mapping) is kept in
    ``ctx.parts`` under the function's name; the other parameters of ``fn`` name earlier steps."""
    name = fn.__name__

    @functools.wraps(fn)
    def run_step(ctx: Context, *args, **kwargs):
        out = fn(ctx, *args, **kwargs)
        if not isinstance(out, Mapping):
            raise TypeError(f"step {name}: must return a mapping of results, got {type(out).__name__}")
        ctx.parts[name] = out
        return out

    run_step.is_step = True
    return run_step


def setup(chapter: ModuleType, *, render: bool = True, **values) -> Context:
    """Start a run of ``chapter`` with the parameter ``values`` (every parameter of its ``parameters``
    cell, by name): checked against ``chapter.PARAMETERS`` and ``CONSTRAINTS`` (one ``ValueError`` naming
    the first bad one), the sizes of the fidelity, one stream per name of ``chapter.STREAMS``, and the
    figure style."""
    params = check_parameters(values, chapter.PARAMETERS, getattr(chapter, "CONSTRAINTS", ()))
    sizes = by_fidelity(params["fidelity"], **{k: dict(v) for k, v in chapter.SIZES.items()})
    names = tuple(chapter.STREAMS)
    streams = dict(zip(names, np.random.SeedSequence(params["seed"]).spawn(len(names))))
    figures.use_style()
    return Context(chapter, params, MappingProxyType(sizes), MappingProxyType(streams), render)


def _earlier(fn, ctx: Context) -> dict:
    names = list(inspect.signature(fn).parameters)[1:]
    missing = [n for n in names if n not in ctx.parts]
    if missing:
        raise RuntimeError(f"step {fn.__name__} needs the results of {', '.join(missing)}, which have not run")
    return {n: ctx.parts[n] for n in names}


def run(ctx: Context) -> Results:
    """Every step of the chapter in order (each given the earlier results its parameters name); returns
    the results (:func:`results_of`)."""
    for fn in ctx.chapter.STEPS:
        fn(ctx, **_earlier(fn, ctx))
    return results_of(ctx)


def results_of(ctx: Context) -> Results:
    """The chapter's results: the parameters and sizes of the run, then each step's results under its
    name, frozen.  Every step of ``STEPS`` must have run (a notebook run out of order says which)."""
    missing = [fn.__name__ for fn in ctx.chapter.STEPS if fn.__name__ not in ctx.parts]
    if missing:
        raise RuntimeError(f"{ctx.name}: the steps {', '.join(missing)} have not run")
    return Results({"params": _plain_params(ctx.params), "sizes": dict(ctx.sizes), **ctx.parts})


def _plain_params(params: Mapping) -> dict:
    """The parameters as results (the output paths left out)."""
    skip = {"figures_dir", "macros_path", "results_path"}
    return {k: list(v) if isinstance(v, tuple) else v for k, v in params.items() if k not in skip}


def claims(ctx: Context, results: Results) -> list:
    """The chapter's verdict records on ``results``: its ``claims(results)`` or its declared ``CLAIMS``."""
    chapter = ctx.chapter
    if hasattr(chapter, "claims"):
        return list(chapter.claims(results))
    return decide_all(chapter.CLAIMS, results, chapter=ctx.name, section=getattr(chapter, "SECTION", ""))


def corrected(ctx: Context, results: Results, records: list) -> list:
    """The chapter's records checked and corrected for multiple testing: every record states its role (a
    contract chapter has no legacy records: ``ValueError`` naming the claim), then Holm's correction within
    each claim (:func:`mhanw.infra.rules.correct`); a record whose verdict the correction changed gets its
    finding written again from its declared ``finding`` (so that its sentence says the corrected verdict)."""
    unstated = [r.claim for r in records if r.role not in ROLES]
    if unstated:
        raise ValueError(f"{ctx.name}: the records {', '.join(unstated)} state no role (one of {ROLES})")
    out = correct(records)
    declared = {c.id: c for c in getattr(ctx.chapter, "CLAIMS", ())}
    for i, (before, after) in enumerate(zip(records, out)):
        claim = declared.get(after.claim)
        if after.verdict != before.verdict and claim is not None and claim.finding is not None:
            out[i] = Verdict(**{**after.__dict__, "finding": claim.finding(results, after.verdict)})
    return out


def close(ctx: Context) -> Ledger:
    """Decide the chapter's records on its results and write its outputs (the paper's values to
    ``macros_path``, the results file to ``results_path``), from the one results tree; returns the
    :class:`mhanw.infra.verdicts.Ledger` for "What we found"."""
    results = results_of(ctx)
    ledger = Ledger(ctx.name)
    for r in corrected(ctx, results, claims(ctx, results)):
        ledger.add(r)
    records = list(ledger)
    tree = dict(results)
    prose = getattr(ctx.chapter, "prose", None)
    if prose is not None:
        tree["prose"] = prose(results, records)
    header = {"chapter": ctx.name, "fidelity": ctx.fidelity, "seed": ctx.seed}
    write_outputs(
        ctx.number,
        tree,
        records,
        macros_path=ctx.params["macros_path"],
        results_path=ctx.params["results_path"],
        header=header,
    )
    return ledger


def load(name: str) -> ModuleType:
    """The module of chapter ``NN_slug``."""
    return importlib.import_module(f"mhanw.chapters.ch{name}")


def follows_contract(module: ModuleType) -> bool:
    """Whether a chapter module follows this contract (it declares its ``STEPS``)."""
    return hasattr(module, "STEPS")


def run_records(name: str, values: Mapping, cwd: Path | None = None) -> Ledger:
    """A records run of chapter ``name``: setup, every step, close; no figures.  ``values``: every
    parameter (the pipeline's merged parameters cell); relative output paths are read from ``cwd``."""
    import os

    chapter = load(name)
    here = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    figures.records_only(True)
    try:
        ctx = setup(chapter, render=False, **dict(values))
        run(ctx)
        return close(ctx)
    finally:
        figures.records_only(False)
        os.chdir(here)

"""Chapter 10 (Thm 5.1, its training reading): does training push heads apart?  Heads trained by gradient
descent, their HDI_PA along the path.

The paper reads Theorem 5.1 as saying that training drives heads towards orthogonal subspaces.  The
experiment, as steps (:mod:`mhanw.chapters.base`): the leave-one-out loss and its analytic gradient checked
against finite differences on one sample (:func:`gradient_check`); Gaussian NW heads trained by
:func:`mhanw.training.train_heads` from ``n_seeds`` Haar starts in every setting of the grid (:func:`settings`:
an isotropic and an anisotropic ``m``, ``H d_k = d`` and ``H d_k > d``, each combination rule), with the
positive control (the same starts trained with an explicit orthogonality penalty) and chapter 05's IMSE
optimum for orientation (:func:`training`); and why the loss leaves each point out (:func:`self_match`).

The decision rule, fixed before running: "training drives heads towards orthogonal subspaces" holds for a
setting when HDI_PA at the end exceeds its value at initialisation by :data:`N_SE_TRAINING` paired standard
errors across the initialisations, fails when it falls by as much, and is undecided otherwise (and with
fewer than :data:`MIN_SEEDS` initialisations).  The records depend on the settings, so the chapter declares
them with :func:`claims`: one claim ``interp/training-orthogonal/<setting>`` per setting, and one positive
control ``interp-control/penalty/<setting>`` (a control: it must hold, or the measurement could not see
a rise).  The figures are in :mod:`mhanw.chapters.ch10_figures`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import data as _data
from .. import heads as _heads
from .. import premises as _premises
from .. import training as _training
from ..comparisons import crn_batch, minimize_imse
from ..constants import N_SE
from ..diversity import haar_expected_hdi
from ..infra import params as P
from ..infra import verdicts as V
from ..infra.estimates import Estimate
from ..infra.prose import count_of, join_list, number_word
from ..infra.results import Q, Raw, Results, Tex
from ..infra.rules import Claim, Decided, decide_all
from ..infra.texout import format_mean_se
from ..infra.validate import as_seed_sequence
from .base import Context, step
from .ch04_head_diversity_index import regression_label

SECTION = "sec:training"
CLAIM = "interp/training-orthogonal"
#: The positive controls' records: a check of the measurement, not a claim of the paper, so they form a
#: group of their own (their "holds" must not count as parts of the training claim).
CONTROL_CLAIM = "interp-control/penalty"

#: The decision rule's threshold: the change of HDI_PA from initialisation to the end of training must
#: exceed this many standard errors across initialisations (the companion's 3-s.e. rule).
N_SE_TRAINING = N_SE
#: Fewest random initialisations per setting for a verdict other than "undecided": 20 starts give a
#: standard error of the mean change to within about 16 % of its value (chi-square, 19 d.f.).
MIN_SEEDS = 20
#: The unit of the training records' statistics, detectable size included.
UNIT = "HDI_PA"
#: Largest gap between the library's analytic gradient and central finite differences (relative), and
#: between the formula written out in the chapter and the library, that counts as agreement.
GRADIENT_TOL = 1e-5

PARAMETERS = {
    **P.STANDARD,
    "isotropic_regression": P.regression(dimension="d"),
    "anisotropic_regression": P.regression(dimension="d"),
    "inputs": P.inputs(dimension="d"),
    "noise": P.noise(dimension="d"),
    "sigma": P.noise_level(),
    "d": P.positive_int(2, 256, why="64 times the default 4: every head is trained by gradient steps"),
    "d_k": P.positive_int(1, 256, at_most="d", why="the largest d"),
    "heads_equal": P.positive_int(2, 256, why="the largest d"),
    "heads_over": P.positive_int(2, 512, why="twice the largest d"),
    "n": P.bounded_work(
        P.positive_int(3, 15_000, why="100 times the default 150"),
        lambda p: (
            2  # the isotropic and the anisotropic m
            * p["n_seeds"]
            * sum(
                _training.training_work(
                    H,
                    p["n"],
                    p["d"],
                    SIZES[p["fidelity"]]["n_steps"],
                    SIZES[p["fidelity"]]["n_test"],
                    SIZES[p["fidelity"]]["record_every"],
                    c,
                    penalty=penalised,
                )
                for H in (p["heads_equal"], p["heads_over"])
                for c in p["combinations"]
                for penalised in (False, True)  # each start trained, and trained again as the positive control
            )
        ),
        ("n", "d", "heads_equal", "heads_over", "n_seeds", "combinations"),
        "training every setting's starts",
    ),
    "bandwidth": P.bandwidth(),
    "combinations": P.sequence(P.choice(*_training.COMBINATIONS)),
    "values": P.choice(*_heads.VALUES),
    "penalty": P.positive_float(1e-6, 1e6, why="six decades either side of the default 1"),
    "n_seeds": P.positive_int(
        2, 500, why="25 times the default 20; at paper size about 730 reach the shared work bound"
    ),
}
CONSTRAINTS = (
    P.product_at_most(("heads_equal", "d_k"), "d", equal=True),
    P.require("heads_over", lambda p: p["heads_over"] * p["d_k"] > p["d"], "heads_over * d_k > d"),
    P.require("combinations", lambda p: len(set(p["combinations"])) == len(p["combinations"]), "distinct combinations"),
)

#: Monte Carlo sizes by fidelity (the initialisations per setting are the parameter ``n_seeds``): fresh
#: test points, descent steps and the recording interval; chapter 05's IMSE optimum (replicates, test
#: points, starts, steps); the leave-one-out illustration (samples, head scales).
SIZES = {
    "quick": dict(
        n_test=100,
        n_steps=10,
        record_every=2,
        opt_rep=3,
        opt_test=50,
        opt_starts=1,
        opt_steps=8,
        loss_rep=8,
        loss_scales=9,
    ),
    "paper": dict(
        n_test=200,
        n_steps=40,
        record_every=5,
        opt_rep=6,
        opt_test=100,
        opt_starts=2,
        opt_steps=25,
        loss_rep=20,
        loss_scales=17,
    ),
}
#: The random streams: the leave-one-out illustration, the check of the key formula, the training runs.
STREAMS = ("loss illustration", "key formula check", "training")
#: The quantities recorded along every path, and the words of their change over training.
FIELDS = {
    "hdi": "HDI_PA end minus initialisation",
    "hdi_circuit": "HDI_RV of the query-key circuits, end minus initialisation",
    "error_corr": "heads' error correlation, end minus initialisation",
    "fit": "leave-one-out training loss, end minus initialisation",
    "imse": "IMSE on fresh data, end minus initialisation",
}


@dataclass(frozen=True)
class Setting:
    """One setting of the grid: ``regression`` (a spec), its ``kind`` (``"isotropic"`` or
    ``"anisotropic"``), the shape ``d``, ``n_heads``, ``d_k``, and ``combination`` (a rule of
    :data:`mhanw.training.COMBINATIONS`: ``"average"``, ``"sum"``, or ``"concat"`` with value projections
    ``values`` and a fitted ``W_O``)."""

    regression: str
    kind: str
    d: int
    n_heads: int
    d_k: int
    combination: str
    values: str = "stream"

    @property
    def shape(self) -> str:
        """``"equal"`` (``H d_k = d``), ``"over"`` (``H d_k > d``) or ``"under"``."""
        D = self.n_heads * self.d_k
        return "equal" if D == self.d else ("over" if D > self.d else "under")

    @property
    def slug(self) -> str:
        """The claim id's last part, e.g. ``"iso-equal-average"``."""
        return f"{'iso' if self.kind == 'isotropic' else 'aniso'}-{self.shape}-{self.combination}"

    @property
    def label(self) -> str:
        how = {"average": "averaged", "sum": "summed"}.get(self.combination, f"W_V ({self.values}) and fitted W_O")
        return (
            f"{self.kind} m = {self.regression}, H = {self.n_heads}, d_k = {self.d_k}, d = {self.d} "
            f"(H d_k {'=' if self.shape == 'equal' else '>' if self.shape == 'over' else '<'} d), {how}"
        )

    @property
    def haar(self) -> float:
        """The random-head control: ``E[HDI_PA]`` of independent Haar heads of this shape."""
        return haar_expected_hdi(self.d, self.d_k)


def settings(params) -> list[Setting]:
    """The grid of the checked ``params``: ``m`` in (isotropic, anisotropic) x shape in (``H d_k = d``,
    ``H d_k > d``) x combination rule."""
    p = params
    return [
        Setting(m, kind, p["d"], H, p["d_k"], c, p["values"])
        for m, kind in ((p["isotropic_regression"], "isotropic"), (p["anisotropic_regression"], "anisotropic"))
        for H in (p["heads_equal"], p["heads_over"])
        for c in p["combinations"]
    ]


def _children(seed, k: int) -> list:
    """The first ``k`` children of ``seed`` (an int or SeedSequence), whatever it has spawned before: the
    same streams every time it is passed (``SeedSequence.spawn`` would give new ones)."""
    ss = as_seed_sequence(seed)
    return [
        np.random.SeedSequence(ss.entropy, spawn_key=tuple(ss.spawn_key) + (i,), pool_size=ss.pool_size)
        for i in range(k)
    ]


def model_of(params, regression):
    """The data model of ``regression`` with the run's law of X and noise."""
    return _data.data_model(regression, params["inputs"], params["noise"], params["sigma"])


def _train(setting: Setting, model, n_seeds: int, seed, n: int, n_test: int, bandwidth, sizes, penalty) -> tuple:
    """``n_seeds`` random initialisations of ``setting`` trained, and the same starts trained with the
    orthogonality penalty ``penalty`` (the positive control): two tuples of paths.

    Initialisation ``s`` uses child ``s`` of ``seed``, split in two: the first draws its training sample
    (``n`` points) and ``n_test`` fresh test points, the second its Haar start.  The same ``seed`` in every
    setting gives common random numbers: the settings of one ``m`` share their samples, and the paired
    changes share their starts."""
    kw = dict(
        combination=setting.combination,
        values=setting.values,
        n_steps=sizes["n_steps"],
        record_every=sizes["record_every"],
    )
    paths, penalised = [], []
    for child in _children(seed, n_seeds):
        data_ss, init_ss = _children(child, 2)
        sample = model.draw(np.random.default_rng(data_ss), n, setting.d, n_test=n_test)
        W0 = _heads.haar_heads(setting.d, setting.d_k, setting.n_heads, np.random.default_rng(init_ss))
        paths.append(_training.train_heads(W0, sample, bandwidth, **kw))
        penalised.append(_training.train_heads(W0, sample, bandwidth, penalty=penalty, **kw))
    return tuple(paths), tuple(penalised)


def _imse_optimum(setting: Setting, model, seed, n: int, bandwidth: float, sizes) -> float:
    """HDI_PA of chapter 05's IMSE optimum over ``H`` free head subspaces for this ``m`` and shape
    (averaged Gaussian heads, bandwidth fixed)."""
    batch_ss, start_ss = _children(seed, 2)
    batch = crn_batch(model, n, sizes["opt_test"], sizes["opt_rep"], setting.d, batch_ss)
    found = minimize_imse(
        batch,
        setting.n_heads,
        setting.d_k,
        bandwidth,
        np.random.default_rng(start_ss),
        n_starts=sizes["opt_starts"],
        n_steps=sizes["opt_steps"],
    )
    return found.hdi


def training_premises(model) -> tuple:
    """The premises the training verdicts rest on, evaluated on the data ``model`` of the run: iid rows
    (:func:`mhanw.premises.iid_samples`), because the leave-one-out loss is a held-out score only when
    leaving one row out leaves out all that row knows (with dependent rows its neighbours still match it,
    and training can again win by self-matching)."""
    return (_premises.iid_samples(model),)


# --------------------------------------------------------------------------- the steps


@step
def gradient_check(ctx: Context) -> dict:
    """Part 1: one sample of ``n = 80`` points of the anisotropic ``m`` and Haar heads (``heads_equal``)
    on the key-formula stream; the library's leave-one-out loss and gradient of averaged heads there (for
    the formula written out in the chapter), and the relative gap between the analytic gradient and central
    finite differences along one random direction, for averaged and for concatenated heads."""
    p = ctx.params
    rng = ctx.rng("key formula check")
    sample = model_of(p, p.anisotropic_regression).draw(rng, 80, p.d)
    X, Y, h = sample.X, sample.Y, p.bandwidth
    W = _heads.haar_heads(p.d, p.d_k, p.heads_equal, rng)
    lib = _training.loo_loss(W, X, Y, h)
    E = rng.standard_normal(W.shape)
    gaps = {}
    for rule in ("average", "concat"):

        def loss(V):
            return _training.loo_loss(V, X, Y, h, rule, p["values"], gradient=False).loss

        fd = (loss(W + 1e-6 * E) - loss(W - 1e-6 * E)) / 2e-6
        grad = _training.loo_loss(W, X, Y, h, rule, p["values"]).grad
        gaps[rule] = Q(abs(float(np.sum(grad * E)) - fd) / abs(fd), digits=2, label=f"{rule}: relative gap")
    if max(q.value for q in gaps.values()) >= GRADIENT_TOL:
        raise AssertionError(f"the analytic gradient and finite differences disagree: {gaps}")
    return {"loss": lib.loss, "finite_differences": gaps, "data": Raw({"W": W, "X": X, "Y": Y, "grad": lib.grad})}


def _estimate(est, label: str = "") -> Q:
    return Q(float(est.mean), float(est.se), label=label)


def _decision(change: Q, start: Q, end: Q, haar: Q, n_starts: int) -> dict:
    """The rule on one setting's paths, decided where the numbers are made (read by
    :class:`mhanw.infra.rules.Decided`): holds when the mean change of HDI_PA exceeds :data:`N_SE_TRAINING`
    paired s.e., fails below minus as many, undecided otherwise or with fewer than :data:`MIN_SEEDS` starts;
    the detectable size is the 3-s.e. half-width."""
    verdict = V.significant_effect(change.value, change.se, sign=1, n_se=N_SE_TRAINING)
    if n_starts < MIN_SEEDS:
        verdict = V.UNDECIDED
    return {
        "verdict": verdict,
        "criterion": (
            f"HDI_PA at the end minus at initialisation, mean over {n_starts} random initialisations: "
            f"holds above +{N_SE_TRAINING:g} s.e., fails below -{N_SE_TRAINING:g} s.e., undecided otherwise "
            f"(and with fewer than {MIN_SEEDS} initialisations); a holds or fails is a detected move, "
            f"so it needs no power, and an undecided says the smallest move the run could detect"
        ),
        "statistics": (change, start, end, haar),
        "detectable": N_SE_TRAINING * change.se,
        "unit": UNIT,
    }


def _paths(paths) -> tuple[dict, dict]:
    """The quantities along ``paths`` (``field: (S, K)``) and their changes end minus start (:class:`Q`)."""
    series = {f: np.stack([getattr(p, f) for p in paths]) for f in FIELDS}
    changes = {f: _estimate(Estimate.paired(x[:, -1], x[:, 0]), FIELDS[f]) for f, x in series.items()}
    return series, changes


def _summary(s: Setting, paths, penalised, optimum: float, premises) -> dict:
    """One setting's results: HDI_PA at the start and the end, the changes of every recorded quantity, the
    Haar level, chapter 05's optimum, the premises and the rule's decision; the same for the positive control;
    and the paths (mean and s.e. across initialisations at each recorded step) for the figures and the file."""
    series, changes = _paths(paths)
    h = series["hdi"]
    haar = Q(s.haar, digits=3, label="Haar expectation 1 - d_k/d")
    start = _estimate(Estimate.from_samples(h[:, 0]), "HDI_PA at initialisation")
    end = _estimate(Estimate.from_samples(h[:, -1]), "HDI_PA at the end")
    out = {
        "label": s.label,
        "regression": s.regression,
        "kind": s.kind,
        "shape": s.shape,
        "combination": s.combination,
        "n_heads": s.n_heads,
        "start": start,
        "end": end,
        "haar": haar,
        **{f"{f}_change": q for f, q in changes.items()},
        "decision": _decision(changes["hdi"], start, end, haar, h.shape[0]),
        "premises": premises,
        "steps": paths[0].steps,
        "paths": {f: {**_along(x), "start": x[:, 0], "end": x[:, -1]} for f, x in series.items()},
    }
    if math.isfinite(optimum):
        out["optimum_hdi"] = Q(optimum, digits=3, label="HDI_PA of chapter 05's IMSE optimum")
    if penalised:
        ps, pc = _paths(penalised)
        h = ps["hdi"]
        c_start = _estimate(Estimate.from_samples(h[:, 0]), "HDI_PA at initialisation")
        c_end = _estimate(Estimate.from_samples(h[:, -1]), "HDI_PA at the end")
        out["control"] = {
            "change": pc["hdi"],
            "start": c_start,
            "end": c_end,
            "decision": _decision(pc["hdi"], c_start, c_end, haar, h.shape[0]),
            "paths": {f: _along(x) for f, x in ps.items()},
        }
    return out


def _along(x) -> dict:
    est = Estimate.from_samples(x, axis=0)
    return {"mean": est.mean, "se": est.se}


@step
def training(ctx: Context) -> dict:
    """Part 2: every setting of the grid trained from ``n_seeds`` Haar starts and with the penalty, and
    chapter 05's IMSE optimum per ``(m, shape)`` (shared by the combination rules; ``opt_starts = 0`` skips
    it).  The training stream spawns two children: the paths (the same in every setting: common random
    numbers) and the optima."""
    p, sizes = ctx.params, ctx.sizes
    paths_ss, opt_ss = _children(ctx.streams["training"], 2)
    optima: dict = {}
    grid = settings(p)
    out: dict = {
        "settings": [s.slug for s in grid],
        "bandwidth": Q(p.bandwidth, digits=2),
        "penalty": Q(p.penalty, digits=2),
        "values": p["values"],
        "iso_label": Tex(regression_label(p.isotropic_regression)),
        "aniso_label": Tex(regression_label(p.anisotropic_regression)),
    }
    for s in grid:
        model = model_of(p, s.regression)
        paths, penalised = _train(s, model, p.n_seeds, paths_ss, p.n, sizes["n_test"], p.bandwidth, sizes, p.penalty)
        key = (s.regression, s.n_heads, s.d_k)
        if sizes["opt_starts"] > 0 and key not in optima:
            seed = _children(opt_ss, len(optima) + 1)[-1]
            optima[key] = _imse_optimum(s, model, seed, p.n, p.bandwidth, sizes)
        out[s.slug] = _summary(s, paths, penalised, optima.get(key, math.nan), training_premises(model))
    return out


@step
def self_match(ctx: Context) -> dict:
    """Part 3, why the loss leaves each point out: one Haar head ``c W`` of the anisotropic ``m`` scaled by
    ``loss_scales`` values of ``c`` from 1/4 to 16, its in-sample error ``mean_i (m(X_i) - Y_i)^2`` (the
    point itself among the keys) and its leave-one-out error, mean and s.e. over ``loss_rep`` samples
    (child ``r`` of the stream: the sample, then the head).  The in-sample error falls to 0 as ``c`` grows
    (the self weight dominates); the leave-one-out error does not."""
    p, sizes = ctx.params, ctx.sizes
    scales = np.geomspace(0.25, 16, sizes["loss_scales"])
    model = model_of(p, p.anisotropic_regression)
    ins, loo = np.empty((sizes["loss_rep"], scales.size)), np.empty((sizes["loss_rep"], scales.size))
    for r, child in enumerate(_children(ctx.streams["loss illustration"], sizes["loss_rep"])):
        rng = np.random.default_rng(child)
        sample = model.draw(rng, p.n, p.d)
        W = _heads.haar_heads(p.d, p.d_k, 1, rng)
        for k, c in enumerate(scales):
            fit = _heads.head_estimates(c * W, sample.X, sample.Y, sample.X, p.bandwidth)[0]
            ins[r, k] = np.mean((fit - sample.Y) ** 2)
            loo[r, k] = _training.loo_loss(c * W, sample.X, sample.Y, p.bandwidth, gradient=False).loss
    return {"scales": scales, "in_sample": _along(ins), "loo": _along(loo), "n_rep": sizes["loss_rep"]}


STEPS = (gradient_check, training, self_match)

# --------------------------------------------------------------------------- the records


def _finding(path: str, change: str):
    """What the numbers of one setting show (at ``path``: the quantity ``change``, ``start`` and ``end``),
    one clause generated from them and the rule's decision, never typed."""

    def finding(results: Results, verdict: str) -> str:
        node = results.at(path)
        diff, se = node[change].value, node[change].se
        start, stop = node["start"].value, node["end"].value
        if verdict == V.HOLDS:
            return f"HDI_PA rose over training, by {diff:+.3f} ± {se:.3f} (from {start:.3f} to {stop:.3f})"
        if verdict == V.FAILS:
            return (
                f"HDI_PA fell over training, by {diff:+.3f} ± {se:.3f} (from {start:.3f} to {stop:.3f}): "
                "the heads moved closer"
            )
        return (
            f"HDI_PA moved by {diff:+.3f} ± {se:.3f} over training, within ±{N_SE_TRAINING * se:.3f} "
            f"({N_SE_TRAINING:g} s.e.), the smallest move this run could detect"
        )

    return finding


def _declared(results: Results) -> list[Claim]:
    """The records of the settings in ``results``: the training claim of every setting (with the changes
    of the IMSE, the error correlation and the training loss, and chapter 05's optimum, as further
    statistics), then the positive control of every setting."""
    tr = results["training"]
    out = []
    for slug in tr["settings"]:
        at = f"training.{slug}"
        also = tuple(f"{at}.{f}_change" for f in ("imse", "error_corr", "fit"))
        also += (f"{at}.optimum_hdi",) if "optimum_hdi" in tr[slug] else ()
        out.append(
            Claim(
                f"{CLAIM}/{slug}",
                f"Training drives heads towards orthogonal subspaces ({tr[slug]['label']})",
                Decided(f"{at}.decision"),
                role=V.PAPER,
                premises=f"{at}.premises",
                also=also,
                finding=_finding(at, "hdi_change"),
            )
        )
    penalty = tr["penalty"].value
    for slug in tr["settings"]:
        if "control" in tr[slug]:
            out.append(
                Claim(
                    f"{CONTROL_CLAIM}/{slug}",
                    f"With an orthogonality penalty (lambda = {penalty:g}), training drives heads towards "
                    f"orthogonal subspaces ({tr[slug]['label']})",
                    Decided(f"training.{slug}.control.decision"),
                    role=V.CONTROL,
                    finding=_finding(f"training.{slug}.control", "change"),
                )
            )
    return out


def claims(results: Results) -> list:
    """The chapter's records on ``results`` (only ``results["training"]`` is read, so that a figure can
    state the records of the training step before the chapter closes)."""
    return decide_all(_declared(results), results, chapter="10_training_heads", section=SECTION)


def paper_and_controls(records) -> tuple[list, list]:
    """The paper's records (the training claim) and the positive controls, apart."""
    records = list(records)
    return (
        [r for r in records if r.claim.startswith(f"{CLAIM}/")],
        [r for r in records if r.claim.startswith(f"{CONTROL_CLAIM}/")],
    )


# --------------------------------------------------------------------------- the paper's sentences


def settings_count(k: int, of: int) -> str:
    """ "all eight settings", "two of eight settings", "the one setting" (``k`` of ``of`` settings)."""
    if of == 1:
        return "the one setting" if k else "no setting"
    return count_of(k, of, "settings")


def _setting_tex(node) -> str:
    """A setting as the paper names it: ``anisotropic $m$, $Hd_k=d$, averaged``."""
    op = {"equal": "=", "over": ">", "under": "<"}[node["shape"]]
    how = {"average": "averaged", "sum": "summed", "concat": "concatenated"}[node["combination"]]
    return f"{node['kind']} $m$, $Hd_k{op}d$, {how}"


def _verdicts_text(tr, records: dict) -> str:
    """The training claim's verdicts in one LaTeX clause, each verdict said once, e.g. "the reading is
    undecided at this size in six of eight settings (...) and fails as stated in two (...)"; and the positive
    controls' count."""
    by_verdict: dict[str, list[str]] = {}
    for slug in tr["settings"]:
        by_verdict.setdefault(records[f"{CLAIM}/{slug}"].verdict, []).append(_setting_tex(tr[slug]))
    n = len(tr["settings"])
    parts = []
    for k, (verdict, names) in enumerate(by_verdict.items()):
        head = settings_count(len(names), n) if k == 0 else number_word(len(names))
        parts.append(f"{V.predicate(verdict)} in {head}" + (f" ({'; '.join(names)})" if len(names) < n else ""))
    text = f"the reading {join_list(parts)}"
    controls = [records[f"{CONTROL_CLAIM}/{s}"] for s in tr["settings"] if f"{CONTROL_CLAIM}/{s}" in records]
    if controls:
        held = sum(rec.holds for rec in controls)
        text += "; with the orthogonality penalty, the positive control " + (
            V.predicate(controls[0].verdict)
            if len(controls) == 1
            else f"{V.HOLDS} in {settings_count(held, len(controls))}"
        )
    return text


def changes_text(tr) -> str:
    """Where the fresh-data IMSE and the heads' error correlation changed by more than :data:`N_SE_TRAINING`
    paired s.e. over training, one LaTeX sentence: "Over training (by more than 3 paired s.e.), the IMSE on
    fresh data fell in ... and rose in ...; the heads' error correlation fell in ...".  Directions come from
    the numbers, never typed."""
    n = len(tr["settings"])
    clauses = []
    for field, noun in (("imse", "the IMSE on fresh data"), ("error_corr", "the heads' error correlation")):
        moves: dict = {"fell": [], "rose": []}
        for slug in tr["settings"]:
            c = tr[slug][f"{field}_change"]
            if c.value < -N_SE_TRAINING * c.se:
                moves["fell"].append(_setting_tex(tr[slug]))
            elif c.value > N_SE_TRAINING * c.se:
                moves["rose"].append(_setting_tex(tr[slug]))
        said = [
            f"{word} in {settings_count(len(v), n)}" + (f" ({'; '.join(v)})" if len(v) < n else "")
            for word, v in moves.items()
            if v
        ]
        clauses.append(f"{noun} {join_list(said)}" if said else f"{noun} moved in {settings_count(0, n)}")
    return rf"Over training (by more than {N_SE_TRAINING:g} paired s.e.), " + "; ".join(clauses)


def power_text(records, tex: bool = False) -> str:
    """Where no move was detected: the smallest move the run could have seen (3 s.e.) against the positive
    control's rise in the same setting, one sentence generated from the records ("" when every setting
    moved detectably or no control ran).  ``tex``: LaTeX (``$\\HDIpa$``) instead of record text."""
    claimed, controls = paper_and_controls(records)
    by_slug = {r.claim.rsplit("/", 1)[1]: r for r in controls}
    pairs = [(r, by_slug.get(r.claim.rsplit("/", 1)[1])) for r in claimed if r.verdict == V.UNDECIDED]
    pairs = [(r, c) for r, c in pairs if c is not None]
    if not pairs:
        return ""
    dets = [r.detectable for r, _ in pairs]
    seen = [r for r, c in pairs if c.holds and r.detectable < c.statistics[0].value]
    span = f"{min(dets):.3f}" if len(pairs) == 1 else f"{min(dets):.3f} to {max(dets):.3f}"
    hdi = "$\\HDIpa$" if tex else "HDI_PA"
    text = f"Where nothing moved detectably, the run could have seen a move of {span} in {hdi} (3 s.e.)"
    if len(seen) == len(pairs):
        return (
            text
            + ", smaller than the positive control's rise in the same setting"
            + (" in each" if len(pairs) > 1 else "")
            + ": the measurement sees a rise when the loss asks for one, so there training did little to "
            "the heads' geometry."
        )
    return (
        text + f"; it was smaller than the positive control's rise in the same setting in {len(seen)} of "
        f"{len(pairs)} only: elsewhere the measurement's power is in doubt and the setting stays open."
    )


#: How the paper's table names each part of a setting.
_TABLE_WORDS = {
    "isotropic": "iso",
    "anisotropic": "aniso",
    "equal": "$=$",
    "over": "$>$",
    "under": "$<$",
    "average": "average",
    "sum": "sum",
    "concat": "concat",
}


def _table_row(node, record) -> str:
    """One row of the paper's table: the setting, HDI_PA at the start and the end, the change and its
    verdict, the positive control's change, the changes of the error correlation and of the fresh-data IMSE,
    and HDI_PA of chapter 05's IMSE optimum ("--" where not run)."""

    def pm(q: Q) -> str:
        return f"${format_mean_se(q.value, q.se)}$"

    cells = [
        _TABLE_WORDS[node["kind"]],
        f"${node['n_heads']}$",
        _TABLE_WORDS[node["shape"]],
        _TABLE_WORDS[node["combination"]],
        pm(node["start"]),
        pm(node["end"]),
        pm(node["hdi_change"]),
        record.verdict,
        pm(node["control"]["change"]) if "control" in node else "--",
        pm(node["error_corr_change"]),
        pm(node["imse_change"]),
        f"${node['optimum_hdi'].value:.2f}$" if "optimum_hdi" in node else "--",
    ]
    return " & ".join(cells)


def prose(results: Results, records) -> dict:
    """The section's words decided by the numbers and the records: the table's rows, the verdicts of the
    settings, where the IMSE and the error correlation moved, and the power of the settings left open."""
    tr = results["training"]
    by_id = {r.claim: r for r in records}
    return {
        "table": Tex(" \\\\ ".join(_table_row(tr[s], by_id[f"{CLAIM}/{s}"]) for s in tr["settings"])),
        "verdicts": Tex(_verdicts_text(tr, by_id)),
        "changes": Tex(changes_text(tr)),
        "power": Tex(power_text(records, tex=True)),
    }

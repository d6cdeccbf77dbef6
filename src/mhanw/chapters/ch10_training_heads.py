"""Chapter 10: does training push heads apart?  Heads trained by gradient descent, their HDI along the path.

Notebook ``10_training_heads`` tests the paper's reading of Thm 5.1, that
training drives heads towards orthogonal subspaces, on Gaussian NW heads
trained by :func:`mhanw.training.train_heads` (leave-one-out loss, analytic
gradient):

- :class:`Setting`, :func:`settings`: the grid -- an isotropic and an
  anisotropic ``m``, ``H d_k = d`` and ``H d_k > d``, heads averaged or
  combined through ``W_V``/``W_O`` (rule ``"concat"``);
- :func:`run_setting`: from ``n_seeds`` random initialisations (Haar frames,
  each with its own training sample and fresh test points), the paths of
  HDI_PA, the heads' error correlation, the training loss and the IMSE on
  fresh data; the positive control, the same starts trained with an explicit
  orthogonality penalty;
- :func:`imse_optimum`: chapter 05's IMSE optimum over head subspaces
  (:func:`mhanw.chapters.ch05_decorrelation_optimality.minimize_imse`) for the
  same ``m`` and shape, where the IMSE itself would put the heads;
- the random-head control is the Haar expectation
  :func:`mhanw.diversity.haar_expected_hdi`, the mean HDI_PA of the starts.

The decision rule, fixed before running (:func:`training_orthogonal_verdict`):
"training drives heads towards orthogonal subspaces" holds for a setting when
HDI_PA at the end exceeds its value at initialisation by :data:`N_SE_TRAINING`
standard errors across the initialisations, fails when it falls by as much,
and is undecided otherwise; one record per setting, claim
``interp/training-orthogonal/<setting>``.  :func:`penalty_control_verdict`
applies the same rule to the penalised runs (claims ``interp-control/penalty/<setting>``) (it must hold, or the measurement
could not see a rise).  Bookkeeping: :func:`ledger` (the records),
:func:`findings` (the sentence of "What we found"), :func:`publish` (macros
through :func:`write_macros`, the results file through :func:`results_payload`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .. import data as _data
from .. import heads as _heads
from .. import premises as _premises
from .. import training as _training
from ..constants import MAX_REPLICATES, N_SE, check_entries
from ..diversity import haar_expected_hdi
from ..infra import verdicts as V
from ..infra.estimates import Estimate
from ..infra.notebook import notebook_helper
from ..infra.prose import count_of, join_list, number_word
from ..infra.validate import as_seed_sequence, boolean, brief, one_of, positive_int, positive_scalar, sequence
from ..infra.verdicts import Ledger, Verdict, checked, significant_effect
from ..infra.verdicts import stat as _stat
from .ch04_head_diversity_index import regression_label
from .ch05_decorrelation_optimality import crn_batch, minimize_imse

__all__ = [
    "CLAIM",
    "CONSTRAINTS",
    "CONTROL_CLAIM",
    "MIN_SEEDS",
    "N_SE_TRAINING",
    "PARAMETERS",
    "SECTION",
    "SIZES",
    "Setting",
    "SettingResult",
    "changes_sentence",
    "findings",
    "imse_optimum",
    "self_match_curves",
    "ledger",
    "penalty_control_verdict",
    "publish",
    "results_payload",
    "run_all",
    "run_setting",
    "settings",
    "training_premises",
    "setup",
    "check_by_hand",
    "loss_figure",
    "loss_caption",
    "trajectory_figure",
    "trajectory_caption",
    "takeaway",
    "power_sentence",
    "moves_figure",
    "moves_caption",
    "summary_table",
    "report",
    "show_text",
    "training_orthogonal_verdict",
    "verdicts_sentence",
    "write_macros",
]

SECTION = "sec:training"
CLAIM = "interp/training-orthogonal"
#: The positive controls' records: a check of the measurement, not a claim of the paper, so they form a
#: group of their own (their "holds" must not count as parts of the training claim).
CONTROL_CLAIM = "interp-control/penalty"

#: The decision rule's threshold: the change of HDI_PA from initialisation to the end of training must
#: exceed this many standard errors across initialisations (the companion's 3-s.e. rule).
N_SE_TRAINING = N_SE
#: The sizes of each fidelity (:func:`mhanw.infra.notebook.by_fidelity`; the initialisations per setting
#: are the parameter ``n_seeds``): fresh test points, descent steps and the recording interval; chapter 05's IMSE optimum (replicates,
#: test points, starts, steps); the leave-one-out illustration (samples, head scales).
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

#: Fewest random initialisations per setting for a verdict other than "undecided": 20 starts give a
#: standard error of the mean change to within about 16 % of its value (chi-square, 19 d.f.).
MIN_SEEDS = 20


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
    def macro(self) -> str:
        """Letters naming the setting in the paper's macros, e.g. ``"IsoEqualAverage"``."""
        return "".join(p.capitalize() for p in self.slug.split("-"))

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


def settings(
    isotropic: str,
    anisotropic: str,
    d: int,
    d_k: int,
    heads_equal: int,
    heads_over: int,
    combinations=("average", "concat"),
    values: str = "stream",
) -> list[Setting]:
    """The grid: ``m`` in (isotropic, anisotropic) x shape in (``H d_k = d``, ``H d_k > d``) x combination."""
    d, d_k = positive_int(d, "d"), positive_int(d_k, "d_k")
    heads_equal, heads_over = (
        positive_int(heads_equal, "heads_equal", minimum=2),
        positive_int(heads_over, "heads_over", minimum=2),
    )
    if heads_equal * d_k != d:
        raise ValueError(f"heads_equal: expected heads_equal * d_k = d = {d}, got {heads_equal} x {d_k}")
    if heads_over * d_k <= d:
        raise ValueError(f"heads_over: expected heads_over * d_k > d = {d}, got {heads_over} x {d_k}")
    combos = tuple(
        one_of(c, "combinations", _training.COMBINATIONS)
        for c in sequence(combinations, "combinations", "combination rules")
    )
    if not combos:
        raise ValueError(
            f"combinations: expected at least one of {', '.join(map(repr, _training.COMBINATIONS))}, "
            "got an empty sequence"
        )
    one_of(values, "values", _heads.VALUES)
    return [
        Setting(m, kind, d, H, d_k, c, values)
        for m, kind in ((isotropic, "isotropic"), (anisotropic, "anisotropic"))
        for H in (heads_equal, heads_over)
        for c in combos
    ]


@dataclass(frozen=True)
class SettingResult:
    """The paths of one setting: ``paths`` (one :class:`mhanw.training.TrainingPath` per initialisation),
    ``penalised`` (the positive control, the same starts and samples), ``optimum_hdi`` (HDI_PA of
    chapter 05's IMSE optimum for this ``m`` and shape, NaN if not run)."""

    setting: Setting
    paths: tuple
    penalised: tuple
    optimum_hdi: float = float("nan")
    premises: tuple = ()

    def series(self, field: str, penalised: bool = False) -> np.ndarray:
        """``field`` of every path, ``(S, K)`` (``hdi``, ``error_corr``, ``loss``, ``fit``, ``imse``)."""
        paths = self.penalised if penalised else self.paths
        return np.stack([getattr(p, field) for p in paths])

    @property
    def steps(self) -> np.ndarray:
        return self.paths[0].steps

    def change(self, field: str, penalised: bool = False) -> Estimate:
        """End minus initialisation of ``field`` across initialisations (mean and s.e.)."""
        x = self.series(field, penalised)
        return Estimate.paired(x[:, -1], x[:, 0])

    def path_estimate(self, field: str, penalised: bool = False) -> Estimate:
        """``field`` along the path: mean and s.e. across initialisations at each recorded step, ``(K,)``."""
        return Estimate.from_samples(self.series(field, penalised), axis=0)


def _setting(setting, name: str = "setting") -> Setting:
    if not isinstance(setting, Setting):
        raise ValueError(f"{name}: expected a Setting (ch10_training_heads.settings), got {type(setting).__name__}")
    return setting


def _results(results, name: str = "results") -> tuple:
    """``results`` as a non-empty tuple of :class:`SettingResult`, else ``ValueError`` naming ``name``."""
    items = sequence(results, name, "SettingResult (run_all)")
    if not items or not all(isinstance(r, SettingResult) for r in items):
        raise ValueError(f"{name}: expected a non-empty sequence of SettingResult (run_all), got {brief(results)}")
    return items


def _book(book, name: str = "book") -> Ledger:
    if not isinstance(book, Ledger):
        raise ValueError(f"{name}: expected the chapter's Ledger (ledger(results, penalty)), got {type(book).__name__}")
    return book


def _children(seed, k: int) -> list:
    """The first ``k`` children of ``seed`` (an int or SeedSequence), whatever it has spawned before: the
    same streams every time it is passed (``SeedSequence.spawn`` would give new ones)."""
    ss = as_seed_sequence(seed)
    return [
        np.random.SeedSequence(ss.entropy, spawn_key=tuple(ss.spawn_key) + (i,), pool_size=ss.pool_size)
        for i in range(k)
    ]


def _model(setting, inputs, noise, sigma):
    return _data.data_model(setting.regression, inputs, noise, sigma)


def run_setting(
    setting: Setting,
    n_seeds: int,
    seed,
    n: int,
    n_test: int,
    bandwidth: float,
    n_steps: int,
    record_every: int,
    penalty: float,
    inputs="gaussian",
    noise="gaussian",
    sigma=None,
    control: bool = True,
) -> SettingResult:
    """Train ``n_seeds`` random initialisations of ``setting`` (and, with ``control``, the same starts with
    the orthogonality penalty ``penalty``).

    Initialisation ``s`` uses child ``s`` of ``SeedSequence(seed)``, split in two: the first draws its
    training sample (``n`` points) and ``n_test`` fresh test points, the second its Haar start.  The
    same ``seed`` in every setting gives common random numbers: the settings of one ``m`` share their
    samples, and the paired changes share their starts.
    """
    _setting(setting)
    control = boolean(control, "control")
    n_seeds = positive_int(n_seeds, "n_seeds", minimum=2, maximum=MAX_REPLICATES, what="initialisations")
    model = _model(setting, inputs, noise, sigma)
    paths, penalised = [], []
    for child in _children(seed, n_seeds):
        data_ss, init_ss = _children(child, 2)
        sample = model.draw(np.random.default_rng(data_ss), n, setting.d, n_test=n_test)
        W0 = _heads.haar_heads(setting.d, setting.d_k, setting.n_heads, np.random.default_rng(init_ss))
        kw = dict(combination=setting.combination, values=setting.values, n_steps=n_steps, record_every=record_every)
        paths.append(_training.train_heads(W0, sample, bandwidth, **kw))
        if control:
            penalised.append(_training.train_heads(W0, sample, bandwidth, penalty=penalty, **kw))
    return SettingResult(setting=setting, paths=tuple(paths), penalised=tuple(penalised))


def imse_optimum(
    setting: Setting,
    seed,
    n: int,
    bandwidth: float,
    n_rep: int,
    n_test: int,
    n_starts: int,
    n_steps: int,
    inputs="gaussian",
    noise="gaussian",
    sigma=None,
):
    """Chapter 05's IMSE optimum over ``H`` free head subspaces for this ``m`` and shape (averaged Gaussian
    heads, bandwidth fixed): an :class:`~mhanw.chapters.ch05_decorrelation_optimality.ImseOptimum`."""
    _setting(setting)
    batch_ss, start_ss = _children(seed, 2)
    batch = crn_batch(_model(setting, inputs, noise, sigma), n, n_test, n_rep, setting.d, batch_ss)
    return minimize_imse(
        batch,
        setting.n_heads,
        setting.d_k,
        bandwidth,
        np.random.default_rng(start_ss),
        n_starts=n_starts,
        n_steps=n_steps,
    )


#: The entries of ``sizes`` that :func:`run_all` reads, and the fewest each may be (the ``opt_*`` ones
#: only when ``opt_starts > 0``).
SIZE_KEYS = {"n_seeds": 2, "n_test": 1, "n_steps": 0, "record_every": 1}
OPTIMUM_SIZE_KEYS = {"opt_rep": 1, "opt_test": 1, "opt_steps": 0}


def _check_sizes(sizes) -> dict:
    """``sizes`` of :func:`run_all` checked: a mapping with :data:`SIZE_KEYS` (and :data:`OPTIMUM_SIZE_KEYS`
    when ``opt_starts > 0``), each an integer within the shared maxima; ``ValueError`` naming ``sizes[key]``."""
    if not isinstance(sizes, dict):
        raise ValueError(f"sizes: expected a dict of sizes ({', '.join(SIZE_KEYS)}, ...), got {type(sizes).__name__}")
    out = dict(sizes)
    starts = positive_int(sizes.get("opt_starts", 0), "sizes['opt_starts']", minimum=0, maximum=MAX_REPLICATES)
    wanted = {**SIZE_KEYS, **(OPTIMUM_SIZE_KEYS if starts else {})}
    missing = [k for k in wanted if k not in sizes]
    if missing:
        raise ValueError(f"sizes: expected the entries {', '.join(wanted)}, missing {', '.join(missing)}")
    for k, least in wanted.items():  # counts of iterations, or sizes (n_test, record_every)
        if k in ("n_seeds", "n_steps", "opt_rep", "opt_steps"):
            out[k] = positive_int(sizes[k], f"sizes[{k!r}]", minimum=least, maximum=MAX_REPLICATES)
        else:
            out[k] = positive_int(sizes[k], f"sizes[{k!r}]", minimum=least)
    out["opt_starts"] = starts
    return out


def run_all(
    grid,
    sizes: dict,
    seed,
    n: int,
    bandwidth: float,
    penalty: float,
    inputs="gaussian",
    noise="gaussian",
    sigma=None,
    progress=None,
) -> list[SettingResult]:
    """Every setting of ``grid`` (:func:`settings`) with :func:`run_setting`, and chapter 05's IMSE optimum
    per ``(m, shape)`` (shared by the combinations; ``sizes["opt_starts"] = 0`` skips it).

    ``sizes``: ``n_seeds``, ``n_test``, ``n_steps``, ``record_every``, ``opt_rep``, ``opt_test``,
    ``opt_starts``, ``opt_steps`` (:data:`SIZES`); ``n`` the training sample size.  ``seed`` spawns two children: the paths (the same stream in every
    setting: common random numbers) and the optima.  ``progress``: called with each setting's label.
    Every argument is checked before the first path is trained.
    """
    grid = sequence(grid, "grid", "Setting (settings)")
    if not grid:
        raise ValueError("grid: expected at least one Setting (settings), got an empty sequence")
    for i, s in enumerate(grid):
        _setting(s, f"grid[{i}]")
    sizes = _check_sizes(sizes)
    if progress is not None and not callable(progress):
        raise ValueError(
            f"progress: expected a callable (called with each setting's label) or None, got {type(progress).__name__}"
        )
    n = positive_int(n, "n", minimum=3)
    for s in grid:
        _model(s, inputs, noise, sigma).check_dimension(s.d)
    paths_ss, opt_ss = _children(seed, 2)
    optima = {}
    out = []
    for s in grid:
        if progress:
            progress(s.label)
        r = run_setting(
            s,
            sizes["n_seeds"],
            paths_ss,
            n,
            sizes["n_test"],
            bandwidth,
            sizes["n_steps"],
            sizes["record_every"],
            penalty,
            inputs,
            noise,
            sigma,
        )
        key = (s.regression, s.n_heads, s.d_k)
        if sizes.get("opt_starts", 0) > 0 and key not in optima:
            optima[key] = imse_optimum(
                s,
                _children(opt_ss, len(optima) + 1)[-1],
                n,
                bandwidth,
                sizes["opt_rep"],
                sizes["opt_test"],
                sizes["opt_starts"],
                sizes["opt_steps"],
                inputs,
                noise,
                sigma,
            ).hdi
        out.append(
            SettingResult(
                r.setting,
                r.paths,
                r.penalised,
                optima.get(key, float("nan")),
                training_premises(_model(s, inputs, noise, sigma)),
            )
        )
    return out


def self_match_curves(
    regression,
    d: int,
    d_k: int,
    n: int,
    bandwidth: float,
    scales,
    n_rep: int,
    seed,
    inputs="gaussian",
    noise="gaussian",
    sigma=None,
) -> dict:
    """Why the loss leaves each point out: one Haar head ``c W`` scaled by each ``c`` of ``scales``, its
    in-sample error ``mean_i (m(X_i) - Y_i)^2`` (the point itself among the keys) and its leave-one-out
    error, on ``n_rep`` samples (child ``r`` of ``seed``: the sample, then the head).  Returns
    ``{"scales", "in_sample" (R, S), "loo" (R, S)}``: the in-sample error falls to 0 as ``c`` grows
    (the self weight dominates), the leave-one-out error does not."""
    scales = np.asarray([positive_scalar(c, "scales") for c in sequence(scales, "scales", "head scales")])
    model = _data.data_model(regression, inputs, noise, sigma)
    if scales.size == 0:
        raise ValueError("scales: expected at least one head scale, got an empty sequence")
    n_rep = positive_int(n_rep, "n_rep", minimum=2, maximum=MAX_REPLICATES, what="samples")
    check_entries("n_rep", n_rep, scales.size)
    ins, loo = np.empty((n_rep, scales.size)), np.empty((n_rep, scales.size))
    for r, child in enumerate(_children(seed, n_rep)):
        rng = np.random.default_rng(child)
        sample = model.draw(rng, n, d)
        W = _heads.haar_heads(d, d_k, 1, rng)
        for k, c in enumerate(scales):
            fit = _heads.head_estimates(c * W, sample.X, sample.Y, sample.X, bandwidth)[0]
            ins[r, k] = np.mean((fit - sample.Y) ** 2)
            loo[r, k] = _training.loo_loss(c * W, sample.X, sample.Y, bandwidth, gradient=False).loss
    return {"scales": scales, "in_sample": ins, "loo": loo}


def training_premises(model) -> tuple:
    """The premises the training verdicts rest on, evaluated on the data ``model`` of the run: iid rows
    (:func:`mhanw.premises.iid_samples`), because the leave-one-out loss is a held-out score only when
    leaving one row out leaves out all that row knows (with dependent rows its neighbours still match it,
    and training can again win by self-matching)."""
    return (_premises.iid_samples(model),)


# --------------------------------------------------------------------------- verdict rules

#: The unit of the training records' statistics, detectable size included.
UNIT = "HDI_PA"


def _finding(verdict: str, diff: float, se: float, n_se: float, start: float, stop: float) -> str:
    """What the numbers of one setting show, one clause generated from them (the direction from the sign
    and the rule's decision, never typed)."""
    if verdict == V.HOLDS:
        move = f"HDI_PA rose over training, by {diff:+.3f} ± {se:.3f} (from {start:.3f} to {stop:.3f})"
    elif verdict == V.FAILS:
        move = f"HDI_PA fell over training, by {diff:+.3f} ± {se:.3f} (from {start:.3f} to {stop:.3f}): the heads moved closer"
    else:
        move = (
            f"HDI_PA moved by {diff:+.3f} ± {se:.3f} over training, within ±{n_se * se:.3f} "
            f"({n_se:g} s.e.), the smallest move this run could detect"
        )
    return move


def _rule(claim, statement, init, end, haar, n_se, extra=(), premises=(), role=V.PAPER):
    init = np.asarray(init, dtype=float)
    end = np.asarray(end, dtype=float)
    if init.ndim != 1 or init.shape != end.shape or init.size < 2:
        raise ValueError(
            f"end: expected HDI_PA at the end of every path, one per initialisation like init "
            f"{init.shape} (at least 2), got {end.shape}"
        )
    change = Estimate.paired(end, init)
    diff, se = float(change.mean), float(change.se)
    verdict = significant_effect(diff, se, sign=1, n_se=n_se)
    if init.size < MIN_SEEDS:
        verdict = V.UNDECIDED
    start = Estimate.from_samples(init)
    stop = Estimate.from_samples(end)
    return Verdict(
        claim=claim,
        statement=statement,
        verdict=verdict,
        section=SECTION,
        premises=tuple(premises),
        role=role,
        detectable=n_se * se,
        unit=UNIT,
        finding=_finding(verdict, diff, se, n_se, float(start.mean), float(stop.mean)),
        criterion=(
            f"HDI_PA at the end minus at initialisation, mean over {init.size} random initialisations: "
            f"holds above +{n_se:g} s.e., fails below -{n_se:g} s.e., undecided otherwise "
            f"(and with fewer than {MIN_SEEDS} initialisations); a holds or fails is a detected move, "
            f"so it needs no power, and an undecided says the smallest move the run could detect"
        ),
        statistics=(
            _stat("HDI_PA end minus initialisation", diff, se),
            _stat("HDI_PA at initialisation", float(start.mean), float(start.se)),
            _stat("HDI_PA at the end", float(stop.mean), float(stop.se)),
            _stat("Haar expectation 1 - d_k/d", haar),
        )
        + tuple(extra),
    )


@checked(
    slug=V.text,
    label=V.text,
    init=V.numbers,
    end=V.numbers,
    haar=V.number,
    extra=V.statistics,
    n_se=V.nonnegative,
    premises=V.premise_list,
)
def training_orthogonal_verdict(
    slug: str, label: str, init, end, haar: float, extra=(), n_se: float = N_SE_TRAINING, premises=()
) -> Verdict:
    """ "Training drives heads towards orthogonal subspaces" for one setting, decided from HDI_PA at
    initialisation ``init`` and at the end ``end`` of each path ``(S,)``: holds when the mean change
    exceeds ``n_se`` s.e. (across initialisations), fails when it is below ``-n_se`` s.e., undecided
    otherwise or with fewer than :data:`MIN_SEEDS` initialisations.  ``extra``: further statistics
    (reported, not deciding); ``premises``: :func:`training_premises` (when one fails, the record is
    "outside its conditions" and keeps what the numbers show)."""
    return _rule(
        f"{CLAIM}/{slug}",
        f"Training drives heads towards orthogonal subspaces ({label})",
        init,
        end,
        haar,
        n_se,
        extra,
        premises,
    )


@checked(
    slug=V.text, label=V.text, init=V.numbers, end=V.numbers, haar=V.number, penalty=V.nonnegative, n_se=V.nonnegative
)
def penalty_control_verdict(
    slug: str, label: str, init, end, haar: float, penalty: float, n_se: float = N_SE_TRAINING
) -> Verdict:
    """The positive control: the same rule on paths trained with an explicit orthogonality penalty
    (weight ``penalty``); it must hold, or the chapter could not have seen training push heads apart.  A
    side check of the companion's (:data:`mhanw.infra.verdicts.SIDE_CHECK`): never counted with the
    paper's claim."""
    return _rule(
        f"{CONTROL_CLAIM}/{slug}",
        f"With an orthogonality penalty (lambda = {penalty:g}), training drives heads towards orthogonal "
        f"subspaces ({label})",
        init,
        end,
        haar,
        n_se,
        role=V.SIDE_CHECK,
    )


# --------------------------------------------------------------------------- bookkeeping


def _extra(result: SettingResult):
    out = []
    for field, name in (
        ("imse", "IMSE on fresh data, end minus initialisation"),
        ("error_corr", "heads' error correlation, end minus initialisation"),
        ("fit", "leave-one-out training loss, end minus initialisation"),
    ):
        c = result.change(field)
        out.append(_stat(name, float(c.mean), float(c.se)))
    if np.isfinite(result.optimum_hdi):
        out.append(_stat("HDI_PA of chapter 05's IMSE optimum", result.optimum_hdi))
    return tuple(out)


def ledger(results, penalty: float) -> Ledger:
    """The chapter's records: one training verdict per setting, then one positive control per setting."""
    results = _results(results)
    book = Ledger("10_training_heads")
    for r in results:
        h = r.series("hdi")
        book.add(
            training_orthogonal_verdict(
                r.setting.slug, r.setting.label, h[:, 0], h[:, -1], r.setting.haar, _extra(r), premises=r.premises
            )
        )
    for r in results:
        if r.penalised:
            h = r.series("hdi", penalised=True)
            book.add(
                penalty_control_verdict(r.setting.slug, r.setting.label, h[:, 0], h[:, -1], r.setting.haar, penalty)
            )
    return book


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


def _table_row(r: SettingResult, records: dict) -> str:
    r"""One row of the paper's table (``\TrainHeadsTable``): the setting, HDI_PA at the start and the end,
    the change and its verdict, the positive control's change, the changes of the error correlation and
    of the fresh-data IMSE, and HDI_PA of chapter 05's IMSE optimum ("--" where not run)."""
    from ..infra.texout import format_mean_se

    s = r.setting
    h = r.series("hdi")

    def pm(est):
        return f"${format_mean_se(float(est.mean), float(est.se))}$"

    cells = [
        _TABLE_WORDS[s.kind],
        f"${s.n_heads}$",
        _TABLE_WORDS[s.shape],
        _TABLE_WORDS[s.combination],
        pm(Estimate.from_samples(h[:, 0])),
        pm(Estimate.from_samples(h[:, -1])),
        pm(r.change("hdi")),
        records[f"{CLAIM}/{s.slug}"].verdict,
        pm(r.change("hdi", penalised=True)) if r.penalised else "--",
        pm(r.change("error_corr")),
        pm(r.change("imse")),
        f"${r.optimum_hdi:.2f}$" if np.isfinite(r.optimum_hdi) else "--",
    ]
    return " & ".join(cells)


def _verb(verdict: str) -> str:
    """A verdict as the predicate of a sentence: "holds", "fails as stated", "is undecided at this size"."""
    return verdict if verdict in (V.HOLDS, V.HOLDS_UNDER, V.FAILS) else f"is {verdict}"


def _settings_count(k: int, n: int) -> str:
    """ "all eight settings", "two of the eight settings", "the one setting" (``k`` of ``n``)."""
    if n == 1:
        return "the one setting" if k else "no setting"
    return count_of(k, n, "settings")


def _setting_tex(s: Setting) -> str:
    """A setting as the paper names it: ``anisotropic $m$, $Hd_k=d$, averaged``."""
    op = {"equal": "=", "over": ">", "under": "<"}[s.shape]
    how = {"average": "averaged", "sum": "summed", "concat": "concatenated"}[s.combination]
    return f"{s.kind} $m$, $Hd_k{op}d$, {how}"


@checked(results=_results, book=_book)
def verdicts_sentence(results, book: Ledger) -> str:
    """The training claim's verdicts in one LaTeX clause, each verdict said once, e.g. "it holds in none of
    the eight settings, fails as stated in two (anisotropic $m$, $Hd_k=d$, averaged and ...) and is
    undecided at this size in six (...)"; and the positive controls' count."""
    results = _results(results)
    records = {rec.claim: rec for rec in _book(book)}
    by_verdict: dict[str, list[str]] = {}
    for r in results:
        by_verdict.setdefault(records[f"{CLAIM}/{r.setting.slug}"].verdict, []).append(_setting_tex(r.setting))
    n = len(results)
    parts = []
    for k, (verdict, names) in enumerate(by_verdict.items()):
        head = _settings_count(len(names), n) if k == 0 else number_word(len(names))
        parts.append(f"{_verb(verdict)} in {head}" + (f" ({'; '.join(names)})" if len(names) < n else ""))
    text = f"the reading {join_list(parts)}"
    controls = [records[f"{CONTROL_CLAIM}/{r.setting.slug}"] for r in results if r.penalised]
    if controls:
        held = sum(rec.holds for rec in controls)
        text += "; with the orthogonality penalty, the positive control " + (
            _verb(controls[0].verdict) if len(controls) == 1 else f"{V.HOLDS} in {_settings_count(held, len(controls))}"
        )
    return text


def _changes_clause(results, field: str, noun: str, n_se: float) -> str:
    moves = {"fell": [], "rose": []}
    for r in results:
        c = r.change(field)
        if c.mean < -n_se * c.se:
            moves["fell"].append(_setting_tex(r.setting))
        elif c.mean > n_se * c.se:
            moves["rose"].append(_setting_tex(r.setting))
    n = len(results)
    said = [
        f"{word} in {_settings_count(len(v), n)}" + (f" ({'; '.join(v)})" if len(v) < n else "")
        for word, v in moves.items()
        if v
    ]
    return f"{noun} {join_list(said)}" if said else f"{noun} moved in {_settings_count(0, n)}"


@checked(results=_results, n_se=V.nonnegative)
def changes_sentence(results, n_se: float = N_SE_TRAINING) -> str:
    """Where the fresh-data IMSE and the heads' error correlation changed by more than ``n_se`` paired
    s.e. over training, one LaTeX sentence: "Over training (by more than 3 paired s.e.), the IMSE on
    fresh data fell in ... and rose in ...; the heads' error correlation fell in ...".  Directions come
    from the numbers, never typed."""
    return rf"Over training (by more than {n_se:g} paired s.e.), " + "; ".join(
        _changes_clause(results, f, noun, n_se)
        for f, noun in (("imse", "the IMSE on fresh data"), ("error_corr", "the heads' error correlation"))
    )


def write_macros(macros, results, book: Ledger, sizes: dict, parameters=None) -> None:
    """The paper's numbers: per setting the HDI change, its start and end, the Haar expectation, the
    IMSE change and the verdict; the counts of verdicts (and of positive controls that hold); the sizes;
    the shapes and the names of the two regression functions (from the settings); and, from
    ``parameters`` (the notebook's, optional), ``n``, ``bandwidth`` and ``penalty``."""
    from ..infra.texout import Macros

    if not isinstance(macros, Macros):
        raise ValueError(f"macros: expected a mhanw.infra.texout.Macros, got {type(macros).__name__}")
    results = _results(results)
    records = {rec.claim: rec for rec in _book(book)}
    missing = [f"{CLAIM}/{r.setting.slug}" for r in results if f"{CLAIM}/{r.setting.slug}" not in records]
    if missing:
        raise ValueError(f"book: expected the records of ledger(results), missing {', '.join(missing)}")
    if not isinstance(sizes, dict) or any(k not in sizes for k in ("n_seeds", "n_steps", "n_test")):
        raise ValueError(f"sizes: expected a dict with n_seeds, n_steps and n_test, got {brief(sizes)}")
    counts = {"Holds": 0, "Fails": 0, "Undecided": 0, "Outside": 0}
    for r in results:
        s = r.setting
        rec = records[f"{CLAIM}/{s.slug}"]
        h = r.series("hdi")
        macros.mean_se(f"{s.macro}Change", *r.change("hdi"))
        macros.mean_se(f"{s.macro}Start", *Estimate.from_samples(h[:, 0]))
        macros.mean_se(f"{s.macro}End", *Estimate.from_samples(h[:, -1]))
        macros.mean_se(f"{s.macro}ImseChange", *r.change("imse"))
        macros.mean_se(f"{s.macro}CorrChange", *r.change("error_corr"))
        macros.number(f"{s.macro}Haar", s.haar, 3)
        macros.text(f"{s.macro}Verdict", rec.verdict)
        if r.penalised:
            macros.mean_se(f"{s.macro}ControlChange", *r.change("hdi", penalised=True))
            macros.text(f"{s.macro}ControlVerdict", records[f"{CONTROL_CLAIM}/{s.slug}"].verdict)
        if np.isfinite(r.optimum_hdi):
            macros.number(f"{s.macro}OptimumHDI", r.optimum_hdi, 3)
        key = "Holds" if rec.holds else "Fails" if rec.fails else "Outside" if rec.outside else "Undecided"
        counts[key] += 1
    macros.text("Table", " \\\\ ".join(_table_row(r, records) for r in results))
    macros.text("VerdictsSentence", verdicts_sentence(results, book))
    macros.text("ChangesSentence", changes_sentence(results))
    macros.text("PowerSentence", power_sentence(book, tex=True))
    for key, value in counts.items():
        macros.integer(f"Settings{key}", value)
    macros.integer("Settings", len(results))
    controls = [records[f"{CONTROL_CLAIM}/{r.setting.slug}"] for r in results if r.penalised]
    macros.integer("Controls", len(controls))
    macros.integer("ControlsHold", sum(rec.holds for rec in controls))
    for key in ("n_seeds", "n_steps", "n_test"):
        macros.integer("".join(p.capitalize() for p in key.split("_")), sizes[key])
    first = results[0].setting
    macros.integer("D", first.d)
    macros.integer("DK", first.d_k)
    for shape in ("equal", "over"):
        s = next((r.setting for r in results if r.setting.shape == shape), None)
        if s is not None:
            macros.integer(f"Heads{shape.capitalize()}", s.n_heads)
    for kind in ("isotropic", "anisotropic"):
        s = next((r.setting for r in results if r.setting.kind == kind), None)
        if s is not None:
            macros.text(f"{'Iso' if kind == 'isotropic' else 'Aniso'}Label", regression_label(s.regression))
    macros.plain("Values", first.values)
    if parameters is not None:
        if not isinstance(parameters, dict):
            raise ValueError(
                f"parameters: expected the notebook's parameters (a dict), got {type(parameters).__name__}"
            )
        if "n" in parameters:
            macros.integer("N", parameters["n"])
        for key in ("bandwidth", "penalty"):
            if key in parameters:
                macros.number(key.capitalize(), parameters[key], 2)


def results_payload(results) -> dict:
    """The raw paths per setting (mean and s.e. across initialisations at each step, and the per-start
    end points), JSON-ready through :func:`mhanw.infra.results.json_safe`."""
    out = {}
    for r in _results(results):
        entry = {
            "setting": dict(
                regression=r.setting.regression,
                kind=r.setting.kind,
                d=r.setting.d,
                n_heads=r.setting.n_heads,
                d_k=r.setting.d_k,
                combination=r.setting.combination,
                values=r.setting.values,
            ),
            "steps": r.steps,
            "haar": r.setting.haar,
            "optimum_hdi": r.optimum_hdi,
        }
        for field in ("hdi", "error_corr", "fit", "imse"):
            est = r.path_estimate(field)
            entry[field] = dict(mean=est.mean, se=est.se, start=r.series(field)[:, 0], end=r.series(field)[:, -1])
            if r.penalised:
                pe = r.path_estimate(field, penalised=True)
                entry[f"penalised_{field}"] = dict(mean=pe.mean, se=pe.se)
        out[r.setting.slug] = entry
    return out


def findings(book: Ledger) -> str:
    """The sentence of "What we found", generated from the records: in which settings HDI_PA rose
    (holds), fell (fails) or did not change significantly (undecided) over training, and how many
    positive controls held."""
    book = _book(book)
    groups = {"rose significantly": [], "fell significantly": [], "did not change significantly": []}
    outside = []
    controls = []
    for rec in book:
        if rec.claim.startswith(f"{CONTROL_CLAIM}/"):
            controls.append(rec)
            continue
        st = rec.statistics[0]
        if rec.outside:
            outside.append(f"{rec.claim.rsplit('/', 1)[1]} ({st.value:+.3f} ± {st.se:.3f})")
            continue
        key = (
            "rose significantly" if rec.holds else "fell significantly" if rec.fails else "did not change significantly"
        )
        groups[key].append(f"{rec.claim.rsplit('/', 1)[1]} ({st.value:+.3f} ± {st.se:.3f})")
    total = sum(len(v) for v in groups.values()) + len(outside)
    parts = [f"{key} in {len(v)} of {total}" + (": " + ", ".join(v) if v else "") for key, v in groups.items()]
    text = "Over training, HDI_PA " + "; ".join(parts) + " (end minus initialisation, ± 1 s.e. across initialisations)."
    if outside:
        text += (
            f" {len(outside)} of {total} settings are set aside because a premise of the measurement fails "
            f"(the records say which), with these changes: " + ", ".join(outside) + "."
        )
    if controls:
        held = sum(r.holds for r in controls)
        text += (
            f" With an explicit orthogonality penalty (the positive control) it rose significantly in {held} "
            f"of {len(controls)} settings."
        )
    return text


def publish(book: Ledger, results, sizes: dict, metadata: dict, macros_path, results_path) -> None:
    """Write the chapter's macros (prefix ``TrainHeads``) and its results file (``metadata``: fidelity,
    seed, parameters, ...; the paths of :func:`results_payload`; the records), each atomically."""
    from ..infra.results import json_safe, save_results
    from ..infra.texout import Macros, checked_outputs

    if not isinstance(metadata, dict):
        raise ValueError(f"metadata: expected a dict (fidelity, seed, parameters, ...), got {type(metadata).__name__}")
    macros = Macros("TrainHeads")
    write_macros(macros, results, book, sizes, metadata.get("parameters"))
    checked_outputs(macros_path=macros_path, results_path=results_path)  # both, before either is written
    macros.write(macros_path, argument="macros_path")
    save_results(
        results_path,
        {
            **json_safe(metadata),
            "sizes": json_safe(sizes),
            "paths": json_safe(results_payload(results)),
            "claims": book.to_list(),
        },
        argument="results_path",
    )


# --------------------------------------------------------------------------- the lesson's cells

#: The lines of the figures: colour, line style and marker per combination rule.
STYLES = {"average": ("C0", "-", "o"), "sum": ("C2", "-.", "^"), "concat": ("C3", "--", "s")}
#: The four panels of the key figure: (kind of m, shape).
PANELS = tuple((kind, shape) for kind in ("isotropic", "anisotropic") for shape in ("equal", "over"))
#: The streams the chapter spawns from its seed, in order.
STREAMS = ("loss illustration", "key formula check", "training")


def setup(namespace) -> tuple:
    """The run of the notebook whose globals are ``namespace``: its checked parameters
    (:func:`mhanw.infra.params.check_parameters`, one line naming a bad one), the chapter's sizes,
    random streams and grid: ``(params, sizes, streams, grid)``, ``streams`` one
    :class:`numpy.random.SeedSequence` child per entry of :data:`STREAMS`; sets the figure style."""
    from ..infra.notebook import start

    params, sizes, children = start(namespace, PARAMETERS, CONSTRAINTS, SIZES, len(STREAMS))
    sizes = {**sizes, "n_seeds": params["n_seeds"]}
    streams = dict(zip(STREAMS, children))
    grid = settings(
        params["isotropic_regression"],
        params["anisotropic_regression"],
        params["d"],
        params["d_k"],
        params["heads_equal"],
        params["heads_over"],
        params["combinations"],
        params["values"],
    )
    return params, sizes, streams, grid


def check_by_hand(loss_by_hand, params: dict, seed, n: int = 80, tol: float = 1e-5) -> dict:
    """The key formula written out in the chapter, ``loss_by_hand(W, X, Y, h) -> (loss, grad)`` for averaged
    heads, against :func:`mhanw.training.loo_loss` on one sample of ``n`` points of the anisotropic ``m``,
    and the library's analytic gradients (averaged and concat) against central finite differences.
    Returns the four gaps; ``AssertionError`` when one exceeds ``tol``."""
    n = positive_int(n, "n", minimum=2)
    if not callable(loss_by_hand):
        raise ValueError(f"loss_by_hand: expected a function (W, X, Y, h) -> (loss, grad), got {brief(loss_by_hand)}")
    rng = np.random.default_rng(as_seed_sequence(seed))
    p = params
    sample = _data.data_model(p["anisotropic_regression"], p["inputs"], p["noise"], p["sigma"]).draw(rng, n, p["d"])
    X, Y, h = sample.X, sample.Y, p["bandwidth"]
    W = _heads.haar_heads(p["d"], p["d_k"], p["heads_equal"], rng)
    mine, my_grad = loss_by_hand(W, X, Y, h)
    lib = _training.loo_loss(W, X, Y, h)
    E = rng.standard_normal(W.shape)
    gaps = {
        "loss: by hand - library": abs(float(mine) - lib.loss),
        "gradient: by hand - library (max)": float(np.abs(np.asarray(my_grad) - lib.grad).max()),
    }
    for rule in ("average", "concat"):

        def loss(V):
            return _training.loo_loss(V, X, Y, h, rule, p["values"], gradient=False).loss

        fd = (loss(W + 1e-6 * E) - loss(W - 1e-6 * E)) / 2e-6
        grad = _training.loo_loss(W, X, Y, h, rule, p["values"]).grad
        gaps[f"{rule}: analytic - finite difference (relative)"] = abs(float(np.sum(grad * E)) - fd) / abs(fd)
    if max(gaps.values()) >= tol:
        raise AssertionError(f"the formula by hand and the library disagree: {gaps}")
    return gaps


@notebook_helper
def loss_figure(curves: dict, regression: str, n: int, bandwidth: float):
    """The leave-one-out illustration (:func:`self_match_curves`): in-sample and LOO error of one head
    ``cW`` against the scale ``c``, mean and 2 s.e. over samples.  Returns the figure."""
    from ..infra import figures

    n = positive_int(n, "n", minimum=2)

    fig, axes = figures.panels(1, height=2.6, width=4.2)
    ax = axes[0]
    for key, label, ls, mk in (
        ("in_sample", "in-sample error (the point among the keys)", "--", "s"),
        ("loo", "leave-one-out error (the training loss)", "-", "o"),
    ):
        est = curves[key]
        figures.errorbar(
            ax,
            curves["scales"],
            est.mean(0),
            est.std(0, ddof=1) / np.sqrt(est.shape[0]),
            label=label,
            linestyle=ls,
            marker=mk,
            ms=3,
        )
    ax.set(
        xscale="log",
        xlabel=r"scale $c$ of the head $cW$ (an inverse bandwidth)",
        ylabel="mean squared error",
        title=f"one head, m = {regression_label(regression)}, n = {n}, h = {bandwidth:g}",
    )
    ax.legend(loc="upper left", fontsize=7)
    return fig


@notebook_helper
def loss_caption(curves: dict) -> str:
    """The illustration's caption, its directions read from the curves: where the in-sample and the
    leave-one-out error go as the head grows from the smallest to the largest scale."""
    ins, loo = curves["in_sample"].mean(0), curves["loo"].mean(0)
    k = int(np.argmin(loo))

    def word(a, b):
        return "falls" if b < a else "rises"

    return (
        f"As the head $cW$ grows from $c={curves['scales'][0]:g}$ to $c={curves['scales'][-1]:g}$, its in-sample "
        f"error (dashed, the point among its own keys) {word(ins[0], ins[-1])} from {ins[0]:.3f} to {ins[-1]:.3f}, "
        f"while its leave-one-out error (solid) is smallest at $c={curves['scales'][k]:.2g}$ and "
        f"{word(loo[k], loo[-1])} to {loo[-1]:.3f} at the largest scale: only the leave-one-out error is a loss "
        "a head cannot win by matching a point to itself."
    )


@notebook_helper
def trajectory_figure(results):
    """The key figure: HDI_PA of the keys along gradient descent, one panel per (kind of m, shape), a line
    per combination rule (2 s.e. bars across initialisations), the penalised control dotted, the Haar
    level grey, chapter 05's IMSE optimum a star.  Returns the figure."""
    from ..infra import figures

    results = _results(results)
    panels = [(k, sh) for k, sh in PANELS if any(r.setting.kind == k and r.setting.shape == sh for r in results)]
    fig, axes = figures.panels(len(panels), height=2.7, sharey=True)
    for ax, (kind, shape) in zip(axes, panels):
        here = [r for r in results if r.setting.kind == kind and r.setting.shape == shape]
        for r in here:
            color, ls, mk = STYLES[r.setting.combination]
            est = r.path_estimate("hdi")
            figures.errorbar(
                ax,
                r.steps,
                est.mean,
                est.se,
                color=color,
                linestyle=ls,
                marker=mk,
                ms=3,
                label=f"trained, {r.setting.combination}",
            )
            if r.penalised:
                ax.plot(
                    r.steps,
                    r.path_estimate("hdi", penalised=True).mean,
                    color=color,
                    linestyle=":",
                    lw=1,
                    label=f"with penalty, {r.setting.combination}",
                )
        s = here[0]
        ax.axhline(s.setting.haar, color="grey", lw=0.8, label=r"Haar $1-d_k/d$")
        if np.isfinite(s.optimum_hdi):
            ax.plot(
                s.steps[-1], s.optimum_hdi, marker="*", color="k", ms=9, linestyle="none", label="IMSE optimum (ch. 5)"
            )
        op = {"equal": "=", "over": ">", "under": "<"}[shape]
        ax.set(
            xlabel="descent step",
            title=f"{regression_label(s.setting.regression)}, $H={s.setting.n_heads}$, $Hd_k{op}d$",
        )
    axes[0].set_ylabel(r"HDI$_{\mathrm{PA}}$ of the keys")
    handles, labels = axes[-1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=3, fontsize=7)
    return fig


def _split(book: Ledger) -> tuple[list, list]:
    """The paper's records (the training claim) and the positive controls, apart."""
    recs = list(_book(book))
    return (
        [r for r in recs if r.claim.startswith(f"{CLAIM}/")],
        [r for r in recs if r.claim.startswith(f"{CONTROL_CLAIM}/")],
    )


def _slugs(records) -> str:
    return join_list([r.claim.rsplit("/", 1)[1] for r in records])


def _verdict_counts(records) -> str:
    """ "rose in none of the eight settings, fell in two (aniso-equal-average and ...), ..." from the records."""
    n = len(records)
    groups = (
        ("moved apart (rose by more than 3 s.e.)", [r for r in records if r.holds]),
        ("moved closer (fell by more than 3 s.e.)", [r for r in records if r.fails]),
        ("did not move detectably", [r for r in records if r.verdict == V.UNDECIDED]),
        ("lie outside the conditions of the measurement", [r for r in records if r.outside]),
    )
    parts = [
        f"{what} in {_settings_count(len(rs), n) if i == 0 else number_word(len(rs))}"
        + (f" ({_slugs(rs)})" if rs and len(rs) < n else "")
        for i, (what, rs) in enumerate(groups)
        if rs or i == 0
    ]
    return join_list(parts)


@notebook_helper
def trajectory_caption(book: Ledger) -> str:
    """The key figure's caption: how to read it, then what it shows, generated from the records."""
    claims, controls = _split(book)
    text = (
        "Each panel is one $m$ and one shape; a line is the mean $\\mathrm{HDI_{PA}}$ of the keys over the "
        "initialisations along gradient descent (solid: averaged heads, dashed: concat), the dotted line the "
        "same starts trained with the orthogonality penalty, the grey line random heads, the star chapter 5's "
        f"IMSE optimum. Trained heads {_verdict_counts(claims)}"
    )
    if controls:
        text += f"; with the penalty they moved apart in {count_of(sum(r.holds for r in controls), len(controls))}"
    return text + "."


@notebook_helper
def takeaway(book: Ledger) -> str:
    """One sentence after the key figure, generated from the records: whether training on the
    leave-one-out loss pushed heads apart, where it pulled them together, the smallest move the undecided
    settings could detect against the positive control's rise, and whether the control held."""
    claims, controls = _split(book)
    up = [r for r in claims if r.holds]
    down = [r for r in claims if r.fails]
    said = [
        f"training pushed the heads apart in {_settings_count(len(up), len(claims))}"
        + (f" ({_slugs(up)})" if up and len(up) < len(claims) else "")
    ]
    if down:
        said.append(
            "pulled them together in "
            + join_list(
                f"{r.claim.rsplit('/', 1)[1]} ({r.statistics[0].value:+.3f} ± {r.statistics[0].se:.3f})" for r in down
            )
        )
    text = "Takeaway: " + join_list(said) + "."
    power = power_sentence(book)
    return text + (" " + power if power else "")


@checked(book=_book, tex=V.flag)
def power_sentence(book: Ledger, tex: bool = False) -> str:
    """Where no move was detected: the smallest move the run could have seen (3 s.e.) against the positive
    control's rise in the same setting, one sentence generated from the records ("" when every setting
    moved detectably or no control ran).  ``tex``: LaTeX (``$\\HDIpa$``) instead of record text."""
    claims, controls = _split(book)
    by_slug = {r.claim.rsplit("/", 1)[1]: r for r in controls}
    pairs = [(r, by_slug.get(r.claim.rsplit("/", 1)[1])) for r in claims if r.verdict == V.UNDECIDED]
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


def tick_label(setting) -> str:
    """A setting's data and shape as a figure's tick label: its regression's symbol and its shape, never a
    code name (the combination rule is told by colour and marker)."""
    if not hasattr(setting, "shape") or not hasattr(setting, "regression"):
        raise ValueError(f"setting: expected a setting of the training grid, got {brief(setting)}")
    op = {"equal": "=", "over": ">", "under": "<"}[setting.shape]
    return f"{regression_label(setting.regression)}\n$Hd_k{op}d$"


@notebook_helper
def moves_figure(results):
    """What else moves: per setting, end minus start of the heads' error correlation (left) and of the
    fresh-data IMSE (right), 2 paired s.e. across initialisations; one tick per regression and shape, the
    combination rules side by side at it.  Returns the figure."""
    from ..infra import figures

    results = _results(results)
    fig, axes = figures.panels(2, height=2.6)
    groups = list(dict.fromkeys((r.setting.regression, r.setting.shape) for r in results))
    rules = sorted({r.setting.combination for r in results})
    offset = {c: 0.3 * (i - (len(rules) - 1) / 2) for i, c in enumerate(rules)}
    for ax, field, ylabel in (
        (axes[0], "error_corr", "change of error correlation"),
        (axes[1], "imse", "change of IMSE (fresh data)"),
    ):
        for r in results:
            color, _, mk = STYLES[r.setting.combination]
            c = r.change(field)
            xi = groups.index((r.setting.regression, r.setting.shape)) + offset[r.setting.combination]
            figures.errorbar(ax, [xi], [c.mean], [c.se], color=color, marker=mk, linestyle="none")
        ax.axhline(0, color="grey", lw=0.6)
        first = {g: next(r.setting for r in results if (r.setting.regression, r.setting.shape) == g) for g in groups}
        ax.set_xticks(np.arange(len(groups)), [tick_label(first[g]) for g in groups], fontsize=7)
        ax.set_xlim(-0.6, len(groups) - 0.4)
        ax.set(ylabel=ylabel)
    for comb in rules:
        color, _, mk = STYLES[comb]
        axes[0].plot([], [], color=color, marker=mk, linestyle="none", label=comb)
    axes[0].legend(loc="lower left", fontsize=7)
    return fig


@notebook_helper
def moves_caption(results) -> str:
    """The caption of :func:`moves_figure`: how to read it and, from the numbers, where each quantity moved
    by more than 3 paired s.e. (:func:`changes_sentence`, as Markdown)."""
    return (
        "Per setting, end minus start of training of the heads' error correlation on fresh test points (left) "
        "and of the ensemble's IMSE on fresh data (right); a point below zero is a fall. "
        + changes_sentence(results)
        + "."
    )


@notebook_helper
def summary_table(results) -> dict:
    """The numbers of every setting for :func:`mhanw.infra.tables.show`: HDI_PA at start and end, its change,
    the circuits' (HDI_RV) change, the control's change, the IMSE optimum's HDI_PA and the Haar level."""
    from ..infra import tables

    return {
        r.setting.slug: {
            "HDI_PA start": tables.pm(*r.path_estimate("hdi")[0]),
            "HDI_PA end": tables.pm(*r.path_estimate("hdi")[-1]),
            "change": tables.pm(*r.change("hdi")),
            "circuits (HDI_RV) change": tables.pm(*r.change("hdi_circuit")),
            "control change": tables.pm(*r.change("hdi", penalised=True)) if r.penalised else "--",
            "IMSE optimum HDI_PA": r.optimum_hdi,
            "Haar": r.setting.haar,
        }
        for r in _results(results)
    }


def show_text(text: str) -> None:
    """Display generated record text (a takeaway, the findings' lead) as Markdown, the records' named
    symbols typeset (:func:`mhanw.infra.notation.markdown_text`); returns nothing."""
    from IPython.display import Markdown, display

    from ..infra.notation import markdown_text

    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"text: expected generated text to show, got {brief(text)}")
    display(Markdown(markdown_text(text)))


@notebook_helper
def report(book: Ledger, results, sizes: dict, params: dict, macros_path, results_path) -> None:
    """The closing bookkeeping: :func:`publish` with the run's fidelity, seed and parameters (the paths
    left out)."""
    if not isinstance(params, Mapping):
        raise ValueError(f"params: expected the checked parameters (a mapping), got {type(params).__name__}")
    kept = {k: v for k, v in params.items() if k not in ("figures_dir", "macros_path", "results_path")}
    publish(
        book,
        results,
        sizes,
        dict(fidelity=params["fidelity"], seed=params["seed"], parameters=kept),
        macros_path,
        results_path,
    )


# --------------------------------------------------------------------------- parameters

from ..infra import params as _P  # noqa: E402  (the declaration below is the module's last part)

#: The chapter's papermill parameters (checked by :func:`mhanw.infra.params.check_parameters`).
PARAMETERS = {
    **_P.STANDARD,
    "isotropic_regression": _P.regression(dimension="d"),
    "anisotropic_regression": _P.regression(dimension="d"),
    "inputs": _P.inputs(dimension="d"),
    "noise": _P.noise(dimension="d"),
    "sigma": _P.noise_level(),
    "d": _P.positive_int(2, 256, why="64 times the default 4: every head is trained by gradient steps"),
    "d_k": _P.positive_int(1, 256, at_most="d", why="the largest d"),
    "heads_equal": _P.positive_int(2, 256, why="the largest d"),
    "heads_over": _P.positive_int(2, 512, why="twice the largest d"),
    "n": _P.bounded_work(
        _P.positive_int(3, 15_000, why="100 times the default 150"),
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
    "bandwidth": _P.bandwidth(),
    "combinations": _P.sequence(_P.choice(*_training.COMBINATIONS)),
    "values": _P.choice(*_heads.VALUES),
    "penalty": _P.positive_float(1e-6, 1e6, why="six decades either side of the default 1"),
    "n_seeds": _P.positive_int(2, 2_000, why="100 times the default 20"),
}
CONSTRAINTS = (
    _P.product_at_most(("heads_equal", "d_k"), "d", equal=True),
    _P.require("heads_over", lambda p: p["heads_over"] * p["d_k"] > p["d"], "heads_over * d_k > d"),
    _P.require(
        "combinations", lambda p: len(set(p["combinations"])) == len(p["combinations"]), "distinct combinations"
    ),
)

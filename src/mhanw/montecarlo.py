"""Monte Carlo moments of head ensembles over training samples (Thm 3.1, Lemma 4.1, Thm 4.2, 5.1, 7.1).

Every function draws one training sample ``D_n`` per replicate from its own
stream of :mod:`mhanw.infra.sweep` and evaluates every configuration on it
(common random numbers), so differences between configurations carry paired
standard errors:

- :func:`integrated_mse`: the integrated squared error of each configuration
  over fresh test points, per replicate (Thm 4.2, 5.1);
- :func:`pointwise_estimates`: per-head estimates at fixed points, the input of
  :func:`mhanw.decomposition.bias_variance_covariance` (Thm 3.1, Lemma 4.1);
- :func:`error_moments`: the heads' error second-moment matrices (Thm 7.1).

Configurations and head evaluation are :mod:`mhanw.heads`; the data are
drawn by :meth:`mhanw.data.DataModel.draw`: ``regression`` is a regression
spec (a catalogue name or a formula, with the reference Gaussian inputs and
noise of level ``sigma``) or a whole :class:`mhanw.data.DataModel` (its inputs
and noise are used; ``sigma`` must then be left at ``None`` or equal the
model's level).  With a name, the draws are those of
:func:`mhanw.data.draw_sample` with that name, bit for bit.

Every driver bounds the total work of a call, replicates times heads times
training points times evaluation points (``_work``), by
:data:`mhanw.constants.MAX_WORK`, about an hour of one core, before it draws
anything; each size alone is bounded by :data:`mhanw.constants.MAX_ENTRIES`
and :data:`mhanw.constants.MAX_REPLICATES`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from . import data as _data
from .constants import BANDWIDTH, MAX_REPLICATES, check_entries, check_work
from .heads import HeadConfig, _Plan
from .infra.estimates import Estimate, ReplicatedErrors
from .infra.sweep import run_replicates
from .infra.validate import as_float_array, brief, positive_int

__all__ = ["ImseResult", "error_moments", "integrated_mse", "pointwise_estimates", "pointwise_parts"]


def _as_configs(configs, bandwidth, name: str = "configs"):
    """The configurations of a Monte Carlo call as a list of HeadConfig.

    ``configs`` (one configuration or a list; each a HeadConfig or an ``(H, d, d_k)`` array of
    projections with ``bandwidth``) as a list of HeadConfig; a refusal of an array names ``name``
    (``name[i]`` in a list), one of ``bandwidth`` names ``bandwidth``.
    """
    single = isinstance(configs, (HeadConfig, np.ndarray))
    if single:
        configs = [configs]
    try:
        configs = list(configs)
    except TypeError as exc:
        raise ValueError(
            f"{name}: expected a list of HeadConfig or (H, d, d_k) arrays, got {type(configs).__name__}"
        ) from exc
    if not configs:
        raise ValueError(f"{name}: expected at least one configuration, got none")
    out = []
    for i, c in enumerate(configs):
        try:
            out.append(c if isinstance(c, HeadConfig) else HeadConfig(c, bandwidth=bandwidth))
        except ValueError as exc:
            head, sep, rest = str(exc).partition(": ")
            if head != "projections":  # the bandwidth (or another argument) keeps its own name
                raise
            raise ValueError(f"{name if single else f'{name}[{i}]'}: {rest}") from None
    d = out[0].d
    for i, c in enumerate(out):
        if c.d != d:
            raise ValueError(f"configs: configuration {i} has input dimension {c.d}, configuration 0 has {d}")
    return out


@dataclass(frozen=True)
class ImseResult(ReplicatedErrors):
    """Per-replicate integrated squared errors of several configurations under CRN.

    ``errors[c, r] = (1/T) sum_t (f_c(x_t) - m(x_t))^2`` for configuration ``c`` on replicate ``r``;
    all configurations share the training sample and test points of replicate ``r``, so every
    comparison is paired.  ``mean``, ``se`` and ``estimate`` are the IMSE per configuration ``(C,)``;
    comparisons are :class:`mhanw.infra.estimates.Estimate` objects.

    Parameters
    ----------
    errors : numpy.ndarray
        ``(C, R)``.
    labels : tuple of str
        One label per configuration.
    """

    errors: np.ndarray
    labels: tuple

    def _index(self, i, name: str) -> int:
        i = positive_int(i, name, minimum=0)
        if i >= self.errors.shape[0]:
            raise ValueError(f"{name}: expected a configuration index below {self.errors.shape[0]}, got {i}")
        return i

    def paired_difference(self, a: int, b: int) -> Estimate:
        """``IMSE_a - IMSE_b`` with its paired s.e. ``sd(err_a - err_b)/sqrt(R)``.

        Parameters
        ----------
        a : int
            Index of a configuration.
        b : int
            Index of the configuration it is compared with.

        Returns
        -------
        mhanw.infra.estimates.Estimate
            The difference (unpacks as ``diff, se``).

        Raises
        ------
        ValueError
            Naming ``a`` or ``b`` for an index that is not a configuration's.
        """
        return Estimate.paired(self.errors[self._index(a, "a")], self.errors[self._index(b, "b")])

    def differences_from(self, reference: int = 0) -> Estimate:
        """``IMSE_c - IMSE_ref`` for every configuration ``c`` with its paired s.e.

        Parameters
        ----------
        reference : int, default 0
            Index of the reference configuration.

        Returns
        -------
        mhanw.infra.estimates.Estimate
            ``(C,)`` each.

        Raises
        ------
        ValueError
            Naming ``reference`` for an index that is not a configuration's.
        """
        return Estimate.paired(self.errors, self.errors[self._index(reference, "reference")])

    def relative_to(self, reference: int = 0) -> Estimate:
        """``IMSE_c / IMSE_ref - 1`` for every ``c`` with its paired delta-method s.e. (0 for the reference).

        Parameters
        ----------
        reference : int, default 0
            Index of the reference configuration.

        Returns
        -------
        mhanw.infra.estimates.Estimate
            ``(C,)`` each.

        Raises
        ------
        ValueError
            Naming ``reference`` for an index that is not a configuration's.
        """
        return Estimate.relative(self.errors, self.errors[self._index(reference, "reference")])

    def steps(self, order=None) -> Estimate:
        """``IMSE_{order[k+1]} - IMSE_{order[k]}`` with paired s.e.: the steps along a family.

        Parameters
        ----------
        order : sequence of int, optional
            At least two configuration indices (default: the stored order).

        Returns
        -------
        mhanw.infra.estimates.Estimate
            ``(len(order) - 1,)`` each.

        Raises
        ------
        ValueError
            Naming ``order`` when it has fewer than two indices or one that is not a configuration's.
        """
        C = self.errors.shape[0]
        order = np.arange(C) if order is None else np.asarray(order)
        if (
            order.ndim != 1
            or order.size < 2
            or not np.issubdtype(order.dtype, np.integer)
            or order.min() < 0
            or order.max() >= C
        ):
            raise ValueError(f"order: expected at least 2 configuration indices below {C}, got {brief(order)}")
        return Estimate.paired(self.errors[order[1:]], self.errors[order[:-1]])


#: Largest noise level the drivers accept: squared errors of ``sigma`` times a normal draw, summed
#: over test points and replicates, stay far inside a double (``sigma = 1e200`` gave inf).
MAX_SIGMA = 1e100


def _model(regression, sigma, d: int, name: str) -> _data.DataModel:
    """``regression`` (spec or DataModel) and ``sigma`` as a DataModel defined on ``R^d``."""
    model = _data.as_data_model(regression, sigma)
    if not model.sigma <= MAX_SIGMA:
        raise ValueError(
            f"sigma: expected a noise level at most {MAX_SIGMA:g} (the squared errors of larger "
            f"levels overflow a double), got {model.sigma:g}"
        )
    if d < model.min_dim:
        raise ValueError(f"{name}: {model.name!r} needs d >= {model.min_dim}, got d = {d}")
    model.inputs.check_dimension(d, name)
    return model


def _sizes(n, n_test, n_rep, d: int, per_replicate: int, fresh_tests: bool = True) -> tuple[int, int]:
    """The sizes of a Monte Carlo call, checked.

    ``n``, ``n_test`` (if ``fresh_tests``) checked, and ``n_rep`` (which :func:`run_replicates` takes
    as given): each replicate draws ``(n, d)`` and ``(n_test, d)`` arrays and returns
    ``per_replicate`` numbers.
    """
    n_rep = positive_int(n_rep, "n_rep")
    if n_rep > MAX_REPLICATES:
        raise ValueError(f"n_rep: expected at most {MAX_REPLICATES} replicates, got {n_rep}")
    check_entries("n_rep", n_rep, per_replicate)
    n = positive_int(n, "n")
    check_entries("n", n, d)
    if fresh_tests:
        n_test = positive_int(n_test, "n_test")
        check_entries("n_test", n_test, d)
    return n, n_test


#: Work units of a drawn coordinate and of a replicate's fixed cost in :func:`_work` (one unit: one
#: kernel weight); measured on one core: a kernel weight about 4.5 ns, a drawn coordinate with its
#: share of the regression about 45 ns, a replicate's fixed cost (streams, dispatch) about 0.1 ms.
_DRAW_UNITS = 10
_REPLICATE_UNITS = 25_000


def _work(configs, n: int, n_points: int, n_rep: int, d: int) -> int:
    """The work of a Monte Carlo call in kernel weights.

    The work of a Monte Carlo call in kernel weights, as a Python int (never wraps): per replicate,
    every head weighs the ``n`` training points at each of the ``n_points`` evaluation points (and, for
    a ``"concat"`` rule with a fitted ``W_O``, at the ``n`` training points themselves, left out one by
    one) and projects every point, plus the drawn coordinates and the replicate's fixed cost
    (:data:`_DRAW_UNITS`, :data:`_REPLICATE_UNITS`).  Bounded by :data:`mhanw.constants.MAX_WORK`.
    """
    n, T, R, d = int(n), int(n_points), int(n_rep), int(d)
    kernel = sum(
        int(c.n_heads) * (n * (T + (n if c.rule == "concat" and isinstance(c.output, str) else 0)) + n + T)
        for c in configs
    )
    return R * (kernel + _DRAW_UNITS * (n + T) * d + _REPLICATE_UNITS)


def _check_work(configs, n: int, n_points: int, n_rep: int, d: int, points: str) -> None:
    """Refuse a Monte Carlo call whose work exceeds the bound.

    ``ValueError`` naming ``n``, ``points`` and ``n_rep`` when :func:`_work` exceeds
    :data:`mhanw.constants.MAX_WORK` (each size was bounded alone; this bounds their product).
    """
    heads = sum(int(c.n_heads) for c in configs)
    where = f"n_test = {n_points}" if points == "n_test" else f"{n_points} point{'s' * (n_points != 1)} in x"
    check_work(
        f"n, {points}, n_rep",
        _work(configs, n, n_points, n_rep, d),
        f"the call (n_rep = {n_rep} replicates x {heads} heads x n = {n} x {where})",
        "use fewer replicates, evaluation or training points",
    )


def _finite_errors(errors: np.ndarray, model: _data.DataModel, s: _data.Sample) -> np.ndarray:
    """The per-replicate errors if they are finite.

    ``errors`` if finite, else ``ValueError`` naming what takes values too large to square: the
    regression (``regression``), the noise of a data model (``regression``, with its noise spec) or the
    noise level (``sigma``), whichever is largest at the drawn points.
    """
    if np.all(np.isfinite(errors)):
        return errors
    with np.errstate(all="ignore"):  # the error path only: which part of Y = m(X) + noise is too large
        m_X = np.asarray(model.regression._func(s.X), dtype=float)
        m_big = max(np.max(np.abs(m_X)), np.max(np.abs(s.m_test), initial=0.0))
        noise_big = np.max(np.abs(s.Y - m_X))
    if noise_big > m_big:
        if model.noise.law == "heteroscedastic":
            raise ValueError(
                f"regression: the squared errors overflow a double; the data model's noise "
                f"{model.noise.spec!r} (sigma = {model.sigma!r}) takes values too large to square "
                f"at some drawn point (inputs {model.inputs.spec})"
            )
        raise ValueError(
            f"sigma: the squared errors overflow a double; the noise {model.noise.spec!r} of level "
            f"sigma = {model.sigma!r} takes values too large to square at some drawn point"
        )
    raise ValueError(
        f"regression: the squared errors overflow a double; {model.regression.name!r} takes "
        f"values too large to square at some drawn point (inputs {model.inputs.spec})"
    )


def _imse_replicate(rng, plan, model, n, n_test):
    configs = plan.configs
    s = model._draw(rng, n, configs[0].d, n_test=n_test)
    ybar = s.Y.mean()
    errs = np.empty(len(configs))
    for i, (c, est) in enumerate(zip(configs, plan.heads(s.X, s.Y, s.X_test))):
        errs[i] = np.mean((c._combine(est, ybar) - s.m_test) ** 2)
    return _finite_errors(errs, model, s)


def integrated_mse(
    configs,
    regression,
    n: int,
    n_test: int,
    n_rep: int,
    seed,
    sigma: float | None = None,
    bandwidth: float = BANDWIDTH,
    n_jobs: int = 1,
    progress: bool = False,
) -> ImseResult:
    """Integrated MSE of several configurations under common random numbers (Thm 4.2, 5.1).

    Replicate ``r`` draws, from stream ``r`` of ``SeedSequence(seed)``, a fresh
    ``D_n`` (``n`` points of the reference DGP with ``m = regression``) and
    ``n_test`` fresh test points ``x ~ N(0, I_d)`` (with a DataModel: its
    inputs and noise); every configuration is evaluated on them and
    ``err_r = mean_t (f(x_t) - m(x_t))^2``.

    Parameters
    ----------
    configs : list of HeadConfig or of arrays (H, d, d_k)
        Arrays become ``HeadConfig(W, bandwidth=bandwidth)``; all share ``d``.
    regression : str, RegressionFunction or DataModel
        A regression spec (:func:`mhanw.data.regression_function`) or a whole data model
        (:func:`mhanw.data.data_model`).
    n : int >= 1
        Training sample size.
    n_test : int >= 1
        Fresh test points per replicate.
    n_rep : int >= 1
        Replicates.
    seed : int or numpy.random.SeedSequence
        Replicate ``r`` draws from stream ``r`` of ``SeedSequence(seed)``.
    sigma : float >= 0, optional
        Noise sd (default: the reference :data:`mhanw.constants.SIGMA`, or the level of a DataModel,
        which a different value contradicts).
    bandwidth : float > 0, default :data:`mhanw.constants.BANDWIDTH`
        Bandwidth of array configurations.
    n_jobs : int, default 1
        Worker processes (:func:`mhanw.infra.sweep.run_replicates`); the result does not depend on it.
    progress : bool, default False
        Show a progress bar.

    Returns
    -------
    ImseResult
        With ``errors`` ``(C, n_rep)``; use :meth:`ImseResult.paired_difference` for comparisons
        (3-s.e. rule, :meth:`mhanw.infra.estimates.Estimate.exceeds`).

    Raises
    ------
    ValueError
        Naming the argument that is out of range or does not fit the others (configurations of
        different ``d``, a ``sigma`` that contradicts the model, sizes whose work exceeds
        :data:`mhanw.constants.MAX_WORK`), or the regression and the point where ``m`` or an error is not
        finite.
    """
    configs = _as_configs(configs, bandwidth)
    model = _model(regression, sigma, configs[0].d, "configs")
    n, n_test = _sizes(n, n_test, n_rep, configs[0].d, len(configs))
    _check_work(configs, n, n_test, n_rep, configs[0].d, "n_test")
    func = functools.partial(_imse_replicate, plan=_Plan(configs), model=model, n=n, n_test=n_test)
    errors = run_replicates(func, n_rep, seed, n_jobs=n_jobs, progress=progress, desc="IMSE")
    return ImseResult(errors=np.ascontiguousarray(errors.T), labels=tuple(c.label for c in configs))


def _pointwise_replicate(rng, plan, model, x, n, m_x=None):
    s = model._draw(rng, n, plan.configs[0].d, x_test=x, m_test=m_x)
    return plan.heads(s.X, s.Y, x)


def pointwise_estimates(
    configs,
    regression,
    x,
    n: int,
    n_rep: int,
    seed,
    sigma: float | None = None,
    bandwidth: float = BANDWIDTH,
    n_jobs: int = 1,
    progress: bool = False,
) -> list:
    """Per-head estimates at fixed points over replicates of ``D_n`` (Thm 3.1, Lemma 4.1).

    Replicate ``r`` draws ``D_n`` from stream ``r`` of ``SeedSequence(seed)`` (the same draw as
    :func:`integrated_mse` up to the test points); every configuration is evaluated at the fixed
    points ``x``.  The rule ``"sum"`` is the affine combination of the heads and ``Ybar``; it is not
    returned here (:func:`pointwise_parts` returns every rule's parts).  For ``"concat"`` the heads are
    their contributions ``c_j`` (:func:`mhanw.heads.concat_contributions`).

    Parameters
    ----------
    configs : list of HeadConfig or of arrays (H, d, d_k)
        Arrays become ``HeadConfig(W, bandwidth=bandwidth)``; all share ``d``.
    regression : str, RegressionFunction or DataModel
        A regression spec (:func:`mhanw.data.regression_function`) or a whole data model
        (:func:`mhanw.data.data_model`).
    x : array (m, d) or (d,)
        Fixed evaluation points.
    n : int >= 1
        Training sample size.
    n_rep : int >= 1
        Replicates.
    seed : int or numpy.random.SeedSequence
        Replicate ``r`` draws from stream ``r`` of ``SeedSequence(seed)``.
    sigma : float >= 0, optional
        Noise sd (default: the reference :data:`mhanw.constants.SIGMA`, or the level of a DataModel,
        which a different value contradicts).
    bandwidth : float > 0, default :data:`mhanw.constants.BANDWIDTH`
        Bandwidth of array configurations.
    n_jobs : int, default 1
        Worker processes (:func:`mhanw.infra.sweep.run_replicates`); the result does not depend on it.
    progress : bool, default False
        Show a progress bar.

    Returns
    -------
    list of numpy.ndarray
        One array ``(n_rep, H_c, m)`` per configuration, the input of
        :func:`mhanw.decomposition.bias_variance_covariance` (with target ``regression(x)``).

    Raises
    ------
    ValueError
        Naming the argument that is out of range or does not fit the others (configurations of
        different ``d``, a ``sigma`` that contradicts the model, sizes whose work exceeds
        :data:`mhanw.constants.MAX_WORK`), or the regression and the point where ``m`` or an error is not
        finite.
    """
    configs = _as_configs(configs, bandwidth)
    d = configs[0].d
    x = as_float_array(x, "x", ndim=(1, 2))
    x = x[None, :] if x.ndim == 1 else x
    if x.shape[1] != d:
        raise ValueError(f"x: expected shape (m, {d}) to match the configurations, got {x.shape}")
    model = _model(regression, sigma, d, "configs")
    n, _ = _sizes(n, None, n_rep, d, sum(c.n_heads for c in configs) * x.shape[0], fresh_tests=False)
    _check_work(configs, n, x.shape[0], n_rep, d, "x")
    # checked here once: each replicate draws through the unchecked DataModel._draw, and
    # m(x) at the fixed points (the same in every replicate) is computed once
    func = functools.partial(
        _pointwise_replicate, plan=_Plan(configs, queries=x), model=model, x=x, n=n, m_x=model._regression_at(x)
    )
    per_rep = run_replicates(func, n_rep, seed, n_jobs=n_jobs, progress=progress, desc="estimates")
    return [np.stack([rep[i] for rep in per_rep]) for i in range(len(configs))]


def _parts_replicate(rng, config, model, x, n, m_x):
    s = model._draw(rng, n, config.d, x_test=x, m_test=m_x)
    return config._parts(s.X, s.Y, x)[0]


def pointwise_parts(
    config,
    regression,
    x,
    n: int,
    n_rep: int,
    seed,
    sigma: float | None = None,
    bandwidth: float = BANDWIDTH,
    n_jobs: int = 1,
    progress: bool = False,
):
    """The parts of one configuration's ensemble at fixed points over replicates (Thm 3.1, any rule).

    The same draws as :func:`pointwise_estimates`; per replicate the parts ``p_a(x)`` of
    :func:`mhanw.heads.ensemble_parts`, so that ``f = sum_a w_a p_a`` for every rule (``"sum"``:
    the heads and ``Ybar``; ``"concat"``: ``Ybar`` and the heads' smooths of their value
    columns, or their contributions when ``W_O`` is fitted).

    Parameters
    ----------
    config : HeadConfig or array (H, d, d_k)
        The ensemble (an array becomes ``HeadConfig(W, bandwidth=bandwidth)``).
    regression : str, RegressionFunction or DataModel
        A regression spec (:func:`mhanw.data.regression_function`) or a whole data model
        (:func:`mhanw.data.data_model`).
    x : array (m, d) or (d,)
        Fixed evaluation points.
    n : int >= 1
        Training sample size.
    n_rep : int >= 1
        Replicates.
    seed : int or numpy.random.SeedSequence
        Replicate ``r`` draws from stream ``r`` of ``SeedSequence(seed)``.
    sigma : float >= 0, optional
        Noise sd (default: the reference :data:`mhanw.constants.SIGMA`, or the level of a DataModel,
        which a different value contradicts).
    bandwidth : float > 0, default :data:`mhanw.constants.BANDWIDTH`
        Bandwidth of array configurations.
    n_jobs : int, default 1
        Worker processes (:func:`mhanw.infra.sweep.run_replicates`); the result does not depend on it.
    progress : bool, default False
        Show a progress bar.

    Returns
    -------
    parts : numpy.ndarray
        ``(n_rep, P, m)``.
    weights : numpy.ndarray
        ``(P,)``; with ``parts`` the input of :func:`mhanw.decomposition.bias_variance_covariance` with
        target ``regression(x)``.

    Raises
    ------
    ValueError
        Naming the argument that is out of range or does not fit the others (configurations of
        different ``d``, a ``sigma`` that contradicts the model, sizes whose work exceeds
        :data:`mhanw.constants.MAX_WORK`), or the regression and the point where ``m`` or an error is not
        finite.
    """
    configs = _as_configs(config, bandwidth, "config")
    if len(configs) != 1:
        raise ValueError(f"config: expected one configuration, got {len(configs)}")
    c = configs[0]
    x = as_float_array(x, "x", ndim=(1, 2))
    x = x[None, :] if x.ndim == 1 else x
    if x.shape[1] != c.d:
        raise ValueError(f"x: expected shape (m, {c.d}) to match the configuration, got {x.shape}")
    model = _model(regression, sigma, c.d, "config")
    weights = c.part_weights()
    n, _ = _sizes(n, None, n_rep, c.d, weights.size * x.shape[0], fresh_tests=False)
    _check_work(configs, n, x.shape[0], n_rep, c.d, "x")
    func = functools.partial(_parts_replicate, config=c, model=model, x=x, n=n, m_x=model._regression_at(x))
    per_rep = run_replicates(func, n_rep, seed, n_jobs=n_jobs, progress=progress, desc="parts")
    return np.stack(per_rep), weights


def _moments_replicate(rng, plan, model, n, n_test):
    s = model._draw(rng, n, plan.configs[0].d, n_test=n_test)
    err = plan.heads(s.X, s.Y, s.X_test)[0] - s.m_test  # (H, T)
    return _finite_errors(err @ err.T / n_test, model, s)


def error_moments(
    config,
    regression,
    n: int,
    n_test: int,
    n_rep: int,
    seed,
    sigma: float | None = None,
    bandwidth: float = BANDWIDTH,
    n_jobs: int = 1,
    progress: bool = False,
) -> np.ndarray:
    """Per-replicate error second-moment matrices of the heads of one configuration (Thm 7.1).

    Replicate ``r`` draws ``D_n`` and ``n_test`` fresh test points exactly as :func:`integrated_mse`
    does (same ``seed``, same draws) and returns
    ``M_r[j, j'] = (1/T) sum_t (m_j(x_t) - m(x_t)) (m_j'(x_t) - m(x_t))``.
    ``mean_r M_r`` estimates ``M = E int (m_j - m)(m_j' - m) dp_X`` of :mod:`mhanw.weighting`, and for
    any weights ``a`` summing to 1, ``a' M_r a`` is the replicate's integrated squared error of the
    average ``sum_j a_j m_j`` (equal to ``integrated_mse(...).errors`` to rounding), so every weighting
    is evaluated on the same draws (common random numbers).

    Parameters
    ----------
    config : HeadConfig or array (H, d, d_k)
        Arrays become ``HeadConfig(W, bandwidth=bandwidth)``; the combination rule and weights of a
        HeadConfig are ignored.
    regression : str, RegressionFunction or DataModel
        A regression spec (:func:`mhanw.data.regression_function`) or a whole data model
        (:func:`mhanw.data.data_model`).
    n : int >= 1
        Training sample size.
    n_test : int >= 1
        Fresh test points per replicate.
    n_rep : int >= 1
        Replicates.
    seed : int or numpy.random.SeedSequence
        Replicate ``r`` draws from stream ``r`` of ``SeedSequence(seed)``.
    sigma : float >= 0, optional
        Noise sd (default: the reference :data:`mhanw.constants.SIGMA`, or the level of a DataModel,
        which a different value contradicts).
    bandwidth : float > 0, default :data:`mhanw.constants.BANDWIDTH`
        Bandwidth of array configurations.
    n_jobs : int, default 1
        Worker processes (:func:`mhanw.infra.sweep.run_replicates`); the result does not depend on it.
    progress : bool, default False
        Show a progress bar.

    Returns
    -------
    numpy.ndarray
        ``(n_rep, H, H)``, symmetric positive semi-definite per replicate.

    Raises
    ------
    ValueError
        Naming the argument that is out of range or does not fit the others (configurations of
        different ``d``, a ``sigma`` that contradicts the model, sizes whose work exceeds
        :data:`mhanw.constants.MAX_WORK`), or the regression and the point where ``m`` or an error is not
        finite.
    """
    try:
        configs = _as_configs(config, bandwidth)
    except ValueError as exc:  # one configuration: its errors name config, not configs
        raise ValueError(f"config{str(exc)[len('configs') :].replace('[0]', '', 1)}") from None
    if len(configs) != 1:
        raise ValueError(f"config: expected one configuration, got {len(configs)}")
    model = _model(regression, sigma, configs[0].d, "config")
    n, n_test = _sizes(n, n_test, n_rep, configs[0].d, configs[0].n_heads ** 2)
    _check_work(configs, n, n_test, n_rep, configs[0].d, "n_test")
    func = functools.partial(_moments_replicate, plan=_Plan(configs), model=model, n=n, n_test=n_test)
    out = run_replicates(func, n_rep, seed, n_jobs=n_jobs, progress=progress, desc="error moments")
    return np.ascontiguousarray(out)

"""The premises of the paper's predictions: one named predicate per premise, the same in every chapter.

Each function evaluates one premise on what a chapter actually ran -- its
:class:`mhanw.data.DataModel` (regression function, input law, noise), its heads
(:class:`mhanw.heads.HeadConfig` or projections ``(H, d, d_k)``), its weights -- and returns a
:class:`mhanw.infra.premises.Premise` (id, sentence, holds, why).  A chapter passes the premises
a claim rests on to its verdict rule, which passes them to the record
(:class:`mhanw.infra.verdicts.Verdict` ``premises=``); when one fails, the record says
"outside its conditions", names the premise and keeps what the numbers show.  Never test a
condition by hand in a chapter (``model.inputs.kind == ...``): call the predicate, so that one
premise is decided by one rule everywhere.

The data law (:mod:`mhanw.data`; each predicate reads the law's own description, so a new law
is classified by its own properties):

- :func:`gaussian_inputs` (``gaussian-inputs``): the rows are iid ``N(0, I_d)``, the assumption
  of the closed forms (Lemma 4.1's first-order covariance, the kernel overlap, Thm 2.1's n_eff limit);
- :func:`rotation_invariant_inputs` (``rotation-invariant-inputs``): the input law is rotation invariant;
- :func:`isotropic_m` (``isotropic-m``): ``m`` depends on ``x`` only through ``|x|``;
- :func:`homoscedastic_noise` (``homoscedastic-noise``): the noise variance is the same at every ``x``;
- :func:`rotation_invariant_noise` (``rotation-invariant-noise``): the noise law at ``x`` depends on
  ``x`` only through ``|x|`` (homoscedastic noise included);
- :func:`iid_samples` (``iid-samples``): the rows of a sample are independent
  (:attr:`mhanw.data.InputDistribution.independent`; the dependent laws ``ar1``, ``clustered``
  are not), the assumption of every ``1/n`` variance formula;
- :func:`rotation_invariant_data`: the three premises of the isotropic readings (S-weak of
  Thm 4.2, the isotropic parts of Thm 5.1): isotropic ``m``, rotation-invariant inputs and noise.

The heads and their combination (:mod:`mhanw.heads`):

- :func:`gaussian_kernel` (``gaussian-kernel``): every head is a Gaussian NW kernel with an explicit
  bandwidth (the library's reading of softmax attention; ``kernel="attention"`` is plain softmax);
- :func:`orthonormal_heads` (``orthonormal-heads``): every head is an orthonormal frame, all of one ``d_k``;
- :func:`heads_fit` (``heads-fit``): ``H d_k <= d``, so mutually orthogonal heads exist;
- :func:`exchangeable_heads` (``exchangeable-heads``): some symmetry of the data law permutes the
  heads (Thm 7.1's homogeneous control, where uniform weights are the oracle);
- :func:`weights_sum_to_one` (``weights-sum-to-one``): Thm 3.1's squared-bias term as printed;
- :func:`convex_averaging` (``convex-averaging``): heads averaged with non-negative weights summing
  to one (rule ``"average"``);
- :func:`uniform_averaging` (``uniform-averaging``): heads averaged with weights ``1/H``;
- :func:`shared_response` (``shared-response``): every head smooths the same response ``Y``
  (assumption A-common; rule ``"concat"`` with ``values="response"`` also).

:data:`PREMISES` maps every id to its sentence: one sentence per premise.  Nothing here decides a
verdict.

A rule, end to end (the isotropic families of Thm 4.2)::

    from mhanw import premises as P
    from mhanw.infra.premises import merge
    from mhanw.infra.verdicts import Verdict, power_verdict

    prem = merge(*(P.rotation_invariant_data(model[m]) for m in ISO),          # the data law
                 *((P.orthonormal_heads(c), P.uniform_averaging(c)) for c in configs))  # the heads
    verdict = FAILS if max_step_z > N_SE else HOLDS_UNDER if end_z < -N_SE else UNDECIDED
    verdict = power_verdict(verdict, N_SE * step_se_pct, RISE_TOL_PCT)      # power before "holds"
    record = Verdict(claim="thm-4.2/isotropic-families", statement=..., criterion=...,
                     verdict=verdict, premises=prem, statistics=(...),
                     detectable=N_SE * step_se_pct, tolerance=RISE_TOL_PCT, unit="%",
                     finding=f"... it rises by {max_step_z:.1f} s.e. ({where})")

Under correlated inputs ``prem`` holds a failed ``rotation-invariant-inputs``; the record says
"outside its conditions", ``record.shows == "fails as stated"``, and the ledger, the chapter's
findings, the scenario section and the paper print the premise, the statistic and the finding.

A rule takes the premises as an argument (``@checked(..., premises=V.premise_list)``); the code that
ran the experiment evaluates them on the models and heads it used and passes them in.
"""

from __future__ import annotations

import numpy as np

from .constants import WEIGHT_SUM_TOL
from .infra.premises import Premise, premise
from .infra.validate import as_float_array, brief, positive_int

__all__ = [
    "PREMISES",
    "convex_averaging",
    "exchangeable_heads",
    "gaussian_inputs",
    "gaussian_kernel",
    "heads_fit",
    "homoscedastic_noise",
    "iid_samples",
    "isotropic_m",
    "orthonormal_heads",
    "rotation_invariant_data",
    "rotation_invariant_inputs",
    "rotation_invariant_noise",
    "shared_response",
    "uniform_averaging",
    "weights_sum_to_one",
    "law_symmetry",
    "describe",
    "FRAME_TOL",
    "INVARIANCE_TOL",
    "PROBE_POINTS",
]

#: Every premise of the companion: id -> the clause it asserts (the words every record prints).
PREMISES = {
    "gaussian-inputs": "the inputs are iid N(0, I_d)",
    "rotation-invariant-inputs": "the law of the inputs is rotation invariant",
    "isotropic-m": "m depends on x only through |x|",
    "homoscedastic-noise": "the noise has the same variance at every x",
    "rotation-invariant-noise": "the law of the noise at x depends on x only through |x|",
    "iid-samples": "the rows of a training sample are independent",
    "gaussian-kernel": "every head is a Gaussian Nadaraya-Watson kernel with a bandwidth",
    "orthonormal-heads": "the heads are orthonormal frames of one d_k",
    "heads-fit": "H d_k <= d, so mutually orthogonal heads exist",
    "exchangeable-heads": "a symmetry of the data law permutes the heads (exchangeable heads)",
    "weights-sum-to-one": "the head weights sum to one",
    "convex-averaging": "the heads are averaged with non-negative weights summing to one",
    "uniform-averaging": "the heads are averaged with weights 1/H",
    "shared-response": "every head smooths the same response Y",
}

#: Frames are orthonormal, and heads mutually orthogonal, up to rounding of this size.
FRAME_TOL = 1e-9
#: A symmetry leaves ``m`` and the noise level unchanged up to this relative difference at the probe points.
INVARIANCE_TOL = 1e-9
#: The seeded probe points on which a symmetry of ``m`` and of the noise level is checked.
PROBE_POINTS = 256
_PROBE_SEED = 20260520


def _make(pid: str, holds, why: str) -> Premise:
    return premise(pid, PREMISES[pid], bool(holds), why)


def _model(model, name: str = "model"):
    from .data import DataModel

    if not isinstance(model, DataModel):
        raise ValueError(f"{name}: expected a DataModel (mhanw.data.data_model), got {type(model).__name__}")
    return model


def _config(config, name: str = "config"):
    from .heads import HeadConfig

    if not isinstance(config, HeadConfig):
        raise ValueError(f"{name}: expected a HeadConfig (mhanw.heads.HeadConfig), got {type(config).__name__}")
    return config


# --------------------------------------------------------------------------- the data law


def gaussian_inputs(model) -> Premise:
    """``gaussian-inputs``: the rows are iid ``N(0, I_d)`` (:attr:`mhanw.data.InputDistribution.is_standard_gaussian`).

    Parameters
    ----------
    model : mhanw.data.DataModel
        The data law the chapter ran with.

    Returns
    -------
    mhanw.infra.premises.Premise
        Its id, sentence, whether it holds and, when it does not, why.

    Raises
    ------
    ValueError
        Naming ``model`` when it is not a DataModel.
    """
    m = _model(model)
    return _make("gaussian-inputs", m.inputs.is_standard_gaussian, f"inputs {m.inputs.spec} are not iid N(0, I_d)")


def rotation_invariant_inputs(model) -> Premise:
    """``rotation-invariant-inputs``: the law of ``O X`` is that of ``X`` for every rotation ``O``.

    Parameters
    ----------
    model : mhanw.data.DataModel
        The data law the chapter ran with.

    Returns
    -------
    mhanw.infra.premises.Premise
        Its id, sentence, whether it holds and, when it does not, why.

    Raises
    ------
    ValueError
        Naming ``model`` when it is not a DataModel.
    """
    m = _model(model)
    return _make(
        "rotation-invariant-inputs", m.inputs.rotation_invariant, f"inputs {m.inputs.spec} are not rotation invariant"
    )


def isotropic_m(model) -> Premise:
    """``isotropic-m``: ``m(x)`` depends on ``x`` only through ``|x|`` (:attr:`mhanw.data.RegressionFunction.isotropic`).

    Parameters
    ----------
    model : mhanw.data.DataModel
        The data law the chapter ran with.

    Returns
    -------
    mhanw.infra.premises.Premise
        Its id, sentence, whether it holds and, when it does not, why.

    Raises
    ------
    ValueError
        Naming ``model`` when it is not a DataModel.
    """
    m = _model(model)
    return _make("isotropic-m", m.regression.isotropic, f"m = {m.regression.name} is not isotropic")


def homoscedastic_noise(model) -> Premise:
    """``homoscedastic-noise``: the conditional noise variance is ``sigma^2`` at every ``x``.

    Parameters
    ----------
    model : mhanw.data.DataModel
        The data law the chapter ran with.

    Returns
    -------
    mhanw.infra.premises.Premise
        Its id, sentence, whether it holds and, when it does not, why.

    Raises
    ------
    ValueError
        Naming ``model`` when it is not a DataModel.
    """
    m = _model(model)
    return _make("homoscedastic-noise", m.noise.homoscedastic, f"noise {m.noise.spec} is heteroscedastic")


def rotation_invariant_noise(model) -> Premise:
    """``rotation-invariant-noise``: the noise law at ``x`` depends on ``|x|`` only (homoscedastic included).

    Parameters
    ----------
    model : mhanw.data.DataModel
        The data law the chapter ran with.

    Returns
    -------
    mhanw.infra.premises.Premise
        Its id, sentence, whether it holds and, when it does not, why.

    Raises
    ------
    ValueError
        Naming ``model`` when it is not a DataModel.
    """
    m = _model(model)
    return _make(
        "rotation-invariant-noise", m.noise.rotation_invariant, f"noise {m.noise.spec} depends on the direction of x"
    )


def iid_samples(model) -> Premise:
    """``iid-samples``: the rows of one sample are independent (:attr:`mhanw.data.InputDistribution.independent`).

    Parameters
    ----------
    model : mhanw.data.DataModel
        The data law the chapter ran with.

    Returns
    -------
    mhanw.infra.premises.Premise
        Its id, sentence, whether it holds and, when it does not, why.

    Raises
    ------
    ValueError
        Naming ``model`` when it is not a DataModel.
    """
    m = _model(model)
    return _make("iid-samples", m.inputs.independent, f"inputs {m.inputs.spec} draw dependent rows")


def rotation_invariant_data(model) -> tuple[Premise, Premise, Premise]:
    """The premises of the isotropic readings: the joint law of ``(X, Y)`` is rotation invariant.

    The readings are S-weak of Thm 4.2 and the isotropic parts of Thm 5.1.

    Parameters
    ----------
    model : mhanw.data.DataModel
        The data law the chapter ran with.

    Returns
    -------
    tuple of mhanw.infra.premises.Premise
        :func:`isotropic_m`, :func:`rotation_invariant_inputs`, :func:`rotation_invariant_noise`, in
        this order.

    Raises
    ------
    ValueError
        Naming ``model`` when it is not a DataModel.
    """
    return isotropic_m(model), rotation_invariant_inputs(model), rotation_invariant_noise(model)


# --------------------------------------------------------------------------- heads and their combination


def gaussian_kernel(config) -> Premise:
    """``gaussian-kernel``: the heads of ``config`` use the Gaussian kernel with a bandwidth.

    Parameters
    ----------
    config : mhanw.heads.HeadConfig
        The heads and their combination.

    Returns
    -------
    mhanw.infra.premises.Premise
        Its id, sentence, whether it holds and, when it does not, why.

    Raises
    ------
    ValueError
        Naming ``config`` when it is not a HeadConfig.
    """
    c = _config(config)
    return _make("gaussian-kernel", c.kernel == "gaussian", f"the heads use the {c.kernel!r} kernel")


def _frames(projections, name: str) -> np.ndarray:
    if hasattr(projections, "projections") and not isinstance(projections, np.ndarray):
        projections = _config(projections, name).projections
    return as_float_array(projections, name, ndim=3)


def orthonormal_heads(projections) -> Premise:
    """``orthonormal-heads``: every head ``W_j`` has ``W_j^T W_j = I`` (to :data:`FRAME_TOL`).

    Parameters
    ----------
    projections : array (H, d, d_k) or mhanw.heads.HeadConfig
        The heads (one ``d_k`` for all, by the shape; a HeadConfig is read through its projections).

    Returns
    -------
    mhanw.infra.premises.Premise
        Its id, sentence, whether it holds and, when it does not, why.

    Raises
    ------
    ValueError
        Naming ``projections`` when it is not a finite 3-D array or a HeadConfig.
    """
    W = _frames(projections, "projections")
    gram = np.einsum("hdi,hdj->hij", W, W)
    err = float(np.max(np.abs(gram - np.eye(W.shape[2]))))
    return _make("orthonormal-heads", err <= FRAME_TOL, f"a head's W^T W differs from I by {err:.2g}")


def heads_fit(n_heads, d_k, d) -> Premise:
    """``heads-fit``: ``H d_k <= d``, so ``H`` mutually orthogonal heads of dimension ``d_k`` fit in ``R^d``.

    Parameters
    ----------
    n_heads : int >= 1
        ``H``.
    d_k : int >= 1
        The head size.
    d : int >= 1
        The input dimension.

    Returns
    -------
    mhanw.infra.premises.Premise
        Its id, sentence, whether it holds and, when it does not, why.

    Raises
    ------
    ValueError
        Naming the size that is not a positive integer.
    """
    H = positive_int(n_heads, "n_heads")
    k = positive_int(d_k, "d_k")
    dd = positive_int(d, "d")
    return _make("heads-fit", H * k <= dd, f"H d_k = {H * k} exceeds d = {dd}")


def _weights(weights, name: str = "weights") -> np.ndarray:
    return as_float_array(weights, name, ndim=1)


def weights_sum_to_one(weights) -> Premise:
    """``weights-sum-to-one``: ``|sum(weights) - 1| <= WEIGHT_SUM_TOL``, Thm 3.1's squared-bias term as printed.

    Parameters
    ----------
    weights : array (H,)
        The head weights.

    Returns
    -------
    mhanw.infra.premises.Premise
        Its id, sentence, whether it holds and, when it does not, why.

    Raises
    ------
    ValueError
        Naming ``weights`` when they are not a finite 1-D array.
    """
    a = _weights(weights)
    total = float(a.sum())
    return _make("weights-sum-to-one", abs(total - 1.0) <= WEIGHT_SUM_TOL, f"the weights sum to {total:.6g}")


def convex_averaging(config) -> Premise:
    """``convex-averaging``: rule ``"average"`` with non-negative weights summing to one.

    Parameters
    ----------
    config : mhanw.heads.HeadConfig
        The heads and their combination.

    Returns
    -------
    mhanw.infra.premises.Premise
        Its id, sentence, whether it holds and, when it does not, why.

    Raises
    ------
    ValueError
        Naming ``config`` when it is not a HeadConfig.
    """
    c = _config(config)
    if c.rule != "average":
        return _make("convex-averaging", False, f"the heads are combined by the rule {c.rule!r}")
    a = np.asarray(c.weights, float)
    return _make(
        "convex-averaging",
        bool(np.all(a >= 0.0)) and abs(float(a.sum()) - 1.0) <= WEIGHT_SUM_TOL,
        f"the weights ({', '.join(f'{w:.3g}' for w in a[:6])}) are not convex",
    )


def uniform_averaging(config) -> Premise:
    """``uniform-averaging``: rule ``"average"`` with every weight ``1/H``.

    Parameters
    ----------
    config : mhanw.heads.HeadConfig
        The heads and their combination.

    Returns
    -------
    mhanw.infra.premises.Premise
        Its id, sentence, whether it holds and, when it does not, why.

    Raises
    ------
    ValueError
        Naming ``config`` when it is not a HeadConfig.
    """
    c = _config(config)
    if c.rule != "average":
        return _make("uniform-averaging", False, f"the heads are combined by the rule {c.rule!r}")
    a = np.asarray(c.weights, float)
    return _make(
        "uniform-averaging", bool(np.all(np.abs(a - 1.0 / a.size) <= WEIGHT_SUM_TOL)), "the weights are not all 1/H"
    )


def shared_response(config) -> Premise:
    """``shared-response``: every head smooths the response ``Y`` itself.

    Rules ``"average"``, ``"sum"``, and ``"concat"`` whose value projections all read ``Y`` alone
    (``values="response"``).

    Parameters
    ----------
    config : mhanw.heads.HeadConfig
        The heads and their combination.

    Returns
    -------
    mhanw.infra.premises.Premise
        Its id, sentence, whether it holds and, when it does not, why.

    Raises
    ------
    ValueError
        Naming ``config`` when it is not a HeadConfig.
    """
    c = _config(config)
    if c.rule != "concat":
        return _make("shared-response", True, "")
    V = np.asarray(c.values, float)
    response = np.zeros(V.shape[1:])
    response[0, 0] = 1.0
    ok = V.shape[2] == 1 and bool(np.all(V == response))
    return _make("shared-response", ok, "the value projections smooth more than the response Y")


# --------------------------------------------------------------------------- exchangeable heads


def _probe(model, d: int) -> np.ndarray:
    rng = np.random.default_rng(np.random.SeedSequence(_PROBE_SEED))
    return rng.standard_normal((PROBE_POINTS, d)) * np.repeat(np.geomspace(0.3, 3.0, 4), PROBE_POINTS // 4)[:, None]


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.all(np.abs(a - b) <= INVARIANCE_TOL * (1.0 + np.abs(a))))


def law_symmetry(model, O) -> tuple[bool, str]:
    """Whether the orthogonal map ``O`` leaves the law of ``(X, Y)`` of ``model`` unchanged, and why not.

    Inputs: a rotation-invariant law is invariant under every ``O``; a Gaussian law with covariance
    ``S`` exactly when ``O S O^T = S``; the uniform cube under signed permutations.  ``m`` and the noise
    level: an isotropic one always, any other when it takes the same values at ``O x`` as at ``x`` on
    :data:`PROBE_POINTS` seeded points (relative tolerance :data:`INVARIANCE_TOL`).

    Parameters
    ----------
    model : mhanw.data.DataModel
        The data law.
    O : array (d, d)
        An orthogonal map.

    Returns
    -------
    holds : bool
        Whether the law is invariant.
    why : str
        Why not (empty when it is).

    Raises
    ------
    ValueError
        Naming ``model`` when it is not a DataModel, or ``O`` when it is not a finite orthogonal
        ``(d, d)`` matrix.
    """
    m = _model(model)
    O = as_float_array(O, "O", ndim=2)
    d = O.shape[0]
    if O.shape != (d, d) or not np.allclose(O @ O.T, np.eye(d), atol=FRAME_TOL):
        raise ValueError(f"O: expected an orthogonal (d, d) matrix, got shape {O.shape}")
    m.check_dimension(d, "O")
    why = []
    dist = m.inputs
    if not dist.rotation_invariant:
        if dist.is_gaussian:
            S = dist.covariance(d)
            if not np.allclose(O @ S @ O.T, S, atol=1e-10):
                why.append(f"inputs {dist.spec} change under it")
        else:  # the uniform cube: invariant under signed permutations only
            A = np.abs(O)
            signed_perm = np.allclose(A.round(), A, atol=1e-10) and np.allclose(A.sum(axis=0), 1.0)
            if not signed_perm:
                why.append(f"inputs {dist.spec} change under it")
    X = _probe(m, d)
    if not m.regression.isotropic and not _same(m.regression(X), m.regression(X @ O.T)):
        why.append(f"m = {m.regression.name} changes under it")
    if not m.noise.rotation_invariant and not _same(m.noise.sd(X), m.noise.sd(X @ O.T)):
        why.append(f"noise {m.noise.spec} changes under it")
    return not why, "; ".join(why)


def exchangeable_heads(projections, model) -> Premise:
    """``exchangeable-heads``: every transposition of two heads is induced by a symmetry of the data law.

    Established for mutually orthogonal orthonormal heads (the homogeneous control of Thm 7.1): the
    map that swaps the ranges of heads ``j`` and ``j + 1`` and fixes the rest of ``R^d`` is orthogonal,
    and the premise holds when :func:`law_symmetry` accepts each such swap (transpositions of
    neighbours generate every permutation).  Other heads fail the premise (it is not established).

    Parameters
    ----------
    projections : array (H, d, d_k) or mhanw.heads.HeadConfig
        The heads.
    model : mhanw.data.DataModel
        The data law.

    Returns
    -------
    mhanw.infra.premises.Premise
        Its id, sentence, whether it holds and, when it does not, why.

    Raises
    ------
    ValueError
        Naming ``projections`` or ``model`` when it is not of the expected kind.
    """
    W = _frames(projections, "projections")
    m = _model(model)
    H, d, _ = W.shape
    if H < 2:
        return _make("exchangeable-heads", True, "")
    cross = np.einsum("hdi,gdj->hgij", W, W)
    eye = np.eye(W.shape[2])
    want = np.where(np.eye(H, dtype=bool)[:, :, None, None], eye, 0.0)
    if float(np.max(np.abs(cross - want))) > FRAME_TOL:
        return _make(
            "exchangeable-heads",
            False,
            "the heads are not mutually orthogonal orthonormal frames, for which alone exchangeability is established",
        )
    for j in range(H - 1):
        A, B = W[j], W[j + 1]
        O = np.eye(d) - A @ A.T - B @ B.T + B @ A.T + A @ B.T
        ok, why = law_symmetry(m, O)
        if not ok:
            return _make("exchangeable-heads", False, f"swapping heads {j + 1} and {j + 2}: {why}")
    return _make("exchangeable-heads", True, "")


def describe(premise_id: str) -> str:
    """The sentence of a premise id (:data:`PREMISES`).

    Parameters
    ----------
    premise_id : str
        A key of :data:`PREMISES`.

    Returns
    -------
    str
        The clause the premise asserts.

    Raises
    ------
    ValueError
        Naming ``premise_id`` when it is not a premise's id.
    """
    if premise_id not in PREMISES:
        raise ValueError(f"premise_id: expected one of {sorted(PREMISES)}, got {brief(premise_id)}")
    return PREMISES[premise_id]

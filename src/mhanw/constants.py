"""Named constants shared by the library: the reference setting, tolerances, the 3-s.e. rule.

Every default and every tolerance that more than one function uses lives here,
with the reason for its value, so that the same argument gets the same check
everywhere and the reference setting is stated once.

The reference setting (the data-generating process of :mod:`mhanw.data`, the
heads of :mod:`mhanw.heads`, the Monte Carlo of :mod:`mhanw.montecarlo`):
``Y = m(X) + sigma eps`` with ``X ~ N(0, I_d)``, Gaussian NW heads of
bandwidth ``h``, training samples of size ``n``.
"""

from __future__ import annotations

from types import MappingProxyType

__all__ = [
    "SIGMA",
    "BANDWIDTH",
    "N",
    "REFERENCE",
    "RANDOM_CONFIGURATION_BANDWIDTH",
    "WEIGHT_SUM_TOL",
    "RANK_RTOL",
    "N_SE",
    "IMSE_RESOLUTION_PCT",
    "MAX_ENTRIES",
    "MAX_REPLICATES",
    "MAX_WORK",
    "check_entries",
    "check_work",
]

#: Noise standard deviation of the reference DGP: signal and noise of comparable size for every ``m``.
SIGMA = 0.5

#: Bandwidth ``h`` of a Gaussian NW head on unit-variance projected inputs: close to the tuned value at ``n = 500``.
BANDWIDTH = 0.5

#: Training sample size of the reference setting: large enough for a stable IMSE, small enough for many replicates.
N = 500

#: The reference setting as keyword arguments of :func:`mhanw.montecarlo.integrated_mse` (read-only).
REFERENCE = MappingProxyType({"n": N, "sigma": SIGMA, "bandwidth": BANDWIDTH})

#: Bandwidth of the random-configuration experiment (Thm 4.2 (D), Thm 5.1 (i)): deliberately wider than
#: :data:`BANDWIDTH` because its ``H = 3`` heads of ``d_k = 2`` see ``d = 6`` inputs with ``n = 400``.
RANDOM_CONFIGURATION_BANDWIDTH = 0.6

#: ``|sum(weights) - 1|`` up to which weights count as summing to one (the ``"average"`` rule, the
#: printed form of Thm 3.1): a few hundred ulps of 1, far above the rounding of a normalised vector.
WEIGHT_SUM_TOL = 1e-10

#: Relative singular-value threshold of every rank test (``s_min <= RANK_RTOL * s_max`` is rank
#: deficient); relative, hence invariant to the scale of the matrix.
RANK_RTOL = 1e-10

#: A paired difference is significant when it exceeds this many standard errors (the 3-s.e. rule of
#: every verdict: a two-sided false-positive rate of 0.27 % per comparison).
N_SE = 3.0

#: The smallest IMSE difference between head configurations that matters, in per cent of the IMSE: a
#: "holds" that rests on seeing no better (Thm 5.1) or no worse (Thm 4.2) configuration needs a run
#: whose 3 paired s.e. is below it.  Smaller differences are below what a head layout is chosen for,
#: and a run that cannot see 1 % cannot tell "none is better" from "the run was too small".
IMSE_RESOLUTION_PCT = 1.0

#: Most entries of one array that a function allocates from its size arguments (``n * d``, ``H d d_k``,
#: replicates times outputs): 2**28 float64 numbers, 2 GiB.  A larger size is refused before any
#: allocation, with an error naming the argument (``n = 10**12`` asked numpy for 22 TiB).
MAX_ENTRIES = 1 << 28

#: Most Monte Carlo replicates a driver runs: about a millisecond each at the reference sizes, so 10**7
#: is hours of computing; more is a typo that would otherwise run for days.
MAX_REPLICATES = 10**7

#: Most work one Monte Carlo call of :mod:`mhanw.montecarlo` does, in kernel weights (one head weighing
#: one training point at one evaluation point, a few nanoseconds), with each drawn coordinate counted as
#: 10 and each replicate's fixed cost as 25 000 (about 0.1 ms); ``mhanw.montecarlo._work``.
#: 10**12 is about an hour of one core.  Each size is bounded alone (:data:`MAX_ENTRIES`,
#: :data:`MAX_REPLICATES`), but not their product: ``n = n_test = 10**5`` with ``10**4`` replicates is
#: 2 x 10**14, weeks.  The largest call of the chapters at paper fidelity (chapter 3's closed form,
#: 10 000 replicates of 33 heads at n = 8 000, 28 s on one core) is 7 x 10**9, 140 times below the bound, and
#: chapter 7 at its largest allowed ``n = 50 000`` is 1.5 x 10**11.
MAX_WORK = 10**12


def check_work(names: str, total: int, what: str, advice: str) -> None:
    """Refuse a call whose work exceeds :data:`MAX_WORK`, before its loop starts.

    The one bound of every loop a user can size (Monte Carlo replicates, training steps).

    Parameters
    ----------
    names : str
        The arguments whose product sets the work, named by the error.
    total : int
        The work of one call in kernel weights (:data:`MAX_WORK`'s unit).
    what : str
        What the call would compute (its sizes), for the message.
    advice : str
        What to make smaller, for the message.

    Raises
    ------
    ValueError
        Naming ``names`` when ``total`` exceeds :data:`MAX_WORK`.
    """
    if int(total) > MAX_WORK:
        raise ValueError(
            f"{names}: {what} would cost about {float(total):.2g} kernel weights, beyond the {MAX_WORK:.0e} "
            f"(about an hour of one core) one call may do; {advice}"
        )


def check_entries(name: str, *factors: int) -> None:
    """Refuse an array about to be allocated when its size exceeds :data:`MAX_ENTRIES`.

    Parameters
    ----------
    name : str
        The argument the size comes from, named by the error.
    *factors : int
        The (already checked, positive) integer dimensions of the array.

    Raises
    ------
    ValueError
        Naming ``name`` when the product of ``factors`` exceeds :data:`MAX_ENTRIES`.
    """
    total = 1
    for f in factors:
        total *= int(f)
    if total > MAX_ENTRIES:
        shape = " x ".join(str(int(f)) for f in factors)
        raise ValueError(
            f"{name}: an array of {shape} = {total} entries exceeds the {MAX_ENTRIES} "
            "(2 GiB of doubles) the library allocates at once"
        )

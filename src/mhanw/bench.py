"""Benchmark of the softmax engine against what a user would pick instead, and against a bound.

Every statistical check of the companion spends its time in one kernel: the
softmax-weighted mean of values over keys (Theorem 2.1), i.e. attention or
Gaussian Nadaraya-Watson, evaluated by :func:`mhanw.nw.weighted_mean`.  Two
kinds of shapes are timed:

- ``path="nw"``: :func:`mhanw.nw.softmax_attention` /
  :func:`mhanw.nw.nadaraya_watson` on given queries, keys and values
  (``H`` heads batched, float64 and float32);
- ``path="heads"``: what every Monte Carlo replicate runs,
  ``mhanw.heads._head_estimates`` (the unchecked core of
  :func:`mhanw.heads.head_estimates` that :mod:`mhanw.montecarlo` calls): ``H``
  projection heads ``(d, d_k)`` of one training sample ``(X, Y)`` of ``n``
  points, at ``T`` test points, float64, at the simulations' shapes.

On the same shapes and dtype it times

- ``mhanw``: the engine through the path above;
- ``numpy_full``: the plain numpy reference that materialises the whole
  ``(H, m, n)`` weight matrix and normalises it;
- ``torch_sdpa``: ``torch.nn.functional.scaled_dot_product_attention`` on the
  CPU, given the projected queries and keys (only when torch is installed:
  ``pip install torch==2.13.0``; never a dependency of the pipeline);
- ``bound``: what any exact method must do, each part timed alone: the two
  matrix products ``Q K^T`` and ``W V`` (``W`` the ``(H, m, n)`` weights, in
  blocks of the engine's size) plus one ``exp`` over as many logits (of the
  case's own range), the sum of the three times;

each as a ratio to ``mhanw``'s time, with the peak resident memory each adds
(``VmHWM`` after resetting it through ``/proc/self/clear_refs``).  All run on
one thread (BLAS via threadpoolctl, torch via ``set_num_threads``), best of a
few repeats after a warm-up, timed as the process's CPU time
(``time.process_time``): on one thread it equals the wall time of an idle
machine, and other jobs on a shared machine do not inflate it.  ``python -m mhanw.bench`` writes
``build/bench/bench.json`` and ``bench.md``; ``make bench`` runs it.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import heads, nw
from .infra.texout import write_atomic

IMPLEMENTATIONS = ("mhanw", "numpy_full", "torch_sdpa", "bound")

#: Bandwidth of the Gaussian heads cases: the simulations' reference setting.
HEADS_BANDWIDTH = 0.5
#: torch is required to be no slower than mhanw on shapes with at least this many logits.
TORCH_TARGET_LOGITS = 10**6


@dataclass(frozen=True)
class Case:
    """One benchmark shape: ``heads`` x (``m`` queries, ``n`` keys, ``d_k``).

    ``path="nw"``: values of width ``d_k``; ``path="heads"``: one shared
    response (width 1), inputs of dimension ``2 d_k`` projected by ``heads``
    Haar frames, Gaussian bandwidth :data:`HEADS_BANDWIDTH` or attention with
    ``beta = 1/sqrt(d_k)``.
    """

    n: int
    m: int
    d_k: int
    heads: int = 1
    dtype: str = "float64"
    kernel: str = "exponential"
    implementations: tuple = IMPLEMENTATIONS
    path: str = "nw"

    @property
    def logits(self) -> int:
        return self.heads * self.m * self.n

    @property
    def label(self) -> str:
        if self.path == "heads":
            return f"heads H={self.heads} T={self.m} n={self.n} d_k={self.d_k} {self.kernel}"
        return f"H={self.heads} m={self.m:.0e} n={self.n:.0e} d_k={self.d_k} {self.dtype} {self.kernel}"


def _grid(dtypes=("float64", "float32")):
    # At most 1e8 logits per head and call, so that the materialising
    # reference (and torch, which also forms the weight matrix on the CPU)
    # fits in memory and the whole run takes minutes.
    shapes = [
        (10**3, 10**2, 1, 1),
        (10**3, 10**2, 64, 1),
        (10**4, 10**3, 8, 1),
        (10**4, 10**3, 64, 1),
        (10**5, 10**3, 1, 1),
        (10**5, 10**3, 16, 1),
        (10**6, 10**2, 64, 1),
        (10**4, 10**3, 8, 8),
        (10**4, 10**3, 64, 8),
    ]
    cases = [Case(n, m, d, h, dt) for dt in dtypes for (n, m, d, h) in shapes]
    cases += [Case(10**4, 10**3, 8, 8, dt, "gaussian") for dt in dtypes]
    # The simulations' shapes: H = 2-8 heads, n = 300-3000, T = 200-500, d_k = 1-8.
    sims = [
        (300, 200, 1, 2),
        (500, 300, 2, 2),
        (500, 300, 1, 8),
        (1000, 300, 2, 4),
        (2000, 200, 2, 8),
        (3000, 500, 4, 4),
        (3000, 500, 8, 8),
    ]
    cases += [Case(n, T, d_k, H, "float64", "gaussian", path="heads") for (n, T, d_k, H) in sims]
    cases.append(Case(500, 300, 8, 4, "float64", "attention", path="heads"))
    # Memory: one million keys and ten thousand queries, blocked; the full
    # weight matrix (40 GB in float32) is never formed, so only mhanw runs.
    cases.append(Case(10**6, 10**4, 1, 1, "float32", "exponential", ("mhanw",)))
    return cases


FULL = _grid()
TINY = [
    Case(200, 20, 1, 1, "float64"),
    Case(200, 20, 8, 2, "float32"),
    Case(300, 30, 4, 2, "float64", "gaussian"),
    Case(300, 40, 2, 3, "float64", "gaussian", path="heads"),
]


class Inputs:
    """The arrays of one case: projected ``Q`` ``(H, m, d_k)``, ``K`` ``(H, n, d_k)`` and
    ``V`` ``(H, n, d_v)`` for every implementation; for ``path="heads"`` also the
    projections ``W``, the sample ``X``, ``Y`` and the test points it came from."""

    def __init__(self, case: Case, seed: int = 0):
        rng = np.random.default_rng(seed)
        dt = np.dtype(case.dtype)
        if case.path == "heads":
            d = 2 * case.d_k
            self.W = heads.haar_heads(d, case.d_k, case.heads, rng)
            self.X, self.T = rng.standard_normal((case.n, d)), rng.standard_normal((case.m, d))
            self.Y = rng.standard_normal(case.n)
            self.Q = np.einsum("td,hdk->htk", self.T, self.W)
            self.K = np.einsum("nd,hdk->hnk", self.X, self.W)
            self.V = np.ascontiguousarray(np.broadcast_to(self.Y[None, :, None], (case.heads, case.n, 1)))
        else:
            shape = lambda rows: (case.heads, rows, case.d_k)  # noqa: E731
            self.Q, self.K, self.V = (rng.standard_normal(shape(r)).astype(dt) for r in (case.m, case.n, case.n))


def _scale(case: Case):
    """Multiplier of the logits ``q.k`` (Gaussian: ``1/h^2``, bias ``-|k|^2/2``)."""
    if case.kernel == "gaussian":
        return 1.0 / HEADS_BANDWIDTH**2 if case.path == "heads" else 1.0
    return 1.0 / np.sqrt(case.d_k)


def _mhanw(case, x):
    if case.path == "heads":
        kernel = "gaussian" if case.kernel == "gaussian" else "attention"
        scale = heads._inv_scale(kernel, HEADS_BANDWIDTH, None, case.d_k)
        return lambda: heads._head_estimates(x.W, x.X, x.Y, x.T, kernel, scale)[..., None]
    if case.kernel == "exponential":
        return lambda: nw.softmax_attention(x.Q, x.K, x.V)
    return lambda: nw.nadaraya_watson(x.Q, x.K, x.V, bandwidth=1.0, kernel="gaussian")


def _logits(case, Q, K):
    s = Q.dtype.type(_scale(case))
    L = Q @ np.swapaxes(K, -1, -2)
    if case.kernel == "gaussian":
        L -= 0.5 * (K * K).sum(axis=-1)[:, None, :]
    L *= s
    return L


def _numpy_full(case, x):
    def run():
        L = _logits(case, x.Q, x.K)
        W = np.exp(L - L.max(axis=-1, keepdims=True))
        W /= W.sum(axis=-1, keepdims=True)
        return W @ x.V

    return run


def _bound_parts(case, x):
    """The two products in the engine's blocks, and ``exp`` over as many logits, as two runs."""
    Q, V = x.Q, np.ascontiguousarray(x.V)
    kt = np.ascontiguousarray(np.swapaxes(x.K, -1, -2))
    H, m, n = case.heads, case.m, case.n
    hb, rb = nw._block_shape(H, m, n, nw.BLOCK_ENTRIES)
    buf = np.empty((hb, rb, n), Q.dtype)

    def products():
        out = np.empty(Q.shape[:2] + (V.shape[-1],), dtype=Q.dtype)
        for h0 in range(0, H, hb):
            hs = slice(h0, min(H, h0 + hb))
            for r0 in range(0, m, rb):
                rs = slice(r0, min(m, r0 + rb))
                L = np.matmul(Q[hs, rs], kt[hs], out=buf[: hs.stop - h0, : rs.stop - r0])
                out[hs, rs] = L @ V[hs]
        return out

    # exp over the case's own shifted logits (floored as the engine floors them), block by block
    L = _logits(case, Q[:hb, :rb], x.K[:hb])
    L -= L.max(axis=-1, keepdims=True)
    floor = nw.LOGIT_FLOOR.get(L.dtype)
    if floor is not None:
        np.maximum(L, floor, out=L)
    n_blocks = -(-case.logits // L.size)

    def exps():
        for _ in range(n_blocks):
            np.exp(L, out=buf[: L.shape[0], : L.shape[1]])

    return products, exps


def _torch_sdpa(case, x):
    import torch

    torch.set_num_threads(1)
    q, k, v = (torch.from_numpy(np.ascontiguousarray(a)) for a in (x.Q, x.K, x.V))
    f = torch.nn.functional.scaled_dot_product_attention
    if case.kernel != "gaussian":
        return lambda: f(q, k, v, scale=_scale(case)).numpy()
    s = _scale(case)
    bias = -0.5 * s * (k * k).sum(dim=-1)[:, None, :]  # (H, 1, n), broadcast over queries

    def run():
        with torch.no_grad():
            return f(q, k, v, attn_mask=bias, scale=s).numpy()

    return run


_BUILDERS = {"mhanw": _mhanw, "numpy_full": _numpy_full, "torch_sdpa": _torch_sdpa}


def torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def _rss_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def measure(run, repeat: int = 3) -> dict:
    """CPU time (one thread: the wall time of an idle machine) and the peak memory one call adds (MiB).

    The first call gives the peak memory (and warms up); the time is the best
    of ``repeat`` further calls, or of the first call alone when ``repeat`` is 0.
    """
    before = _rss_kib("VmRSS")
    ok = _reset_peak()
    t = time.process_time()
    run()
    times = [time.process_time() - t]
    peak = (_rss_kib("VmHWM") - before) / 1024 if ok else float("nan")
    if repeat:
        times = []
    for _ in range(repeat):
        t = time.process_time()
        run()
        times.append(time.process_time() - t)
    return {"seconds": min(times), "peak_mib": max(peak, 0.0)}


def _repeat_for(case: Case) -> int:
    work = case.heads * case.m * case.n
    return 0 if work >= 10**9 else 2 if work >= 10**8 else 5


def run_case(case: Case, with_torch: bool, check: bool = True) -> dict:
    """Time every implementation on ``case``; ratios are to ``mhanw``'s time."""
    x = Inputs(case)
    row: dict[str, Any] = {"case": asdict(case), "label": case.label, "logits": case.logits, "results": {}}
    reference = None
    for impl in case.implementations:
        if impl == "torch_sdpa" and not with_torch:
            continue
        if impl == "bound":
            products, exps = _bound_parts(case, x)
            parts = {"products": measure(products, _repeat_for(case)), "exp": measure(exps, _repeat_for(case))}
            row["results"]["bound"] = {
                "seconds": sum(p["seconds"] for p in parts.values()),
                "peak_mib": max(p["peak_mib"] for p in parts.values()),
                **{f"{k}_seconds": p["seconds"] for k, p in parts.items()},
            }
            continue
        run = _BUILDERS[impl](case, x)
        if check:
            out = np.asarray(run(), dtype=np.float64)
            if reference is None:
                reference = out
            else:
                tol = 1e-9 if case.dtype == "float64" else 2e-3
                row.setdefault("max_abs_diff", {})[impl] = float(np.abs(out - reference).max())
                if row["max_abs_diff"][impl] > tol:
                    raise AssertionError(
                        f"{impl} disagrees with mhanw on {case.label}: {row['max_abs_diff'][impl]:.2e}"
                    )
        row["results"][impl] = measure(run, _repeat_for(case))
    base = row["results"]["mhanw"]["seconds"]  # mhanw always runs first
    for impl, res in row["results"].items():
        res["ratio"] = res["seconds"] / base
    return row


def run(cases, with_torch=None, progress=print) -> dict:
    """Run ``cases`` on one thread; returns a JSON-ready dict with one row per case."""
    from threadpoolctl import threadpool_limits

    with_torch = torch_available() if with_torch is None else with_torch
    rows = []
    with threadpool_limits(1):
        for i, case in enumerate(cases, 1):
            if progress:
                progress(f"[{i}/{len(cases)}] {case.label}")
            rows.append(run_case(case, with_torch))
    meta = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "threads": 1,
        "torch": None,
    }
    if with_torch:
        import torch

        meta["torch"] = torch.__version__
    return {"meta": meta, "rows": rows, "targets": targets(rows)}


def targets(rows) -> dict:
    """The targets, measured: mhanw's median over the shapes at most 1.3x the bound (two
    products + exp), and no slower than torch on shapes of at least 1e6 logits."""

    def over_bound(rs):
        return [1 / r["results"]["bound"]["ratio"] for r in rs if "bound" in r["results"]]

    allb = over_bound(rows)
    headsb = over_bound([r for r in rows if r["case"]["path"] == "heads"])
    big = [r for r in rows if "torch_sdpa" in r["results"] and r["logits"] >= TORCH_TARGET_LOGITS]
    torch_ratios = [r["results"]["torch_sdpa"]["ratio"] for r in big]
    mem = [r for r in rows if r["case"]["n"] >= 10**6 and r["case"]["m"] >= 10**4]
    return {
        "mhanw_over_bound_median": float(np.median(allb)) if allb else None,
        "mhanw_over_bound_max": max(allb) if allb else None,
        "mhanw_over_bound_median_heads": float(np.median(headsb)) if headsb else None,
        "within_1.3x_of_bound": sum(b <= 1.3 for b in allb),
        "n_cases": len(allb),
        "torch_over_mhanw_min": min(torch_ratios) if torch_ratios else None,
        "torch_over_mhanw_median": float(np.median(torch_ratios)) if torch_ratios else None,
        "no_slower_than_torch": sum(t >= 1.0 for t in torch_ratios),
        "n_torch_cases": len(torch_ratios),
        "large_case_peak_mib": mem[0]["results"]["mhanw"]["peak_mib"] if mem else None,
    }


def markdown(result: dict) -> str:
    """The benchmark as a Markdown table: time of mhanw, then each method's time as a ratio to it."""
    lines = [
        "| shape | logits | mhanw (s) | numpy full (x) | torch sdpa (x) | bound (x) | mhanw / bound | "
        "peak MiB: mhanw / numpy / torch |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        res = r["results"]
        ratio = lambda k: f"{res[k]['ratio']:.2f}" if k in res else "-"  # noqa: E731
        over = f"{1 / res['bound']['ratio']:.2f}" if "bound" in res else "-"
        peak = " / ".join(
            f"{res[k]['peak_mib']:.0f}" if k in res else "-" for k in ("mhanw", "numpy_full", "torch_sdpa")
        )
        lines.append(
            f"| {r['label']} | {r['logits']:.1e} | {res['mhanw']['seconds']:.4f} | {ratio('numpy_full')} "
            f"| {ratio('torch_sdpa')} | {ratio('bound')} | {over} | {peak} |"
        )
    t = result["targets"]
    lines += [
        "",
        f"Ratios are other/mhanw: above 1 means mhanw is faster; bound = two products + exp, each timed "
        f"alone. One thread each; {result['meta']}.",
        "",
    ]
    if t["n_cases"]:
        lines.append(
            f"- mhanw / bound: median {t['mhanw_over_bound_median']:.2f}x (heads shapes "
            f"{t['mhanw_over_bound_median_heads'] or float('nan'):.2f}x), worst {t['mhanw_over_bound_max']:.2f}x; "
            f"within 1.3x on {t['within_1.3x_of_bound']} of {t['n_cases']} shapes."
        )
    if t["n_torch_cases"]:
        lines.append(
            f"- torch sdpa / mhanw on shapes of >= 1e6 logits: median {t['torch_over_mhanw_median']:.2f}, "
            f"worst {t['torch_over_mhanw_min']:.2f}; mhanw no slower on {t['no_slower_than_torch']} of "
            f"{t['n_torch_cases']} shapes."
        )
    if t["large_case_peak_mib"] is not None:
        lines.append(
            f"- 1e6 keys x 1e4 queries: mhanw's peak memory {t['large_case_peak_mib']:.0f} MiB above its inputs."
        )
    return "\n".join(lines) + "\n"


#: The torch build ``--install-torch`` puts into the running environment (CPU wheels for this platform).
TORCH_PIN = "torch==2.13.0"


def install_torch() -> None:
    """Install :data:`TORCH_PIN` into the running interpreter's environment when torch is missing (the
    comparison of ``make bench``; nothing else needs torch, so it is not in the lock).  pip is added with
    ``ensurepip`` first when the environment has none (uv makes environments without it)."""
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec("torch") is not None:
        return
    if subprocess.run([sys.executable, "-m", "pip", "-V"], capture_output=True).returncode != 0:
        subprocess.run([sys.executable, "-m", "ensurepip", "--default-pip"], check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-qq", TORCH_PIN], check=True)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiny", action="store_true", help="a few small shapes (seconds), as `make test` runs it")
    parser.add_argument("--no-torch", action="store_true", help="skip torch even when it is installed")
    parser.add_argument("--out", default="build/bench", help="folder for bench.json and bench.md")
    parser.add_argument("--install-torch", action="store_true", help=f"pip install {TORCH_PIN} first if missing")
    args = parser.parse_args(argv)
    if args.install_torch and not args.no_torch:
        install_torch()
    result = run(TINY if args.tiny else FULL, with_torch=False if args.no_torch else None)
    out = Path(args.out)
    write_atomic(out / "bench.json", json.dumps(result, indent=1) + "\n")
    text = markdown(result)
    write_atomic(out / "bench.md", text)
    print(text)
    return result


if __name__ == "__main__":
    main()

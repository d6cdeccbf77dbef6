"""Benchmark of the head evaluation against what a user would pick instead (a plain numpy reference, PyTorch's fused attention).

Every statistical check of the companion spends its time in one kernel: the
softmax-weighted mean of values over keys (Theorem 2.1), i.e. attention or
Gaussian Nadaraya-Watson.  This module times, on the same shapes and dtype:

- ``mhanw``: :func:`mhanw.nw.softmax_attention` / :func:`mhanw.nw.nadaraya_watson`
  (blocked over queries, fused softmax, H heads batched);
- ``numpy_full``: the plain numpy reference that materialises the whole
  ``(H, m, n)`` weight matrix and normalises it;
- ``torch_sdpa``: ``torch.nn.functional.scaled_dot_product_attention`` on the
  CPU (only when torch is installed: ``pip install torch==2.13.0``, the
  ``bench`` extra; never a dependency of the pipeline);
- ``matmul_bound``: the two matrix products of the same shapes
  (``Q K^T`` and ``W V``, in the same blocks), the lower bound the machine
  allows for any exact method;

each as a ratio to ``mhanw``'s time, with the peak resident memory each adds
(``VmHWM`` after resetting it through ``/proc/self/clear_refs``).  All run on
one thread (BLAS via threadpoolctl, torch via ``set_num_threads``), best of a
few repeats after a warm-up.  ``python -m mhanw.bench`` writes
``build/bench/bench.json`` and ``bench.md``; ``make bench`` runs it.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from . import nw
from .infra.texout import write_atomic

IMPLEMENTATIONS = ("mhanw", "numpy_full", "torch_sdpa", "matmul_bound")


@dataclass(frozen=True)
class Case:
    """One benchmark shape: ``heads`` x (``m`` queries, ``n`` keys, ``d_k``), values of width ``d_k``."""

    n: int
    m: int
    d_k: int
    heads: int = 1
    dtype: str = "float64"
    kernel: str = "exponential"
    implementations: tuple = IMPLEMENTATIONS

    @property
    def label(self) -> str:
        return f"H={self.heads} m={self.m:.0e} n={self.n:.0e} d_k={self.d_k} {self.dtype} {self.kernel}"


def _grid(dtypes=("float64", "float32")):
    # At most 1e8 logits per head and call, so that the materialising
    # reference (and torch, which also forms the weight matrix on the CPU)
    # fits in memory and the whole run takes minutes.
    shapes = [
        (10**3, 10**2, 1, 1), (10**3, 10**2, 64, 1), (10**4, 10**3, 8, 1), (10**4, 10**3, 64, 1),
        (10**5, 10**3, 1, 1), (10**5, 10**3, 16, 1), (10**6, 10**2, 64, 1),
        (10**4, 10**3, 8, 8), (10**4, 10**3, 64, 8),
    ]
    cases = [Case(n, m, d, h, dt) for dt in dtypes for (n, m, d, h) in shapes]
    cases += [Case(10**4, 10**3, 8, 8, dt, "gaussian") for dt in dtypes]
    # Memory: one million keys and ten thousand queries, blocked; the full
    # weight matrix (40 GB in float32) is never formed, so only mhanw runs.
    cases.append(Case(10**6, 10**4, 1, 1, "float32", "exponential", ("mhanw",)))
    return cases


FULL = _grid()
TINY = [
    Case(200, 20, 1, 1, "float64"), Case(200, 20, 8, 2, "float32"),
    Case(300, 30, 4, 2, "float64", "gaussian"),
]


def _inputs(case: Case, seed: int = 0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(case.dtype)
    shape = lambda rows: (case.heads, rows, case.d_k)  # noqa: E731
    return tuple(rng.standard_normal(shape(r)).astype(dt) for r in (case.m, case.n, case.n))


def _scale(case: Case):
    # attention: 1/sqrt(d_k); Gaussian: bandwidth 1, i.e. logits q.k - |k|^2/2
    return 1.0 / np.sqrt(case.d_k) if case.kernel == "exponential" else 1.0


def _mhanw(case, Q, K, V):
    if case.kernel == "exponential":
        return lambda: nw.softmax_attention(Q, K, V)
    return lambda: nw.nadaraya_watson(Q, K, V, bandwidth=1.0, kernel="gaussian")


def _numpy_full(case, Q, K, V):
    s = Q.dtype.type(_scale(case))

    def run():
        L = Q @ np.swapaxes(K, -1, -2)
        if case.kernel == "gaussian":
            L -= 0.5 * (K * K).sum(axis=-1)[:, None, :]
        L *= s
        W = np.exp(L - L.max(axis=-1, keepdims=True))
        W /= W.sum(axis=-1, keepdims=True)
        return W @ V

    return run


def _matmul_bound(case, Q, K, V):
    kt = np.ascontiguousarray(np.swapaxes(K, -1, -2))

    def run():
        out = np.empty(Q.shape[:2] + (V.shape[-1],), dtype=Q.dtype)
        for rows in nw._blocks(case.m, case.n, case.heads):
            out[:, rows] = (Q[:, rows] @ kt) @ V
        return out

    return run


def _torch_sdpa(case, Q, K, V):
    import torch

    torch.set_num_threads(1)
    q, k, v = (torch.from_numpy(np.ascontiguousarray(a)) for a in (Q, K, V))
    f = torch.nn.functional.scaled_dot_product_attention
    if case.kernel == "exponential":
        return lambda: f(q, k, v).numpy()
    bias = -0.5 * (k * k).sum(dim=-1)[:, None, :]  # (H, 1, n), broadcast over queries

    def run():
        with torch.no_grad():
            return f(q, k, v, attn_mask=bias, scale=1.0).numpy()

    return run


_BUILDERS = {"mhanw": _mhanw, "numpy_full": _numpy_full, "torch_sdpa": _torch_sdpa, "matmul_bound": _matmul_bound}


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
    """Wall time and the peak memory one call adds (MiB).

    The first call gives the peak memory (and warms up); the time is the best
    of ``repeat`` further calls, or of the first call alone when ``repeat`` is 0.
    """
    before = _rss_kib("VmRSS")
    ok = _reset_peak()
    t = time.perf_counter()
    run()
    times = [time.perf_counter() - t]
    peak = (_rss_kib("VmHWM") - before) / 1024 if ok else float("nan")
    if repeat:
        times = []
    for _ in range(repeat):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return {"seconds": min(times), "peak_mib": max(peak, 0.0)}


def _repeat_for(case: Case) -> int:
    work = case.heads * case.m * case.n
    return 0 if work >= 10**9 else 2 if work >= 10**8 else 5


def run_case(case: Case, with_torch: bool, check: bool = True) -> dict:
    """Time every implementation on ``case``; ratios are to ``mhanw``'s time."""
    Q, K, V = _inputs(case)
    row = {"case": asdict(case), "label": case.label, "results": {}}
    reference = None
    for impl in case.implementations:
        if impl == "torch_sdpa" and not with_torch:
            continue
        run = _BUILDERS[impl](case, Q, K, V)
        if check and impl != "matmul_bound":
            out = np.asarray(run(), dtype=np.float64)
            if reference is None:
                reference = out
            else:
                tol = 1e-9 if case.dtype == "float64" else 2e-3
                row.setdefault("max_abs_diff", {})[impl] = float(np.abs(out - reference).max())
                if row["max_abs_diff"][impl] > tol:
                    raise AssertionError(f"{impl} disagrees with mhanw on {case.label}: {row['max_abs_diff'][impl]:.2e}")
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
    meta = {"python": platform.python_version(), "numpy": np.__version__, "machine": platform.machine(),
            "threads": 1, "torch": None}
    if with_torch:
        import torch

        meta["torch"] = torch.__version__
    return {"meta": meta, "rows": rows, "targets": targets(rows)}


def targets(rows) -> dict:
    """The performance targets, measured: mhanw within 1.5x of the matmul bound, and no slower than torch."""
    bound = [r["results"]["matmul_bound"]["ratio"] for r in rows if "matmul_bound" in r["results"]]
    torch_ratios = [r["results"]["torch_sdpa"]["ratio"] for r in rows if "torch_sdpa" in r["results"]]
    mem = [r for r in rows if r["case"]["n"] >= 10**6 and r["case"]["m"] >= 10**4]
    return {
        "mhanw_over_bound_max": 1 / min(bound) if bound else None,
        "mhanw_over_bound_median": 1 / float(np.median(bound)) if bound else None,
        "within_1.5x_of_bound": sum(1 / b <= 1.5 for b in bound),
        "n_cases": len(bound),
        "torch_over_mhanw_min": min(torch_ratios) if torch_ratios else None,
        "torch_over_mhanw_median": float(np.median(torch_ratios)) if torch_ratios else None,
        "no_slower_than_torch": sum(t >= 1.0 for t in torch_ratios),
        "n_torch_cases": len(torch_ratios),
        "large_case_peak_mib": mem[0]["results"]["mhanw"]["peak_mib"] if mem else None,
    }


def markdown(result: dict) -> str:
    """The benchmark as a Markdown table: time of mhanw, then each method's time as a ratio to it."""
    lines = [
        "| shape | mhanw (s) | numpy full (x) | torch sdpa (x) | matmul bound (x) | peak MiB: mhanw / numpy / torch |",
        "|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        res = r["results"]
        ratio = lambda k: f"{res[k]['ratio']:.2f}" if k in res else "-"  # noqa: E731
        peak = " / ".join(f"{res[k]['peak_mib']:.0f}" if k in res else "-" for k in ("mhanw", "numpy_full", "torch_sdpa"))
        lines.append(f"| {r['label']} | {res['mhanw']['seconds']:.4f} | {ratio('numpy_full')} | {ratio('torch_sdpa')} "
                     f"| {ratio('matmul_bound')} | {peak} |")
    t = result["targets"]
    lines += ["", f"Ratios are other/mhanw: above 1 means mhanw is faster. One thread each; {result['meta']}.", ""]
    if t["n_cases"]:
        lines.append(f"- mhanw / matmul bound: median {t['mhanw_over_bound_median']:.2f}x, worst "
                     f"{t['mhanw_over_bound_max']:.2f}x; within 1.5x on {t['within_1.5x_of_bound']} of {t['n_cases']} shapes.")
    if t["n_torch_cases"]:
        lines.append(f"- torch sdpa / mhanw: median {t['torch_over_mhanw_median']:.2f}, worst {t['torch_over_mhanw_min']:.2f}; "
                     f"mhanw no slower on {t['no_slower_than_torch']} of {t['n_torch_cases']} shapes.")
    if t["large_case_peak_mib"] is not None:
        lines.append(f"- 1e6 keys x 1e4 queries: mhanw's peak memory {t['large_case_peak_mib']:.0f} MiB above its inputs.")
    return "\n".join(lines) + "\n"


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiny", action="store_true", help="a few small shapes (seconds), as `make test` runs it")
    parser.add_argument("--no-torch", action="store_true", help="skip torch even when it is installed")
    parser.add_argument("--out", default="build/bench", help="folder for bench.json and bench.md")
    args = parser.parse_args(argv)
    result = run(TINY if args.tiny else FULL, with_torch=False if args.no_torch else None)
    out = Path(args.out)
    write_atomic(out / "bench.json", json.dumps(result, indent=1) + "\n")
    text = markdown(result)
    write_atomic(out / "bench.md", text)
    print(text)
    return result


if __name__ == "__main__":
    main()

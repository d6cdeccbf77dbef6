"""The verdicts under other seeds, compared at equal size.

Every chapter runs at quick fidelity, records only, once with its own default
seed (``build/stability/seed-default/``) and once per other seed
(``build/stability/seed-S/``).  A verdict is compared with the default seed's
verdict *at the same size*, so that a difference is the seed's and not the
size's; the paper-fidelity verdict is shown beside it.  Per claim:

- ``equal``: seeds whose verdict is the default seed's;
- ``compatible``: the same, or ``undecided at this size``, or another form of
  "holds" (:func:`mhanw.infra.verdicts.compatible`);
- ``flips``: seeds whose verdict is the opposite decision (neither of those).
"""

from __future__ import annotations

from pathlib import Path

from . import ledger as L

FOLDER = Path("build") / "stability"


def folder(root: Path, seed: str) -> Path:
    return Path(root) / FOLDER / f"seed-{seed}"


def agrees(reference: dict, other: dict) -> bool:
    """Whether another seed's record agrees with the default seed's (:func:`mhanw.infra.verdicts.compatible`);
    two records outside their conditions agree when what their numbers show does."""
    from mhanw.infra.verdicts import OUTSIDE, UNDECIDED, compatible

    if reference["verdict"] == OUTSIDE and other["verdict"] == OUTSIDE:
        return compatible(reference.get("shows") or UNDECIDED, other.get("shows") or UNDECIDED)
    return compatible(reference["verdict"], other["verdict"])


def compare(reference: list[dict], runs: dict[str, list[dict]], paper: dict[str, str] | None = None) -> list[dict]:
    """Claim by claim (in the reference's order): the verdict under every seed and the counts."""
    rows = []
    for r in reference:
        found = {seed: next((x for x in recs if x["claim"] == r["claim"]), None) for seed, recs in runs.items()}
        verdicts = {seed: None if x is None else x["verdict"] for seed, x in found.items()}
        present = [x for x in found.values() if x is not None]
        ok = sum(agrees(r, x) for x in present)
        rows.append(
            {
                "claim": r["claim"],
                "chapter": r.get("chapter", ""),
                "default": r["verdict"],
                "paper": (paper or {}).get(r["claim"]),
                "seeds": verdicts,
                "runs": len(present),
                "equal": sum(x["verdict"] == r["verdict"] for x in present),
                "compatible": ok,
                "flips": len(present) - ok,
            }
        )
    return rows


def load(path: Path) -> dict:
    """``build/stability.json`` as :func:`collect` wrote it, or ``ValueError`` naming the file when it is
    damaged or of an older layout."""
    data = L.read_json(path, dict)
    claims = data.get("claims")
    ok = (
        isinstance(claims, list)
        and isinstance(data.get("seeds"), list)
        and isinstance(data.get("chapters", []), list)
        and isinstance(data.get("stopped") or {}, dict)
        and all(isinstance(r, dict) and {"claim", "runs", "seeds", "default"} <= set(r) for r in claims)
    )
    if not ok:
        raise ValueError(
            f"{path}: expected the seeds and per-claim rows (claim, default, seeds, runs) of "
            "python -m mhanw.pipeline stability; damaged, or of an older layout? (make stability renews it)"
        )
    return data


def collect(root: Path, seeds: list[str]) -> dict:
    """``build/stability.json``: every seed's ledger against the default seed's, at quick fidelity."""
    root = Path(root)
    reference = L.load_ledger(folder(root, "default") / "claims.json")
    runs: dict = {}
    stopped: dict = {}
    chapters: set[str] = set()
    for seed in seeds:
        f = folder(root, seed)
        runs[seed] = L.load_ledger(f / "claims.json")
        chapters.update(r["chapter"] for r in runs[seed])
        halted = L.stopped_chapters(f / "results")
        if halted:
            stopped[seed] = halted
    default_stopped = L.stopped_chapters(folder(root, "default") / "results")
    if default_stopped:
        stopped["default"] = default_stopped
    paper_ledger = root / "build" / "claims.json"
    paper = {r["claim"]: r["verdict"] for r in L.load_ledger(paper_ledger)} if paper_ledger.is_file() else None
    rows = compare(reference, runs, paper)
    data = {"seeds": seeds, "chapters": sorted(chapters), "fidelity": "quick", "stopped": stopped, "claims": rows}
    L.write_json(root / "build" / "stability.json", data)
    flips = [r for r in rows if r["flips"]]
    print(
        f"    stability: {len(rows)} claims under the default seed and {len(seeds)} others at quick fidelity; "
        + (f"{len(flips)} flip: " + ", ".join(r["claim"] for r in flips) if flips else "no flip")
    )
    return data

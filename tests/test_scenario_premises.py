"""Under every shipped scenario, and under scenarios that break each premise of chapter 04 on purpose,
no record whose premise fails says "holds" or "fails", and its statistic is still printed.

Each case is a records-mode run of a chapter at quick fidelity (``python -m mhanw.pipeline run
04_head_diversity_index --records --scenario FILE``, about a minute): slow.  Chapter 04 is the chapter
that applies the premises end to end; a chapter that applies them next is added to ``CHAPTERS``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from nbtools import ROOT

from mhanw.infra import verdicts as V
from mhanw.infra.notation import markdown_safe

CHAPTERS = ("04_head_diversity_index", "07_structured_weighting")

#: Scenarios that break one premise each: (name, TOML body, the premise id that must fail somewhere).
BROKEN = {
    "isotropic-m": (
        '[chapters.04_head_diversity_index]\nisotropic_regressions = ["aniso", "iso_cos"]\n'
        'random_regression = "aniso"\n',
        "isotropic-m",
    ),
    "diagonal-inputs": ('[all]\ninputs = "gaussian-diagonal:4"\n', "rotation-invariant-inputs"),
    "directional-noise": ('[all]\nnoise = "heteroscedastic:1 + 0.5*abs(x2)"\n', "rotation-invariant-noise"),
}
#: The broken scenarios of each chapter (its own premises; chapter 07's control rests on exchangeable heads).
BROKEN_BY_CHAPTER = {
    "04_head_diversity_index": BROKEN,
    "07_structured_weighting": {
        "diagonal-inputs": ('[all]\ninputs = "gaussian-diagonal:4"\n', "exchangeable-heads"),
        "directional-noise": ('[all]\nnoise = "heteroscedastic:1 + 0.5*abs(x2)"\n', "exchangeable-heads"),
    },
}
SHIPPED = sorted(p.stem for p in (ROOT / "scenarios").glob("*.toml"))
CASES = [(c, "shipped", s) for c in CHAPTERS for s in SHIPPED] + [
    (c, "broken", s) for c in CHAPTERS for s in BROKEN_BY_CHAPTER[c]
]


def _run(chapter: str, scenario, out) -> list[dict]:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mhanw.pipeline",
            "run",
            chapter,
            "--records",
            "--fidelity",
            "quick",
            "--scenario",
            str(scenario),
            "--out",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads((out / "results" / f"{chapter}.json").read_text())["claims"]


@pytest.mark.slow
@pytest.mark.parametrize("chapter, kind, name", CASES, ids=[f"{c[:2]}-{k}-{n}" for c, k, n in CASES])
def test_no_record_whose_premise_fails_holds_or_fails(chapter, kind, name, tmp_path):
    if kind == "shipped":
        scenario = ROOT / "scenarios" / f"{name}.toml"
    else:
        scenario = tmp_path / f"{name}.toml"
        body, premise_id = BROKEN_BY_CHAPTER[chapter][name]
        scenario.write_text(f'description = "breaks {premise_id}"\n' + body)
    records = _run(chapter, scenario, tmp_path / "run")
    failed_ids = set()
    for d in records:
        r = V.Verdict.from_dict(d)
        bad = r.failed_premises
        failed_ids |= {p.id for p in bad}
        if not bad:
            continue
        assert r.verdict not in (V.HOLDS, V.HOLDS_UNDER, V.FAILS), r.claim
        if r.verdict == V.OUTSIDE:
            assert r.shows in V.DECISIONS and r.statistics, r.claim
            text = V.findings_markdown([r])
            assert V.statistic_text(r.statistics[0]).split(" = ")[1].split(" ")[0] in text
            assert all(markdown_safe(p.why) in text for p in bad)  # named as written (markup escaped)
    if kind == "broken":
        premise_id = BROKEN_BY_CHAPTER[chapter][name][1]
        assert premise_id in failed_ids, f"no record of {chapter} rests on the broken premise {premise_id}"
    macros = (tmp_path / "run" / "generated" / f"{chapter}.tex").read_text()
    for d in records:
        if d["verdict"] == V.OUTSIDE:
            assert "outside its conditions (" in macros

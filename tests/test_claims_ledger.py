"""The claims ledger and what is made from it; scenarios and seeds.

Fast tests run the collection and every generator on synthetic ledgers (a
chapter without records, a duplicated id, LaTeX specials, an empty ledger), the
scenario checks (a parameter a chapter lacks, reserved names, `make -n scenario`
without SCENARIO); the paper's section on scenarios and seeds is tested in
test_robustness.py.  Slow ones reuse the pipeline test's
quick build (``quick_build``): a scenario equal to the defaults gives the default
numbers and verdicts (one cheap chapter), and the quick verdicts never contradict
the committed paper-fidelity reference ledger.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from nbtools import NOTEBOOKS, ROOT, clone_build, make

from mhanw.infra.verdicts import FAILS, HOLDS, HOLDS_UNDER, UNDECIDED, Ledger, Statistic, Verdict
from mhanw.pipeline import chapters
from mhanw.pipeline import ledger as claimslib
from mhanw.pipeline import scenarios as scenario


def _ledger(chapter, *records):
    led = Ledger(chapter)
    for r in records:
        led.add(r)
    return led.to_list()


def _v(claim, verdict, **kw):
    kw.setdefault("statement", f"statement of {claim}")
    kw.setdefault("criterion", "a criterion")
    if verdict == HOLDS_UNDER:
        kw.setdefault("conditions", "isotropic m")
    return Verdict(claim=claim, verdict=verdict, **kw)


@pytest.fixture
def results(tmp_path):
    d = tmp_path / "results"
    d.mkdir()
    (d / "01_a.json").write_text(
        json.dumps(
            {
                "fidelity": "quick",
                "claims": _ledger(
                    "01_a",
                    _v(
                        "thm-2.1/identity",
                        HOLDS,
                        statistics=(Statistic("largest |diff|", 1e-16),),
                        detectable=1e-12,
                        section="sec:thm21",
                        statement="attention = NW with exp(q.k/sqrt(d_k)) & 50% ± κ",
                    ),
                    _v(
                        "thm-2.1/literal-bandwidth",
                        FAILS,
                        statistics=(Statistic("diff", 0.5, 0.01, "%"),),
                        section="sec:thm21",
                    ),
                ),
            }
        )
    )
    (d / "02_b.json").write_text(json.dumps({"fidelity": "quick"}))  # no records yet
    (d / "03_c.json").write_text(
        json.dumps(
            {
                "claims": _ledger(
                    "03_c",
                    _v("lemma-4.1/first-order", HOLDS_UNDER, section="sec:lemma41"),
                    _v("lemma-4.1/closed-form", UNDECIDED, section="sec:lemma41"),
                )
            }
        )
    )
    return d


def test_collect_gathers_records_in_chapter_order_and_names_chapters_without_records(results):
    records, chapters, without = claimslib.collect(results)
    assert [r["claim"] for r in records] == [
        "thm-2.1/identity",
        "thm-2.1/literal-bandwidth",
        "lemma-4.1/first-order",
        "lemma-4.1/closed-form",
    ]
    assert chapters == ["01_a", "03_c"] and without == ["02_b"]
    assert {"claim", "chapter", "verdict", "section", "statement", "statistics", "detectable"} <= set(records[0])


def test_collect_refuses_a_claim_id_in_two_chapters(results):
    (results / "04_d.json").write_text(json.dumps({"claims": _ledger("04_d", _v("thm-2.1/identity", HOLDS))}))
    with pytest.raises(ValueError, match="thm-2.1/identity"):
        claimslib.collect(results)


def test_run_ledger_writes_claims_and_run_record(results, tmp_path):
    folder = tmp_path / "run"
    (folder / "results").mkdir(parents=True)
    for p in results.iterdir():
        (folder / "results" / p.name).write_text(p.read_text())
    (folder / "results" / "04_d.json").write_text(
        json.dumps({"chapter": "04_d", "stopped": "the text says x", "claims": []})
    )
    records = claimslib.write_run_ledger(folder, {"seed": "3"})
    assert [r["claim"] for r in json.loads((folder / "claims.json").read_text())] == [r["claim"] for r in records]
    run = json.loads((folder / "run.json").read_text())
    assert run["seed"] == "3" and run["stopped"] == {"04_d": "the text says x"}
    assert run["chapters"] == ["01_a", "03_c", "04_d"]
    numbers = claimslib.section_numbers(ROOT / "paper")  # from the paper's labels, in its input order
    assert int(numbers["sec:thm21"]) < int(numbers["sec:thm31"])


def test_empty_results_give_a_fallback_not_an_error(tmp_path):
    records, chapters, without = claimslib.collect(tmp_path)
    assert records == [] and chapters == []
    assert "No chapter has recorded" in claimslib.latex_table([])
    assert "\\ClaimsOverall" in claimslib.latex_summary([])
    assert "run `make all`" in claimslib.markdown_table([])


def test_latex_table_escapes_and_prints_statistic_and_detectable(results):
    records, _, _ = claimslib.collect(results)
    tex = claimslib.latex_table(records)
    assert "\\&" in tex and "50\\%" in tex and "$\\kappa$" in tex and "$\\sqrt{d_{k}}$" in tex and "d\\_k" not in tex
    rows = [ln for ln in tex.splitlines() if ln.endswith("\\\\") and " & " in ln and "claim & " not in ln]
    assert [ln.split(" & ")[0] for ln in rows][:2] == ["Theorem 2.1: identity", "Theorem 2.1: literal bandwidth"]
    assert "diff = 0.500 ± 0.010 \\%".replace("±", "$\\pm$") in tex
    assert "$10^{-12}$" in tex and "\\ref{sec:thm21}" in tex
    # conditions as a note under the table, marked in the verdict cell, each set once
    assert "\\emph{holds only under added conditions}\\textsuperscript{a} & " in tex
    assert "\\textsuperscript{a}\\,isotropic m." in tex and tex.count("isotropic m") == 1
    assert all(ord(c) < 128 for c in tex), "pdflatex gets ASCII only"


def test_condition_marks_one_letter_per_distinct_set_of_conditions():
    records = [{"conditions": c} for c in ("A", "", "B", "A", "C")] + [{"conditions": f"c{k}"} for k in range(25)]
    marks = claimslib.condition_marks(records)
    assert list(marks.items())[:3] == [("A", "a"), ("B", "b"), ("C", "c")] and "" not in marks
    assert marks["c22"] == "z" and marks["c23"] == "aa" and len(set(marks.values())) == len(marks)
    assert "Conditions of the verdicts" not in claimslib.latex_table(
        [dict(_v("thm-2.1/x", FAILS).to_dict(), chapter="01_a")]
    )


def test_summary_says_each_verdict_once_and_counts_in_words(results):
    records, _, _ = claimslib.collect(results)
    tex = claimslib.latex_summary(records)
    assert re.search(
        r"Of the four parts checked of the paper's (two|three|four) claims \(statements and readings\), one holds, "
        r"one holds only under added conditions, one fails as stated and one is undecided at this size",
        tex,
    ), tex
    by_verdict = claimslib.by_verdict_sentence(records)
    for v in (HOLDS, FAILS, UNDECIDED):
        assert (by_verdict + ";").count(f": {v};") == 1
    assert "fails as stated; fails as stated" not in tex
    assert claimslib.counts_phrase([{"verdict": HOLDS}] * 4) == "all four parts hold"
    assert (
        claimslib.counts_phrase([{"verdict": HOLDS}, {"verdict": FAILS}, {"verdict": FAILS}])
        == "one of three parts holds and two fail as stated"
    )


def test_differences(results):
    records, _, _ = claimslib.collect(results)
    other = [dict(r) for r in records]
    other[1]["verdict"] = UNDECIDED
    other = other[:3]
    assert claimslib.differences(records, other) == [
        ("thm-2.1/literal-bandwidth", FAILS, UNDECIDED),
        ("lemma-4.1/closed-form", UNDECIDED, None),
    ]


def test_generated_text_names_claims_as_the_paper_does():
    """Titles, not ids: "Theorem 2.1", the unnumbered claims by their section's subject, parts in words."""
    assert claimslib.claim_title("thm-2.1/identity") == "Theorem 2.1: identity"
    assert claimslib.claim_title("thm-7.1") == "Theorem 7.1"
    assert claimslib.claim_title("rf/breiman-identity") == "The random-forest analogy: Breiman identity"
    assert claimslib.claim_title("pretrained/shared-directions").startswith("The trained transformer: ")
    assert claimslib.claim_title("hdi-definition/pa-properties") == "The Head Diversity Index: HDI_PA properties"
    # chapter 10: the training claim, its control and its settings by name, not by slug
    assert claimslib.claim_title("interp/training-orthogonal/aniso-over-concat") == (
        "The training reading of Theorem 5.1: training pushes heads apart (anisotropic $m$, $Hd_k>d$, heads "
        "through $W_V$ and $W_O$)"
    )
    assert claimslib.claim_title("interp-control/penalty/iso-equal-average") == (
        "The positive control of the training reading: with an orthogonality penalty (isotropic $m$, $Hd_k=d$, "
        "averaged heads)"
    )
    assert claimslib.claim_title("thm-4.2/equal-hdi") == "Theorem 4.2: equal HDI"  # "equal" alone keeps its word
    assert claimslib.part_name("lemma-4.1/printed-bound/constant-m") == "printed bound (constant m)"
    assert claimslib.part_name("thm-5.1/imse-optimum/iso-cos") == "IMSE optimum ($m_{\\cos,1.5}$)"
    records = [
        {"claim": c, "verdict": v}
        for c, v in (
            ("rf/breiman-identity", HOLDS),
            ("pretrained/shared-directions", FAILS),
            ("hdi-definition/pa-properties", HOLDS),
            ("thm-3.1/ddof1-offset", HOLDS),
        )
    ]
    summary = claimslib.latex_summary(
        [
            dict(
                r, statement="s", criterion="c", chapter="x", section="", conditions="", statistics=[], detectable=None
            )
            for r in records
        ]
    )
    sentences = "\n".join(ln for ln in summary.splitlines() if ln.startswith("\\newcommand{\\Claims"))
    by_claim = summary.split("\\ClaimsByClaim}{", 1)[1]
    for raw in ("rf:", "pretrained:", "hdi definition", "ddof1", "HDI\\_PA", "thm-"):
        assert raw not in sentences, raw
    assert "the random-forest analogy: its one part holds" in by_claim and "$\\HDIpa$ properties" in summary


@pytest.mark.parametrize(
    "plain, tex, md",
    [
        (
            "HDI_PA of identical heads",
            "$\\HDIpa$ of identical heads",
            "$\\mathrm{HDI}_{\\mathrm{PA}}$ of identical heads",
        ),
        ("largest change of HDI_printed", "$\\HDIpr$", "$\\mathrm{HDI}_{\\mathrm{printed}}$"),
        ("1 - rho_bar at h = 0.1", "1 - $\\bar\\rho$ at h = 0.1", "1 - $\\bar\\rho$ at h = 0.1"),
        (
            "P vs Q, $m_{\\exp}$ = 0.5 ± 0.1 %",
            "P vs Q, $m_{\\exp}$ = 0.5 $\\pm$ 0.1 \\%",
            "P vs Q, $m_{\\exp}$ = 0.5 ± 0.1 %",
        ),
        ("n C_jj'(x) = kappa_jj'(x)", "n $C_{jj'}$(x) = $\\kappa_{jj'}$(x)", "n $C_{jj'}$(x) = $\\kappa_{jj'}$(x)"),
        ("iso_exp and gaussian_unit stay words", "iso\\_exp and gaussian\\_unit", "iso_exp and gaussian_unit"),
    ],
)
def test_record_text_uses_the_papers_notation(plain, tex, md):
    assert tex in claimslib.tex_text(plain)
    assert md in claimslib._md(plain)
    assert "$$" not in claimslib.tex_text("$a$ ± $b$")


@pytest.mark.parametrize(
    "plain, tex",
    [
        ("mean (1 + 2/d_k)^(-d_k/2), to e^-1", "mean $(1 + 2/d_{k})^{-d_{k}/2}$, to e$^{-1}$"),
        ("bandwidth d_k^(1/4)", "bandwidth $d_{k}^{1/4}$"),
        ("bias proportional to d_k^-2", "bias proportional to $d_{k}^{-2}$"),
        ("among them (m_{\\cos,1.2}) and (m_{\\mathrm{aniso}})", "($m_{\\cos,1.2}$) and ($m_{\\mathrm{aniso}}$)"),
        ("MSE = (sum_j a_j B_j)^2 + sum_{j != j'} a_j", "$(\\sum_{j} a_{j} B_{j})^{2}$ + $\\sum_{j \\ne j'}$ $a_{j}$"),
        ("off by a'C^(1)a/R", "off by a'C$^{(1)}$a/R"),
        ("uniform averaging, H d_k <= d", "H $d_{k}$ $\\le$ d"),
        ("bound L^2 ||G||_F^2 / (n h^d_k p_K)", "L$^{2}$ $\\lVert G\\rVert_{F}^{2}$ / (n h$^{d_{k}}$ $p_{K}$)"),
        ("the printed law (ln n)^(2/(4+d))", "$(\\ln n)^{2/(4+d)}$"),
        (
            "d_k* grows, H* = floor(D/d_k*), gamma*(H, rho) > 1; a*b and x**2 stay",
            "$d_{k}^{\\ast}$ grows, $H^{\\ast}$ = floor(D/$d_{k}^{\\ast}$), $\\gamma^{\\ast}$(H, $\\rho$) \\textgreater{} 1; a*b and x**2 stay",
        ),
        ("the tilted mean E m(Z), Z ~ N(beta q, I)", "Z $\\sim$ N($\\beta$ q, I)"),
        ("n C / sigma^2 -> (1 + h^2) at angle phi", "n C / $\\sigma^{2}$ $\\to$ (1 + h$^{2}$) at angle $\\phi$"),
        ("attention with beta = 1/sqrt(d_k); alphabet betamax", "$\\beta$ = 1/$\\sqrt{d_{k}}$; alphabet betamax"),
    ],
)
def test_record_text_exponents_subscripts_and_relations_are_typeset(plain, tex):
    """Plain exponents, braced subscripts, sums and relations become maths; no caret, underscore or
    backslash is printed as code."""
    out = claimslib.tex_text(plain)
    assert tex in out, out
    assert not any(
        code in out for code in ("\\textasciicircum", "\\textasciitilde", "\\_", "\\textbackslash", "\\textless")
    ), out


def test_chapter_04_names_head_kinds_and_regression_functions_as_the_text_does():
    from nbtools import declared_parameters

    from mhanw.chapters import base
    from mhanw.chapters import ch04_head_diversity_index as ch04
    from mhanw.infra.results import Results

    ctx = base.setup(ch04, render=False, **declared_parameters("04_head_diversity_index", fidelity="quick"))
    claim = next(c for c in ch04.CLAIMS if c.id == "hdi-definition/printed-unit-range")
    rec = claim.decide(Results({"index": ch04.index(ctx)}))
    names = [s.name for s in rec.statistics]
    assert names[0].startswith("smallest (random, N(0, 1), ") and names[1].startswith("largest (orthogonal blocks, ")
    assert ch04.regression_label("iso_exp") == "$m_{\\exp}$"


def test_a_flipped_record_changes_every_generated_text(results):
    """Flip one verdict: its macro, the summary sentences, the book's table row and the terminal table follow it."""
    records, _, _ = claimslib.collect(results)
    flipped = [dict(r) for r in records]
    flipped[0] = dict(flipped[0], verdict=FAILS, detectable=None)
    claim = records[0]["claim"]
    before, after = claimslib.latex_summary(records), claimslib.latex_summary(flipped)
    assert f"mhanw@verdict@{claim}\\endcsname{{holds}}" in before
    assert f"mhanw@verdict@{claim}\\endcsname{{fails as stated}}" in after
    overall = lambda tex: tex.split("\\ClaimsOverall}{", 1)[1].split("}\n", 1)[0]  # noqa: E731
    assert overall(before) != overall(after) and "two fail as stated" in overall(after)
    row = lambda md: next(ln for ln in md.splitlines() if ln.startswith(f"| `{claim}`"))  # noqa: E731
    assert row(claimslib.markdown_table(records)).endswith("| holds |")
    assert row(claimslib.markdown_table(flipped)).endswith("| fails as stated |")
    assert claimslib.text_table(records) != claimslib.text_table(flipped)


def test_reference_verdicts_and_contradictions(results, tmp_path):
    records, _, _ = claimslib.collect(results)
    claimslib.write_json(claimslib.reference_path(tmp_path, "paper"), records)
    reference = claimslib.reference_verdicts(tmp_path, "paper")
    assert reference == {r["claim"]: r["verdict"] for r in records}
    assert claimslib.contradictions(reference, records) == []
    smaller = [dict(r, verdict=UNDECIDED) if r["verdict"] == HOLDS else dict(r) for r in records]
    assert claimslib.contradictions(reference, smaller) == []  # a smaller run may lack the evidence
    smaller[1]["verdict"] = HOLDS
    smaller.append(dict(records[0], claim="thm-9.9/new"))
    assert claimslib.contradictions(reference, smaller) == [
        ("thm-2.1/literal-bandwidth", FAILS, HOLDS),
        ("thm-9.9/new", None, HOLDS),
    ]
    with pytest.raises(ValueError, match="make reference FIDELITY=quick"):
        claimslib.reference_verdicts(tmp_path, "quick")


@pytest.mark.parametrize("fidelity", ["paper", "quick"])
def test_committed_reference_ledgers_hold_a_verdict_for_every_claim(fidelity):
    records = claimslib.load_ledger(claimslib.reference_path(ROOT, fidelity))
    assert len(records) >= 50 and all(r["chapter"] in {p.stem for p in NOTEBOOKS} for r in records)


# --------------------------------------------------------------------------- scenarios


def _scenario(tmp_path, text):
    p = tmp_path / "s.toml"
    p.write_text(text)
    return p


def test_shipped_scenarios_are_valid():
    files = sorted((ROOT / "scenarios").glob("*.toml"))
    assert {f.stem for f in files} >= {"heavy-tails", "anisotropic", "heteroscedastic"}
    for f in files:
        assert scenario.load(f, ROOT).changed


def test_common_parameter_goes_only_to_chapters_that_declare_it(tmp_path):
    s = scenario.load(_scenario(tmp_path, "[all]\nseed = 7\nn_jobs = 1\n"), ROOT)
    for name, p in s.params.items():
        declared = chapters.declared(ROOT / "notebooks" / f"{name}.md")
        assert p == {k: v for k, v in {"seed": 7, "n_jobs": 1}.items() if k in declared}
    assert s.changed == [p.stem for p in NOTEBOOKS]


@pytest.mark.parametrize(
    "text, message",
    [
        ("[chapters.02_bias_variance_covariance]\nnot_a_parameter = 1\n", "not_a_parameter: not a parameter of"),
        ("[chapters.99_nothing]\nseed = 1\n", "no chapter notebooks/99_nothing.md"),
        ('[all]\nfigures_dir = "x"\n', "set by the pipeline"),
        ("[all]\nseed = {a = 1}\n", "expected a string, number"),
        ("[everything]\nseed = 1\n", "unknown table or key everything"),
        ("[all\n", "not valid TOML"),
        ("[all]\nsigmaa = 0.5\n", "[all] sigmaa: no chapter declares this parameter"),
        ("[all]\nsigma = -0.5\n", "sigma: expected a real number in [0, 100]"),
        ("[all]\nseed = [[[[1]]]]\n", "lists nested more than 3 deep"),
    ],
)
def test_bad_scenario_gives_one_line_error_before_anything_runs(tmp_path, text, message):
    p = _scenario(tmp_path, text)
    out = subprocess.run(
        [sys.executable, "-m", "mhanw.pipeline", "scenario-check", str(p)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1
    assert message in out.stderr and out.stderr.count("\n") == 1, out.stderr


@pytest.mark.parametrize("content", [b"\xff\xfe[all]\n", None])
def test_a_scenario_that_is_not_text_or_not_a_file_is_refused(tmp_path, content):
    p = tmp_path / "s.toml"
    if content is None:
        p.mkdir()
    else:
        p.write_bytes(content)
    with pytest.raises(scenario.ScenarioError, match="not UTF-8|is a folder"):
        scenario.load(p, ROOT)


def test_section_numbers_follow_the_papers_inputs():
    numbers = claimslib.section_numbers(ROOT / "paper")
    order = [
        "sec:introduction",
        "sec:notation",
        "sec:thm21",
        "sec:thm31",
        "sec:lemma41",
        "sec:hdi",
        "sec:thm51",
        "sec:thm61",
        "sec:thm71",
        "sec:rf",
        "sec:pretrained",
        "sec:training",
    ]  # main.tex's \\input order
    assert [int(numbers[k]) for k in order] == list(range(1, len(order) + 1))
    assert int(numbers["sec:summary"]) > int(numbers["sec:training"])


# --------------------------------------------------------------------------- slow: with the quick build


@pytest.mark.slow
def test_scenario_equal_to_the_defaults_gives_the_default_numbers_and_verdicts(quick_build, tmp_path):
    """A chapter run under a scenario that restates its defaults, in records mode, gives the default
    (full-mode) run's macros and verdicts: the two modes and the scenario mechanism change nothing else."""
    name = "02_bias_variance_covariance"
    copy = clone_build(quick_build, tmp_path / "copy")
    seed = chapters.declared(copy / "notebooks" / f"{name}.md")["seed"]
    (copy / "scenarios" / "same.toml").write_text(f'description = "the defaults"\n[all]\nseed = {seed}\n')
    out = make(copy, f"build/scenarios/same/ledger/results/{name}.json")
    assert f"{name} [scenarios/same/ledger] done" in out.stdout
    run = copy / "build" / "scenarios" / "same" / "ledger"
    assert (run / "generated" / f"{name}.tex").read_text() == (copy / "paper/generated" / f"{name}.tex").read_text()
    mine = json.loads((run / "results" / f"{name}.json").read_text())["claims"]
    default = [r for r in json.loads((copy / "build/claims.json").read_text()) if r["chapter"] == name]
    assert [(r["claim"], r["verdict"]) for r in mine] == [(r["claim"], r["verdict"]) for r in default]


@pytest.mark.slow
def test_quick_build_writes_ledger_tex_and_prints_verdicts(quick_build):
    copy = quick_build
    ledger = claimslib.load_ledger(copy / "build" / "claims.json")
    assert ledger and (copy / "paper/generated/claims_table.tex").is_file()
    assert (copy / "build/verdicts.txt").read_text().startswith("==> verdicts")


@pytest.mark.slow
def test_quick_verdicts_never_contradict_the_paper_fidelity_ones(quick_build):
    """At quick fidelity every verdict equals the paper-fidelity one (reference/claims-paper.json, committed
    from a paper-fidelity build) or is "undecided at this size"; never the opposite, never a claim it lacks."""
    quick = claimslib.load_ledger(quick_build / "build" / "claims.json")
    reference = claimslib.reference_verdicts(ROOT, "paper")
    bad = claimslib.contradictions(reference, quick)
    assert not bad, "quick verdicts that contradict the paper-fidelity ones:\n" + "\n".join(
        f"  {c}: paper {p!r}, quick {q!r}" for c, p, q in bad
    )

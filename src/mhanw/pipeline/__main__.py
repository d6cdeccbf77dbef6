"""The build's one command line: ``python -m mhanw.pipeline COMMAND ...`` (run from the repository's root).

The Makefile calls it; every command is also usable by hand::

    rules [--scenario FILE]        the build graph as make rules (build/rules.mk; a scenario's run)
    run NN_slug [--fidelity F] [--records] [--seed S | --scenario FILE] [--out FOLDER]
                                   one chapter in one run (default run: figures/, paper/generated/, build/)
    copy-records NN_slug FROM TO [--full]  a run's outputs as another run's (same parameters for that chapter)
    gather FOLDER [--scenario FILE | --seed S]   FOLDER/claims.json and run.json from FOLDER/results/
    claims                         build/claims.json and the paper's claims table and summary
    verdicts [LEDGER]              the verdict table on the terminal
    stability SEED ...             build/stability.json: the seeds against the default seed, at quick fidelity
    robustness [--stability] [SCENARIO_NAME ...]   the paper's sections on scenarios and seeds
    paper [--run FOLDER --scenario FILE]          a run's PDF (default: build/paper/main.pdf)
    scenario-check FILE            check a scenario (names and values) and say what each chapter receives
    scenario-report FILE           a scenario run's verdicts against the reference ledger of its fidelity
    reference [--fidelity F] [--reason TEXT]
                                   renew reference/claims-F.json from build/claims.json (on purpose only;
                                   at paper fidelity also the README's table of findings; a ledger with
                                   fewer records than the committed one needs --reason)
    readme [--check]               the README's table of findings from reference/claims-paper.json and
                                   book/theorems.toml (--check: exit 1 when the committed table differs)
    environment-yml [--check]      environment.yml from pyproject.toml (--check: exit 1 when it differs)
    book | check-book              the offline book, and its check in headless Chromium
    timings                        CPU and wall seconds of every job of the last builds
    measure [--into FILE] [--note TEXT] LABEL -- COMMAND ...
                                   run COMMAND, count its CPU-seconds (a cgroup of its own) and wall time,
                                   keep them in reference/performance.json (the Performance page's table)
    deps NN_slug                   the library modules a chapter imports
    layout [AUX]                   where the paper's floats landed

Errors are one line on stderr (``*** ...``) and exit status 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path.cwd()

#: Set for every command and every process it starts (kernels, LaTeX), before numpy is imported: a fixed
#: build date (the paper's announcement day, so two builds give the same PDF), one BLAS thread per job
#: (make runs one job per core), the Agg backend, and the tools' caches under build/cache instead of $HOME.
ENVIRONMENT = {
    "SOURCE_DATE_EPOCH": "1779321600",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "MHANW_WORKERS": "1",  # no worker pools inside a job: make runs one job per core (mhanw.infra.sweep)
    "MPLBACKEND": "Agg",
    "MPLCONFIGDIR": str(ROOT / "build" / "cache" / "matplotlib"),
    "IPYTHONDIR": str(ROOT / "build" / "cache" / "ipython"),
    "JUPYTER_CONFIG_DIR": str(ROOT / "build" / "cache" / "jupyter"),
    "JUPYTER_PLATFORM_DIRS": "1",
    "PYDEVD_DISABLE_FILE_VALIDATION": "1",
}
#: The environment this command was started with, before ENVIRONMENT: what ``measure`` gives the command
#: it times, so that a measured ``make all`` sees what a user's does (nproc reads OMP_NUM_THREADS).
STARTED_WITH = dict(os.environ)
os.environ.update(ENVIRONMENT)


def _layout(out: str | None, argument: str = "--out"):
    """The layout of the run whose folder the user named as ``argument`` (``build`` or nothing: the default
    run's), checked by :func:`mhanw.pipeline.runner.run_folder`."""
    from .runner import Layout

    return Layout.default(ROOT) if out in (None, "build") else Layout.under(ROOT, out, argument=argument)


def _run_layout(folder: str, argument: str):
    """The layout of a run other than the default one, in ``folder`` (named by the user as ``argument``),
    checked by :func:`mhanw.pipeline.runner.run_folder` and claimed (marked as a run's) before anything is
    written there."""
    from .runner import Layout

    layout = Layout.under(ROOT, folder, argument=argument)
    layout.claim()
    return layout


def cmd_rules(args) -> int:
    from . import names

    names.shipped_scenarios(ROOT)  # the names' gate before the chapters' tools are imported: a refusal is quick
    from . import rules

    text = rules.scenario_rules(ROOT, Path(args.scenario)) if args.scenario else rules.generate(ROOT)
    if args.out:
        from mhanw.infra.texout import write_atomic

        out = Path(os.path.abspath(ROOT / args.out))
        if not out.resolve().is_relative_to((ROOT / "build").resolve()) or out.suffix != ".mk":
            raise ValueError(f"--out: expected a .mk file under build/ (generated rules), got {args.out!r}")
        write_atomic(out, text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_run(args) -> int:
    from . import runner, scenarios

    if args.scenario and args.seed:
        raise ValueError("run: give --scenario or --seed, not both")
    overrides = {}
    if args.scenario:
        overrides = scenarios.load(args.scenario, ROOT).params_for(args.chapter)
    elif args.seed:
        overrides = scenarios.seed_params(args.seed, ROOT).get(args.chapter, {})
    fidelity = args.fidelity or ("quick" if args.records or args.scenario or args.seed else "paper")
    layout = _layout(args.out)
    if layout.is_default and (args.scenario or args.seed):
        which = "--scenario" if args.scenario else "--seed"
        raise ValueError(
            f"--out: a run with {which} needs a folder of its own (make uses build/scenarios/NAME/ledger, "
            "build/scenarios/NAME/FIDELITY and build/stability/seed-S); its outputs never replace the "
            "default run's (figures/, paper/generated/, build/results/)"
        )
    timing = runner.run_job(
        ROOT,
        args.chapter,
        layout=layout,
        fidelity=fidelity,
        overrides=overrides,
        mode="records" if args.records else "full",
        guards_are_findings=bool(args.scenario or args.seed),
    )
    print(runner.report_line(timing), flush=True)
    return 0


def cmd_copy_records(args) -> int:
    from . import runner

    source, target = _layout(args.source, "FROM"), _layout(args.target, "TO")
    runner.copy_job(ROOT, args.chapter, source, target, full=args.full)
    print(f"    {args.chapter} [{target.label}] copied from run {source.label} (the same parameters)", flush=True)
    return 0


def cmd_gather(args) -> int:
    from . import ledger, scenarios

    if args.scenario and args.seed:
        raise ValueError("gather: give --scenario or --seed, not both")
    meta: dict = {"fidelity": "quick"}
    if args.scenario:
        sc = scenarios.load(args.scenario, ROOT)
        meta.update(scenario=sc.name, description=sc.description, parameters=sc.params)
    elif args.seed:
        meta.update(seed=args.seed)
    layout = _run_layout(args.folder, "FOLDER")
    layout.results.mkdir(parents=True, exist_ok=True)
    records = ledger.write_run_ledger(layout.folder, meta)
    print(f"    {args.folder}/claims.json: {len(records)} records", flush=True)
    return 0


def cmd_claims(args) -> int:
    from . import ledger

    ledger.write_default_ledger(ROOT)
    return 0


def cmd_verdicts(args) -> int:
    from . import ledger

    path = Path(args.ledger)
    print(f"==> verdicts ({path}):")
    print(ledger.text_table(ledger.load_ledger(path)))
    if args.timings:
        print("==> CPU and wall time of the jobs (build/timings.json):")
        cmd_timings(args)
    return 0


def cmd_stability(args) -> int:
    from . import stability

    stability.collect(ROOT, [str(s) for s in args.seeds])
    return 0


def cmd_robustness(args) -> int:
    from mhanw.infra.texout import write_atomic

    from . import ledger, robustness, stability

    gen = ROOT / "paper" / "generated"
    reference = ROOT / "build" / "stability" / "seed-default" / "claims.json"
    stab_path = ROOT / "build" / "stability.json"
    stab = stability.load(stab_path) if args.stability and stab_path.is_file() else None
    runs = [robustness.load_run(ROOT / "build" / "scenarios" / n / "ledger" / "claims.json") for n in args.scenarios]
    default = ledger.load_ledger(reference) if reference.is_file() else []
    write_atomic(gen / "scenarios.tex", robustness.scenarios_latex(default, runs, stab, "quick"))
    write_atomic(gen / "stability.tex", robustness.stability_latex(stab, "quick"))
    return 0


def cmd_paper(args) -> int:
    from . import ledger, paper, scenarios

    if args.scenario and not args.run:
        raise ValueError("--scenario: a scenario's paper is built from its run; give --run FOLDER too")
    if args.run:
        run = _run_layout(args.run, "--run")
        gen, figs, out = run.macros, run.figures, run.folder / "paper"
        records = ledger.with_section_numbers(ledger.collect(run.results)[0], ledger.section_numbers(ROOT / "paper"))
        from mhanw.infra.texout import write_atomic

        ledger.write_json(run.folder / "claims.json", records)
        write_atomic(gen / "claims_table.tex", ledger.latex_table(records))
        write_atomic(gen / "claims_summary.tex", ledger.latex_summary(records))
        if args.scenario:
            write_atomic(gen / "scenario_note.tex", scenarios.note_tex(scenarios.load(args.scenario, ROOT)))
        for name in ("scenarios", "stability"):  # a scenario's paper reports no other runs
            write_atomic(gen / f"{name}.tex", "")
    else:
        gen, figs, out = ROOT / "paper" / "generated", ROOT / "figures", ROOT / "build" / "paper"
    pdf = paper.build(ROOT, generated=gen.resolve(), figures=figs.resolve(), out=out.resolve())
    print(f"    {os.path.relpath(pdf, ROOT)} ({paper.pages(pdf)} pages)", flush=True)
    return 0


def cmd_scenario_check(args) -> int:
    from . import scenarios

    sc = scenarios.load(args.scenario, ROOT)
    print(f"    {args.scenario}: ok" + (f" ({sc.description})" if sc.description else ""))
    print("\n".join(sc.describe()))
    return 0


def cmd_scenario_report(args) -> int:
    from . import ledger, scenarios

    sc = scenarios.load(args.scenario, ROOT)
    mine = ledger.load_ledger(ROOT / args.run / "claims.json")
    ref_path = ledger.reference_path(ROOT, args.fidelity)
    base = ledger.load_ledger(ref_path)
    # the chapters the scenario changes, on both sides (the others are the default run's)
    diff = ledger.differences(
        [r for r in base if r["chapter"] in sc.changed], [r for r in mine if r["chapter"] in sc.changed]
    )
    stopped = ledger.stopped_chapters(ROOT / args.run / "results")
    print(f"==> scenario {sc.name}: {len(mine)} verdicts; against {ref_path.relative_to(ROOT)}:")
    print(f"    {ledger.tally_sentence(mine)}." if mine else "    no verdict records")
    for chapter, message in stopped.items():
        print(f"    {chapter} stops on a guarded sentence: {message}")
    if not diff:
        print("    every verdict of the chapters it changes equals the reference's")
    for claim, a, b in diff:
        print(f"    {claim}: {a or '(no record)'} -> {b or '(no record)'}")
    return 0


def cmd_reference(args) -> int:
    from . import ledger

    src = ROOT / "build" / "claims.json"
    if not src.is_file():
        raise ValueError(f"{src.relative_to(ROOT)}: no ledger to renew the reference from (make claims first)")
    records = ledger.load_ledger(src)
    dst = ledger.reference_path(ROOT, args.fidelity)
    ledger.check_renewal(ROOT, records, dst, args.fidelity, reason=args.reason)
    ledger.write_json(dst, records)
    print(f"    {dst.relative_to(ROOT)}: {len(records)} records from {src.relative_to(ROOT)}")
    if args.reason:
        print(f"    (fewer records than before, because: {args.reason})")
    if args.fidelity == "paper":
        return cmd_readme(argparse.Namespace(check=False))
    return 0


def cmd_readme(args) -> int:
    from . import theorems

    if args.check:
        if theorems.readme_current_block(ROOT) != theorems.readme_block(ROOT):
            raise ValueError(
                "README.md: its table of findings differs from reference/claims-paper.json and "
                "book/theorems.toml (python -m mhanw.pipeline readme rewrites it)"
            )
        print("    README.md: the table of findings is current")
        return 0
    changed = theorems.update_readme(ROOT)
    print(f"    README.md: the table of findings {'rewritten' if changed else 'was current'}")
    return 0


def cmd_environment_yml(args) -> int:
    from mhanw.infra.texout import write_atomic

    from . import condaenv

    path, want = ROOT / "environment.yml", condaenv.text(ROOT)
    current = path.read_text(encoding="utf-8") if path.is_file() else None
    if args.check:
        if current != want:
            raise ValueError(
                "environment.yml: differs from pyproject.toml's pins (python -m mhanw.pipeline environment-yml "
                "rewrites it)"
            )
        print("    environment.yml: agrees with pyproject.toml")
        return 0
    if current != want:
        write_atomic(path, want)
    print(f"    environment.yml: {'rewritten' if current != want else 'was current'}")
    return 0


def cmd_book(args) -> int:
    from . import book

    book.build(ROOT, ROOT / "build" / "book")
    return 0


def cmd_check_book(args) -> int:
    from . import browser

    return browser.main([args.book])


def _timing(path: Path) -> dict:
    """One job's timing record (written by :func:`mhanw.pipeline.runner.run_job`), or ``ValueError`` naming
    the file when it is damaged or of an older layout."""
    from .ledger import read_json

    r = read_json(path, dict)
    bad = [k for k in ("run", "cpu_s", "wall_s") if k not in r]
    bad += [k for k in ("cpu_s", "wall_s") if k in r and (isinstance(r[k], bool) or not isinstance(r[k], (int, float)))]
    if bad or not isinstance(r["run"], str):
        raise ValueError(
            f"{path}: expected a job's timing record with a run name and numbers cpu_s and wall_s "
            f"(bad or missing: {', '.join(bad) or 'run'}); remove it or rerun the job"
        )
    return r


def cmd_timings(args) -> int:
    rows = [_timing(p) for p in sorted((ROOT / "build" / "timings").glob("*/**/*.json"))]
    by_run: dict[str, list[dict]] = {}
    for r in rows:
        by_run.setdefault(r["run"], []).append(r)
    total = sum(r["cpu_s"] for r in rows)
    for run, rs in sorted(by_run.items()):
        print(
            f"    {run:<32} {len(rs):2d} jobs {sum(r['cpu_s'] for r in rs):7.0f} CPU-s "
            f"{sum(r['wall_s'] for r in rs):7.0f} s wall"
        )
    print(f"    all jobs: {len(rows)}, {total:.0f} CPU-s")
    from mhanw.infra.texout import write_atomic

    write_atomic(
        ROOT / "build" / "timings.json", json.dumps({"jobs": rows, "total_cpu_s": round(total, 1)}, indent=1) + "\n"
    )
    return 0


def cmd_measure(args) -> int:
    from . import measure

    command = args.command_line[1:] if args.command_line[:1] == ["--"] else args.command_line
    record = measure.run(args.label, command, ROOT, note=args.note, env=STARTED_WITH)
    measure.append(ROOT / args.into, record)
    print(
        f"    {record['label']}: {record['wall_s']:.0f} s wall, {record['cpu_s']:.0f} CPU-s "
        f"({record['cpu_counted_by']}), exit status {record['exit_status']} -> {args.into}"
    )
    return 0 if record["exit_status"] == 0 else 1


def cmd_deps(args) -> int:
    from . import chapters, deps

    chapter = next((c for c in chapters.discover(ROOT) if c.name == args.chapter), None)
    if chapter is None:
        raise ValueError(f"chapter: no chapter notebooks/{args.chapter}.md")
    modules, _ = deps.notebook_dependencies(chapter.path, deps.Library())
    print("\n".join(sorted(modules)))
    return 0


def cmd_layout(args) -> int:
    from . import layout

    return layout.main([args.aux] if args.aux else [])


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m mhanw.pipeline", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)

    def command(name, fn, *arguments):
        p = sub.add_parser(name)
        for flags, kw in arguments:
            p.add_argument(*flags, **kw)
        p.set_defaults(fn=fn)

    opt = lambda *flags, **kw: (flags, kw)  # noqa: E731
    command("rules", cmd_rules, opt("--out"), opt("--scenario"))
    command(
        "run",
        cmd_run,
        opt("chapter"),
        opt("--fidelity", choices=("quick", "paper")),
        opt("--records", action="store_true"),
        opt("--seed"),
        opt("--scenario"),
        opt("--out"),
    )
    command(
        "copy-records",
        cmd_copy_records,
        opt("chapter"),
        opt("source"),
        opt("target"),
        opt("--full", action="store_true"),
    )
    command("gather", cmd_gather, opt("folder"), opt("--scenario"), opt("--seed"))
    command("claims", cmd_claims)
    command(
        "verdicts",
        cmd_verdicts,
        opt("ledger", nargs="?", default="build/claims.json"),
        opt("--timings", action="store_true"),
    )
    command("stability", cmd_stability, opt("seeds", nargs="+"))
    command("robustness", cmd_robustness, opt("scenarios", nargs="*"), opt("--stability", action="store_true"))
    command("paper", cmd_paper, opt("--run"), opt("--scenario"))
    command("scenario-check", cmd_scenario_check, opt("scenario"))
    command(
        "scenario-report",
        cmd_scenario_report,
        opt("scenario"),
        opt("--run", required=True),
        opt("--fidelity", default="quick", choices=("quick", "paper")),
    )
    command(
        "reference",
        cmd_reference,
        opt("--fidelity", default="paper", choices=("quick", "paper")),
        opt("--reason", default=None),
    )
    command("readme", cmd_readme, opt("--check", action="store_true"))
    command("environment-yml", cmd_environment_yml, opt("--check", action="store_true"))
    command("book", cmd_book)
    command("check-book", cmd_check_book, opt("book", nargs="?", default="build/book"))
    command("timings", cmd_timings)
    command(
        "measure",
        cmd_measure,
        opt("label"),
        opt("--into", default=str(Path("reference") / "performance.json")),
        opt("--note", default=""),
        opt("command_line", nargs=argparse.REMAINDER),
    )
    command("deps", cmd_deps, opt("chapter"))
    command("layout", cmd_layout, opt("aux", nargs="?"))
    return ap


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.fn(args)
    except (ValueError, OSError, RuntimeError) as exc:
        text = str(exc)
        print(f"*** {text}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

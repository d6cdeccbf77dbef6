"""Running one chapter in one run, and publishing what it made only when it succeeded.

A *run* is a set of parameters applied to every chapter: the default run (the
paper's figures and numbers), a scenario (``scenarios/NAME.toml``) or another
seed.  A *job* is one chapter in one run; make schedules the jobs
(``python -m mhanw.pipeline rules`` writes the rules) and calls
:func:`run_job` through ``python -m mhanw.pipeline run``.

Two modes:

- **full**: the chapter is converted from MyST markdown to ``.ipynb`` (jupytext)
  and executed by papermill; the executed notebook, its figures, its macros and
  its raw results are published.  The default run and ``make scenario`` use it.
- **records**: the chapter's steps and close run in this process
  (:func:`mhanw.chapters.base.run_records`), with the same parameters papermill
  would inject, and only its results (which hold its verdict records) and paper
  values are published; no figure is drawn.  The seeds and the
  scenarios' ledgers of ``make all`` use it: they need the verdicts, not the
  pages, and a kernel start costs more than most quick chapters.
  ``tests/test_pipeline.py`` checks that both modes give the same records and macros.

Everything is written under a staging folder first; a failed job removes what
it had published before, so nothing stale looks done.  A chapter that a
guarded sentence stops (``VerdictGuardError``) in a scenario or seed run is a
finding, not a failure: its results file then says ``stopped`` and why.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import resource
import shutil
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from mhanw.infra.texout import write_atomic

from . import chapters as C

#: The error a chapter raises when a sentence no longer matches its numbers (mhanw.infra.verdicts.guard).
GUARD_ERROR = "VerdictGuardError"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class JobError(RuntimeError):
    """A job that failed; the message names the chapter, the run and where the log is."""


@dataclass(frozen=True)
class Layout:
    """Where one run's outputs go (all paths absolute).

    The default run publishes to ``figures/`` and ``paper/generated/`` (what the
    paper reads) and ``build/{notebooks,results}``; any other run to its own
    folder: ``FOLDER/{notebooks,results,figures,generated}``.  Logs, timings and
    the staging area (where a job writes before its outputs are moved into
    place) are under ``build/{logs,timings,stage}/LABEL`` for a run inside
    ``build/``, and inside the folder (``logs/``, ``.stage/``) for a run outside
    it: such a run writes nothing in the repository, and its outputs are moved
    within one file system.
    """

    label: str
    notebooks: Path
    results: Path
    figures: Path
    macros: Path
    logs: Path
    stage: Path
    timings: Path
    mark: Path | None = None  # the mark of a run's own folder (claim); None for the default run
    folder: Path | None = None  # the run's own folder (claims.json, run.json, paper/); build/ for the default run

    @classmethod
    def default(cls, root: Path) -> Layout:
        b = root / "build"
        return cls(
            "default",
            b / "notebooks",
            b / "results",
            root / "figures",
            root / "paper" / "generated",
            b / "logs" / "default",
            b / "stage" / "default",
            b / "timings" / "default",
            folder=b,
        )

    @classmethod
    def under(cls, root: Path, folder: Path | str, *, argument: str = "--out") -> Layout:
        """The layout of a run into ``folder`` (relative to ``root`` unless absolute), checked by
        :func:`run_folder` (``ValueError`` naming ``argument`` for a folder a run may not write into)."""
        root = Path(root).resolve()
        folder = run_folder(root, folder, argument)
        try:
            label = folder.relative_to(root / "build").as_posix()
        except ValueError:  # a folder outside build/: its name and a digest of its path, so two runs never share
            label = f"{folder.name}-{hashlib.sha1(str(folder).encode()).hexdigest()[:10]}"
            return cls(
                label,
                folder / "notebooks",
                folder / "results",
                folder / "figures",
                folder / "generated",
                folder / "logs",
                folder / ".stage",
                folder / "logs",
                folder / RUN_MARK,
                folder,
            )
        b = root / "build"
        return cls(
            label,
            folder / "notebooks",
            folder / "results",
            folder / "figures",
            folder / "generated",
            b / "logs" / label,
            b / "stage" / label,
            b / "timings" / label,
            folder / RUN_MARK,
            folder,
        )

    @property
    def is_default(self) -> bool:
        """Whether this is the default run's layout (the paper's figures and numbers)."""
        return self.mark is None

    def same_run(self, other: Layout) -> bool:
        """Whether ``other`` publishes into the same folders as this layout."""
        return self.results.resolve() == other.results.resolve()

    def claim(self) -> None:
        """Make the run's own folder and mark it as a run's (:data:`RUN_MARK`), before anything is written
        there: a later run may then replace what an earlier run published in it (:func:`run_folder`)."""
        if self.mark is not None and not self.mark.is_file():
            self.mark.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.mark, "A folder of mhanw pipeline runs; a later run replaces their outputs.\n")

    def outputs(self, name: str) -> list[Path]:
        """Every file a job of chapter ``name`` publishes (figures as listed by its last run: only plain
        names of the chapter's figures, so that a damaged list never reaches outside ``figures``)."""
        listed = self.results / f"{name}.figures"
        figs = self.listed_figures(name)
        figs += own_figures(
            name,
            [p.name for p in self.figures.glob(f"{name}.*")] + [p.name for p in self.figures.glob(f"{name}_*")]
            if self.figures.is_dir()
            else [],
        )
        return [self.figures / f for f in sorted(set(figs))] + [
            listed,
            listed.with_name(f"{name}.figures.mk"),
            self.notebooks / f"{name}.ipynb",
            self.macros / f"{name}.tex",
            self.results / f"{name}.json",
        ]

    def listed_figures(self, name: str) -> list[str]:
        """The figures of chapter ``name`` as its last run listed them (``results/NAME.figures``), plain
        names of the chapter's own figures only (:func:`own_figures`)."""
        listed = self.results / f"{name}.figures"
        return own_figures(
            name, listed.read_text(encoding="utf-8", errors="replace").split() if listed.is_file() else []
        )


def own_figures(name: str, names) -> list[str]:
    """The entries of ``names`` that are plain file names of chapter ``name``'s figures (``NAME.x``,
    ``NAME_x``; no folder, no ``..``): a damaged list never reaches outside a run's figures folder."""
    own = re.compile(rf"{re.escape(name)}[._][A-Za-z0-9._-]*")
    return [f for f in names if own.fullmatch(f) and ".." not in f]


#: The file that marks a folder as one a pipeline run made (:meth:`Layout.claim`).
RUN_MARK = ".mhanw-run"


def run_folder(root: Path, folder, argument: str = "--out") -> Path:
    """``folder`` as the absolute folder of a run, or ``ValueError`` naming ``argument``: the one
    decision of whether a command may write into a folder a user names (``run --out``, ``copy-records``,
    ``gather``, ``paper --run``; the default run's folders are fixed, :meth:`Layout.default`).

    The folder must be a path (not empty, no NUL); inside the repository ``root`` only under ``build/``
    (elsewhere a run would write tracked files), and not ``build/`` itself nor a folder of the default
    run there (:data:`DEFAULT_FOLDERS`); not ``/``, not the repository or a folder that holds it; not a
    file; and new, empty, or made by an earlier run (it holds :data:`RUN_MARK`, written by
    :meth:`Layout.claim`), since a run replaces the outputs of the run before it and must never touch
    files it did not make.  A folder outside ``build/`` is taken only when named explicitly (every
    caller passes the user's own words)."""
    from mhanw.infra.validate import brief

    if not isinstance(folder, (str, os.PathLike)) or not str(folder).strip() or "\x00" in str(folder):
        raise ValueError(f"{argument}: expected a folder path, got {brief(folder)}")
    path = Path(os.path.abspath(Path(root) / Path(folder).expanduser()))
    root, build = Path(root).resolve(), Path(root).resolve() / "build"
    real = path.resolve()
    if real == build:
        raise ValueError(f"{argument}: build/ itself is the default run's; give a folder under it or elsewhere")
    for own in DEFAULT_FOLDERS:
        if real.is_relative_to(build / own):
            raise ValueError(
                f"{argument}: {str(folder)!r} is inside build/{own}/, a folder of the default run; give a "
                "folder of its own (make uses build/scenarios/NAME/ and build/stability/seed-S/)"
            )
    if root.is_relative_to(real):
        raise ValueError(
            f"{argument}: {str(folder)!r} holds the repository (or is the file system's root); give a folder of its own"
        )
    if real.is_relative_to(root) and not real.is_relative_to(build):
        raise ValueError(
            f"{argument}: {str(folder)!r} is inside the repository but not under build/: a run "
            f"there would write among tracked files"
        )
    if real.exists() and not real.is_dir():
        raise ValueError(f"{argument}: {str(folder)!r} exists and is not a folder")
    if real.is_dir() and any(real.iterdir()) and not (real / RUN_MARK).is_file():
        old = " (a build/ made before run folders were marked: make clean)" if real.is_relative_to(build) else ""
        raise ValueError(
            f"{argument}: {str(folder)!r} holds files no run made (no {RUN_MARK}){old}; give a new or "
            f"empty folder, since a run replaces the outputs in its folder"
        )
    return real


#: The folders of ``build/`` that the default run and the build's own steps write (:meth:`Layout.default`,
#: the book, the caches): no other run's folder may be one of them or lie inside one.
DEFAULT_FOLDERS = (
    "notebooks",
    "results",
    "logs",
    "stage",
    "timings",
    "paper",
    "book",
    "book-src",
    "book-doctrees",
    "cache",
)


def _forget(layout: Layout, name: str) -> None:
    for p in layout.outputs(name):
        p.unlink(missing_ok=True)


def _relative(path: Path, start: Path) -> str:
    return os.path.relpath(path, start)


def _cpu_seconds() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _execute_full(chapter: C.Chapter, params: dict, stage: Path, cwd: Path, log) -> None:
    """papermill on the chapter converted to .ipynb; the executed copy is ``stage/NAME.ipynb``."""
    import logging

    import nbformat
    import papermill as pm

    source = stage / f"{chapter.name}.source.ipynb"
    nbformat.write(C.read(chapter.path), source)
    handler = logging.StreamHandler(log)
    logger = logging.getLogger("papermill")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    # The kernel inherits this process's standard streams: its start-up warnings go to the log too.
    saved = [os.dup(1), os.dup(2)]
    log.flush()
    os.dup2(log.fileno(), 1)
    os.dup2(log.fileno(), 2)
    try:
        pm.execute_notebook(
            str(source),
            str(stage / f"{chapter.name}.ipynb"),
            parameters=params,
            kernel_name="python3",
            cwd=str(cwd),
            progress_bar=False,
            log_output=True,
        )
    except pm.PapermillExecutionError as exc:
        raise _CellError(exc.ename, _ANSI.sub("", str(exc.evalue)), _ANSI.sub("", "\n".join(exc.traceback))) from None
    finally:
        for fd, copy in zip((1, 2), saved):
            os.dup2(copy, fd)
            os.close(copy)
        logger.removeHandler(handler)
        source.unlink(missing_ok=True)


class _CellError(Exception):
    def __init__(self, ename: str, evalue: str, text: str):
        super().__init__(f"{ename}: {evalue}")
        self.ename, self.evalue, self.text = ename, evalue, text


def _execute_records(chapter: C.Chapter, params: dict, cwd: Path, log) -> None:
    """The chapter's records in this process: its steps and its close under the chapter contract
    (:func:`mhanw.chapters.base.run_records`, no figures), the notebook's declared parameters overridden
    by ``params``."""
    from mhanw.chapters import base

    values = {**C.declared(chapter.path), **params}
    try:
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            base.run_records(chapter.name, values, cwd)
    except Exception as exc:  # a chapter's error of any kind ends the job
        text = "".join(traceback.format_exception(exc))
        raise _CellError(type(exc).__name__, str(exc), text) from None


def run_job(
    root: Path,
    name: str,
    *,
    layout: Layout,
    fidelity: str,
    overrides: dict | None = None,
    mode: str = "full",
    guards_are_findings: bool = False,
) -> dict:
    """Run chapter ``name`` with ``fidelity`` and ``overrides``; publish into ``layout``.

    Returns the timing record ``{"chapter", "run", "mode", "fidelity", "wall_s", "cpu_s"}``.
    Raises :class:`JobError` (after removing this job's earlier outputs) when it fails.
    """
    root = Path(root).resolve()
    chapter = next((c for c in C.discover(root) if c.name == name), None)
    if chapter is None:
        raise JobError(f"{name}: no chapter notebooks/{name}.md (chapters: {', '.join(C.names(root))})")
    if mode not in ("full", "records"):
        raise JobError(f"mode: expected 'full' or 'records', got {mode!r}")
    overrides = dict(overrides or {})
    reserved = [k for k in overrides if k in C.RESERVED]
    if reserved:
        raise JobError(f"{name}: {', '.join(reserved)}: set by the pipeline, not by a run's parameters")
    declared = C.check_values(chapter, overrides)
    lacking = [k for k in C.RESERVED if k not in declared]
    if lacking:
        raise JobError(
            f"{name}: its parameters cell does not declare {', '.join(lacking)}, which the pipeline "
            f"sets (it declares {', '.join(declared)})"
        )

    layout.claim()
    stage = layout.stage / name
    shutil.rmtree(stage, ignore_errors=True)
    (stage / "figures").mkdir(parents=True)
    layout.logs.mkdir(parents=True, exist_ok=True)
    cwd = root / "notebooks"
    params = {
        "fidelity": fidelity,
        **overrides,
        "figures_dir": _relative(stage / "figures", cwd),
        "macros_path": _relative(stage / f"{name}.tex", cwd),
        "results_path": _relative(stage / f"{name}.json", cwd),
    }
    log_path = layout.logs / f"{name}.log"
    start_wall, start_cpu = time.monotonic(), _cpu_seconds()
    stopped = None
    with open(log_path, "w", encoding="utf-8") as log:
        log.write(f"# {name}, run {layout.label}, {mode} mode, fidelity {fidelity}, parameters {overrides}\n")
        log.flush()
        try:
            if mode == "full":
                _execute_full(chapter, params, stage, cwd, log)
            else:
                _execute_records(chapter, params, cwd, log)
        except _CellError as exc:
            log.write(exc.text + "\n")
            if guards_are_findings and exc.ename == GUARD_ERROR:
                stopped = exc.evalue.strip()
            else:
                _forget(layout, name)
                raise JobError(
                    f"{name} (run {layout.label}) failed: {exc}\n{exc.text}\nlog: {_relative(log_path, root)}"
                ) from None
    wall, cpu = time.monotonic() - start_wall, _cpu_seconds() - start_cpu
    _publish(root, layout, name, stage, stopped, mode)
    timing = {
        "chapter": name,
        "run": layout.label,
        "mode": mode,
        "fidelity": fidelity,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
    }
    write_atomic(layout.timings / f"{name}.json", json.dumps(timing) + "\n")
    return timing | ({"stopped": stopped} if stopped else {})


def _publish(root: Path, layout: Layout, name: str, stage: Path, stopped: str | None, mode: str) -> None:
    """Move the staged outputs into place, the results file (the make target) last."""
    _forget(layout, name)
    if stopped is not None:
        write_atomic(
            layout.results / f"{name}.json",
            json.dumps({"chapter": name, "stopped": stopped, "claims": []}, indent=1) + "\n",
        )
        shutil.rmtree(stage, ignore_errors=True)
        return
    results, macros = stage / f"{name}.json", stage / f"{name}.tex"
    for required, what in ((macros, "macros (the parameter macros_path)"), (results, "results (results_path)")):
        if not required.is_file() or not required.stat().st_size:
            raise JobError(f"{name} (run {layout.label}) wrote no {what}")
    figs = sorted(p.name for p in (stage / "figures").iterdir())
    strays = [f for f in figs if not (f.startswith(name + ".") or f.startswith(name + "_"))]
    if strays:
        raise JobError(f"{name} (run {layout.label}): figure {strays[0]} does not start with the chapter's name")
    for d in (layout.results, layout.macros, *((layout.figures, layout.notebooks) if mode == "full" else ())):
        d.mkdir(parents=True, exist_ok=True)
    for f in figs:
        os.replace(stage / "figures" / f, layout.figures / f)
    if mode == "full":
        os.replace(stage / f"{name}.ipynb", layout.notebooks / f"{name}.ipynb")
        write_atomic(layout.results / f"{name}.figures", " ".join(figs) + "\n")
        # make: a figure that has gone makes the job out of date (figures are targets too)
        target = _relative(layout.results / f"{name}.json", root)
        paths = " ".join(_relative(layout.figures / f, root) for f in figs)
        write_atomic(layout.results / f"{name}.figures.mk", f"{target}: {paths}\n{paths}:\n" if figs else "")
    os.replace(macros, layout.macros / f"{name}.tex")
    # the make target is newer than every output it stands for (a chapter may write its results before
    # it saves its last figure, and os.replace keeps the staged file's time)
    os.utime(results, None)
    os.replace(results, layout.results / f"{name}.json")
    shutil.rmtree(stage, ignore_errors=True)


def copy_job(root: Path, name: str, source: Layout, target: Layout, *, full: bool) -> None:
    """Publish chapter ``name``'s outputs of run ``source`` as run ``target``'s (a run whose parameters for
    this chapter are the source run's: the default seed at quick fidelity, a scenario's unchanged chapters).
    ``full``: the executed notebook and the figures too, not only the results and macros."""
    root = Path(root).resolve()
    if source.same_run(target):
        raise ValueError(f"copy-records: the source and the target are one run ({target.label}); nothing to copy")
    if target.is_default:
        raise ValueError(
            "copy-records: the target is the default run, whose outputs only its own jobs publish; give "
            "another run's folder"
        )
    files = [(source.macros / f"{name}.tex", target.macros / f"{name}.tex")]
    figs: list[str] = []
    if full:
        figs = source.listed_figures(name)
        files += [(source.notebooks / f"{name}.ipynb", target.notebooks / f"{name}.ipynb")]
        files += [(source.figures / f, target.figures / f) for f in figs]
    target.claim()
    _forget(target, name)
    for a, b in files:
        b.parent.mkdir(parents=True, exist_ok=True)
        tmp = b.with_name(f".{b.name}.tmp")
        shutil.copyfile(a, tmp)
        os.replace(tmp, b)
    if full:
        write_atomic(target.results / f"{name}.figures", " ".join(figs) + "\n")
        done = _relative(target.results / f"{name}.json", root)
        paths = " ".join(_relative(target.figures / f, root) for f in figs)
        write_atomic(target.results / f"{name}.figures.mk", f"{done}: {paths}\n{paths}:\n" if figs else "")
    tmp = target.results / f".{name}.json.tmp"
    target.results.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source.results / f"{name}.json", tmp)
    os.replace(tmp, target.results / f"{name}.json")  # the make target, last


def report_line(timing: dict) -> str:
    """The one line make prints for a finished job."""
    run = "" if timing["run"] == "default" else f" [{timing['run']}]"
    what = f"stopped on a guarded sentence: {timing['stopped']}" if timing.get("stopped") else "done"
    return (
        f"    {timing['chapter']}{run} {what} in {timing['wall_s']:.0f} s "
        f"({timing['cpu_s']:.0f} CPU-s, {timing['mode']}, {timing['fidelity']})"
    )

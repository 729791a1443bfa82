"""lmgeometry installs as a library (issue 49, item 4): one version, package data and
``py.typed`` in the wheel, CITATION.cff and the changelog agreeing, and the README's
quickstart running from a wheel installed into a fresh virtualenv.

The slow test builds the wheel offline (``pip wheel --no-deps --no-build-isolation``: this
environment's setuptools), installs it with ``--no-deps --no-index`` into a new venv that sees
this environment's site-packages for its dependencies (a ``.pth`` file; this checkout's own
``src`` is not on that path), and runs the quickstart there from an empty folder.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

import lmgeometry

ROOT = Path(__file__).resolve().parents[1]


def _quickstart() -> tuple[str, str]:
    """The README's quickstart: its install line and its Python code."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    install = re.search(r"```bash\n(.*?)```", section, re.DOTALL).group(1).strip()
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)
    return install, code


def test_the_version_is_written_once():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "lmgeometry.__version__"}
    from importlib.metadata import version

    assert version("lmgeometry") == lmgeometry.__version__


def test_citation_and_changelog_agree_on_the_release():
    citation = (ROOT / "CITATION.cff").read_text()
    assert re.search(r"^version: (\S+)$", citation, re.M).group(1) == lmgeometry.__version__
    heading = re.search(r"^## (\S+)(.*)$", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert heading.group(1) == lmgeometry.__version__
    released = "unreleased" not in heading.group(2)
    assert bool(re.search(r"^date-released:", citation, re.M)) == released


def test_the_package_is_typed_and_says_what_it_is():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert (ROOT / "src" / "lmgeometry" / "py.typed").is_file()
    assert "Typing :: Typed" in project["classifiers"]
    assert {"book", "onnx", "ray"} <= set(project["optional-dependencies"])
    assert "nbconvert>=7.16" in project["optional-dependencies"]["book"]


def test_the_quickstart_is_five_lines():
    install, code = _quickstart()
    assert install.startswith("pip install ")
    assert len(install.splitlines()) + len(code.strip().splitlines()) == 5


@pytest.mark.slow
def test_wheel_installs_in_a_fresh_venv_and_runs_the_quickstart(tmp_path):
    # built from a copy: setuptools leaves a build/ folder in the tree it builds
    source = tmp_path / "source"
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        source.mkdir(exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "src", source / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--no-index", "-q", "-w", str(dist), str(source)], check=True)
    [wheel] = dist.glob("lmgeometry-*.whl")
    assert wheel.name.startswith(f"lmgeometry-{lmgeometry.__version__}-")
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in ("lmgeometry/py.typed", "lmgeometry/io/manifest.json",
                 "lmgeometry/io/polysemy_targets.txt", "lmgeometry/report/_ext/lmgeometry.css",
                 "lmgeometry/report/_ext/lmgeometry_figures.js"):
        assert path in names, path
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; "
                           "print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # the dependencies come from this environment, after the venv's own site-packages
    (Path(site) / "_this_environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", "-q",
                    str(wheel)], check=True)
    work = tmp_path / "work"
    work.mkdir()
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path),
           "LMGEOMETRY_CACHE": str(tmp_path / "cache"), "OMP_NUM_THREADS": "1",
           "HF_HUB_OFFLINE": "1"}
    where = subprocess.run([str(python), "-c", "import lmgeometry; print(lmgeometry.__file__)"],
                           capture_output=True, text=True, check=True, cwd=work, env=env)
    assert where.stdout.strip().startswith(site)  # the wheel's copy, not this checkout's
    version = subprocess.run([str(venv / "bin" / "lmgeometry"), "--version"],
                             capture_output=True, text=True, check=True, cwd=work, env=env)
    assert version.stdout.strip() == f"lmgeometry {lmgeometry.__version__}"
    _, code = _quickstart()
    subprocess.run([str(python), "-c", code], check=True, cwd=work, env=env)
    page = (work / "bank.html").read_text()
    assert "Plotly.newPlot" in page and "self-similarity of" in page
    assert not (tmp_path / "cache").exists()  # the quickstart wrote nothing to the cache

"""Fault injection on the command line's environment (issue 44, the weak cases): a cache root
that is a dangling symbolic link or a relative path, a read-only folder, a negative seed, a
device the machine lacks, a bad ``--out`` and a truncated results file.

Each case is one line naming the problem and the fix, exit status 2 for a usage error, no
traceback, and nothing left behind.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import assert_one_line, run_cli

from lmgeometry.cli import main
from lmgeometry.io import paths


def test_a_cache_root_that_links_to_nothing(tmp_path, capsys, monkeypatch, tiny_folder):
    """The issue: "File exists". Now the link and its missing target are named."""
    link = tmp_path / "cache"
    link.symlink_to(tmp_path / "gone", target_is_directory=True)
    monkeypatch.setenv(paths.CACHE_ENV, str(link))
    code, _, err = run_cli(capsys, "extract", "--model", tiny_folder, "--corpus", "sts", "--n", "3")
    assert_one_line(code, err, "extract", 2, f"the cache root {link} is a symbolic link to",
                    "which does not exist; create that folder")
    assert link.is_symlink() and not (tmp_path / "gone").exists()


def test_a_relative_cache_root_is_resolved_once(tmp_path, monkeypatch):
    """The issue: LMGEOMETRY_CACHE=relcache left relcache/ in the checkout and book/relcache/
    (the kernels run in book/). It is made absolute against the working directory when first
    read, and exported so, for every child process."""
    monkeypatch.setenv(paths.CACHE_ENV, "relcache")
    monkeypatch.chdir(tmp_path)
    assert paths.cache_root() == tmp_path / "relcache"
    assert os.environ[paths.CACHE_ENV] == str(tmp_path / "relcache")
    (tmp_path / "book").mkdir()
    monkeypatch.chdir(tmp_path / "book")
    assert paths.cache_root() == tmp_path / "relcache"
    child = subprocess.run(["sh", "-c", f"echo ${paths.CACHE_ENV}"], capture_output=True,
                           text=True, check=True)
    assert child.stdout.strip() == str(tmp_path / "relcache")


@pytest.mark.parametrize("command", [
    ["extract", "--model", "x", "--corpus", "sts"],
    ["finetune", "--model", "x", "--task", "sst2"],
    ["pretrain", "--objective", "mlm"],
])
def test_a_negative_seed_is_a_usage_error(capsys, command):
    """The issue: `--seed -5` gave a 27-line traceback and status 1."""
    with pytest.raises(SystemExit) as info:
        main([*command, "--seed", "-5"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "Traceback" not in err
    assert "argument --seed: must be a whole number from 0 to 4294967295, not '-5'" in err


def test_pretrain_on_a_cuda_device_this_machine_lacks(tmp_path, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    code, _, err = run_cli(capsys, "pretrain", "--objective", "mlm", "--device", "cuda",
                           "--out", tmp_path / "runs")
    assert_one_line(code, err, "pretrain", 2, "--device cuda: this machine has no CUDA device",
                    "pass --device cpu")
    assert not (tmp_path / "runs").exists()
    code, _, err = run_cli(capsys, "pretrain", "--objective", "mlm", "--device", "gpu0")
    assert_one_line(code, err, "pretrain", 2, "--device 'gpu0' is not a torch device")


@pytest.fixture
def read_only(tmp_path):
    """Make folders read-only for this process: chmod for a user, the immutable attribute
    for root (whom permissions do not stop); skipped where neither is possible."""
    made: list[Path] = []

    def freeze(folder: Path) -> None:
        if os.geteuid() != 0:
            folder.chmod(0o555)
        elif shutil.which("chattr") is None or subprocess.run(
                ["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
            pytest.skip("root cannot make a folder read-only here (no chattr +i)")
        made.append(folder)

    yield freeze
    for folder in made:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        else:
            folder.chmod(0o755)


@pytest.mark.data
def test_a_read_only_corpora_folder_is_one_line(tmp_path, capsys, monkeypatch, read_only,
                                                tiny_folder):
    """The issue: a 31-line PermissionError. Now one line naming the folder and the fix, and
    nothing written anywhere else under the cache."""
    cache = tmp_path / "cache"
    (cache / "corpora").mkdir(parents=True)
    monkeypatch.setenv(paths.CACHE_ENV, str(cache))
    read_only(cache / "corpora")
    code, out, err = run_cli(capsys, "extract", "--model", tiny_folder, "--corpus", "sts", "--n",
                             "3")
    line = assert_one_line(code, err, "extract", 2, f"cannot write {cache / 'corpora'}",
                           "or point LMGEOMETRY_CACHE at a folder you can write to")
    assert "permission denied" in line or "operation not permitted" in line
    assert out == "" and list((cache / "corpora").iterdir()) == []
    assert not (cache / "activations").exists() or not any((cache / "activations").iterdir())


def test_results_export_to_a_file_or_from_a_truncated_results_file(tmp_path, capsys):
    results = tmp_path / "01_x.results.json"
    results.write_text('{"layers": [{"layer": 0, "value": 1.0}, {"layer": 1, "va')
    afile = tmp_path / "afile"
    afile.write_text("mine")
    code, _, err = run_cli(capsys, "results", "export", results, "--out", afile)
    assert_one_line(code, err, "results", 2, f"the output folder (--out) {afile} is a file")
    assert afile.read_text() == "mine"
    code, _, err = run_cli(capsys, "results", "export", results, "--out", tmp_path / "tables")
    assert_one_line(code, err, "results", 2, f"{results} is not valid JSON", "truncated")
    assert not (tmp_path / "tables").exists()

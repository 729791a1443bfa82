"""Folders built once into the cache (lmgeometry.io.built): a killed build never counts."""

import json

import pytest

from lmgeometry.io.built import build_once, output_digests

MARKER = "marker.json"


def _complete(folder):
    return (folder / MARKER).is_file()


def _write(tmp):
    (tmp / "weights.bin").write_bytes(b"abc")
    (tmp / "sub").mkdir()
    (tmp / "sub" / "vocab.txt").write_text("a\nb\n")


def test_a_build_is_published_with_its_marker_and_checksums(tmp_path):
    final = tmp_path / "model"
    assert build_once(final, _write, {"base": "x"}, marker_name=MARKER,
                      complete=_complete) == final
    marker = json.loads((final / MARKER).read_text())
    assert marker["base"] == "x" and marker["seconds"] >= 0
    assert set(marker["outputs"]) == {"weights.bin", "sub/vocab.txt"}  # the marker aside
    assert marker["outputs"] == output_digests(final, MARKER)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp-")] == []


def test_a_complete_folder_is_not_built_again(tmp_path):
    final = tmp_path / "model"
    build_once(final, _write, {}, marker_name=MARKER, complete=_complete)

    def fail(tmp):
        raise AssertionError("built twice")

    assert build_once(final, fail, {}, marker_name=MARKER, complete=_complete) == final


def test_a_failed_build_leaves_nothing_that_looks_complete(tmp_path):
    final = tmp_path / "model"

    def killed(tmp):
        (tmp / "weights.bin").write_bytes(b"half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_once(final, killed, {}, marker_name=MARKER, complete=_complete)
    assert not final.exists()
    assert [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")] == []


def test_leftovers_of_a_killed_process_and_an_unmarked_folder_are_replaced(tmp_path):
    final = tmp_path / "model"
    (tmp_path / ".tmp-model-123-abcd").mkdir()  # a killed build's temporary folder
    final.mkdir()
    (final / "weights.bin").write_bytes(b"stale")  # no marker: not ours to trust
    build_once(final, _write, {}, marker_name=MARKER, complete=_complete,
               tmp_prefix=".tmp-model-")
    assert (final / "weights.bin").read_bytes() == b"abc" and _complete(final)
    assert not (tmp_path / ".tmp-model-123-abcd").exists()

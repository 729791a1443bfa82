"""Fault injection on the activation store (issue 44): damaged metadata, an entry under another
key's name, kill -9 and SIGTERM mid-write, two processes building one entry, entries written
before meta.json was sealed, a file-size limit.

Every case ends in one of two ways: a clear error (one line from the command line), with
nothing lost and nothing damaged served; or a correct recovery (the entry set aside and built
again, the same vectors as a clean build). The model is a real 2-layer BERT of width 32 with
random weights (``conftest.save_bert``), the corpus three sentences, so each case runs in
seconds. Nothing here depends on the machine's speed: a subprocess is waited for without a
limit but a deadlock guard.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from lmgeometry.activations import store as store_module
from lmgeometry.activations.integrity import SEAL_FILE
from lmgeometry.activations.store import Store, activations, entry_name, store_key
from lmgeometry.cli import main
from lmgeometry.errors import StoreError, UnsealedEntryError
from lmgeometry.io.corpus import sentences

pytestmark = pytest.mark.data

TEXTS = ["The bank raised its rates on Monday.",
         "She sat on the river bank and watched the water.",
         "A short one."]

#: A deadlock guard for subprocesses (never reached by a working run), not a time budget.
GUARD_S = 900


@pytest.fixture(scope="module")
def corpus():
    return sentences(TEXTS, name="faults")


def layers_of(store: Store) -> list[np.ndarray]:
    return [np.array(X) for X in store.layers()]


def everything_under(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir()) if root.exists() else []


# ---------------------------------------------------------------------------------------------
# bad 4: a changed byte of meta.json is never served


def test_every_single_bit_flip_of_meta_json_is_refused(tiny, corpus, tmp_path):
    """The issue flipped 6,708 single bits of an entry's meta.json: Store() served 2,841 of them
    with changed metadata ("kind": "encoder" -> "dncoder") and `store verify` passed. Every
    bit of every byte of meta.json, and of its seal, is flipped here in turn: each one is
    refused, by Store() and by `store verify`, and the original opens again afterwards."""
    entry = activations(tiny, corpus, root=tmp_path, progress=False).path
    for name in ("meta.json", SEAL_FILE):
        original = (entry / name).read_bytes()
        served = []
        fd = os.open(entry / name, os.O_RDWR)  # each byte flipped in place, then put back
        try:
            for index, byte in enumerate(original):
                for bit in range(8):
                    os.pwrite(fd, bytes([byte ^ (1 << bit)]), index)
                    try:
                        Store(entry)
                    except StoreError:
                        continue
                    finally:
                        os.pwrite(fd, bytes([byte]), index)
                    served.append((index, bit))
        finally:
            os.close(fd)
        assert served == [], f"{name}: {len(served)} flips served"
    assert len((entry / "meta.json").read_bytes()) > 2000  # a real entry's meta, not a stub
    assert Store(entry).meta["model"]["kind"] == "encoder"
    kind = (entry / "meta.json").read_bytes().replace(b'"kind": "encoder"', b'"kind": "dncoder"')
    (entry / "meta.json").write_bytes(kind)
    table = store_module.verify_entries([tmp_path])
    assert table["status"].tolist() == ["damaged"]
    assert "meta.json does not match the sha256 recorded in meta.sha256" in table["message"][0]


def test_a_flipped_meta_is_set_aside_and_rebuilt_by_activations(tiny, corpus, tmp_path, capsys):
    first = activations(tiny, corpus, root=tmp_path, progress=False)
    expected = layers_of(first)
    text = (first.path / "meta.json").read_text()
    (first.path / "meta.json").write_text(text.replace('"kind": "encoder"', '"kind": "dncoder"'))
    capsys.readouterr()
    again = activations(tiny, corpus, root=tmp_path, progress=False)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "meta.json does not match the sha256" in err[0]
    assert again.meta["model"]["kind"] == "encoder" and again.path == first.path
    for X, Y in zip(layers_of(again), expected, strict=True):
        np.testing.assert_array_equal(X, Y)


# ---------------------------------------------------------------------------------------------
# bad 5: an entry under another key's folder is never served


def _mean_name(tiny, corpus) -> str:
    key = store_key(tiny.fingerprint, corpus.digest(), pooling="mean", prepend_bos=None,
                    too_long="error", dtype="float16")
    return entry_name(corpus.name, key)


@pytest.mark.parametrize("how", ["copy", "symlink"])
def test_an_entry_under_another_keys_name_is_refused_and_rebuilt(tiny, corpus, tmp_path, how,
                                                                 capsys):
    """The issue copied (or linked) the pooling=first entry to the pooling=mean key's name and
    `extract` served it. Store() now refuses it (the key in meta.json is not the folder's),
    and activations() sets it aside and builds the mean entry; the first entry is untouched."""
    first = activations(tiny, corpus, root=tmp_path / "a", pooling="first", progress=False)
    first_layers = layers_of(first)
    reference = layers_of(activations(tiny, corpus, root=tmp_path / "ref", progress=False))
    root = tmp_path / "a"
    target = root / _mean_name(tiny, corpus)
    if how == "copy":
        shutil.copytree(first.path, target)
    else:
        target.symlink_to(first.path, target_is_directory=True)
    with pytest.raises(StoreError, match="records the key of the entry .* not of its folder"):
        Store(target)
    capsys.readouterr()
    served = activations(tiny, corpus, root=root, progress=False)
    err = capsys.readouterr().err
    assert "records the key" in err and "moved aside" in err
    assert served.path == target and not target.is_symlink()
    assert served.meta["options"]["pooling"] == "mean"
    for X, Y in zip(layers_of(served), reference, strict=True):
        np.testing.assert_array_equal(X, Y)
    for X, Y in zip(layers_of(Store(first.path)), first_layers, strict=True):
        np.testing.assert_array_equal(X, Y)  # the entry that was copied is as it was


def test_extract_cli_refuses_to_serve_another_keys_entry(tiny_folder, tmp_path, capsys):
    root = tmp_path / "store"
    args = ["extract", "--model", str(tiny_folder), "--corpus", "sts", "--n", "3",
            "--out", str(root)]
    assert main([*args, "--pooling", "first"]) == 0
    first = Path(capsys.readouterr().out.splitlines()[0])
    assert main(args) == 0
    mean = Path(capsys.readouterr().out.splitlines()[0])
    shutil.rmtree(mean)
    shutil.copytree(first, mean)
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert Path(out.splitlines()[0]) == mean and "moved aside" in err
    assert json.loads((mean / "meta.json").read_text())["options"]["pooling"] == "mean"


# ---------------------------------------------------------------------------------------------
# entries written before meta.json was sealed


def test_activations_seals_an_old_entry_once_it_verifies(tiny, corpus, tmp_path, capsys):
    """An entry of the previous version (no meta.sha256) is verified and sealed by the call
    that asks for it, with one line, and served unchanged: not rebuilt."""
    entry = activations(tiny, corpus, root=tmp_path, progress=False)
    expected = layers_of(entry)
    (entry.path / SEAL_FILE).unlink()
    meta_bytes = (entry.path / "meta.json").read_bytes()
    with pytest.raises(UnsealedEntryError, match="lmgeometry store upgrade"):
        Store(entry.path)
    capsys.readouterr()
    again = activations(tiny, corpus, root=tmp_path, progress=False)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"lmgeometry: sealed the store entry {entry.path}")
    assert (entry.path / "meta.json").read_bytes() == meta_bytes  # meta.json itself unchanged
    assert everything_under(tmp_path) == [entry.path.name]  # not set aside, not rebuilt
    for X, Y in zip(layers_of(again), expected, strict=True):
        np.testing.assert_array_equal(X, Y)


def test_an_old_entry_whose_keyed_options_changed_is_not_sealed(tiny, corpus, tmp_path, capsys):
    """Unsealed, with "pooling" edited: the key no longer follows from the inputs meta.json
    records, so it is not sealed but set aside and built again."""
    entry = activations(tiny, corpus, root=tmp_path, progress=False)
    (entry.path / SEAL_FILE).unlink()
    text = (entry.path / "meta.json").read_text().replace('"pooling": "mean"',
                                                         '"pooling": "last"')
    (entry.path / "meta.json").write_text(text)
    code = main(["store", "upgrade", str(tmp_path)])
    assert code == 1 and "its recorded inputs give" in capsys.readouterr().err
    assert not (entry.path / SEAL_FILE).exists()
    again = activations(tiny, corpus, root=tmp_path, progress=False)
    assert "moved aside" in capsys.readouterr().err
    assert again.meta["options"]["pooling"] == "mean"


# ---------------------------------------------------------------------------------------------
# kill -9, SIGTERM, two processes


def _script(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(body))
    return script


def one_error_line(done: subprocess.CompletedProcess, command: str, status: int) -> str:
    """The process ended with ``status`` and one error line, its last, and no traceback
    (progress bars may come before it); that line."""
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == status, done.stderr
    assert not any("Traceback" in line for line in lines), done.stderr
    errors = [line for line in lines if line.startswith(f"lmgeometry {command}: error: ")]
    assert len(errors) == 1 and errors[0] == lines[-1], done.stderr
    return errors[0]


def _run(script: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True,
                          timeout=GUARD_S, **kwargs)


def test_kill_9_mid_write_leaves_nothing_that_looks_complete(tiny_folder, tiny, corpus,
                                                             tmp_path):
    """A process killed while writing layer files leaves its temporary folder; the next call
    removes it (its process is dead), builds the entry and gets a clean build's vectors."""
    root = tmp_path / "store"
    script = _script(tmp_path, f"""
        import os, signal, sys
        from lmgeometry.activations import entry
        from lmgeometry.activations.store import activations
        from lmgeometry.io.corpus import sentences

        def kill(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGKILL)

        entry.block_rows = kill
        activations({str(tiny_folder)!r}, sentences({TEXTS!r}, name="faults"),
                    root={str(root)!r}, progress=False)
    """)
    done = _run(script)
    assert done.returncode == -signal.SIGKILL
    left = everything_under(root)  # a build and its lock, no entry
    assert [name.split("-")[0] for name in left] == [".lock", ".tmp"]
    entry = activations(tiny, corpus, root=root, progress=False)
    assert everything_under(root) == [entry.path.name]
    reference = activations(tiny, corpus, root=tmp_path / "ref", progress=False)
    for X, Y in zip(layers_of(entry), layers_of(reference), strict=True):
        np.testing.assert_array_equal(X, Y)


def test_sigterm_during_extract_is_one_line_and_leaves_nothing(tiny_folder, tmp_path):
    """The issue: SIGTERM during extract ended with status 143, no message and 12 MiB of
    temporary files. Now: status 143, one line saying so, no temporary folder, no entry."""
    root = tmp_path / "store"
    script = _script(tmp_path, f"""
        import os, signal, sys
        from lmgeometry.activations import entry
        from lmgeometry.cli import main

        def terminate(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGTERM)
            raise AssertionError("SIGTERM was not raised in the main thread")

        entry.block_rows = terminate
        sys.exit(main(["extract", "--model", {str(tiny_folder)!r}, "--corpus", "sts",
                       "--n", "3", "--out", {str(root)!r}]))
    """)
    done = _run(script)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 143, done.stderr
    assert lines[-1].startswith("lmgeometry extract: terminated (SIGTERM)")
    assert not any("Traceback" in line or ": error:" in line for line in lines)
    assert everything_under(root) == []


def test_two_processes_asking_for_one_entry_build_it_once(tiny_folder, tmp_path):
    """The first process holds the entry's lock while it builds; the second says it waits,
    then reads the first's entry (its own extraction never runs)."""
    root, flags = tmp_path / "store", tmp_path / "flags"
    flags.mkdir()
    script = _script(tmp_path, f"""
        import sys, time
        from pathlib import Path
        from lmgeometry.activations.store import activations
        from lmgeometry.io.corpus import sentences

        me, flags = sys.argv[1], Path({str(flags)!r})

        def callback(done, total):
            (flags / f"{{me}}-extracted").touch()
            while me == "first" and not (flags / "go").exists():
                time.sleep(0.05)  # held until the test has seen the second one wait

        store = activations({str(tiny_folder)!r}, sentences({TEXTS!r}, name="faults"),
                            root={str(root)!r}, progress=False, callback=callback)
        print(store.path)
    """)
    first = subprocess.Popen([sys.executable, str(script), "first"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    while not (flags / "first-extracted").exists():
        assert first.poll() is None, first.communicate()
    second = subprocess.Popen([sys.executable, str(script), "second"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    waiting = second.stderr.readline()
    assert "is being written by another process; waiting" in waiting
    (flags / "go").touch()
    out1, err1 = first.communicate(timeout=GUARD_S)
    out2, err2 = second.communicate(timeout=GUARD_S)
    assert first.returncode == 0 and second.returncode == 0, (err1, err2)
    assert out1 == out2 and not (flags / "second-extracted").exists()
    assert everything_under(root) == [Path(out1.strip()).name]


# ---------------------------------------------------------------------------------------------
# a file-size limit, a quota


def test_a_file_size_limit_is_one_line_and_leaves_nothing(tiny_folder, tmp_path):
    """RLIMIT_FSIZE below a layer file's size: the issue's 44-line `File too large` is one line
    naming the limit and the fix, status 2, and no temporary folder or entry is left."""
    import resource

    root = tmp_path / "store"
    args = ["extract", "--model", str(tiny_folder), "--corpus", "sts", "--n", "3", "--out",
            str(root)]
    assert main([*args, "--pooling", "last"]) == 0  # the corpus is cached before the limit
    script = _script(tmp_path, f"""
        import sys
        from lmgeometry.cli import main
        sys.exit(main({args!r}))
    """)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (512, 512))

    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=GUARD_S, preexec_fn=limit)
    line = one_error_line(done, "extract", 2)
    assert line.startswith("lmgeometry extract: error: cannot write")
    assert "file-size limit" in line and "ulimit -f unlimited" in line
    assert all(not name.startswith(".tmp-") for name in everything_under(root))
    assert len(everything_under(root)) == 1  # the pooling=last entry, nothing else


def test_a_quota_is_one_error_and_leaves_nothing(tmp_path):
    import errno

    from lmgeometry.errors import PathError
    from lmgeometry.io.paths import building

    final = tmp_path / "cache" / "entry"
    with pytest.raises(PathError, match="disk quota is exceeded"):
        with building(final) as tmp:
            (tmp / "part").write_text("x")
            raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT))
    assert everything_under(final.parent) == []

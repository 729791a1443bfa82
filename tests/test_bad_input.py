"""Bad input and faults, as a careful user meets them (issue 16).

Every case ends in one of two ways: a one-line error that names the problem and its fix (exit
status 2 for a usage error, 1 for a failed run, 130 for Ctrl-C), with nothing cached and
nothing half-written; or a correct recovery. None may give wrong vectors or serve a damaged
store entry.

The models are tiny (2 layers, width 32, random weights) and built here with the real
MiniLM tokenizer, so the cases run in seconds. Tests that build a corpus need WordNet from the
data files (``@pytest.mark.data``).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import assert_one_line, run_cli, save_bert

from lmgeometry.activations import entry as entry_module
from lmgeometry.activations.integrity import seal_meta
from lmgeometry.activations.store import activations, open_store, verify_entries
from lmgeometry.cli import build_parser, main
from lmgeometry.errors import (
    BookUsageError,
    CorpusError,
    ModelSpecError,
    PathError,
    SentenceTooLongError,
    StoreError,
)
from lmgeometry.io import corpus as corpora
from lmgeometry.io import models, paths
from lmgeometry.io.corpus import sentences

TEXTS = [
    "The bank raised its rates on Monday.",
    "She sat on the river bank and watched the water.",
    "A short one.",
]
LONG = " ".join(["word"] * 80) + "."


# ---------------------------------------------------------------------------------------------
# tiny models and helpers


@pytest.fixture(scope="module")
def corpus():
    return sentences(TEXTS, name="bad-input")


@pytest.fixture
def no_corpus_build(monkeypatch):
    """Fail the test if the CLI builds a corpus (cheap checks must come first)."""
    def refuse(*args, **kwargs):
        raise AssertionError("the corpus was built before the cheap checks")

    monkeypatch.setattr(corpora, "build", refuse)


def entries(root: Path) -> list[str]:
    """Everything under a store root (entries, temporary and moved-aside folders)."""
    return sorted(p.name for p in root.iterdir()) if root.exists() else []


def extract_args(model: Path | str, root: Path, *extra: str) -> list[str]:
    return ["extract", "--model", str(model), "--corpus", "sts", "--n", "3", "--out", str(root),
            *extra]


# ---------------------------------------------------------------------------------------------
# bad 1: a model folder without tokenizer files, or with a tokenizer that does not fit


def test_folder_without_tokenizer_files_is_refused(tmp_path, capsys, no_corpus_build):
    folder = save_bert(tmp_path / "no-tokenizer", tokenizer=None)
    with pytest.raises(ModelSpecError, match="holds no tokenizer files") as info:
        models.load_model(str(folder))
    assert "tokenizer.save_pretrained(folder)" in str(info.value)
    with pytest.raises(ModelSpecError, match="holds no tokenizer files"):
        models.resolve_fingerprint(str(folder))  # no fingerprint, so no stale cache hit
    code, out, err = run_cli(capsys, *extract_args(folder, tmp_path / "store"))
    assert_one_line(code, err, "extract", 2, str(folder), "no tokenizer files")
    assert out == "" and entries(tmp_path / "store") == []


def test_tokenizer_far_smaller_than_the_embedding_table_is_refused(tmp_path):
    from tokenizers import Tokenizer, pre_tokenizers
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast

    vocab = {"[UNK]": 0, "[PAD]": 1, "[CLS]": 2, "[SEP]": 3, "hello": 4}
    raw = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    small = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="[UNK]", pad_token="[PAD]",
                                    cls_token="[CLS]", sep_token="[SEP]")
    folder = save_bert(tmp_path / "small-tokenizer", tokenizer=small)
    with pytest.raises(ModelSpecError, match=r"only 5 tokens for an embedding table of 30,522"):
        models.load_model(str(folder))


def test_tokenizer_larger_than_the_embedding_table_is_refused(tmp_path):
    folder = save_bert(tmp_path / "big-tokenizer", vocab_size=1000)
    with pytest.raises(ModelSpecError, match=r"30,522 tokens but the model's embedding table "
                                             r"only 1,000 rows"):
        models.load_model(str(folder))


def test_broken_config_is_one_error(tmp_path, tiny_folder):
    folder = shutil.copytree(tiny_folder, tmp_path / "broken-config")
    (folder / "config.json").write_text('{"model_type": "bert", ')
    with pytest.raises(ModelSpecError, match=r"cannot read .*config\.json.*save_pretrained"):
        models.load_model(str(folder))


def test_folder_without_weights_is_refused(tmp_path, tiny_folder):
    folder = shutil.copytree(tiny_folder, tmp_path / "no-weights")
    (folder / "model.safetensors").unlink()
    with pytest.raises(ModelSpecError, match="holds no weight files"):
        models.check_spec(str(folder))


def test_damaged_weights_and_wrong_shapes_are_one_error(tmp_path, tiny_folder):
    from lmgeometry.errors import ModelLoadError

    folder = shutil.copytree(tiny_folder, tmp_path / "truncated")
    data = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelLoadError, match="cannot load the weights of .*Check the model "
                                             "folder's weight files") as info:
        models.load_model(str(folder))
    assert "\n" not in str(info.value)
    folder = shutil.copytree(tiny_folder, tmp_path / "bigger-config")
    config = json.loads((folder / "config.json").read_text())
    config["hidden_size"] = config["hidden_size"] * 2
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelLoadError, match="cannot load the weights of"):
        models.load_model(str(folder))


def test_a_full_disk_is_one_error_and_leaves_nothing(tmp_path):
    import errno

    from lmgeometry.errors import PathError
    from lmgeometry.io.paths import building

    final = tmp_path / "cache" / "entry"
    with pytest.raises(PathError, match="no space left on the device"):
        with building(final) as tmp:
            (tmp / "part").write_text("x")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert not final.exists() and [p.name for p in final.parent.iterdir()] == []


# ---------------------------------------------------------------------------------------------
# bad 2: damaged store entries are never served


@pytest.fixture
def entry(tiny, corpus, tmp_path):
    """A fresh store entry (float32) and a copy of its layers."""
    store = activations(tiny, corpus, root=tmp_path / "store", dtype="float32", progress=False)
    return store, [np.array(X) for X in store.layers()]


def damage_layer_bytes(path: Path) -> None:
    """Overwrite 8 bytes of a layer's data, keeping its size."""
    with open(path, "r+b") as handle:
        handle.seek(-64, os.SEEK_END)
        handle.write(b"\x01\x02\x03\x04\x05\x06\x07\x08")


def truncate(path: Path) -> None:
    os.truncate(path, path.stat().st_size - 100)


def edit_meta(path: Path) -> None:
    meta = json.loads(path.read_text())
    meta["n_layers"] = 2
    path.write_text(json.dumps(meta))


def edit_and_reseal_meta(path: Path) -> None:
    """The edit above, sealed again (as a writer with a bug would): the files' checks find it."""
    meta = json.loads(path.read_text())
    meta["n_layers"] = 2
    entry_module.write_meta(path.parent, meta)


def drop_word_rows(path: Path) -> None:
    pd.read_parquet(path).iloc[:-5].to_parquet(path, index=False)


@pytest.mark.data
@pytest.mark.parametrize(
    ("file", "damage", "problem"),
    [
        ("layer_01.npy", truncate, "truncated"),
        ("meta.json", edit_meta, "does not match the sha256 recorded in meta.sha256"),
        ("meta.json", edit_and_reseal_meta, "says n_layers=2 but the entry holds 3 layer files"),
        ("words.parquet", drop_word_rows, "rows but the layers hold"),
        ("special.npy", truncate, "truncated"),
        ("special.parquet", drop_word_rows, "rows but the layers hold"),
    ],
    ids=["truncated-layer", "n_layers-edited", "n_layers-edited-resealed", "word-rows-removed",
         "truncated-special",
         "special-rows-removed"],
)
def test_damaged_entry_is_refused_on_open_and_rebuilt_by_activations(
        entry, tiny, corpus, capsys, file, damage, problem):
    """Opening a damaged entry by its path is an error naming the file and the fix;
    `activations`, which can build it, sets it aside with a one-line notice and builds it."""
    store, layers = entry
    damage(store.path / file)
    with pytest.raises(StoreError) as info:
        open_store(store.path)
    assert info.value.file == file and info.value.path == store.path
    message = str(info.value)
    assert problem in message and f"rm -r '{store.path}'" in message
    assert "run again to rebuild it" in message
    capsys.readouterr()
    again = activations(tiny, corpus, root=store.path.parent, dtype="float32", progress=False)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and file in err[0] and problem in err[0] and "moved aside" in err[0]
    assert again.path == store.path
    for X, Y in zip(again.layers(), layers, strict=True):
        np.testing.assert_array_equal(X, Y)


@pytest.mark.data
def test_changed_bytes_are_found_by_the_checksums_on_every_path(entry, tiny, corpus, capsys):
    """Sizes and counts intact, one byte changed: the Python API refuses the entry even with
    its default arguments (the file's stamp changed, so it is hashed again), `store verify`
    names it, and `activations` sets it aside and builds it again."""
    store, layers = entry
    damage_layer_bytes(store.path / "layer_02.npy")
    with pytest.raises(StoreError, match="layer_02.npy does not match the sha256"):
        open_store(store.path)
    with pytest.raises(StoreError, match="layer_02.npy does not match the sha256"):
        open_store(store.path, verify=True)
    table = verify_entries([store.path.parent])
    assert table["status"].tolist() == ["damaged"]
    assert "layer_02.npy" in table["message"].iloc[0]
    capsys.readouterr()
    again = activations(tiny, corpus, root=store.path.parent, dtype="float32", progress=False)
    err = capsys.readouterr().err
    assert "is damaged (layer_02.npy does not match the sha256" in err and "moved aside" in err
    for X, Y in zip(again.layers(), layers, strict=True):
        np.testing.assert_array_equal(X, Y)  # rebuilt: the same vectors
    assert len([n for n in entries(store.path.parent) if n.startswith(".set-aside-")]) == 1


@pytest.mark.data
def test_cli_rebuilds_a_damaged_cache_hit_and_verify_names_it(tiny_folder, tmp_path, capsys):
    root = tmp_path / "store"
    code, out, _ = run_cli(capsys, *extract_args(tiny_folder, root))
    assert code == 0
    path = Path(out.splitlines()[0])
    damage_layer_bytes(path / "layer_00.npy")
    code, out, err = run_cli(capsys, "store", "verify", root)
    assert code == 1 and f"{path.name} damaged" in " ".join(out.split())
    assert any("layer_00.npy" in line for line in err)
    code, out, err = run_cli(capsys, *extract_args(tiny_folder, root))
    assert code == 0 and Path(out.splitlines()[0]) == path
    assert any("layer_00.npy" in line and "moved aside" in line for line in err)
    code, out, _ = run_cli(capsys, "store", "verify", root)
    assert code == 0 and "all 1 store entries verified" in out


@pytest.mark.data
def test_layer_damaged_after_opening_names_the_file(entry):
    store, _ = entry
    truncate(store.path / "layer_01.npy")
    with pytest.raises(StoreError, match=r"layer_01\.npy cannot be read"):
        store.layer(1)


@pytest.mark.data
def test_unreadable_meta_is_a_store_error(entry):
    store, _ = entry
    (store.path / "meta.json").write_text("{not json")
    with pytest.raises(StoreError, match="meta.json does not match the sha256") as info:
        open_store(store.path)
    assert info.value.file == "meta.json"
    seal_meta(store.path)  # sealed garbage: read, and refused as JSON
    with pytest.raises(StoreError, match="meta.json is not valid JSON") as info:
        open_store(store.path)


@pytest.mark.data
def test_entry_without_recorded_checksums_is_checked_by_sizes(entry):
    """Entries written before checksums were recorded still open and verify."""
    store, _ = entry
    meta = json.loads((store.path / "meta.json").read_text())
    del meta["checksums"]
    entry_module.write_meta(store.path, meta)
    assert open_store(store.path, verify=True).n_words == store.n_words
    truncate(store.path / "layer_00.npy")
    with pytest.raises(StoreError, match="layer_00.npy has"):
        open_store(store.path, verify=True)


# ---------------------------------------------------------------------------------------------
# bad 3: an entry folder without meta.json


@pytest.mark.data
def test_folder_without_meta_is_moved_aside_and_rebuilt(entry, tiny, corpus, capsys):
    store, layers = entry
    (store.path / "meta.json").unlink()
    capsys.readouterr()
    again = activations(tiny, corpus, root=store.path.parent, dtype="float32", progress=False)
    assert again.path == store.path
    for X, Y in zip(again.layers(), layers, strict=True):
        np.testing.assert_array_equal(X, Y)  # the same vectors
    aside = [n for n in entries(store.path.parent) if n.startswith(".set-aside-")]
    assert len(aside) == 1 and aside[0].startswith(f".set-aside-{store.path.name}-")
    assert "is incomplete (no meta.json): moved aside" in capsys.readouterr().err
    assert verify_entries([store.path.parent])["status"].tolist() == ["ok"]


def test_open_store_of_a_folder_without_meta(tmp_path):
    with pytest.raises(StoreError, match=r"not a store entry \(no meta.json\)"):
        open_store(tmp_path)


# ---------------------------------------------------------------------------------------------
# bad 4: ~ in path arguments


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.setenv(paths.CACHE_ENV, str(paths.cache_root()))  # keep the parsed corpora
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(cwd)
    return home


@pytest.mark.data
def test_tilde_in_out_and_root_is_the_home_folder(home, tiny_folder, tiny, corpus, capsys):
    code, out, _ = run_cli(capsys, "extract", "--model", tiny_folder, "--corpus", "sts", "--n", "3",
                           "--out=~/x")
    assert code == 0 and Path(out.splitlines()[0]).parent == home / "x"
    store = activations(tiny, corpus, root="~/y", progress=False)
    assert store.path.parent == home / "y"
    assert open_store(f"~/y/{store.path.name}").path == store.path
    assert not (Path.cwd() / "~").exists()


def test_tilde_in_other_path_arguments(home):
    from lmgeometry.report.results import load_results, save_results

    assert save_results("~/r/results.json", {"a": 1}) == home / "r" / "results.json"
    assert load_results("~/r/results.json") == {"a": 1}
    assert paths.writable_folder("~/w", "a folder") == home / "w"
    assert verify_entries(["~/w"]).empty
    assert not (Path.cwd() / "~").exists()


# ---------------------------------------------------------------------------------------------
# bad 5: memo keys see content changed with the mtime restored (data: tests/io/test_datafiles.py)


def test_fingerprint_sees_weights_changed_with_mtime_restored(tiny_folder, tmp_path,
                                                              monkeypatch):
    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "cache"))
    folder = shutil.copytree(tiny_folder, tmp_path / "model")
    first = models.resolve_fingerprint(str(folder))
    weights = folder / "model.safetensors"
    stat = weights.stat()
    content = bytearray(weights.read_bytes())
    content[-1] ^= 0xFF  # one bit of one weight: same size
    time.sleep(0.05)  # the kernel's file clock ticks every few milliseconds
    weights.write_bytes(bytes(content))
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert weights.stat().st_size == stat.st_size
    assert models.resolve_fingerprint(str(folder)) != first  # no stale cache hit


# ---------------------------------------------------------------------------------------------
# weak: one-line errors for user mistakes, exit codes, Ctrl-C, --debug


@pytest.mark.parametrize(
    ("argv", "status", "fragment"),
    [
        (["--model", "./no-such-folder"], 2, "no such folder './no-such-folder'"),
        (["--model", "not a hub id!"], 2, "not a valid Hugging Face hub id"),
        (["--corpus", "nope"], 2, "unknown corpus 'nope'; choose one of mnli_polysemy"),
    ],
    ids=["missing-folder", "bad-hub-id", "unknown-corpus"],
)
def test_extract_mistakes_are_one_line(argv, status, fragment, tiny_folder, tmp_path, capsys,
                                       no_corpus_build):
    base = {"--model": str(tiny_folder), "--corpus": "sts"}
    base.update(dict(zip(argv[::2], argv[1::2], strict=True)))
    args = ["extract", *(x for kv in base.items() for x in kv), "--out", str(tmp_path / "s")]
    code, out, err = run_cli(capsys, *args)
    assert_one_line(code, err, "extract", status, fragment)
    assert out == "" and not (tmp_path / "s").exists()


def test_uncached_hub_model_without_hub_fails_before_the_corpus(tmp_path, capsys, monkeypatch,
                                                                no_corpus_build):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code, _, err = run_cli(capsys, *extract_args("nobody-xyz/no-such-model", tmp_path / "s"))
    assert_one_line(code, err, "extract", 1, "the Hugging Face hub is offline",
                    "Use an offline alias instead")


def test_store_root_that_is_a_file(tiny_folder, tmp_path, capsys, no_corpus_build):
    afile = tmp_path / "afile"
    afile.write_text("x")
    code, _, err = run_cli(capsys, *extract_args(tiny_folder, afile))
    assert_one_line(code, err, "extract", 2, f"the store root (--out) {afile} is a file")
    code, _, err = run_cli(capsys, *extract_args(tiny_folder, afile / "below"))
    assert_one_line(code, err, "extract", 2, f"{afile} is a file")
    with pytest.raises(PathError, match="is a file"):
        activations("unused", None, root=afile)  # type: ignore[arg-type]


def test_cache_root_that_is_a_file(tiny_folder, tmp_path, capsys, monkeypatch,
                                   no_corpus_build):
    afile = tmp_path / "cache-file"
    afile.write_text("x")
    monkeypatch.setenv(paths.CACHE_ENV, str(afile))
    code, _, err = run_cli(capsys, *extract_args(tiny_folder, tmp_path / "s"))
    assert_one_line(code, err, "extract", 2, f"the cache root {afile} is a file",
                    paths.CACHE_ENV)
    code, out, err = run_cli(capsys, "models")
    assert_one_line(code, err, "models", 2, f"the cache root {afile} is a file")
    assert out == "" and len(err) == 1  # no warning per alias


def test_missing_mirror_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(paths.MIRROR_ENV, str(tmp_path / "nowhere"))
    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "cache"))
    code, out, err = run_cli(capsys, "data", "verify")
    assert_one_line(code, err, "data", 1, f"LMGEOMETRY_DATA_MIRROR={tmp_path / 'nowhere'} is "
                                          "not a folder", "unset it")
    assert out == "" and len(err) == 1


def test_data_verify_table_is_compact(tmp_path, capsys, monkeypatch):
    from lmgeometry.cli import MAX_MESSAGES
    from lmgeometry.io import data

    mirror = tmp_path / "mirror"
    mirror.mkdir()
    monkeypatch.setenv(paths.MIRROR_ENV, str(mirror))
    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "cache"))
    n_files = len(data.manifest())
    code, out, err = run_cli(capsys, "data", "verify")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].split() == ["name", "status", "size"] and len(lines) == n_files + 1
    assert max(len(line) for line in lines) < 80
    assert all(line.split()[1:] == ["missing", "-"] for line in lines[1:])
    assert err[0] == f"{n_files} of {n_files} data files failed verification:"
    assert len(err) == 1 + MAX_MESSAGES + 1
    assert err[-1] == f"... and {n_files - MAX_MESSAGES} more"


@pytest.mark.mirror
def test_data_verify_on_the_mirror(capsys):
    code, out, err = run_cli(capsys, "data", "verify")
    assert code == 0 and err == []
    assert out.splitlines()[-1].startswith("all ") and "verified" in out
    assert max(len(line) for line in out.splitlines()) < 80


@pytest.mark.data
def test_ctrl_c_exits_130_and_leaves_nothing(tiny_folder, tmp_path, capsys, monkeypatch):
    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(entry_module, "block_rows", interrupt)
    root = tmp_path / "store"
    code, out, err = run_cli(capsys, *extract_args(tiny_folder, root))
    assert code == 130 and err[-1] == "lmgeometry extract: interrupted"
    assert not any("Traceback" in line for line in err)
    assert out == "" and entries(root) == []


def test_debug_shows_the_traceback(capsys, no_corpus_build, tmp_path):
    for argv in (["--debug", "extract"], ["extract", "--debug"]):
        code, _, err = run_cli(capsys, *argv, "--model", "./no-such-folder", "--corpus", "sts",
                               "--out", tmp_path)
        assert code == 2 and err[0].startswith("Traceback")
        assert err[-1].startswith("lmgeometry extract: error: no such folder")


@pytest.mark.data
def test_all_sentences_too_long_is_an_error(tiny, tmp_path):
    texts = sentences([LONG, LONG + " Again."], name="all-long")
    root = tmp_path / "store"
    with pytest.raises(SentenceTooLongError, match=r"all 2 sentences are longer than the 64 "
                                                   r"tokens .* nothing would be stored"):
        activations(tiny, texts, root=root, too_long="skip", progress=False)
    assert entries(root) == []


@pytest.mark.data
def test_all_sentences_too_long_from_the_cli(tmp_path, capsys):
    folder = save_bert(tmp_path / "four-positions", positions=4)
    root = tmp_path / "store"
    code, out, err = run_cli(capsys, *extract_args(folder, root, "--too-long", "skip"))
    assert_one_line(code, err, "extract", 1, "all 3 sentences are longer than the 4 tokens")
    assert out == "" and entries(root) == []


@pytest.mark.data
def test_invisible_words_are_dropped_and_counted(tiny, tmp_path):
    texts = ["Hello \u200b world.", "Soft \u00ad hyphen here.", "A \ufeff mark.",
             "Bell \x07 rings.", "No invisible word\u200bhere."]
    hidden = sentences(texts, name="invisible")
    assert hidden.params["invisible_words_dropped"] == 4
    assert hidden.info["invisible_words_dropped"] == 4
    store = activations(tiny, hidden, root=tmp_path, progress=False)  # no AlignmentError
    assert store.meta["counts"]["invisible_words_dropped"] == 4
    assert store.meta["corpus"]["params"]["invisible_words_dropped"] == 4
    kept = store.words["text"].tolist()
    assert not {"\u200b", "\u00ad", "\ufeff", "\x07"} & set(kept)
    assert kept[:2] == ["Hello", "world"] and "rings" in kept
    assert "invisible_words_dropped" not in sentences(TEXTS, name="plain").params
    with pytest.raises(CorpusError, match="only invisible characters"):
        sentences(["\u200b\x07"])


@pytest.mark.data
def test_prepend_bos_error_speaks_cli(tiny_folder, tmp_path, capsys):
    code, _, err = run_cli(capsys, *extract_args(tiny_folder, tmp_path, "--prepend-bos", "yes"))
    assert_one_line(code, err, "extract", 2, "--prepend-bos yes", "applies to decoders only",
                    "--prepend-bos auto")
    assert entries(tmp_path) == []


@pytest.mark.mirror
def test_semcor_size_error_names_the_option(tiny_folder, tmp_path, capsys):
    code, _, err = run_cli(capsys, "extract", "--model", tiny_folder, "--corpus", "semcor_targets",
                           "--n", "100000", "--out", tmp_path)
    assert_one_line(code, err, "extract", 2, "pass n_words <=", "--n of `lmgeometry extract")


@pytest.mark.data
def test_too_large_n_names_the_option(tiny_folder, tmp_path, capsys):
    code, _, err = run_cli(capsys, "extract", "--model", tiny_folder, "--corpus", "sts", "--n",
                           "10000000", "--out", tmp_path)
    assert_one_line(code, err, "extract", 2, "asked for n=10,000,000 sentences",
                    "--n of `lmgeometry extract`")


def test_every_option_has_help_and_n_says_what_it_counts():
    parser = build_parser()
    assert all(action.help for action in parser._actions)
    subparsers = next(a for a in parser._actions if a.choices and isinstance(a.choices, dict))
    for name, sub in subparsers.choices.items():
        for action in sub._actions:
            assert action.help, f"lmgeometry {name} {action.dest} has no help"
    extract = subparsers.choices["extract"].format_help()
    for name in corpora.CORPUS_NAMES:
        assert name in extract
    text = " ".join(extract.split())
    assert "sentences for mnli_polysemy and sts (default 1000)" in text
    assert "target lemmas for semcor_targets (default 30" in text
    assert corpora.DEFAULT_SIZES == {"mnli_polysemy": 1000, "sts": 1000, "semcor_targets": 30}


def test_n_must_be_positive(capsys):
    with pytest.raises(SystemExit) as info:
        main(["extract", "--model", "m", "--corpus", "sts", "--n", "0"])
    assert info.value.code == 2
    assert "argument --n: must be a positive integer, not '0'" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# weak: the book


def test_book_refuses_an_empty_model_list(tmp_path, capsys):
    out = tmp_path / "book"
    code, stdout, err = run_cli(capsys, "book", "-p", "models", "[]", "--no-html", "--out", out)
    assert_one_line(code, err, "book", 2, "models is an empty list", "-p models '[")
    assert stdout == "" and not out.exists()  # nothing executed, nothing created


def test_book_refuses_an_out_that_is_a_file(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    code, _, err = run_cli(capsys, "book", "--out", afile)
    assert_one_line(code, err, "book", 2, f"the book folder (--out) {afile} is a file")
    assert afile.read_text() == "x"


def test_empty_list_parameter_is_a_usage_error():
    from lmgeometry.report.book import resolve_parameters

    declared = {"models": ["minilm-l6"], "layers": [], "results_path": None}
    config = {"defaults": {}, "chapters": {}}
    assert resolve_parameters("c", declared, config, {"layers": []})["layers"] == []
    with pytest.raises(BookUsageError, match="models is an empty list") as info:
        resolve_parameters("c", declared, config, {"models": []})
    assert info.value.exit_code == 2


def test_store_verify_of_a_missing_path(tmp_path, capsys):
    code, _, err = run_cli(capsys, "store", "verify", tmp_path / "nowhere")
    assert_one_line(code, err, "store", 2, "does not exist")
    code, out, _ = run_cli(capsys, "store", "verify", tmp_path)
    assert code == 0 and out.strip() == "no store entries to verify"



def test_generated_files_are_never_written_into_a_checkout(tmp_path, tiny, corpus):
    """An explicit --out or store root that is a source checkout is refused before anything
    is written; an empty folder is fine."""
    from lmgeometry.errors import PathError
    from lmgeometry.io.paths import refuse_checkout, writable_folder
    from lmgeometry.report.book import build_book

    checkout = tmp_path / "checkout"
    (checkout / ".git").mkdir(parents=True)
    with pytest.raises(PathError, match="is a source checkout"):
        writable_folder(checkout, "the store root")
    with pytest.raises(PathError, match="is a source checkout"):
        activations(tiny, corpus, root=checkout, progress=False)
    project = Path(__file__).resolve().parents[1]
    with pytest.raises(PathError, match="holds _toc.yml and notebooks/|holds .git"):
        build_book(root=project, out=project, html=False, execute=False)
    assert refuse_checkout(tmp_path / "new", "x") == tmp_path / "new"
    assert list(checkout.iterdir()) == [checkout / ".git"]


def test_a_model_folders_own_code_never_runs_unless_asked(tmp_path, monkeypatch):
    """A folder whose config points at its own Python (auto_map) is refused with
    trust_remote_code=False passed explicitly: transformers neither runs it nor asks."""
    from lmgeometry.errors import LmgeometryError
    from lmgeometry.io.models import load_model, trust_remote_code
    from lmgeometry.io.paths import TRUST_REMOTE_CODE_ENV

    folder = tmp_path / "custom"
    folder.mkdir()
    marker = tmp_path / "ran"
    (folder / "config.json").write_text(json.dumps({
        "model_type": "lmg-custom", "auto_map": {"AutoConfig": "configuration_x.XConfig"}}))
    (folder / "configuration_x.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\n"
        "from transformers import PretrainedConfig\n"
        "class XConfig(PretrainedConfig):\n    model_type = 'lmg-custom'\n")
    (folder / "model.safetensors").write_bytes(b"")
    monkeypatch.delenv(TRUST_REMOTE_CODE_ENV, raising=False)
    assert not trust_remote_code()
    with pytest.raises(LmgeometryError):
        load_model(str(folder))
    assert not marker.exists()
    monkeypatch.setenv(TRUST_REMOTE_CODE_ENV, "1")
    assert trust_remote_code()


def test_finetune_max_length_beyond_the_window_is_a_usage_error(capsys, tiny_folder):
    code, out, err = run_cli(capsys, "finetune", "--model", str(tiny_folder), "--task", "sst2",
                             "--max-length", "100000")
    assert_one_line(code, err, "finetune", 2, "--max-length 100000", "or less")


def test_a_pickle_that_would_run_code_is_refused_in_one_line(tmp_path, tiny_folder):
    """A pytorch_model.bin whose pickle calls a function: torch's weights_only loader refuses
    it, the command names the folder, and the code never runs."""
    import pickle

    from lmgeometry.errors import LmgeometryError

    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    folder = shutil.copytree(tiny_folder, tmp_path / "pickled")
    (folder / "model.safetensors").unlink()
    with open(folder / "pytorch_model.bin", "wb") as handle:
        pickle.dump({"weight": Payload()}, handle)
    with pytest.raises(LmgeometryError) as info:
        models.load_model(str(folder))
    assert "\n" not in str(info.value) and str(folder.name) in str(info.value)
    assert not marker.exists()

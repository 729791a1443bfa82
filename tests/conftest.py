"""Shared test gates and fixtures.

Data gate: tests marked ``@pytest.mark.data`` need the data files (the mirror named by
``LMGEOMETRY_DATA_MIRROR``, or the network to fetch them from their original URLs); tests
marked ``@pytest.mark.mirror`` need the mirror itself (some files have no public URL). Without
them such tests are skipped with the reason, unless ``LMGEOMETRY_REQUIRE_DATA=1`` (set by
``.ci/run``), which turns the missing data into a failure so that CI cannot pass by skipping.
"""

from __future__ import annotations

import functools
import os
import socket
from pathlib import Path

import pytest
from lanes import LaneReport, longest_first, register

from lmgeometry.io import paths

REQUIRE_ENV = "LMGEOMETRY_REQUIRE_DATA"

#: Sentences that stress tokenizers and the word table: contractions, non-ASCII letters,
#: curly quotes, double spaces, tabs, numbers with separators, a very long word.
HARD = [
    "Don't  split co-operation: 3.14 naïve café—“quoted” words!",
    "The antidisestablishmentarianism of 1,234,567 Zürich-based ünïcödé folks "
    "(e.g. O'Neill's) isn't 42%.",
    "Hello  world, it's 5pm in São Paulo; naïveté rocks.",
    "I'm gonna wanna do it, y'all.",
    "Pneumonoultramicroscopicsilicovolcanoconiosis — rare!  Isn't it?",
    "Ωmega’s “smart” quotes… and tabs\tand e-mail: a@b.com.",
]


def has_mirror() -> bool:
    """Whether ``LMGEOMETRY_DATA_MIRROR`` names a folder that holds the mirror."""
    mirror = paths.data_mirror()
    return mirror is not None and (mirror / "SHA256SUMS").is_file()


@functools.cache
def data_missing() -> str | None:
    """Why the data files cannot be had, or None when the mirror or the network is there."""
    if has_mirror():
        return None
    try:
        socket.create_connection(("raw.githubusercontent.com", 443), timeout=3).close()
    except OSError:
        return ("no data: LMGEOMETRY_DATA_MIRROR is unset (or not a mirror) and "
                "raw.githubusercontent.com is unreachable; set LMGEOMETRY_DATA_MIRROR to the "
                "data mirror, as CI does")
    return None


def mirror_missing() -> str | None:
    """Why the mirror itself is not available, or None."""
    if has_mirror():
        return None
    return ("needs LMGEOMETRY_DATA_MIRROR: some files (SemCor tarball, Debian WordNet files) "
            "have no public per-file URL")


TESTS = Path(__file__).resolve().parent

#: Wall seconds of the slowest test files in ``make test`` from an empty cache (HOME and
#: LMGEOMETRY_CACHE empty; 2 workers on the 2-core development machine, 2026-11-28), as the
#: closing "pytest file" lines report them. They set only the order in which xdist hands out
#: the files (``tests/lanes.py``: longest first, so that the files of several minutes do not
#: start last while the other worker runs out of work); a file missing here counts as 0 s
#: and runs after them in collection order. Update them when a file's time changes by a
#: minute.
FILE_SECONDS: dict[str, float] = {
    "tests/test_seed_architectures.py": 437,
    "tests/test_browser.py": 401,
    "tests/activations/test_distributed.py": 268,
    "tests/io/test_models.py": 165,
    "tests/report/test_book.py": 135,
    "tests/io/test_lexical.py": 67,
    "tests/test_bad_input.py": 63,
    "tests/report/test_publish.py": 50,
    "tests/training/test_pretrain.py": 34,
    "tests/training/test_finetune.py": 33,
    "tests/io/test_corpus.py": 29,
    "tests/activations/test_onnx_runtime.py": 26,
}


def is_test_file(path: Path) -> bool:
    """Whether ``path`` is a test file of this folder (not a notebook nbval collects)."""
    return path.suffix == ".py" and TESTS in path.resolve().parents


def file_name(path: Path) -> str:
    """A test file's path from the project root (``tests/io/test_models.py``)."""
    return path.resolve().relative_to(TESTS.parent).as_posix()


def expected_seconds(path: Path) -> float:
    """A test file's recorded seconds (:data:`FILE_SECONDS`), 0 when it has none."""
    return FILE_SECONDS.get(file_name(path), 0.0)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items[:] = longest_first(items, expected_seconds, is_test_file)


def pytest_configure(config: pytest.Config) -> None:
    """The run ends with each test file of 5 s or more: its lane, seconds, start and end."""
    register(config, LaneReport("pytest file", config.rootpath, is_test_file, file_name,
                                min_seconds=5.0))


def pytest_runtest_setup(item: pytest.Item) -> None:
    reasons = []
    if item.get_closest_marker("data") is not None:
        reasons.append(data_missing())
    if item.get_closest_marker("mirror") is not None:
        reasons.append(mirror_missing())
    reason = next((r for r in reasons if r), None)
    if reason is None:
        return
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1: missing data is a failure)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def minilm_tokenizer():
    """MiniLM's real WordPiece tokenizer (bert-base-uncased vocabulary)."""
    from transformers import AutoTokenizer

    from lmgeometry.io import _offline

    return AutoTokenizer.from_pretrained(_offline.alias_folder("minilm-l6"))


@pytest.fixture(scope="session")
def smollm2_tokenizer():
    """SmolLM2's real byte-level BPE tokenizer: from the converted folder when the user cache
    has it, else straight from the GGUF file (a few seconds, no conversion)."""
    import importlib.metadata as metadata
    from pathlib import Path

    from transformers import AutoTokenizer

    from lmgeometry.io import _offline, models

    table = models.models_table().set_index("alias")
    if table.loc["smollm2-135m", "converted"] == "yes":
        return AutoTokenizer.from_pretrained(_offline.alias_folder("smollm2-135m"))
    pf = models.ALIASES["smollm2-135m"].files[0]
    gguf = Path(str(metadata.distribution(pf.dist).locate_file(pf.path)))
    return AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)


@pytest.fixture(scope="session")
def built_fixture_project(tmp_path_factory) -> Path:
    """The fixture book project of :func:`fixtures.book_project.git_project` (one chapter, a
    git checkout with the sources committed), executed and rendered once per test process.
    Copy it (:func:`fixtures.book_project.copy_project`) before changing anything: a build of
    the copy finds every chapter and the HTML unchanged and executes nothing."""
    from fixtures.book_project import git_project

    from lmgeometry.report.book import build_book

    project = git_project(tmp_path_factory.mktemp("built-fixture-book") / "project")
    build_book(root=project)
    return project


@pytest.fixture(scope="module")
def hard_corpus():
    """:data:`HARD` as a corpus with its spaCy word table."""
    from lmgeometry.io.corpus import sentences

    return sentences(HARD, name="hard")


#: Sentences with hard tokenization cases, for the store's round trips.
STORE_TEXTS = [
    "The bank raised its rates on Monday.",
    "She sat on the river bank and watched the water.",
    "Don't split co-operation: 3.14 naïve café words!",
    "Antidisestablishmentarianism isn't a common word.",
    "A short one.",
    "Prices rose 4.5% in Zürich-based shops, analysts said.",
    "I'm gonna wanna do it, y'all.",
    "They banked the fire before bed.",
]


def save_bert(folder: Path, *, vocab_size: int | None = None, positions: int = 64,
              tokenizer: object | None = True) -> Path:
    """A real (randomly initialised, seed 0) 2-layer BERT of width 32 saved into ``folder``
    with MiniLM's tokenizer (``tokenizer=None``: no tokenizer files), loadable with
    ``load_model(folder)``; its 64-position window makes too-long sentences easy to write."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from lmgeometry.io import _offline

    tok = AutoTokenizer.from_pretrained(_offline.alias_folder("minilm-l6"))
    torch.manual_seed(0)
    config = BertConfig(vocab_size=vocab_size or len(tok), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=48,
                        max_position_embeddings=positions)
    BertModel(config).eval().save_pretrained(folder)
    if tokenizer is True:
        tok.save_pretrained(folder)
    elif tokenizer is not None:
        tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory) -> Path:
    """A saved tiny BERT (:func:`save_bert`), one per test module."""
    return save_bert(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="module")
def tiny(tiny_folder):
    """:func:`tiny_folder` loaded on the CPU."""
    from lmgeometry.io import models

    return models.load_model(str(tiny_folder), device="cpu")


def run_cli(capsys, *argv: object) -> tuple[int, str, list[str]]:
    """``lmgeometry argv``: exit status, stdout and the non-blank stderr lines."""
    from lmgeometry.cli import main

    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, [line for line in err.splitlines() if line.strip()]


def assert_one_line(code: int, err: list[str], command: str, status: int,
                    *fragments: str) -> str:
    """The command ended with ``status``, no traceback, and exactly one error line (the last;
    progress bars may come before it) naming every fragment; returns that line."""
    assert code == status, err
    assert not any("Traceback" in line for line in err), err
    errors = [line for line in err if line.startswith(f"lmgeometry {command}: error: ")]
    assert len(errors) == 1 and errors[0] == err[-1], err
    for fragment in fragments:
        assert fragment in errors[0], (fragment, errors[0])
    return errors[0]


def array_store(folder, layers, words, *, name: str = "test-model", kind: str | None = None,
                special=None, special_words=None, shards: int | None = None):
    """A real store entry written from arrays, opened with :class:`Store`.

    ``layers`` is a list of ``(n_words, width)`` arrays (kept in their own dtype) and ``words``
    the word table; the files follow the store's documented layout. ``kind`` ("encoder" or
    "decoder") goes into the model's meta, where the first-word controls read it.
    ``special`` is an optional list of ``(n_special, width)`` arrays, one per layer, and
    ``special_words`` their table (``sentence_id``, ``position``, ``n_tokens``, ``token``, ...);
    without them the entry has no special tokens. The entry records no key (any folder name
    serves); a test that edits its ``meta.json`` writes it with ``write_meta``, which seals it
    again. ``shards``: lay the arrays out as a sharded
    entry (:mod:`lmgeometry.activations.distributed`'s layout) of that many shards of whole
    sentences instead of one file per layer.
    """
    from pathlib import Path

    import numpy as np
    import pandas as pd

    from lmgeometry.activations.store import FORMAT_VERSION, Store, layer_file, write_meta

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    layers = [np.asarray(X) for X in layers]
    n, width = layers[0].shape
    pd.DataFrame(words).assign(row=np.arange(n)).to_parquet(folder / "words.parquet")
    if special is None:
        special = [np.zeros((0, width), np.float32) for _ in layers]
        special_words = pd.DataFrame({"sentence_id": np.zeros(0, np.int32),
                                      "position": np.zeros(0, np.int32),
                                      "n_tokens": np.zeros(0, np.int32),
                                      "token_id": np.zeros(0, np.int64),
                                      "token": np.zeros(0, dtype=object)})
    special = np.stack([np.asarray(S, np.float32) for S in special])
    n_special = special.shape[1]
    pd.DataFrame(special_words).assign(row=np.arange(n_special)).to_parquet(
        folder / "special.parquet")
    parts = (_shard_parts(pd.DataFrame(words)["sentence_id"].to_numpy(),
                          pd.DataFrame(special_words)["sentence_id"].to_numpy(), shards)
             if shards else [{"rows": [0, n], "special_rows": [0, n_special]}])
    for shard in parts:
        sub = folder / "shards" / shard["name"] if shards else folder
        sub.mkdir(parents=True, exist_ok=True)
        for i, X in enumerate(layers):
            np.save(sub / layer_file(i), X[slice(*shard["rows"])])
        np.save(sub / "special.npy", special[:, slice(*shard["special_rows"])])
    meta = {"format": FORMAT_VERSION, "n_layers": len(layers), "width": width,
            "dtype": str(layers[0].dtype), "model": {"name": name, "spec": name, "kind": kind},
            "corpus": {"name": "test"},
            "counts": {"words": n, "special": n_special}, "skipped_sentence_ids": []}
    if shards:
        meta["shards"] = parts
    write_meta(folder, meta)  # meta.json and its seal, as the store writes them
    return Store(folder)


def _shard_parts(word_sentences, special_sentences, shards: int) -> list[dict]:
    """``shards`` runs of whole sentences (as even in rows as the sentences allow), with
    their row and special-row ranges, as a sharded entry's meta lists them (both tables
    are in sentence order)."""
    import numpy as np

    starts = np.flatnonzero(np.r_[True, word_sentences[1:] != word_sentences[:-1]])
    cuts = {int(starts[min(np.searchsorted(starts, k * len(word_sentences) / shards),
                           len(starts) - 1)]) for k in range(1, shards)}
    bounds = sorted({0, *cuts, len(word_sentences)})
    parts, special_lo = [], 0
    for k, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        ids = np.unique(word_sentences[lo:hi])
        special_hi = special_lo + int(np.isin(special_sentences, ids).sum())
        parts.append({"name": f"shard_{k:05d}", "sentences": [int(ids[0]), int(ids[-1]) + 1],
                      "rows": [int(lo), int(hi)], "special_rows": [special_lo, special_hi]})
        special_lo = special_hi
    return parts

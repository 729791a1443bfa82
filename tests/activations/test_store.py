"""The on-disk activation store (lmgeometry.activations.store).

The model is a real (randomly initialised) 2-layer BERT built from a config and saved with the
MiniLM tokenizer into a folder, then loaded through ``load_model(folder)``; its 64-position
window makes too-long sentences easy to write.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch
from conftest import STORE_TEXTS as TEXTS
from conftest import save_bert

from lmgeometry.activations.extract import SentenceTooLongError, extract_words
from lmgeometry.activations.store import Store, activations, model_fingerprint, open_store
from lmgeometry.io import _offline, models
from lmgeometry.io.corpus import sentences
from lmgeometry.io.paths import host

pytestmark = pytest.mark.data

LONG = " ".join(["word"] * 80) + "."


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    return save_bert(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(scope="module")
def tiny(tiny_folder):
    return models.load_model(str(tiny_folder), device="cpu")


@pytest.fixture(scope="module")
def corpus():
    return sentences(TEXTS, name="store-test")


class ForwardCounter:
    """Counts forward calls of a module through a real forward hook."""

    def __init__(self, module: torch.nn.Module) -> None:
        self.calls = 0
        self.handle = module.register_forward_hook(self._hook)

    def _hook(self, *_: object) -> None:
        self.calls += 1

    def remove(self) -> None:
        self.handle.remove()


def test_round_trip_with_numpy_and_pyarrow(tiny, corpus, tmp_path):
    store = activations(tiny, corpus, root=tmp_path, dtype="float32", progress=False)
    expected, enc = extract_words(tiny, corpus)
    assert store.path.parent == tmp_path
    meta = json.loads((store.path / "meta.json").read_text())
    assert meta["n_layers"] == tiny.n_layers + 1 == 3
    assert meta["counts"]["words"] == len(corpus.words) == enc.n_words
    assert meta["counts"]["sentences_skipped"] == 0
    assert meta["fingerprint"] == tiny.fingerprint
    assert meta["options"] == {"pooling": "mean", "prepend_bos": None, "too_long": "error",
                               "dtype": "float32"}
    assert {"torch", "transformers", "numpy"} <= set(meta["versions"])
    for i in range(meta["n_layers"]):
        arr = np.load(store.path / f"layer_{i:02d}.npy", mmap_mode="r")
        assert arr.shape == (len(corpus.words), 32) and arr.dtype == np.float32
        np.testing.assert_allclose(arr, expected[i], rtol=1e-5, atol=1e-6)
    words = pq.read_table(store.path / "words.parquet").to_pandas()
    assert words["row"].tolist() == list(range(len(corpus.words)))
    assert words["text"].tolist() == corpus.words["text"].tolist()
    assert words["sentence_id"].tolist() == corpus.words["sentence_id"].tolist()
    assert words["n_pieces"].min() >= 1
    assert (words["first_piece"] >= 1).all()  # position 0 is [CLS]
    # the Store API reads the same files
    assert isinstance(store, Store) and store.n_layers == 3
    np.testing.assert_array_equal(store.layer(-1), store.layer(2))
    assert len(store.words) == store.layer(0).shape[0]
    assert open_store(store.path).meta == store.meta
    # every file's sha256 is recorded, and the full check passes
    assert set(meta["checksums"]) == {"words.parquet", "layer_00.npy", "layer_01.npy",
                                      "layer_02.npy", "special.parquet", "special.npy"}
    store.verify()
    assert open_store(store.path, verify=True).n_words == store.n_words


def _direct_hidden(model, ids):
    """(layers, tokens, width) hidden states of one sentence from a direct model call."""
    with torch.inference_mode():
        out = model.model(input_ids=torch.as_tensor(ids)[None], output_hidden_states=True)
    return torch.stack(out.hidden_states)[:, 0].numpy()


def test_special_tokens_are_stored_apart_and_aligned(tiny, corpus, tmp_path):
    store = activations(tiny, corpus, root=tmp_path, progress=False)
    special = store.special
    n = len(corpus.sentences)
    # [CLS] and [SEP] of every sentence, flagged by their own table, in input order
    assert store.n_special == len(special) == 2 * n == store.meta["counts"]["special"]
    assert special["row"].tolist() == list(range(2 * n))
    assert special["token"].tolist() == ["[CLS]", "[SEP]"] * n
    assert special["sentence_id"].tolist() == np.repeat(np.arange(n), 2).tolist()
    assert (special["position"].to_numpy()[0::2] == 0).all()
    assert (special["position"] == special["n_tokens"] - 1).to_numpy()[1::2].all()
    # excluded from the words by default: the word table and layers hold words only
    assert store.n_words == len(store.words) == len(corpus.words) == store.layer(0).shape[0]
    assert store.words["text"].tolist() == corpus.words["text"].tolist()
    # each special row is the model's hidden state at that token's input position
    for sid in (0, 3, n - 1):
        ids = tiny.tokenizer(corpus.sentences[sid])["input_ids"]
        hidden = _direct_hidden(tiny, ids)
        rows = special.index[special["sentence_id"] == sid].to_numpy()
        assert special.loc[rows, "n_tokens"].eq(len(ids)).all()
        for i in range(store.n_layers):
            got = store.special_layer(i, rows)
            assert got.dtype == np.float32 and got.shape == (2, 32)
            np.testing.assert_allclose(got, hidden[i][[0, len(ids) - 1]], rtol=1e-4, atol=1e-5)
    assert store.special_layer(-1).shape == (2 * n, 32)


@pytest.fixture(scope="module")
def tiny_decoder(tmp_path_factory):
    """A 2-layer Llama (random weights) with SmolLM2's real tokenizer (no BOS by default)."""
    from importlib import metadata
    from pathlib import Path

    from transformers import AutoTokenizer, LlamaConfig, LlamaModel

    from lmgeometry.io.models import ALIASES, models_table

    if models_table().set_index("alias").loc["smollm2-135m", "converted"] == "yes":
        tok = AutoTokenizer.from_pretrained(_offline.alias_folder("smollm2-135m"))
    else:  # straight from the GGUF file (a few seconds, no conversion)
        pf = ALIASES["smollm2-135m"].files[0]
        gguf = Path(str(metadata.distribution(pf.dist).locate_file(pf.path)))
        tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=48,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=128, bos_token_id=tok.bos_token_id,
                         eos_token_id=tok.eos_token_id)
    folder = tmp_path_factory.mktemp("tiny-llama")
    LlamaModel(config).eval().save_pretrained(folder)
    tok.save_pretrained(folder)
    return models.load_model(str(folder), device="cpu")


def test_decoder_bos_is_stored_only_when_prepended(tiny_decoder, corpus, tmp_path):
    plain = activations(tiny_decoder, corpus, root=tmp_path, progress=False)
    assert plain.n_special == 0 and plain.special.empty
    assert plain.special_layer(0).shape == (0, 32)
    forced = activations(tiny_decoder, corpus, root=tmp_path, prepend_bos=True,
                         progress=False)
    special = forced.special
    bos = tiny_decoder.tokenizer.bos_token_id
    assert len(special) == len(corpus.sentences)
    assert (special["position"] == 0).all() and (special["token_id"] == bos).all()
    assert special["token"].eq(tiny_decoder.tokenizer.bos_token).all()
    # the BOS row is the hidden state at position 0 of the BOS-prefixed input
    ids = [bos, *tiny_decoder.tokenizer(corpus.sentences[1], add_special_tokens=False)
           ["input_ids"]]
    hidden = _direct_hidden(tiny_decoder, ids)
    for i in range(forced.n_layers):
        np.testing.assert_allclose(forced.special_layer(i, [1])[0], hidden[i][0], rtol=1e-4,
                                   atol=1e-5)
    # the words are the same words in both entries (the BOS never joins them)
    assert forced.words["text"].tolist() == plain.words["text"].tolist()
    assert (forced.words["first_piece"] == plain.words["first_piece"] + 1).all()


def test_float16_agrees_with_float32(tiny, corpus, tmp_path):
    s32 = activations(tiny, corpus, root=tmp_path, dtype="float32", progress=False)
    s16 = activations(tiny, corpus, root=tmp_path, dtype="float16", progress=False)
    assert s16.path != s32.path
    for a, b in zip(s16.layers(), s32.layers(), strict=True):
        assert a.dtype == np.float16
        scale = np.abs(b).max()
        assert np.abs(a.astype(np.float32) - b).max() <= 1e-2 * scale
    assert s16.size_bytes() < s32.size_bytes()


def test_cache_hit_runs_no_forward(tiny, corpus, tmp_path):
    counter = ForwardCounter(tiny.model)
    try:
        first = activations(tiny, corpus, root=tmp_path, progress=False)
        assert counter.calls > 0
        before = counter.calls
        second = activations(tiny, corpus, root=tmp_path, progress=False)
        assert second.path == first.path and counter.calls == before
        # other options are other entries
        third = activations(tiny, corpus, root=tmp_path, pooling="last", progress=False)
        assert third.path != first.path and counter.calls > before
    finally:
        counter.remove()


def test_cache_hit_from_spec_does_not_load_the_model(tiny_folder, tiny, corpus, tmp_path,
                                                     monkeypatch):
    spec = str(tiny_folder)
    assert model_fingerprint(spec) == tiny.fingerprint  # from file hashes, no model
    first = activations(tiny, corpus, root=tmp_path, progress=False)

    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded on a cache hit")

    monkeypatch.setattr(models, "load_model", refuse)
    again = activations(spec, corpus, root=tmp_path, progress=False)
    assert again.path == first.path


def test_a_spec_is_resolved_once_per_extraction(tiny_folder, tiny, corpus, tmp_path,
                                                monkeypatch):
    """activations(spec) resolves the spec once: the key and the load both use that value."""
    from lmgeometry.io import model_source

    seen = []
    source_of = model_source._source_of
    monkeypatch.setattr(model_source, "_source_of", lambda spec: seen.append(spec)
                        or source_of(spec))
    store = activations(str(tiny_folder), corpus, root=tmp_path, progress=False)  # a miss
    assert seen == [str(tiny_folder)]
    assert store.meta["fingerprint"] == tiny.fingerprint


def test_a_model_changed_after_resolution_is_refused(tiny_folder, corpus, tmp_path,
                                                     monkeypatch):
    """The entry is keyed by the files as resolved: weights changed before the load are refused
    (the load fingerprints the files again), and no entry is written."""
    import shutil

    from transformers import BertModel

    copy = shutil.copytree(tiny_folder, tmp_path / "model")
    resolved = models.resolve_model(str(copy))
    model = BertModel.from_pretrained(copy)
    with torch.no_grad():
        model.embeddings.word_embeddings.weight[0, 0] += 1.0
    model.save_pretrained(copy)
    monkeypatch.setattr(models, "resolve_model", lambda spec: resolved)
    with pytest.raises(RuntimeError, match="fingerprint changed while loading"):
        activations(str(copy), corpus, root=tmp_path / "store", progress=False)
    assert not any((tmp_path / "store").iterdir())


def test_interrupted_write_leaves_no_entry(tiny, corpus, tmp_path):
    def interrupt(done: int, total: int) -> None:
        if done >= 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        activations(tiny, corpus, root=tmp_path, batch_tokens=16, callback=interrupt,
                    progress=False)
    assert list(tmp_path.iterdir()) == []
    store = activations(tiny, corpus, root=tmp_path, batch_tokens=16, progress=False)
    assert store.n_words == len(corpus.words)


def test_too_long_error_leaves_no_entry_and_skip_counts(tiny, tmp_path):
    texts = TEXTS[:3] + [LONG] + TEXTS[3:]
    late = sentences(texts, name="with-long")
    with pytest.raises(SentenceTooLongError, match=r"sentence 3 is 83 tokens .* at most 64"):
        activations(tiny, late, root=tmp_path, progress=False)
    assert list(tmp_path.iterdir()) == []
    store = activations(tiny, late, root=tmp_path, too_long="skip", progress=False)
    assert store.skipped == [3]
    counts = store.meta["counts"]
    assert counts["sentences_skipped"] == 1 and counts["sentences_stored"] == len(TEXTS)
    assert 3 not in set(store.words["sentence_id"])
    assert store.n_words == int((late.words["sentence_id"] != 3).sum())
    assert store.words["row"].tolist() == list(range(store.n_words))


def test_stale_temporary_directories_are_removed(tiny, corpus, tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    stale = tmp_path / f".tmp-x-{host()}-{int(dead.stdout)}-abcd"
    live = tmp_path / f".tmp-y-{host()}-{os.getpid()}-abcd"
    stale.mkdir()
    live.mkdir()
    activations(tiny, corpus, root=tmp_path, progress=False)
    assert not stale.exists() and live.exists()


def test_float16_overflow_is_an_error(tiny, corpus, tmp_path):
    import copy

    loud = copy.deepcopy(tiny.model)
    with torch.no_grad():
        loud.embeddings.LayerNorm.weight.mul_(1e6)  # embedding outputs of order 1e6
    model = dataclasses.replace(tiny, model=loud, fingerprint="loud-" + tiny.fingerprint)
    with pytest.raises(OverflowError, match=r"layer 0 .* dtype='float32'"):
        activations(model, corpus, root=tmp_path, progress=False)
    assert list(tmp_path.iterdir()) == []
    store = activations(model, corpus, root=tmp_path, dtype="float32", progress=False)
    assert np.abs(store.layer(0)).max() > 65504


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_hidden_states_are_an_error(tiny, corpus, tmp_path, bad):
    import copy

    broken = copy.deepcopy(tiny.model)
    with torch.no_grad():
        broken.encoder.layer[-1].output.LayerNorm.bias[3] = bad  # one value of the last layer
    model = dataclasses.replace(tiny, model=broken, fingerprint="broken-" + tiny.fingerprint)
    for dtype in ("float16", "float32"):
        with pytest.raises(FloatingPointError, match="non-finite hidden states"):
            activations(model, corpus, root=tmp_path, dtype=dtype, progress=False)
        assert list(tmp_path.iterdir()) == []


def test_extract_cli_prints_path_and_size(tiny_folder, tmp_path, capsys):
    from lmgeometry.cli import main

    argv = ["extract", "--model", str(tiny_folder), "--corpus", "sts", "--n", "5",
            "--too-long", "skip", "--out", str(tmp_path)]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    store = open_store(out[0])
    assert store.path.parent == tmp_path
    assert "on disk" in out[1] and f"{store.n_words} words x 3 layers x 32" in out[1]
    assert store.meta["corpus"]["name"] == "sts" and store.meta["counts"]["sentences"] == 5
    assert store.meta["options"]["too_long"] == "skip" and store.dtype == np.float16


def test_per_layer_tables_carry_model_and_depth(tmp_path):
    import pandas as pd
    from conftest import array_store

    from lmgeometry.chapters.common import per_layer

    words = {"text": list("abcd")}
    a = array_store(tmp_path / "a", [np.eye(4)] * 3, words, name="a-model")
    b = array_store(tmp_path / "b", [np.eye(4)] * 5, words, name="b-model")
    assert a.label == "a-model" and a.depth(1) == 0.5 and b.depth(1) == 0.25

    def norms(store):
        return pd.DataFrame({"layer": range(store.n_layers), "depth": -1.0,
                             "norm": [float(np.abs(store.layer(i)).sum()) for i in
                                      range(store.n_layers)]})

    table = per_layer([a, b], norms)
    assert list(table.columns) == ["model", "layer", "depth", "norm"]
    assert table["model"].tolist() == ["a-model"] * 3 + ["b-model"] * 5
    assert table["depth"].tolist() == [0.0, 0.5, 1.0, 0.0, 0.25, 0.5, 0.75, 1.0]
    assert (table["norm"] == 4.0).all()
    np.testing.assert_array_equal(a.layer(0, rows=[2, 0], dtype=None), np.eye(4)[[2, 0]])
    assert a.layer(0).dtype == np.float32 and a.layer(0, dtype=None).dtype == np.float64

"""Word/piece alignment and batched hidden-state extraction (lmgeometry.activations.extract).

Alignment tests use the real tokenizers of the offline models (WordPiece: MiniLM, byte-level
BPE: SmolLM2, SentencePiece: Gemma 3) and the real spaCy word table. Forward tests compare the
extractor with direct calls of the real MiniLM (fast) and SmolLM2 (slow) models.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from lmgeometry.activations.extract import (
    SentenceTooLongError,
    encode,
    extract_words,
    iter_batches,
    plan_batches,
    plan_sharded,
    releasing_memory,
)
from lmgeometry.io.corpus import sentences

pytestmark = pytest.mark.data

def test_plan_batches_respects_budget_and_covers_all():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 60, size=200)
    batches = plan_batches(lengths, 256)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(200))
    for b in batches:
        assert len(b) * lengths[b].max() <= 256
        assert (np.diff(b) > 0).all()
    assert [len(b) for b in plan_batches([500, 3], 100)] == [1, 1]


def test_releasing_memory_returns_heap_every_few_batches(monkeypatch):
    from lmgeometry.activations import extract

    seen: list[int] = []
    calls: list[int] = []
    monkeypatch.setattr(extract, "release_freed_memory", lambda: calls.append(len(seen)))
    for item in releasing_memory(range(20), every=8):
        seen.append(item)
    assert seen == list(range(20))
    assert calls == [8, 16, 20]  # after the 8th and 16th batch's work, and after the last
    calls.clear()
    seen.clear()
    for item in releasing_memory(range(16), every=8):
        seen.append(item)
    assert calls == [8, 16]  # no second call after the last when it was just made
    with pytest.raises(ValueError, match="every must be positive"):
        releasing_memory(range(3), every=0)  # at the call, not at the first batch


def test_sharded_plan_keeps_batches_inside_shards(minilm_tokenizer):
    """A shard's batches are the batches of that shard planned alone (what a Ray worker
    forms), and no batch mixes two shards; without shards the plan is plan_batches'."""
    from types import SimpleNamespace

    texts = [" ".join(["word"] * (1 + (7 * i) % 13)) + "." for i in range(23)]
    model = SimpleNamespace(tokenizer=minilm_tokenizer, kind="encoder", max_positions=512,
                            name="minilm")
    enc = encode(model, sentences(texts, name="plan"))
    ids = enc.kept_ids()
    lengths = [s.n_tokens for s in enc.sentences]
    assert all(np.array_equal(a, b) for a, b in
               zip(plan_sharded(enc, 40), plan_batches(lengths, 40), strict=True))
    plan = plan_sharded(enc, 40, shard_sentences=5)
    assert sorted(np.concatenate(plan).tolist()) == list(range(len(ids)))
    for shard in range(5):
        mine = [b for b in plan if (ids[b] // 5 == shard).all()]
        part = encode(model, sentences(texts, name="plan"), span=(5 * shard,
                                                                   min(5 * shard + 5, 23)))
        alone = plan_sharded(part, 40)
        offset = int(np.searchsorted(ids, 5 * shard))
        assert [(b - offset).tolist() for b in mine] == [b.tolist() for b in alone]
    assert all(len(set((ids[b] // 5).tolist())) == 1 for b in plan)


# ------------------------------------------------------------------------------------------
# extraction with the real MiniLM encoder


@pytest.fixture(scope="module")
def minilm():
    from lmgeometry.io.models import load_model

    return load_model("minilm-l6", device="cpu")


def _direct(model, ids):
    """Hidden states of one sentence from a direct model call: (layers, tokens, width)."""
    with torch.inference_mode():
        out = model.model(input_ids=torch.as_tensor(ids)[None], output_hidden_states=True)
    return torch.stack(out.hidden_states)[:, 0].numpy()


def _rel_err(a, b):
    """Largest absolute difference per layer, relative to the layer's largest value."""
    return float((np.abs(a - b).max(axis=(1, 2)) / np.abs(b).max(axis=(1, 2))).max())


def test_vectors_equal_direct_model_call(minilm, hard_corpus):
    # batch_tokens=1: every sentence alone in its batch, so no padding at all
    vectors, enc = extract_words(minilm, hard_corpus, batch_tokens=1)
    firsts, _ = extract_words(minilm, hard_corpus, batch_tokens=1, pooling="first")
    lasts, _ = extract_words(minilm, hard_corpus, batch_tokens=1, pooling="last")
    assert vectors.shape == (minilm.n_layers + 1, len(hard_corpus.words), minilm.hidden_size)
    one_piece = multi = 0
    for k, s in enumerate(enc.sentences):
        hs = _direct(minilm, s.input_ids)
        al = s.alignment
        for w in range(al.n_words):
            row = enc.row_start[k] + w
            pos = al.piece_pos[al.piece_word == w]
            if len(pos) == 1:
                np.testing.assert_array_equal(vectors[:, row], hs[:, pos[0]])
                one_piece += 1
            else:
                np.testing.assert_allclose(vectors[:, row], hs[:, pos].mean(axis=1),
                                           rtol=1e-5, atol=1e-6)
                multi += 1
            np.testing.assert_array_equal(firsts[:, row], hs[:, pos[0]])
            np.testing.assert_array_equal(lasts[:, row], hs[:, pos[-1]])
    assert one_piece > 20 and multi > 5


def test_batched_equals_unbatched_encoder(minilm, hard_corpus):
    alone, _ = extract_words(minilm, hard_corpus, batch_tokens=1)
    batched, enc = extract_words(minilm, hard_corpus, batch_tokens=4096)
    assert len({s.n_tokens for s in enc.sentences}) > 1  # padding really happens
    assert _rel_err(batched, alone) < 1e-5


def test_float16_batches_are_float32_rounded(minilm, hard_corpus):
    enc = encode(minilm, hard_corpus)
    full = [wb.vectors for wb in iter_batches(minilm, enc, progress=False)]
    half = [wb.vectors for wb in iter_batches(minilm, enc, progress=False, dtype="float16")]
    assert len(half) == len(full)
    for h, f in zip(half, full, strict=True):
        assert h.dtype == np.float16 and f.dtype == np.float32
        np.testing.assert_array_equal(h, f.astype(np.float16))
    with pytest.raises(ValueError, match="dtype must be one of"):
        next(iter_batches(minilm, enc, progress=False, dtype="bfloat16"))


def test_special_tokens_are_not_words(minilm, hard_corpus):
    enc = encode(minilm, hard_corpus)
    cls, sep = minilm.tokenizer.cls_token_id, minilm.tokenizer.sep_token_id
    for s in enc.sentences:
        assert s.input_ids[0] == cls and s.input_ids[-1] == sep
        assert not np.isin([0, s.n_tokens - 1], s.alignment.piece_pos).any()
        assert s.special_pos.tolist() == [0, s.n_tokens - 1]  # kept apart, not dropped
    assert enc.bos_prepended and enc.add_special_tokens
    table = enc.special_columns(minilm.tokenizer)
    assert len(table) == enc.n_special == 2 * len(enc.sentences)
    assert table["token"].tolist() == ["[CLS]", "[SEP]"] * len(enc.sentences)
    assert (table["position"].to_numpy()[1::2] == table["n_tokens"].to_numpy()[1::2] - 1).all()


def test_encoder_refuses_forced_bos(minilm, hard_corpus):
    with pytest.raises(ValueError, match="decoders only"):
        encode(minilm, hard_corpus, prepend_bos=True)


def test_too_long_error_and_skip(minilm):
    corpus = sentences(["Short one.", "This sentence is rather longer than the others here.",
                        "Tiny."], name="lengths")
    small = dataclasses.replace(minilm, max_positions=8)
    with pytest.raises(SentenceTooLongError,
                       match=r"sentence 1 is 12 tokens long .* at most 8"):
        encode(small, corpus)
    vectors, enc = extract_words(small, corpus, too_long="skip")
    assert enc.skipped == [1]
    assert enc.kept_ids().tolist() == [0, 2]
    assert vectors.shape[1] == int((corpus.words["sentence_id"] != 1).sum())
    full, _ = extract_words(minilm, corpus, batch_tokens=1)
    keep = (corpus.words["sentence_id"] != 1).to_numpy()
    assert _rel_err(vectors, full[:, keep]) < 1e-5


# ------------------------------------------------------------------------------------------
# extraction with the real SmolLM2 decoder


@pytest.fixture(scope="module")
def smollm():
    from lmgeometry.io.models import load_model

    return load_model("smollm2-135m", device="cpu")


@pytest.mark.slow
def test_decoder_batched_equals_unbatched_and_direct(smollm, hard_corpus):
    alone, enc = extract_words(smollm, hard_corpus, batch_tokens=1)
    batched, _ = extract_words(smollm, hard_corpus, batch_tokens=4096)
    assert _rel_err(batched, alone) < 1e-5  # right padding + attention mask is exact
    assert not enc.bos_prepended  # SmolLM2's tokenizer adds no BOS by default
    s = enc.sentences[2]
    hs = _direct(smollm, s.input_ids)
    al = s.alignment
    w = int(np.flatnonzero(al.n_pieces == 1)[0])
    np.testing.assert_array_equal(alone[:, enc.row_start[2] + w], hs[:, al.first_pos[w]])


@pytest.mark.slow
def test_decoder_prepend_bos(smollm, hard_corpus):
    bos = smollm.tokenizer.bos_token_id
    plain = encode(smollm, hard_corpus, prepend_bos=False)
    forced = encode(smollm, hard_corpus, prepend_bos=True)
    assert forced.bos_prepended and not plain.bos_prepended
    for a, b in zip(plain.sentences, forced.sentences, strict=True):
        assert b.input_ids[0] == bos and (b.input_ids[1:] == a.input_ids).all()
        assert (b.alignment.piece_pos == a.alignment.piece_pos + 1).all()
    one = sentences(["The cat sat on the mat."], name="sink")
    without, _ = extract_words(smollm, one, prepend_bos=False)
    with_bos, _ = extract_words(smollm, one, prepend_bos=True)
    # without BOS the first word is the attention sink: extreme norms in the middle layers
    mid = smollm.n_layers // 2
    norm_first = np.linalg.norm(without[mid, 0])
    assert norm_first > 20 * np.linalg.norm(without[mid, 1:], axis=-1).max()
    assert np.linalg.norm(with_bos[mid, 0]) < norm_first / 20

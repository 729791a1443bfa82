"""Corpus-level measures on layers read in row chunks (issue 18: measures that stream).

A layer is handed over as a float16 memory map wrapped in a reader that records every access;
each measure must give the in-memory value and never read the whole layer at once.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lmgeometry.measures import baselines, contextual, similarity, static, tokens
from lmgeometry.measures.unit_rows import UnitRows

N_SENTENCES, LENGTH, VOCAB, WIDTH, CHUNK = 400, 10, 200, 16, 37


class Recorded:
    """A lazy (rows, width) matrix that remembers how many rows each read asked for."""

    def __init__(self, X: np.ndarray) -> None:
        self.X, self.reads = X, []
        self.shape, self.dtype, self.ndim = X.shape, X.dtype, 2

    def __len__(self) -> int:
        return len(self.X)

    def __getitem__(self, key):
        out = self.X[key]
        self.reads.append(len(out))
        return out

    def __array__(self, dtype=None, copy=None):
        raise AssertionError("the whole layer was loaded")


@pytest.fixture(scope="module")
def layer(tmp_path_factory):
    """An anisotropic float16 layer on disk (a shared direction plus word and sentence parts)
    and its words table: 400 sentences of 10 words from a 200-word vocabulary."""
    rng = np.random.default_rng(0)
    n = N_SENTENCES * LENGTH
    word = rng.zipf(1.3, size=n) % VOCAB
    sentence = np.repeat(np.arange(N_SENTENCES), LENGTH)
    X = (3.0 * rng.normal(size=WIDTH) + rng.normal(size=(VOCAB, WIDTH))[word]
         + rng.normal(size=(N_SENTENCES, WIDTH))[sentence] + rng.normal(size=(n, WIDTH)))
    path = tmp_path_factory.mktemp("layer") / "layer.npy"
    np.save(path, X.astype(np.float16))
    words = pd.DataFrame({"sentence_id": sentence, "text": [f"w{w}" for w in word],
                          "is_punct": word == 0})
    return np.load(path, mmap_mode="r"), words


def streamed(X: np.ndarray) -> tuple[UnitRows, Recorded]:
    recorded = Recorded(X)
    return UnitRows.stream(recorded, chunk_rows=CHUNK), recorded


def assert_partial_reads(recorded: Recorded) -> None:
    assert recorded.reads and max(recorded.reads) < len(recorded.X) // 2, max(recorded.reads)


@pytest.mark.parametrize("preset", ["corrected", "ethayarajh2019"])
def test_context_tables_stream(layer, preset):
    X, words = layer
    memory = contextual.context_tables(np.asarray(X), words, preset, 3, n_intra_sentences=None)
    unit, recorded = streamed(X)
    stream = contextual.context_tables(unit, words, preset, 3, n_intra_sentences=None)
    assert stream.baseline_cosine == pytest.approx(memory.baseline_cosine, rel=1e-12)
    assert stream.mev_baseline == pytest.approx(memory.mev_baseline, rel=1e-12)
    assert len(memory.words) > 50 and len(memory.sentences) == N_SENTENCES
    pd.testing.assert_frame_equal(stream.words, memory.words, rtol=1e-10)
    pd.testing.assert_frame_equal(stream.sentences, memory.sentences, rtol=1e-10)
    assert_partial_reads(recorded)


def test_baselines_replicates_and_word_vectors_stream(layer):
    X, words = layer
    sid = words["sentence_id"].to_numpy()
    memory = UnitRows.of(np.asarray(X))
    unit, recorded = streamed(X)
    for kwargs in ({"n": None}, {"n": 300, "replace": True, "scheme": "sentence"},
                   {"n": 300, "n_pairs": 500}):
        assert baselines.anisotropy_baseline(unit, sid, rng=1, **kwargs) == pytest.approx(
            baselines.anisotropy_baseline(memory, sid, rng=1, **kwargs), rel=1e-12), kwargs
    counts = np.random.default_rng(2).multinomial(N_SENTENCES, np.full(N_SENTENCES, 0.0025), 20)
    np.testing.assert_allclose(baselines.cross_sentence_replicates(unit, sid, counts),
                               baselines.cross_sentence_replicates(memory, sid, counts),
                               rtol=1e-10)
    assert baselines.mev_baseline(recorded, sid, 500, 4) == baselines.mev_baseline(
        np.asarray(X), sid, 500, 4)
    for vectors in (static.static_embeddings, static.mean_embeddings):
        a, b = vectors(unit, words), vectors(memory, words)
        assert a.keys() == b.keys() and len(a) > 50
        for key in a:
            np.testing.assert_allclose(a[key], b[key], atol=1e-12, err_msg=key)
    assert_partial_reads(recorded)


def test_frequent_words_are_read_a_chunk_at_a_time(layer):
    """MEV and PC1 of a word with more occurrences than a chunk come from its d x d Gram
    matrix accumulated over chunks; rare words' rows are read as a batch."""
    X, words = layer
    n_top = int(words["text"].value_counts().iloc[0])
    assert n_top > 4 * CHUNK  # Zipf: the most frequent words span many chunks
    unit, recorded = streamed(X)
    for preset in ("corrected", "ethayarajh2019"):
        pd.testing.assert_frame_equal(
            contextual.word_measures(unit, words, preset, 2, min_contexts=2),
            contextual.word_measures(np.asarray(X), words, preset, 2, min_contexts=2), rtol=1e-9)
    for centered, orientation in ((True, "mean"), (False, "mean"), (True, "svd_flip"),
                                  (False, "svd_flip")):
        a = static.static_embeddings(unit, words, 2, centered=centered, orientation=orientation)
        b = static.static_embeddings(np.asarray(X), words, 2, centered=centered,
                                     orientation=orientation)
        for key in a:
            np.testing.assert_allclose(a[key], b[key], atol=1e-9, err_msg=key)
    assert max(recorded.reads) < n_top
    # identical rows: no variance, so MEV is NaN and PC1 is the unit mean, as in memory
    same = np.tile(np.asarray(X[:1], dtype=np.float64), (5 * CHUNK, 1))
    flat = pd.DataFrame({"sentence_id": np.arange(len(same)), "text": "w"})
    streamed_flat = UnitRows.stream(same, chunk_rows=CHUNK)
    assert np.isnan(contextual.word_measures(streamed_flat, flat)["mev"]).all()
    np.testing.assert_allclose(static.static_embeddings(streamed_flat, flat)["w"],
                               static.static_embeddings(same, flat)["w"], atol=1e-12)


def test_token_measures_stream_but_neighbours_need_memory(layer):
    X, words = layer
    unit, recorded = streamed(X)
    pd.testing.assert_frame_equal(tokens.token_measures(unit, words),
                                  tokens.token_measures(np.asarray(X), words), rtol=1e-10)
    assert max(recorded.reads) <= CHUNK
    with pytest.raises(ValueError, match="in memory"):
        tokens.nearest_neighbours(unit)


def test_norms_read_in_chunks(layer):
    X, words = layer
    recorded = Recorded(X)
    first = words.groupby("sentence_id").cumcount().to_numpy() == 0
    assert similarity.norm_ratio(recorded, first) == pytest.approx(
        similarity.norm_ratio(np.asarray(X, dtype=np.float64), first), rel=1e-12)
    assert max(recorded.reads) <= similarity.CHUNK_ROWS


@pytest.mark.parametrize("debiased", [False, True])
def test_cka_streams(layer, debiased):
    X, _ = layer
    rng = np.random.default_rng(5)
    Y = (np.asarray(X, dtype=np.float64) @ rng.normal(size=(WIDTH, 9))
         + rng.normal(size=(len(X), 9))).astype(np.float16)
    a, b = Recorded(X), Recorded(Y)
    value = similarity.linear_cka(a, b, debiased=debiased, chunk_rows=CHUNK)
    assert value == pytest.approx(similarity.linear_cka(
        np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.float64), debiased=debiased),
        rel=1e-10)
    assert 0.1 < value < 0.99 and max(a.reads + b.reads) == CHUNK
    # the Gram-matrix form (U-centred Gram matrices when debiased) on a subset of rows
    few = np.asarray(X[:300], dtype=np.float64), np.asarray(Y[:300], dtype=np.float64)
    gram = similarity.gram_cka(list(few), debiased=debiased)[0][0, 1]
    assert similarity.linear_cka(Recorded(X[:300]), Recorded(Y[:300]), debiased=debiased,
                                 chunk_rows=CHUNK) == pytest.approx(gram, rel=1e-10)
    # known answers: a rotated, scaled, shifted copy is the same representation
    Q = np.linalg.qr(rng.normal(size=(WIDTH, WIDTH)))[0]
    copy = 2.0 * np.asarray(X, dtype=np.float64) @ Q + 5.0
    assert similarity.linear_cka(X, copy, debiased=debiased, chunk_rows=CHUNK) == \
        pytest.approx(1.0, abs=1e-9)


def test_cka_of_a_constant_representation_is_nan(layer):
    """A constant column centres to exact zeros, so no rounding residual poses as signal."""
    X, _ = layer
    for value in (0.1, 3.7):
        for debiased in (False, True):
            for chunk in (None, CHUNK):
                assert np.isnan(similarity.linear_cka(np.full((len(X), 3), value), X,
                                                      debiased=debiased, chunk_rows=chunk))


def test_column_mean_and_norms_known_answers(layer):
    X, _ = layer
    dense = np.asarray(X, dtype=np.float64)
    assert np.allclose(similarity.column_mean(Recorded(X), CHUNK), dense.mean(axis=0),
                       rtol=0, atol=1e-12)
    # 0.1 summed three times and divided by three is not 0.1 in floating point; the exact
    # form returns a constant column's value itself, other columns' means unchanged
    third = np.array([[0.1, 1.0], [0.1, 2.0], [0.1, 4.0]])
    assert similarity.column_mean(third, 2)[0] != 0.1
    exact = similarity.column_mean(third, 2, exact_constants=True)
    assert exact[0] == 0.1 and exact[1] == pytest.approx(7 / 3, rel=1e-15)
    with pytest.raises(ValueError, match="chunk_rows must be positive"):
        similarity.column_mean(third, 0)
    # norms: float16 rows as numpy computes them in float64, huge float64 rows without overflow
    assert np.allclose(similarity.row_norms(Recorded(X), CHUNK),
                       np.linalg.norm(dense, axis=1), rtol=1e-13, atol=0)
    big = np.array([[3e200, 4e200], [0.0, 0.0]])
    assert np.allclose(similarity.row_norms(big), [5e200, 0.0], rtol=1e-15)


def test_streaming_rejects_bad_input(layer):
    X, words = layer
    for chunk in (0, -1):
        with pytest.raises(ValueError, match="positive"):
            UnitRows.stream(X, chunk_rows=chunk)
        with pytest.raises(ValueError, match="positive"):
            similarity.linear_cka(X, X, chunk_rows=chunk)
    with pytest.raises(ValueError, match="same items"):
        similarity.linear_cka(X, X[:-1], chunk_rows=CHUNK)
    with pytest.raises(ValueError, match="debiased CKA needs at least 4"):
        similarity.linear_cka(X[:3], X[:3], debiased=True, chunk_rows=CHUNK)
    with pytest.raises(IndexError, match="boolean row mask"):
        UnitRows.stream(X).U[np.ones(len(X) - 1, dtype=bool)]


def test_lists_frames_and_tensors_are_still_rows():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    X = rng.normal(size=(40, 5))
    first = np.arange(40) % 4 == 0
    expected = similarity.norm_ratio(X, first)
    for form in (X.tolist(), pd.DataFrame(X), torch.from_numpy(X)):
        assert similarity.norm_ratio(form, first) == pytest.approx(expected, rel=1e-12)
        np.testing.assert_allclose(similarity.unit_rows(form)[0], similarity.unit_rows(X)[0])
    sid = np.arange(40) // 4
    assert baselines.mev_baseline(pd.DataFrame(X), sid, 20, 1) == baselines.mev_baseline(
        X, sid, 20, 1)

"""The public Python API: ``lmgeometry.hidden_states``, the lazy top-level names, ``save`` and
the results export.

The in-memory model is a real (randomly initialised, seed 0) 2-layer BERT of width 32 built
here from a ``BertConfig``, with MiniLM's tokenizer (:func:`conftest.save_bert`'s model).
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import save_bert

import lmgeometry
from lmgeometry.cli import main
from lmgeometry.errors import CorpusError, OptionalDependencyError, UsageError

TEXTS = ["The bank raised its rates on Monday.", "She sat on the river bank.",
         "Don't split co-operation!"]


def _bert(seed: int = 0):
    """save_bert's model, built in memory (training mode, as a fresh model is)."""
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(seed)
    return BertModel(BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2,
                                num_attention_heads=2, intermediate_size=48,
                                max_position_embeddings=64))


@pytest.fixture(scope="module")
def tokenizer(minilm_tokenizer):
    assert len(minilm_tokenizer) == 30522
    return minilm_tokenizer


# --- import lmgeometry stays cheap; the top-level names ----------------------------------------


def test_import_lmgeometry_imports_no_heavy_library():
    code = ("import json, sys, lmgeometry; "
            "print(json.dumps(sorted(m for m in ('torch', 'transformers', 'pandas', 'numpy', "
            "'plotly', 'spacy', 'pyarrow') if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert json.loads(out) == []


def test_every_top_level_name_resolves_to_its_module_object():
    assert "hidden_states" in lmgeometry.__all__ and "save" in lmgeometry.__all__
    for name in lmgeometry.__all__:
        if name == "__version__":
            continue
        module = importlib.import_module(lmgeometry._EXPORTS[name])
        assert getattr(lmgeometry, name) is getattr(module, name), name
        assert name in dir(lmgeometry)
    from lmgeometry.measures import cosines, isotropy, massive, similarity

    assert lmgeometry.self_similarity is cosines.self_similarity
    assert lmgeometry.isotropy_partition is isotropy.isotropy_partition
    assert lmgeometry.linear_cka is similarity.linear_cka
    assert lmgeometry.magnitude_ratio is massive.magnitude_ratio


def test_unknown_top_level_name_is_an_attribute_error_and_submodules_still_import():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        lmgeometry.nope  # noqa: B018
    from lmgeometry import sources

    assert sources.__name__ == "lmgeometry.sources"


def test_top_level_measures_give_known_answers():
    X = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    # pairs (0,1) cos 1, (0,2) and (1,2) cos 0: mean over 6 ordered pairs = 2/6
    assert lmgeometry.self_similarity(X) == pytest.approx(1 / 3)
    assert lmgeometry.linear_cka(X, 2 * X) == pytest.approx(1.0)
    H = np.ones((4, 3))
    H[0, 0] = 10.0
    assert lmgeometry.magnitude_ratio(H) == pytest.approx(10.0)


# --- hidden_states -------------------------------------------------------------------------


@pytest.mark.data
def test_in_memory_model_gives_the_forward_pass_and_is_cached(tokenizer, tmp_path):
    import torch

    model = _bert()
    assert model.training
    first = lmgeometry.hidden_states((model, tokenizer), TEXTS, dtype="float32", root=tmp_path,
                                     cache=True)
    assert model.training  # the extraction ran in eval mode; the mode is restored
    assert first.n_layers == 3 and first.width == 32
    n_words = len(first.words)
    assert n_words == first.meta["counts"]["words"]
    assert sorted(first.words["sentence_id"].unique()) == [0, 1, 2]
    for i in range(first.n_layers):
        assert first.layer(i).shape == (n_words, 32)
    assert first.meta["fingerprint"] == first.meta["model"]["fingerprint"]
    assert first.label.startswith("BertModel ")

    # known answer: "bank" is one WordPiece, so its word vector is that token's hidden state
    row = first.words.index[(first.words["sentence_id"] == 1)
                            & (first.words["text"] == "bank")][0]
    ids = tokenizer(TEXTS[1], return_tensors="pt")
    position = tokenizer.convert_ids_to_tokens(ids["input_ids"][0]).index("bank")
    model.eval()
    with torch.inference_mode():
        out = model(**ids, output_hidden_states=True).hidden_states
    model.train()
    for i in range(3):
        np.testing.assert_allclose(first.layer(i)[row], out[i][0, position].numpy(),
                                   rtol=1e-5, atol=1e-6)

    # a second call (model=..., tokenizer=...) is a cache hit with identical arrays
    second = lmgeometry.hidden_states(_bert(), TEXTS, tokenizer=tokenizer, dtype="float32",
                                      root=tmp_path, cache=True)
    assert second.path == first.path
    for i in range(3):
        np.testing.assert_array_equal(second.layer(i), first.layer(i))
    assert len(list(tmp_path.iterdir())) == 1

    # one changed weight: a new fingerprint, a new entry
    changed = _bert()
    with torch.no_grad():
        changed.embeddings.word_embeddings.weight[0, 0] += 1.0
    third = lmgeometry.hidden_states((changed, tokenizer), TEXTS, dtype="float32", root=tmp_path,
                                     cache=True)
    assert third.meta["fingerprint"] != first.meta["fingerprint"]
    assert third.path != first.path


@pytest.mark.data
def test_in_memory_model_gives_the_same_vectors_as_its_saved_folder(tokenizer, tmp_path):
    folder = save_bert(tmp_path / "bert")  # the same seed-0 model, saved with its tokenizer
    from_folder = lmgeometry.hidden_states(folder, TEXTS, dtype="float32", root=tmp_path / "s",
                                           cache=True)
    in_memory = lmgeometry.hidden_states((_bert(), tokenizer), TEXTS, dtype="float32",
                                         root=tmp_path / "s", name="my-bert", cache=True)
    assert in_memory.label == "my-bert" and from_folder.label == str(folder)
    assert from_folder.path != in_memory.path  # fingerprinted differently (files vs tensors)
    pd.testing.assert_frame_equal(from_folder.words, in_memory.words)
    for i in range(3):
        np.testing.assert_allclose(in_memory.layer(i), from_folder.layer(i), rtol=1e-5,
                                   atol=1e-6)


def test_memory_fingerprint_is_stable_and_sees_weights_and_tokenizer(tokenizer):
    import torch

    from lmgeometry.io.models import memory_fingerprint

    a = memory_fingerprint(_bert(), tokenizer)
    tokenizer(["a", "a b c"], padding=True, truncation=True)  # leaves padding state behind
    assert memory_fingerprint(_bert(), tokenizer) == a
    assert len(a) == 64
    assert memory_fingerprint(_bert(seed=1), tokenizer) != a
    model = _bert()
    model.encoder.layer[0].output.dense.bias.data[3] += 1e-3
    assert memory_fingerprint(model, tokenizer) != a
    model = _bert()
    model.config.layer_norm_eps = 1e-6
    assert memory_fingerprint(model, tokenizer) != a
    assert torch.get_default_dtype() == torch.float32


@pytest.mark.parametrize("sentences, error, message", [
    ([], CorpusError, "no sentences given"),
    ("One sentence.", TypeError, "expected a list of sentences, got one string; wrap it in a list"),
    (["Fine.", "  "], CorpusError, "sentence 1 is empty"),
    (["Fine.", 3], TypeError, "sentence 1 is a int, not a str"),
    ({"a": 1}, TypeError, "sentences must be a list of strings, not a dict"),
])
def test_bad_sentences_are_refused_before_any_work(sentences, error, message):
    with pytest.raises(error, match=r"hidden_states\(model, sentences\): " + message):
        lmgeometry.hidden_states(object(), sentences)  # the sentences are checked first


def test_bad_models_are_refused_with_the_fix(tokenizer):
    model = _bert()
    with pytest.raises(UsageError, match=r"needs its tokenizer: hidden_states\(\(model, "):
        lmgeometry.hidden_states(model, TEXTS)
    with pytest.raises(UsageError, match="model is a int; pass an offline alias"):
        lmgeometry.hidden_states(42, TEXTS)
    with pytest.raises(UsageError, match="tuple of 1"):
        lmgeometry.hidden_states((model,), TEXTS)
    with pytest.raises(UsageError, match="tokenizer is given twice"):
        lmgeometry.hidden_states((model, tokenizer), TEXTS, tokenizer=tokenizer)
    with pytest.raises(UsageError, match="brings its own tokenizer"):
        lmgeometry.hidden_states("minilm-l6", TEXTS, tokenizer=tokenizer)
    with pytest.raises(UsageError, match=r"float16 weights.*model\.float\(\)"):
        lmgeometry.hidden_states((_bert().half(), tokenizer), TEXTS, cache=True)
    assert model.training  # a refused model keeps its mode


def test_slow_tokenizer_and_training_mode_are_refused_by_from_memory(tokenizer):
    from lmgeometry.io.models import from_memory

    with pytest.raises(UsageError, match="in training mode.*model.eval"):
        from_memory(_bert(), tokenizer)
    with pytest.raises(UsageError, match="fast tokenizer.*got no tokenizer"):
        from_memory(_bert().eval(), None)


def test_activations_names_the_fix_for_an_in_memory_model(tmp_path):
    """Before, ``activations(BertModel)`` failed with "'BertModel' object has no attribute
    'spec'"."""
    from lmgeometry.activations.store import activations

    with pytest.raises(UsageError, match=r"not a BertModel.*hidden_states\(\(model, tokenizer"):
        activations(_bert(), object(), root=tmp_path)


def test_docstring_example_runs(monkeypatch, tmp_path):
    from lmgeometry import api

    monkeypatch.setenv("LMGEOMETRY_CACHE", str(tmp_path))
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in finder.find(api.hidden_states, "hidden_states", globs={}):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted >= 4 and result.failed == 0


# --- save ----------------------------------------------------------------------------------


def _figure():
    import plotly.graph_objects as go

    return go.Figure(go.Scatter(x=[0, 1, 2], y=[2, 1, 3], name="line"))


def test_save_html_needs_nothing_and_is_self_contained(tmp_path):
    path = lmgeometry.save(_figure(), tmp_path / "sub" / "fig.html")
    text = path.read_text()
    assert path == tmp_path / "sub" / "fig.html"
    assert "<html>" in text and "Plotly.newPlot" in text
    assert 'src="http' not in text and len(text) > 1_000_000  # plotly.js inside: offline


def _kaleido_works() -> bool:
    import shutil

    return importlib.util.find_spec("kaleido") is not None and any(
        shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome"))


@pytest.mark.skipif(not _kaleido_works(), reason="kaleido or Chromium not installed "
                    "(pip install 'lmgeometry[images]')")
@pytest.mark.parametrize("suffix, magic", [(".png", b"\x89PNG"), (".svg", b"<svg"),
                                           (".pdf", b"%PDF")])
def test_save_images_with_kaleido(tmp_path, suffix, magic):
    path = lmgeometry.save(_figure(), tmp_path / f"fig{suffix}", width=300, height=200)
    assert magic in path.read_bytes()[:200]


def test_save_image_without_kaleido_names_the_install(tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "kaleido" else real(name, *a))
    with pytest.raises(OptionalDependencyError, match="pip install kaleido"):
        lmgeometry.save(_figure(), tmp_path / "fig.png")
    assert not (tmp_path / "fig.png").exists()


def test_save_refuses_unknown_suffix_and_non_figures(tmp_path):
    with pytest.raises(UsageError, match=r"\.txt; use \.html"):
        lmgeometry.save(_figure(), tmp_path / "fig.txt")
    with pytest.raises(UsageError, match="must be a plotly figure"):
        lmgeometry.save([1, 2], tmp_path / "fig.html")


# --- results export ------------------------------------------------------------------------

RESULTS = {
    "layers": [{"model": "a", "layer": 0, "depth": 0.0, "value": 0.25, "value_hi": None},
               {"model": "a", "layer": 1, "depth": 1.0, "value": -1.5, "value_hi": 2.0}],
    "claims": [{"claim": "x holds", "verdict": "holds", "applies": True, "caveats": ["c1"]},
               {"claim": "y, \"quoted\"", "verdict": "inconclusive", "applies": False,
                "caveats": []}],
    "models": {"inner": [{"name": "m", "n": 3}]},
    "sentences": ["A generated sentence."],
    "parameters": {"models": ["a"], "seed": 0},
}


def test_results_tables_finds_every_list_of_records():
    from lmgeometry.report.export import results_tables

    tables = results_tables(RESULTS)
    assert sorted(tables) == ["claims", "layers", "models.inner"]
    layers = tables["layers"]
    assert list(layers.columns) == ["model", "layer", "depth", "value", "value_hi"]
    assert layers["value"].tolist() == [0.25, -1.5]
    assert np.isnan(layers["value_hi"][0])
    assert tables["claims"]["caveats"].tolist() == ['["c1"]', "[]"]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_export_round_trip_equals_the_tables(tmp_path, fmt):
    from lmgeometry.report.export import results_tables

    results = tmp_path / "01_test.results.json"
    results.write_text(json.dumps(RESULTS))
    written = lmgeometry.export_results(results, tmp_path / "out", format=fmt)
    assert sorted(p.name for p in written) == [f"claims.{fmt}", f"layers.{fmt}",
                                               f"models.inner.{fmt}"]
    expected = results_tables(results)
    read = pd.read_csv if fmt == "csv" else pd.read_parquet
    for path in written:
        pd.testing.assert_frame_equal(read(path), expected[path.name.removesuffix(f".{fmt}")])


def test_export_a_book_folder_and_the_command(tmp_path, capsys):
    book = tmp_path / "book"
    book.mkdir()
    (book / "01_a.results.json").write_text(json.dumps(RESULTS))
    (book / "02_b.results.json").write_text(json.dumps({"rows": [{"x": 1}, {"x": 2}]}))
    (book / "02_b.exec.json").write_text("{}")  # not a results file
    written = lmgeometry.export_results(book, tmp_path / "out", format="parquet")
    assert sorted(str(p.relative_to(tmp_path / "out")) for p in written) == [
        "01_a/claims.parquet", "01_a/layers.parquet", "01_a/models.inner.parquet",
        "02_b/rows.parquet"]
    assert main(["results", "export", str(book / "02_b.results.json"), "--out",
                 str(tmp_path / "cli")]) == 0
    assert pd.read_csv(tmp_path / "cli" / "rows.csv")["x"].tolist() == [1, 2]
    assert "1 table(s) written as csv" in capsys.readouterr().out
    assert main(["results", "export", str(tmp_path / "missing.json"), "--out",
                 str(tmp_path / "cli")]) == 2
    assert "does not exist" in capsys.readouterr().err
    with pytest.raises(UsageError, match="format must be one of"):
        lmgeometry.export_results(book, tmp_path / "x", format="xlsx")

"""The ONNX Runtime backend (lmgeometry.activations.onnx_runtime): every hidden state of a
tiny random BERT and GPT-2 (``tests/fixtures/seed_models.py``) equals torch's, the exported
graph is cached and checked, and float16 agreement is counted as stored values would be."""

from __future__ import annotations

import dataclasses
import json
import logging
import sys

import numpy as np
import pytest
import torch
from fixtures.seed_models import bert_folder, gpt2_folder

pytest.importorskip("onnxruntime", reason="the ONNX backend needs onnxruntime (requirements.txt)")
pytest.importorskip("onnx", reason="exporting to ONNX needs onnx (requirements.txt)")

from lmgeometry.activations.extract import extract_words  # noqa: E402
from lmgeometry.activations.maintenance import list_entries  # noqa: E402
from lmgeometry.activations.onnx_runtime import (  # noqa: E402
    float16_agreement,
    graph_key,
    onnx_graph,
    onnx_model,
    with_onnx,
)
from lmgeometry.activations.store import activations, open_store, store_key  # noqa: E402
from lmgeometry.errors import UsageError  # noqa: E402
from lmgeometry.io.corpus import sentences  # noqa: E402
from lmgeometry.io.models import load_model  # noqa: E402

TEXTS = [
    "The bank raised its rates on Monday.",
    "She sat on the river bank and watched the water.",
    "Go",
    "Don't split co-operation: 3.14 naïve café words!",
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A 3-block BERT (WordPiece) and a 2-block GPT-2 (GPT-2's tokenizer), random weights."""
    root = tmp_path_factory.mktemp("onnx-models")
    return {"bert": load_model(str(bert_folder(root / "bert")), device="cpu"),
            "gpt2": load_model(str(gpt2_folder(root / "gpt2")), device="cpu")}


def _batch(model, texts):
    """Right-padded ids and mask of ``texts`` with the model's own template."""
    rows = [model.tokenizer(t)["input_ids"] for t in texts]
    width = max(len(r) for r in rows)
    ids = torch.zeros((len(rows), width), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, r in enumerate(rows):
        ids[i, :len(r)] = torch.tensor(r)
        mask[i, :len(r)] = 1
    return ids, mask


@pytest.mark.data
@pytest.mark.parametrize("name", ["bert", "gpt2"])
def test_every_hidden_state_equals_torch(tiny, tmp_path, name):
    """Padded batches of other shapes than the traced one (a one-token row for GPT-2
    included): every layer at every real token within 1e-4 of the torch model's."""
    model = tiny[name]
    ort = onnx_model(model, root=tmp_path, threads=1)
    for texts in (TEXTS, TEXTS[2:3], TEXTS[:2]):
        ids, mask = _batch(model, texts)
        with torch.inference_mode():
            ref = model.model.base_model(input_ids=ids, attention_mask=mask,
                                         output_hidden_states=True).hidden_states
        got = ort(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states
        assert len(got) == len(ref) == model.n_layers + 1
        real = mask.bool()
        for layer, (a, b) in enumerate(zip(ref, got, strict=True)):
            assert b.dtype == torch.float32 and b.shape == a.shape
            assert torch.allclose(a[real], b[real], atol=1e-4, rtol=0), (name, layer)


@pytest.mark.data
@pytest.mark.parametrize("name", ["bert", "gpt2"])
def test_extractor_loop_runs_the_graph_unchanged(tiny, tmp_path, name):
    """``extract_words`` on :func:`with_onnx`'s model gives the torch word vectors."""
    model = tiny[name]
    corpus = sentences(TEXTS, name="onnx")
    ref, enc = extract_words(model, corpus)
    got, enc_ort = extract_words(with_onnx(model, root=tmp_path), corpus)
    assert got.shape == ref.shape == (model.n_layers + 1, enc.n_words, model.hidden_size)
    assert enc_ort.n_words == enc.n_words
    np.testing.assert_allclose(got, ref, atol=1e-4, rtol=0)


@pytest.mark.data
def test_cached_graph_is_reused_and_a_corrupted_one_rebuilt(tiny, tmp_path, caplog):
    model = tiny["bert"]
    path = onnx_graph(model, root=tmp_path)
    meta = json.loads((path.parent / "meta.json").read_text())
    assert meta["key"] == graph_key(model) and meta["fingerprint"] == model.fingerprint
    first = path.stat().st_mtime_ns, path.stat().st_ino
    assert onnx_graph(model, root=tmp_path) == path
    assert (path.stat().st_mtime_ns, path.stat().st_ino) == first  # reused, not rewritten
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="lmgeometry.activations.onnx_runtime"):
        again = onnx_graph(model, root=tmp_path)
    assert again == path and "model.onnx changed" in caplog.text
    import hashlib

    assert hashlib.sha256(path.read_bytes()).hexdigest() == meta["files"]["model.onnx"]
    assert graph_key(model, "dynamo") != graph_key(model)
    assert len(list(tmp_path.iterdir())) == 1  # no temporary folder left behind


class _LastOnly(torch.nn.Module):
    """A model body that answers ``output_hidden_states=True`` with its last layer only."""

    def __init__(self, net: torch.nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, **kwargs):
        from transformers.modeling_outputs import BaseModelOutput

        return BaseModelOutput(last_hidden_state=self.net(**kwargs).last_hidden_state)


@pytest.mark.data
def test_model_without_hidden_states_gets_a_clear_error(tiny, tmp_path):
    model = tiny["bert"]
    broken = dataclasses.replace(model, model=_LastOnly(model.model.base_model))
    with pytest.raises(UsageError, match="gave 0 hidden states.*torch backend"):
        onnx_graph(broken, root=tmp_path)
    assert not any(tmp_path.iterdir())  # nothing half-written stays in the cache


@pytest.mark.data
def test_exporter_and_call_options_are_checked(tiny, tmp_path):
    with pytest.raises(UsageError, match="exporter must be one of"):
        onnx_graph(tiny["bert"], exporter="jit", root=tmp_path)


def test_float16_agreement_known_answers():
    """Identical arrays change nothing; a shift of 0.4 float16 steps at 1.0 stays below half
    a step and rounds back, 0.6 steps changes the stored value by one step, 2.5 by two."""
    step = 2.0 ** -10  # float16 spacing at 1.0
    ref = np.ones((3, 4), dtype=np.float32)
    same = float16_agreement(ref, ref.copy())
    assert same["changed"] == same["beyond_one_ulp"] == 0 and same["max_abs"] == 0
    assert same["below_half_ulp"] == 1.0
    near = float16_agreement(ref, ref + np.float32(0.4 * step))
    assert near["changed"] == 0 and near["below_half_ulp"] == 1.0
    assert near["max_rel"] == pytest.approx(0.4 * step, rel=1e-3)
    over = ref.copy()
    over[0, 0] += 0.6 * step
    over[1, 1] += 2.5 * step
    got = float16_agreement(ref, over)
    assert (got["changed"], got["beyond_one_ulp"]) == (2, 1)
    assert got["below_half_ulp"] == pytest.approx(10 / 12)
    with pytest.raises(ValueError, match="differ in shape"):
        float16_agreement(ref, ref[:2])


# --- the backend of the store: activations(..., backend="onnxruntime") ----------------------

@pytest.fixture()
def onnx_cache(tmp_path, monkeypatch):
    """The exported graphs go to a cache of this test's own (the store root is given)."""
    from lmgeometry.io import paths

    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def _one_step_apart(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether float16 arrays differ by at most one float16 step of the larger value: two
    roundings of values closer than half a step can be no further apart."""
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    step = np.spacing(np.maximum(np.abs(a), np.abs(b))).astype(np.float32)
    return bool((np.abs(a32 - b32) <= step).all())


@pytest.mark.data
@pytest.mark.parametrize("name", ["bert", "gpt2"])
def test_store_on_onnxruntime_agrees_with_torch_and_is_kept_apart(tiny, tmp_path, onnx_cache,
                                                                   name):
    """Both backends' stores of one corpus: float32 values within 1e-4 of each other (special
    tokens too), float16 values at most one rounding step apart; two entries, the ORT one
    recording its backend, its code (onnx_runtime.py) and onnxruntime's version, and checked
    by content when served again."""
    model, corpus = tiny[name], sentences(TEXTS, name="onnx-store")
    for dtype in ("float32", "float16"):
        ref = activations(model, corpus, root=tmp_path / "store", dtype=dtype, progress=False)
        got = activations(model, corpus, root=tmp_path / "store", dtype=dtype, progress=False,
                          backend="onnxruntime")
        assert got.path != ref.path and got.n_layers == ref.n_layers == model.n_layers + 1
        assert got.words["text"].tolist() == ref.words["text"].tolist()
        for i in range(ref.n_layers):
            a, b = ref.layer(i, dtype=None), got.layer(i, dtype=None)
            assert a.dtype == b.dtype == np.dtype(dtype)
            if dtype == "float32":
                np.testing.assert_allclose(b, a, atol=1e-4, rtol=0)
                np.testing.assert_allclose(got.special_layer(i), ref.special_layer(i),
                                           atol=1e-4, rtol=0)
            else:
                assert _one_step_apart(a, b), (name, i)
    meta = got.meta
    assert meta["options"]["backend"] == "onnxruntime" and "backend" not in ref.meta["options"]
    assert meta["extraction"]["backend"] == "onnxruntime"
    assert "activations/onnx_runtime.py" in meta["code"]
    assert "activations/onnx_runtime.py" not in ref.meta["code"]
    assert {"onnxruntime", "onnx"} <= set(meta["versions"])
    assert any((onnx_cache / "onnx").iterdir())  # the graph, in the cache
    listed = list_entries([tmp_path / "store"])  # current for the running code: kept by clean
    assert len(listed) == 4 and (listed["current"] == "yes").all()
    got.verify()
    layer = got.path / "layer_01.npy"
    data = bytearray(layer.read_bytes())
    data[-1] ^= 0xFF  # same size: only the content check sees it
    layer.write_bytes(bytes(data))
    again = activations(model, corpus, root=tmp_path / "store", dtype="float16", progress=False,
                        backend="onnxruntime", verify=True)
    assert again.path == got.path and layer.read_bytes() != bytes(data)  # rebuilt
    assert any(p.name.startswith(".set-aside-") for p in (tmp_path / "store").iterdir())


@pytest.mark.data
def test_backend_is_in_the_key_only_when_it_is_not_torch(tiny):
    """The torch key is the one of the payload without a backend (as every entry written before
    backends existed was keyed), on the extraction modules alone; onnxruntime's differs and is
    keyed on onnx_runtime.py too."""
    import hashlib

    from lmgeometry import sources
    from lmgeometry.activations.entry import FORMAT_VERSION, extraction_code

    opts = {"pooling": "mean", "prepend_bos": None, "too_long": "error", "dtype": "float16"}
    fp, digest = tiny["bert"].fingerprint, sentences(TEXTS, name="k").digest()
    code = sources.key_files("lmgeometry.activations.extract")
    assert sorted(code) == ["activations/align.py", "activations/extract.py"]
    old = hashlib.sha256(json.dumps(
        {"format": FORMAT_VERSION, "model": fp, "corpus": digest, **opts,
         "code": sources.code_digest(code)}, sort_keys=True).encode()).hexdigest()
    assert store_key(fp, digest, **opts) == store_key(fp, digest, **opts, backend="torch") == old
    assert extraction_code() == extraction_code("torch") == code
    ort_code = extraction_code("onnxruntime")
    assert set(ort_code) == set(code) | {"activations/onnx_runtime.py"}
    ort = store_key(fp, digest, **opts, backend="onnxruntime")
    assert ort != old and len(ort) == 64


@pytest.mark.data
def test_bad_backends_are_refused_with_the_fix(tiny, tmp_path, onnx_cache, monkeypatch):
    """An unknown name, onnxruntime missing and a model that does not export: each a clear
    error before anything is stored."""
    from lmgeometry import hidden_states
    from lmgeometry.errors import OptionalDependencyError

    model, corpus, root = tiny["bert"], sentences(TEXTS[:2], name="bad"), tmp_path / "store"
    with pytest.raises(UsageError, match="backend must be one of .*not 'tensorrt'"):
        activations(model, corpus, root=root, backend="tensorrt")
    with pytest.raises(UsageError, match="backend must be one of"):
        hidden_states(model, TEXTS[:2], root=root, backend="ort", cache=True)
    broken = dataclasses.replace(model, model=_LastOnly(model.model.base_model),
                                 fingerprint="broken-" + model.fingerprint)
    with pytest.raises(UsageError, match="gave 0 hidden states.*torch backend"):
        activations(broken, corpus, root=root, progress=False, backend="onnxruntime")
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # Python's mark of "cannot import"
    with pytest.raises(OptionalDependencyError, match="onnxruntime package.*requirements.txt"):
        activations(model, corpus, root=root, backend="onnxruntime")
    assert not root.exists() or not any(p for p in root.iterdir()
                                        if not p.name.startswith("."))


@pytest.mark.data
def test_extract_command_with_backend_onnxruntime(tiny, tmp_path, onnx_cache, capsys):
    """``lmgeometry extract --backend onnxruntime`` end to end on the tiny BERT's folder: an
    entry of its own beside the torch one, within 1e-4 of it (float32); a bad name is a usage
    error (exit 2)."""
    from lmgeometry.cli import main

    folder = tiny["bert"].spec
    argv = ["extract", "--model", folder, "--corpus", "sts", "--n", "5", "--too-long", "skip",
            "--dtype", "float32", "--out", str(tmp_path / "store")]
    assert main(argv) == 0
    torch_path = capsys.readouterr().out.splitlines()[0]
    assert main([*argv, "--backend", "onnxruntime"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] != torch_path and out[1].endswith("backend onnxruntime")
    ref, got = open_store(torch_path), open_store(out[0], verify=True)
    assert got.meta["options"]["backend"] == "onnxruntime" and got.n_words == ref.n_words
    for i in range(ref.n_layers):
        np.testing.assert_allclose(got.layer(i), ref.layer(i), atol=1e-4, rtol=0)
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--backend", "tensorrt"])
    assert exit_info.value.code == 2

"""The ONNX Runtime backend (lmgeometry.activations.onnx_runtime): every hidden state of a
tiny random BERT and GPT-2 (``tests/fixtures/seed_models.py``) equals torch's, the exported
graph is cached and checked, and float16 agreement is counted as stored values would be."""

from __future__ import annotations

import dataclasses
import json
import logging

import numpy as np
import pytest
import torch
from fixtures.seed_models import bert_folder, gpt2_folder

pytest.importorskip("onnxruntime", reason="the ONNX backend needs onnxruntime (requirements.txt)")
pytest.importorskip("onnx", reason="exporting to ONNX needs onnx (requirements.txt)")

from lmgeometry.activations.extract import extract_words  # noqa: E402
from lmgeometry.activations.onnx_runtime import (  # noqa: E402
    float16_agreement,
    graph_key,
    onnx_graph,
    onnx_model,
    with_onnx,
)
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

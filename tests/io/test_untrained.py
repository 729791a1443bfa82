"""Untrained twins of models (lmgeometry.io.untrained, through lmgeometry.io.model_source)."""

import json

import pytest
import torch

from lmgeometry.errors import ModelSpecError
from lmgeometry.io.model_source import check_spec, resolve_model
from lmgeometry.io.models import load_model
from lmgeometry.io.untrained import base_spec, is_untrained


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LMGEOMETRY_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_twin_has_the_architecture_and_tokenizer_but_not_the_weights(tiny_folder, cache):
    spec = f"untrained:{tiny_folder}"
    twin, base = load_model(spec, device="cpu"), load_model(str(tiny_folder), device="cpu")
    assert twin.spec == spec and twin.kind == "encoder" and twin.objective.startswith("none")
    assert twin.name == f"untrained {tiny_folder.name}" and "null model" in twin.caveats[0]
    assert twin.model.config.to_dict() | {"_name_or_path": ""} == \
        base.model.config.to_dict() | {"_name_or_path": ""}
    assert twin.tokenizer.get_vocab() == base.tokenizer.get_vocab()
    # the tiny model is itself BertModel(config) drawn under torch seed 0, so its twin (the
    # architecture's own initialisation under seed 0) is exactly it: a known answer
    base_state, twin_state = base.model.state_dict(), twin.model.state_dict()
    assert base_state.keys() == twin_state.keys()
    assert all(torch.equal(base_state[k], twin_state[k]) for k in base_state)
    marker = json.loads(next(cache.rglob("lmgeometry-untrained.json")).read_text())
    assert marker["base"] == str(tiny_folder) and marker["seed"] == 0
    assert marker["base_fingerprint"] == resolve_model(str(tiny_folder)).fingerprint


def test_a_pretrained_models_twin_has_fresh_weights(cache):
    twin, base = load_model("untrained:minilm-l6", device="cpu"), load_model("minilm-l6")
    w_twin = twin.model.embeddings.word_embeddings.weight
    w_base = base.model.embeddings.word_embeddings.weight
    assert w_twin.shape == w_base.shape and not torch.allclose(w_twin, w_base)
    # BERT's initialisation: N(0, 0.02) weights, LayerNorm gain 1 (the trained ones are not)
    assert float(w_twin[1:].std()) == pytest.approx(0.02, rel=0.02)
    gain = twin.model.embeddings.LayerNorm.weight
    assert torch.equal(gain, torch.ones_like(gain))
    assert not torch.equal(base.model.embeddings.LayerNorm.weight, gain)


def test_a_twin_is_the_same_bytes_when_built_again_and_rebuilt_when_damaged(tiny_folder, cache):
    import shutil

    spec = f"untrained:{tiny_folder}"
    first = resolve_model(spec)
    shutil.rmtree(first.folder)
    again = resolve_model(spec)
    assert again.folder == first.folder and again.fingerprint == first.fingerprint
    weights = again.folder / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    repaired = resolve_model(spec)
    assert repaired.fingerprint == first.fingerprint  # damage is seen and the twin rebuilt
    # a killed build leaves only a temporary folder, never taken as the twin
    root = first.folder.parent
    (root / f".tmp-{first.folder.name}-1-dead").mkdir()
    shutil.rmtree(first.folder)
    assert resolve_model(spec).fingerprint == first.fingerprint
    assert not list(root.glob(".tmp-*"))


def test_one_model_saved_in_two_folders_has_one_twin(tiny_folder, tmp_path, cache):
    import shutil

    copy = tmp_path / "elsewhere" / tiny_folder.name
    shutil.copytree(tiny_folder, copy)
    first, second = (resolve_model(f"untrained:{f}") for f in (tiny_folder, copy))
    assert first.folder == second.folder  # keyed by the files' fingerprint, not the path
    assert len(list((cache / "models" / "untrained").iterdir())) == 2  # the twin and its lock


@pytest.mark.parametrize("spec", ["untrained:", "untrained:untrained:minilm-l6"])
def test_a_malformed_twin_spec_names_the_fix(spec):
    with pytest.raises(ModelSpecError, match="write 'untrained:' once"):
        resolve_model(spec)


def test_a_twin_of_a_missing_model_is_refused_before_anything_is_built(tmp_path, cache):
    with pytest.raises(ModelSpecError, match="no such folder"):
        check_spec(f"untrained:{tmp_path / 'nothing'}")
    with pytest.raises(ModelSpecError, match="no such folder"):
        resolve_model(f"untrained:{tmp_path / 'nothing'}")
    assert not (cache / "models" / "untrained").exists() or not any(
        (cache / "models" / "untrained").iterdir())


def test_spec_helpers():
    assert is_untrained("untrained:gpt2") and not is_untrained("gpt2")
    assert base_spec("untrained:gpt2") == "gpt2"

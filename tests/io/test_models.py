"""Tests for lmgeometry.io.models: offline aliases, local folders, the hub path, cache safety.

The real pretrained models load from the user cache (converted once, reused by CI runs); only
the tests about the cache itself point ``LMGEOMETRY_CACHE`` at a temporary folder. The hub-id
path is exercised with tiny models built here from small configs (random weights) and the real
tokenizers of the offline models.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from transformers import (
    BertConfig,
    BertModel,
    GPT2Config,
    GPT2LMHeadModel,
    T5Config,
    T5Model,
)

from lmgeometry.io import _offline, model_source, models
from lmgeometry.io.models import ALIASES, LoadedModel, ModelLoadError, load_model, models_table

SENTENCE = "The capital of France is"


def hidden_states(loaded: LoadedModel, text: str = SENTENCE) -> tuple[torch.Tensor, ...]:
    enc = loaded.tokenizer([text], return_tensors="pt").to(loaded.device)
    with torch.inference_mode():
        out = loaded.model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                           output_hidden_states=True)
    return out.hidden_states


def expected_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


# --------------------------------------------------------------------------------------------
# Tiny locally built models with the real tokenizers of the offline models (conftest.py)
# --------------------------------------------------------------------------------------------


def save_tiny(model: torch.nn.Module, tokenizer, folder: Path) -> Path:
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory, smollm2_tokenizer) -> Path:
    """A 2-layer GPT-2 (random weights, 64 positions) with SmolLM2's tokenizer."""
    torch.manual_seed(0)
    tok = smollm2_tokenizer
    config = GPT2Config(vocab_size=len(tok), n_positions=64, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    return save_tiny(GPT2LMHeadModel(config), tok, tmp_path_factory.mktemp("tiny-gpt2"))


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory, minilm_tokenizer) -> Path:
    """A 2-layer BERT (random weights, 128 positions) with MiniLM's WordPiece tokenizer."""
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(minilm_tokenizer), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=128)
    return save_tiny(BertModel(config), minilm_tokenizer, tmp_path_factory.mktemp("tiny-bert"))


# --------------------------------------------------------------------------------------------
# The table of offline aliases (configs and GGUF headers only, no weights)
# --------------------------------------------------------------------------------------------


def test_models_table_reads_shapes_without_loading():
    table = models_table()
    assert list(table.columns) == ["alias", "model", "kind", "installed", "converted",
                                   "layers x width"]
    rows = table.set_index("alias")
    assert list(rows.index) == ["minilm-l6", "mpnet-base", "smollm2-135m", "gemma3-270m"]
    assert rows["installed"].all(), "requirements-offline-models.txt is not installed"
    # MiniLM from its config.json, MPNet from config.json inside the split zip (or the cache),
    # the two decoders from GGUF metadata read across the split parts (or the cache).
    assert rows["layers x width"].to_dict() == {
        "minilm-l6": "6 x 384", "mpnet-base": "12 x 768",
        "smollm2-135m": "30 x 576", "gemma3-270m": "18 x 640",
    }
    assert rows.loc["minilm-l6", "converted"] == "not needed"
    assert all(c in {"yes", "no", "not needed"} or c.startswith("again on next use: ")
               for c in rows["converted"])
    assert rows["kind"].to_dict() == {"minilm-l6": "encoder", "mpnet-base": "encoder",
                                      "smollm2-135m": "decoder", "gemma3-270m": "decoder"}


def test_leftover_temp_folder_is_not_complete(tmp_path, monkeypatch):
    """A killed conversion leaves .tmp-* (even a complete-looking one) or an unmarked folder:
    neither counts as converted."""
    monkeypatch.setenv("LMGEOMETRY_CACHE", str(tmp_path))
    alias = ALIASES["smollm2-135m"]
    final = _offline._converted_folder(alias)
    leftover = final.parent / ".tmp-12345-deadbeef"
    leftover.mkdir()
    for name in ("config.json", "model.safetensors", "tokenizer.json", _offline._MARKER):
        (leftover / name).write_text("{}")
    assert models_table().set_index("alias").loc["smollm2-135m", "converted"] == "no"
    final.mkdir()
    (final / "config.json").write_text("{}")  # a folder without the marker written last
    assert models_table().set_index("alias").loc["smollm2-135m", "converted"] == "no"
    (final / _offline._MARKER).write_text("{}")  # complete, but records no checksums
    assert models_table().set_index("alias").loc["smollm2-135m", "converted"] == (
        "again on next use: it records no checksums (converted by an older version of "
        "lmgeometry)")
    digest = _offline.checksums.sha256_file(final / "config.json")
    (final / _offline._MARKER).write_text(json.dumps({"outputs": {"config.json": digest}}))
    assert models_table().set_index("alias").loc["smollm2-135m", "converted"] == "yes"
    (final / "config.json").write_text('{"x": 1}')  # changed after the conversion
    assert models_table().set_index("alias").loc["smollm2-135m", "converted"] == (
        "again on next use: it has config.json missing or changed since the conversion")


# --------------------------------------------------------------------------------------------
# Local folders with tiny models and real tokenizers
# --------------------------------------------------------------------------------------------


def test_tiny_gpt2_folder(tiny_gpt2, smollm2_tokenizer):
    loaded = load_model(str(tiny_gpt2))
    assert loaded.kind == "decoder"
    assert type(loaded.model).__name__ == "GPT2LMHeadModel"  # causal LM: generation works
    assert (loaded.n_layers, loaded.hidden_size) == (2, 32)
    assert loaded.position_scheme == "learned absolute"
    assert loaded.max_positions == 64
    assert loaded.prepends_bos is False  # SmolLM2's tokenizer adds no BOS
    assert loaded.tokenizer.is_fast
    assert loaded.special_tokens["eos_token"] == smollm2_tokenizer.eos_token
    assert not loaded.model.training
    assert all(p.dtype == torch.float32 for p in loaded.model.parameters())
    assert loaded.device == expected_device()
    assert next(loaded.model.parameters()).device.type == expected_device().type
    states = hidden_states(loaded)
    n_tokens = len(smollm2_tokenizer(SENTENCE)["input_ids"])
    assert len(states) == 3
    assert all(tuple(h.shape) == (1, n_tokens, 32) for h in states)
    enc = loaded.tokenizer([SENTENCE], return_tensors="pt").to(loaded.device)
    out = loaded.model.generate(**enc, max_new_tokens=3, do_sample=False)
    assert out.shape == (1, n_tokens + 3)
    facts = loaded.facts()
    assert json.loads(json.dumps(facts)) == facts
    assert facts["kind"] == "decoder" and facts["n_layers"] == 2 and facts["device"]
    assert "model" not in facts and "tokenizer" not in facts
    assert loaded.caveats == []
    # GPT-2's blocks normalise before each sublayer and after the last; its LM head is wte
    assert facts["normalisation"] == "LayerNorm, pre-norm, final norm"
    assert facts["tied_embeddings"] == "yes"
    assert facts["objective"] == "causal LM (fine-tuning, if any, not known)"


def test_tiny_bert_folder(tiny_bert, minilm_tokenizer):
    loaded = load_model(str(tiny_bert))
    assert loaded.kind == "encoder"
    assert type(loaded.model).__name__ == "BertModel"
    assert (loaded.n_layers, loaded.hidden_size) == (2, 32)
    assert loaded.position_scheme == "learned absolute"
    assert loaded.max_positions == 128
    assert loaded.prepends_bos is False  # BERT starts with [CLS] and has no BOS token
    assert loaded.special_tokens["cls_token"] == "[CLS]"
    states = hidden_states(loaded)
    n_tokens = len(minilm_tokenizer(SENTENCE)["input_ids"])
    assert len(states) == 3 and tuple(states[-1].shape) == (1, n_tokens, 32)
    facts = loaded.facts()
    assert json.loads(json.dumps(facts)) == facts
    assert facts["vocab_size"] == len(minilm_tokenizer)
    assert facts["normalisation"] == "LayerNorm, post-norm"
    # BertModel has no masked-LM head; its config ties one to the input embeddings
    assert facts["tied_embeddings"] == "yes (config; no LM head loaded)"
    assert facts["objective"] == ("masked LM and next-sentence prediction (fine-tuning, if any, "
                                  "not known)")


def test_untied_output_layer_is_reported(tmp_path, smollm2_tokenizer):
    torch.manual_seed(0)
    tok = smollm2_tokenizer
    config = GPT2Config(vocab_size=len(tok), n_positions=32, n_embd=16, n_layer=1, n_head=2,
                        tie_word_embeddings=False)
    folder = save_tiny(GPT2LMHeadModel(config), tok, tmp_path / "untied")
    assert load_model(str(folder)).facts()["tied_embeddings"] == "no"


def test_fingerprint_follows_content_not_location(tiny_bert, tmp_path):
    first = load_model(str(tiny_bert)).fingerprint
    assert len(first) == 64 and int(first, 16) >= 0
    copy = shutil.copytree(tiny_bert, tmp_path / "copy")
    assert load_model(str(copy)).fingerprint == first
    model = BertModel.from_pretrained(copy)
    with torch.no_grad():
        model.embeddings.word_embeddings.weight[0, 0] += 1.0
    model.save_pretrained(copy)
    assert load_model(str(copy)).fingerprint != first


def test_resolve_fingerprint_matches_load_model(tiny_gpt2):
    """The store keys activations by fingerprint without loading weights: it must agree."""
    assert models.resolve_fingerprint(str(tiny_gpt2)) == load_model(str(tiny_gpt2)).fingerprint
    assert models.resolve_fingerprint("minilm-l6") == load_model("minilm-l6").fingerprint


def test_resolve_model_alias_and_folder(tiny_gpt2, tmp_path, monkeypatch):
    """A spec resolves once into its source, folder and fingerprint, the ones loading gives."""
    alias = models.resolve_model("minilm-l6")
    assert (alias.source, alias.name, alias.folder, alias.revision) == (
        "alias", ALIASES["minilm-l6"].name, None, None)
    assert alias.fingerprint == _offline.alias_fingerprint("minilm-l6")
    assert alias.caveats == ALIASES["minilm-l6"].caveats
    copy = shutil.copytree(tiny_gpt2, tmp_path / "tiny")
    monkeypatch.chdir(tmp_path)
    folder = models.resolve_model("./tiny")  # relative: resolved against the working directory
    assert (folder.source, folder.name, folder.folder, folder.revision) == (
        "folder", "tiny", copy.resolve(), None)
    assert folder.fingerprint == load_model(str(tiny_gpt2)).fingerprint
    assert models.resolve_model(folder) is folder


def test_a_resolved_model_is_not_resolved_again(tiny_gpt2, monkeypatch):
    """Loading and fingerprinting take the resolved value: the spec string is read once."""
    resolved = models.resolve_model(str(tiny_gpt2))

    def refuse(spec):
        raise AssertionError(f"{spec!r} was resolved again")

    monkeypatch.setattr(model_source, "_source_of", refuse)
    loaded = load_model(resolved)
    assert (loaded.spec, loaded.name, loaded.fingerprint) == (
        str(tiny_gpt2), tiny_gpt2.name, resolved.fingerprint)
    assert models.resolve_fingerprint(resolved) == resolved.fingerprint
    assert models.pretrained_source(resolved)[::2] == (str(tiny_gpt2.resolve()), "decoder")
    with pytest.raises(AssertionError, match="resolved again"):
        models.resolve_model(str(tiny_gpt2))


def test_a_hand_made_resolved_model_is_checked(tiny_gpt2):
    with pytest.raises(ModelLoadError, match="source must be 'alias', 'folder' or 'hub'"):
        models.ResolvedModel("x", "url", "x", None, None, None)  # type: ignore[arg-type]
    with pytest.raises(ModelLoadError, match="a folder source needs its folder"):
        models.ResolvedModel(str(tiny_gpt2), "folder", "x", None, None, None)


def test_missing_weights_become_a_caveat(tiny_bert, tmp_path):
    """Weights absent from the checkpoint are randomly initialised: the caveats say so."""
    folder = shutil.copytree(tiny_bert, tmp_path / "partial")
    from safetensors.torch import load_file, save_file

    state = load_file(folder / "model.safetensors")
    dropped = [k for k in state if "encoder.layer.1.output.dense" in k]
    assert dropped
    save_file({k: v for k, v in state.items() if k not in dropped}, folder / "model.safetensors",
              metadata={"format": "pt"})
    caveats = load_model(str(folder)).caveats
    assert len(caveats) == 1 and "randomly initialised" in caveats[0]
    assert "encoder.layer.1.output.dense" in caveats[0]


def test_encoder_decoder_folder_is_rejected(tmp_path, minilm_tokenizer):
    config = T5Config(vocab_size=len(minilm_tokenizer), d_model=32, d_kv=8, d_ff=64,
                      num_layers=2, num_heads=2, decoder_start_token_id=0)
    folder = save_tiny(T5Model(config), minilm_tokenizer, tmp_path / "tiny-t5")
    with pytest.raises(ModelLoadError, match="t5 is an encoder-decoder model"):
        load_model(str(folder))


def test_folder_without_config(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(b"")
    with pytest.raises(ModelLoadError, match="holds no config.json"):
        load_model(str(tmp_path))


@pytest.mark.parametrize(
    ("spec", "message"),
    [("./no-such-model-folder", "no such folder"), ("not a hub id!", "not a valid Hugging Face")],
)
def test_bad_specs(spec, message):
    with pytest.raises(ModelLoadError, match=message):
        load_model(spec)


# --------------------------------------------------------------------------------------------
# Hub ids (subprocesses: huggingface_hub reads HF_HOME and HF_HUB_OFFLINE at import)
# --------------------------------------------------------------------------------------------


def run_python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **env}
    full_env.pop("TRANSFORMERS_OFFLINE", None)
    return subprocess.run([sys.executable, "-c", code], env=full_env, capture_output=True,
                          text=True)


LOAD_AND_PRINT = (
    "import json\n"
    "from lmgeometry.io.models import load_model\n"
    "print(json.dumps(load_model({spec!r}).facts()))\n"
)


@pytest.mark.parametrize(
    ("env", "reason"),
    [
        ({"HF_HUB_OFFLINE": "1"}, "the Hugging Face hub is offline"),
        # .invalid never resolves (RFC 2606): the hub is unreachable, without minutes of retries
        ({"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": "https://hub.invalid"}, "unreachable"),
    ],
)
def test_hub_unavailable_names_the_aliases(tmp_path, env, reason):
    result = run_python(LOAD_AND_PRINT.format(spec="gpt2"), {"HF_HOME": str(tmp_path), **env})
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("lmgeometry.errors.ModelLoadError: cannot load 'gpt2'")
    assert reason in last
    assert all(alias in last for alias in ALIASES), last


def test_hub_id_from_the_local_hub_cache(tmp_path, tiny_gpt2):
    """A hub id already in the Hugging Face cache loads offline through the hub path."""
    repo = tmp_path / "hub" / "models--lmgeometry-test--tiny-gpt2"
    commit = "0123456789abcdef0123456789abcdef01234567"
    shutil.copytree(tiny_gpt2, repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    resolve = (
        "from lmgeometry.io.models import resolve_model\n"
        "for spec in ('lmgeometry-test/tiny-gpt2', 'lmgeometry-test/absent'):\n"
        "    r = resolve_model(spec)\n"
        "    print(json.dumps([r.source, r.name, r.folder and str(r.folder), r.revision,\n"
        "                      r.fingerprint]))\n"
    )
    result = run_python(LOAD_AND_PRINT.format(spec="lmgeometry-test/tiny-gpt2") + resolve,
                        {"HF_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"})
    assert result.returncode == 0, result.stderr[-3000:]
    facts, cached, absent = (json.loads(x) for x in result.stdout.strip().splitlines()[-3:])
    assert facts["spec"] == facts["name"] == "lmgeometry-test/tiny-gpt2"
    assert (facts["kind"], facts["n_layers"], facts["hidden_size"]) == ("decoder", 2, 32)
    assert facts["fingerprint"] == load_model(str(tiny_gpt2)).fingerprint
    snapshot = str(repo / "snapshots" / commit)
    assert cached == ["hub", "lmgeometry-test/tiny-gpt2", snapshot, commit, facts["fingerprint"]]
    assert absent == ["hub", "lmgeometry-test/absent", None, None, None]  # known once loaded


# --------------------------------------------------------------------------------------------
# The real offline models (user cache: converted once)
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("alias", "layers", "width", "kind", "positions"),
    [
        ("minilm-l6", 6, 384, "encoder", "learned absolute"),
        ("smollm2-135m", 30, 576, "decoder", "rotary"),
        ("mpnet-base", 12, 768, "encoder", "learned absolute + relative bias"),
        ("gemma3-270m", 18, 640, "decoder", "rotary"),
    ],
)
def test_offline_alias_hidden_states(alias, layers, width, kind, positions):
    loaded = load_model(alias)
    states = hidden_states(loaded)
    n_tokens = len(loaded.tokenizer(SENTENCE)["input_ids"])
    assert torch.stack(states).shape == (layers + 1, 1, n_tokens, width)
    assert all(torch.isfinite(h).all() for h in states)
    assert (loaded.kind, loaded.n_layers, loaded.hidden_size) == (kind, layers, width)
    assert loaded.position_scheme == positions
    assert loaded.name == ALIASES[alias].name
    assert loaded.caveats == list(ALIASES[alias].caveats) and loaded.caveats
    assert not loaded.model.training
    assert next(loaded.model.parameters()).dtype == torch.float32
    facts = loaded.facts()
    assert json.loads(json.dumps(facts)) == facts
    assert os.environ["TOKENIZERS_PARALLELISM"] in {"false", "true"}


@pytest.mark.slow
def test_smollm2_knows_paris():
    loaded = load_model("smollm2-135m")
    enc = loaded.tokenizer([SENTENCE], return_tensors="pt").to(loaded.device)
    out = loaded.model.generate(**enc, max_new_tokens=5, do_sample=False)
    continuation = loaded.tokenizer.decode(out[0, enc["input_ids"].shape[1]:])
    assert "Paris" in continuation


@pytest.mark.slow
def test_gguf_conversion_in_a_fresh_cache(tmp_path_factory, monkeypatch):
    """Convert SmolLM2 into an empty cache that holds a killed conversion's leftover: the
    leftover is not used and is cleaned up; a second load reuses the folder untouched."""
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("LMGEOMETRY_CACHE", str(cache))
    alias = ALIASES["smollm2-135m"]
    final = _offline._converted_folder(alias)
    leftover = final.parent / ".tmp-99999-0badc0de"
    leftover.mkdir()
    (leftover / _offline._MARKER).write_text("{}")
    (leftover / "config.json").write_text("{}")

    first = load_model("smollm2-135m")
    assert _offline._is_complete(final)
    assert not list(final.parent.glob(".tmp-*")), "leftover temporary folder not removed"
    assert {p.name for p in final.iterdir()} >= {"config.json", "model.safetensors",
                                                 "tokenizer.json", _offline._MARKER}
    assert json.loads((final / _offline._MARKER).read_text())["alias"] == "smollm2-135m"
    stamps = {p.name: p.stat().st_mtime_ns for p in [final, *final.iterdir()]}
    del first

    second = load_model("smollm2-135m")
    assert {p.name: p.stat().st_mtime_ns for p in [final, *final.iterdir()]} == stamps
    assert second.n_layers == 30
    assert models_table().set_index("alias").loc["smollm2-135m", "converted"] == "yes"


# ------------------------------------------------------------------------------------------
# input embeddings (the matrix W of seed 004)


class _ToyLM(torch.nn.Module):
    def __init__(self, dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(11, 4).to(dtype)
        self.head = torch.nn.Linear(4, 11, bias=False)
        self.head.weight = self.embed.weight  # tied

    def get_input_embeddings(self) -> torch.nn.Module:
        return self.embed


def test_input_embeddings_view_and_conversion():
    model = _ToyLM()
    W = models.input_embeddings(SimpleNamespace(model=model))
    assert W.shape == (11, 4) and W.dtype == np.float32
    np.testing.assert_array_equal(W, model.embed.weight.detach().numpy())
    assert not W.flags.writeable
    with pytest.raises(ValueError):
        W[0, 0] = 1.0
    half = _ToyLM(torch.bfloat16)
    Wh = models.input_embeddings(SimpleNamespace(model=half))
    assert Wh.dtype == np.float32
    np.testing.assert_array_equal(Wh, half.embed.weight.detach().float().numpy())


def test_pair_separator_follows_the_pair_template(tiny_bert, tiny_gpt2):
    assert models.pair_separator(str(tiny_bert)) == "[SEP]"
    assert models.pair_separator(str(tiny_gpt2)) == ""  # decoders read the pair as running text


def test_an_alias_is_fingerprinted_by_its_sources_not_its_converted_files(monkeypatch):
    """The same model gives the same fingerprint on every machine: an alias's fingerprint comes
    from the package files it is converted from (their RECORD sha256), so it needs no
    converted folder at all."""
    from lmgeometry.io import models

    if not all(_offline._package_path(pf) for pf in ALIASES["smollm2-135m"].files):
        pytest.skip("the smollm2-135m package is not installed")
    first = models.resolve_fingerprint("smollm2-135m")

    def no_conversion(alias):
        raise AssertionError("the fingerprint must not need the converted folder")

    monkeypatch.setattr(_offline, "alias_folder", no_conversion)
    monkeypatch.setattr(model_source, "alias_folder", no_conversion)
    assert models.resolve_fingerprint("smollm2-135m") == first == _offline.alias_fingerprint(
        "smollm2-135m")
    assert len(first) == 64


def test_gguf_header_known_answer_from_a_written_file_split_in_parts(tmp_path: Path) -> None:
    """A small GGUF written with the ``gguf`` package, read back from one file and from parts."""
    import gguf

    path = tmp_path / "tiny.gguf"
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_token_list([f"tok{i}" for i in range(1000)])  # an array before the shape keys
    writer.add_block_count(3)
    writer.add_embedding_length(8)
    writer.add_tensor("token_embd.weight", np.zeros((1000, 8), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    assert _offline._shape_from_gguf([path]) == (3, 8)
    data = path.read_bytes()
    cuts = [0, 7, len(data) // 3, len(data)]  # a part boundary inside the magic and the header
    parts = []
    for i, (a, b) in enumerate(zip(cuts, cuts[1:], strict=False)):
        parts.append(tmp_path / f"tiny.gguf.part{i}")
        parts[-1].write_bytes(data[a:b])
    assert _offline._shape_from_gguf(parts) == (3, 8)
    (tmp_path / "bad.gguf").write_bytes(b"GGML" + data[4:])
    with pytest.raises(ModelLoadError, match="bad magic"):
        _offline._shape_from_gguf([tmp_path / "bad.gguf"])
    (tmp_path / "short.gguf").write_bytes(data[:40])
    with pytest.raises(ModelLoadError, match="truncated"):
        _offline._shape_from_gguf([tmp_path / "short.gguf"])

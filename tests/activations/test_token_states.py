"""The in-memory fast path of ``lmgeometry.hidden_states`` (issue 49): token states equal to a
plain forward pass, word vectors equal to the store's, sub-layer outputs that add up to the
residual stream, attention weights, output types, no disk write and no data files.

The models are small random transformers built here from their configs (seed 0, width 32),
with MiniLM's WordPiece tokenizer for the encoders and SmolLM2's byte-level BPE tokenizer for
the decoders: no download, no data mirror.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import torch

import lmgeometry
from lmgeometry.activations.token_states import HiddenStates
from lmgeometry.errors import CorpusError, SentenceTooLongError, UsageError

TEXTS = ["The bank raised its rates on Monday.", "She sat on the river bank.",
         "Don't split co-operation!", "A bank."]


def _model(kind: str, seed: int = 0):
    """A small random model of one architecture family (eval mode is not set: the fast path
    sets and restores it)."""
    import transformers as tf

    torch.manual_seed(seed)
    small = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
             "intermediate_size": 48}
    if kind == "bert":
        return tf.BertModel(tf.BertConfig(vocab_size=30522, max_position_embeddings=64,
                                          **small))
    if kind == "mpnet":
        return tf.MPNetModel(tf.MPNetConfig(vocab_size=30527, max_position_embeddings=66,
                                            **small))
    if kind == "gpt2":
        return tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=49152, n_embd=32, n_layer=2,
                                                n_head=2, n_positions=64))
    if kind == "llama":
        return tf.LlamaForCausalLM(tf.LlamaConfig(vocab_size=49152, num_key_value_heads=1,
                                                  max_position_embeddings=64, **small))
    if kind == "gemma3":
        return tf.Gemma3ForCausalLM(tf.Gemma3TextConfig(
            vocab_size=49152, num_key_value_heads=1, head_dim=16,
            max_position_embeddings=64, **small))
    raise ValueError(kind)


ENCODERS, DECODERS = ("bert", "mpnet"), ("gpt2", "llama", "gemma3")


@pytest.fixture(scope="module")
def tokenizers(minilm_tokenizer, smollm2_tokenizer):
    return {"encoder": minilm_tokenizer, "decoder": smollm2_tokenizer}


def _tok(tokenizers, kind):
    return tokenizers["encoder" if kind in ENCODERS else "decoder"]


def _plain_forward(model, tokenizer, text):
    """The states a user gets from transformers alone, one sentence at a time."""
    model.eval()
    ids = tokenizer(text, return_tensors="pt")
    net = getattr(model, "base_model", model)
    with torch.inference_mode():
        return net(**ids, output_hidden_states=True).hidden_states, ids["input_ids"][0]


@pytest.mark.parametrize("kind", ENCODERS + DECODERS)
def test_token_states_are_the_plain_forward_pass_of_each_sentence(kind, tokenizers):
    model, tok = _model(kind), _tok(tokenizers, kind)
    assert model.training
    states = lmgeometry.hidden_states(model, tok, TEXTS)  # the three-argument form
    assert model.training  # run in eval mode, restored
    assert isinstance(states, HiddenStates) and isinstance(states.states, np.ndarray)
    assert states.states.dtype == np.float32 and states.n_layers == 3 and states.width == 32
    for sid, text in enumerate(TEXTS):
        hidden, ids = _plain_forward(model, tok, text)
        mine = states.sentence(sid)
        rows = states.tokens[states.tokens["sentence_id"] == sid]
        assert rows["token_id"].tolist() == ids.tolist()
        assert rows["position"].tolist() == list(range(len(ids)))
        for layer in range(3):  # batched with right padding == alone
            np.testing.assert_allclose(mine[layer], hidden[layer][0].numpy(), rtol=1e-4,
                                       atol=1e-5)
    model.train()


def test_token_table_names_the_special_tokens_and_offsets(tokenizers):
    states = lmgeometry.hidden_states((_model("bert"), tokenizers["encoder"]), TEXTS[3:])
    table = states.tokens
    assert table["token"].tolist() == ["[CLS]", "a", "bank", ".", "[SEP]"]
    assert table["special"].tolist() == [True, False, False, False, True]
    assert [TEXTS[3][s:e] for s, e in zip(table["start"], table["end"], strict=True)] == [
        "", "A", "bank", ".", ""]
    bank = (table["token"] == "bank").to_numpy()
    np.testing.assert_array_equal(states.layer(-1, rows=bank), states.states[-1][bank])


def test_word_vectors_equal_the_stores_pooling(tokenizers):
    """The fast path's word vectors are the book's (extract.extract_words on the same model
    and words), for mean, first and last pooling."""
    from lmgeometry.activations.extract import extract_words
    from lmgeometry.io.corpus import Corpus
    from lmgeometry.io.corpus.table import light_word_table
    from lmgeometry.io.models import from_memory

    model, tok = _model("gpt2").eval(), tokenizers["decoder"]
    table = light_word_table(TEXTS, tags=True)
    table["n_senses"] = pd.array([pd.NA] * len(table), dtype="Int16")
    corpus = Corpus("t", TEXTS, table, {})
    loaded = from_memory(model, tok)
    for pooling in ("mean", "first", "last"):
        book, _ = extract_words(loaded, corpus, pooling=pooling)
        fast = lmgeometry.hidden_states((model, tok), TEXTS, words=True, pooling=pooling)
        assert fast.words["text"].tolist() == table["text"].tolist()
        np.testing.assert_allclose(fast.word_states, book, rtol=1e-4, atol=1e-5)
    # "Don't" is "Do" + "n't" in spaCy, "Don" + "'t" in the BPE: shared as the store marks it
    words = fast.words.set_index("text")
    assert bool(words.loc["Do", "exact_pieces"]) is False
    assert fast.word_layer(0).shape == (len(table), 32)
    assert fast.tokens.loc[words.loc["bank", "first_token"].tolist()[0], "token"] == "Ġbank"


def test_pos_and_senses_only_when_asked(tokenizers, monkeypatch):
    from lmgeometry.io import lexical

    def no_wordnet(*args, **kwargs):
        raise AssertionError("WordNet was read")

    monkeypatch.setattr(lexical, "n_senses", no_wordnet)
    pair = (_model("bert"), tokenizers["encoder"])
    plain = lmgeometry.hidden_states(pair, TEXTS)
    assert plain.words is None and plain.word_states is None
    with pytest.raises(UsageError, match=r"words=True"):
        plain.word_layer(0)
    words = lmgeometry.hidden_states(pair, TEXTS, words=True)
    assert "upos" not in words.words and "n_senses" not in words.words
    tagged = lmgeometry.hidden_states(pair, TEXTS, pos=True)
    assert tagged.words.loc[1, ["text", "upos"]].tolist() == ["bank", "NOUN"]
    with pytest.raises(AssertionError, match="WordNet was read"):
        lmgeometry.hidden_states(pair, TEXTS, senses=True)


def test_nothing_is_written_and_no_heavy_library_is_loaded(tmp_path, tokenizers):
    """Token states of your own sentences: no cache folder, no spaCy, no NLTK, and the data
    mirror is not consulted (it points nowhere)."""
    from lmgeometry.io import _offline

    folder = _offline.alias_folder("minilm-l6")
    code = (
        "import json, sys, torch, lmgeometry\n"
        "from transformers import AutoModel, AutoTokenizer\n"
        f"m = AutoModel.from_pretrained({str(folder)!r})\n"
        f"t = AutoTokenizer.from_pretrained({str(folder)!r})\n"
        "s = lmgeometry.hidden_states(m, t, ['A bank by the river.', 'The bank rose.'])\n"
        "print(json.dumps([s.n_layers, sorted(x for x in ('spacy', 'nltk') "
        "if x in sys.modules)]))\n")
    env = {"LMGEOMETRY_CACHE": str(tmp_path / "cache"),
           "LMGEOMETRY_DATA_MIRROR": str(tmp_path / "no-mirror"), "HF_HUB_OFFLINE": "1",
           "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True).stdout
    assert out.strip().splitlines()[-1] == "[7, []]"
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("kind", ENCODERS + DECODERS)
def test_sublayer_outputs_add_up_to_the_residual_stream(kind, tokenizers):
    model, tok = _model(kind), _tok(tokenizers, kind)
    states = lmgeometry.hidden_states(model, tok, TEXTS, sublayers=True, output="torch")
    subs = states.sublayers
    assert sorted(subs) == ["attn_out", "mlp_out", "resid_mid", "resid_post"]
    h = states.states
    from lmgeometry.activations.sublayers import block_layout, blocks

    net = getattr(model, "base_model", model)
    for i, block in enumerate(blocks(net)):
        pre = h[i]
        if kind in ENCODERS:  # post-norm: each sum is followed by its LayerNorm
            attn_norm = (block.attention.output.LayerNorm if kind == "bert"
                         else block.attention.LayerNorm)
            torch.testing.assert_close(subs["resid_mid"][i], attn_norm(pre + subs["attn_out"][i]))
            torch.testing.assert_close(subs["resid_post"][i],
                                       block.output.LayerNorm(subs["resid_mid"][i]
                                                              + subs["mlp_out"][i]))
        else:
            torch.testing.assert_close(subs["resid_mid"][i], pre + subs["attn_out"][i])
            torch.testing.assert_close(subs["resid_post"][i],
                                       subs["resid_mid"][i] + subs["mlp_out"][i])
        assert block_layout(block).name
    # the block outputs are the hidden states, but for a final norm after the last block
    torch.testing.assert_close(subs["resid_post"][0], h[1])
    if kind in ENCODERS:
        torch.testing.assert_close(subs["resid_post"][-1], h[-1])
    else:
        assert not torch.allclose(subs["resid_post"][-1], h[-1])


def test_unknown_block_layout_is_refused_with_the_fix(tokenizers, monkeypatch):
    from lmgeometry.activations import sublayers

    monkeypatch.setattr(sublayers, "LAYOUTS", sublayers.LAYOUTS[:1])
    with pytest.raises(UsageError, match="BertLayer block are not known.*sublayers=False"):
        lmgeometry.hidden_states((_model("bert"), tokenizers["encoder"]), TEXTS,
                                 sublayers=True)


@pytest.mark.parametrize("kind", ["bert", "llama"])
def test_attention_weights_are_the_eager_ones_and_the_model_is_restored(kind, tokenizers):
    model, tok = _model(kind), _tok(tokenizers, kind)
    assert model.config._attn_implementation == "sdpa"
    states = lmgeometry.hidden_states(model, tok, TEXTS, attention=True)
    assert model.config._attn_implementation == "sdpa"
    model.eval().set_attn_implementation("eager")
    for sid, text in enumerate(TEXTS):
        ids = tok(text, return_tensors="pt")
        with torch.inference_mode():
            want = getattr(model, "base_model", model)(**ids, output_attentions=True).attentions
        got = states.attention(sid)
        n = ids["input_ids"].shape[1]
        assert got.shape == (2, 2, n, n)
        np.testing.assert_allclose(got.sum(-1), 1.0, atol=1e-5)  # each query's weights
        np.testing.assert_allclose(got, torch.stack([a[0] for a in want]).numpy(), atol=1e-5)
        if kind == "llama":  # causal: no weight on a later key
            assert np.all(np.triu(got, k=1) == 0)


def test_output_types(tokenizers):
    tok = tokenizers["decoder"]
    half = _model("llama").to(torch.bfloat16)  # the fast path takes any dtype
    as_torch = lmgeometry.hidden_states(half, tok, TEXTS, output="torch")
    assert as_torch.states.dtype == torch.bfloat16
    as_numpy = lmgeometry.hidden_states(half, tok, TEXTS)
    assert as_numpy.states.dtype == np.float32
    np.testing.assert_array_equal(as_numpy.states, as_torch.states.float().numpy())
    f16 = lmgeometry.hidden_states(half, tok, TEXTS, dtype="float16", words=True)
    assert f16.states.dtype == np.float16 and f16.word_states.dtype == np.float16
    # a measure takes the bfloat16 tensors as they come
    assert lmgeometry.mean_cosine(as_torch.layer(1)) == pytest.approx(
        lmgeometry.mean_cosine(as_numpy.layer(1)), abs=1e-6)
    with pytest.raises(UsageError, match="numpy has no bfloat16: pass output='torch'"):
        lmgeometry.hidden_states(half, tok, TEXTS, dtype="bfloat16")
    with pytest.raises(UsageError, match="output must be one of"):
        lmgeometry.hidden_states(half, tok, TEXTS, output="jax")


def test_too_long_sentences_raise_or_are_skipped(tokenizers):
    pair = (_model("bert"), tokenizers["encoder"])  # 64 positions
    long = " ".join(["word"] * 80)
    with pytest.raises(SentenceTooLongError, match="sentence 1 is 82 tokens long"):
        lmgeometry.hidden_states(pair, [TEXTS[0], long])
    states = lmgeometry.hidden_states(pair, [TEXTS[0], long, TEXTS[3]], too_long="skip",
                                      words=True, attention=True)
    assert states.skipped == [1]
    assert sorted(states.tokens["sentence_id"].unique()) == [0, 2]
    assert sorted(states.words["sentence_id"].unique()) == [0, 2]
    assert states.attention(2).shape[-1] == 5
    with pytest.raises(UsageError, match=r"no sentence 1 .*skipped: \[1\]"):
        states.sentence(1)


def test_options_of_the_other_path_are_refused(tokenizers):
    pair = (_model("bert"), tokenizers["encoder"])
    with pytest.raises(UsageError, match="attention, sublayers: only with cache=False"):
        lmgeometry.hidden_states(pair, TEXTS, cache=True, attention=True, sublayers=True)
    with pytest.raises(UsageError, match="output: only with cache=False"):
        lmgeometry.hidden_states(pair, TEXTS, cache=True, output="torch")
    with pytest.raises(UsageError, match="root: only with cache=True"):
        lmgeometry.hidden_states(pair, TEXTS, root="somewhere")
    with pytest.raises(UsageError, match="backend: only with cache=True"):
        lmgeometry.hidden_states(pair, TEXTS, backend="onnxruntime")
    with pytest.raises(UsageError, match="3 positional arguments and tokenizer="):
        lmgeometry.hidden_states(pair[0], pair[1], TEXTS, tokenizer=pair[1])
    with pytest.raises(CorpusError, match="no sentences given"):
        lmgeometry.hidden_states(pair[0], pair[1], [])
    with pytest.raises(UsageError, match="pooling must be"):
        lmgeometry.hidden_states(pair, TEXTS, words=True, pooling="max")


def test_a_model_name_is_loaded_without_hashing_or_writing(tmp_path, monkeypatch):
    """The in-memory path by name: no checksum memo, no store entry (the cached path and
    load_model's default fingerprint the files)."""
    from lmgeometry.io import checksums, models

    monkeypatch.setenv("LMGEOMETRY_CACHE", str(tmp_path / "cache"))
    hashed = []
    real = checksums.sha256_file
    monkeypatch.setattr(checksums, "sha256_file", lambda *a, **k: hashed.append(a) or real(*a, **k))
    states = lmgeometry.hidden_states("minilm-l6", TEXTS[:2])
    assert states.n_layers == 7 and hashed == []
    assert not (tmp_path / "cache").exists()
    assert models.load_model("minilm-l6", fingerprint=False).fingerprint == ""
    assert len(models.load_model("minilm-l6").fingerprint) == 64

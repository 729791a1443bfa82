"""Tests for lmgeometry.training.finetune and activations.heads: tiny models, real tokenizers.

The models are built here from small configs (random weights) with the real tokenizers of the
offline models (conftest.py) or GPT-2's BPE files from the data mirror; they are fine-tuned for
a few steps on a toy task whose label is one word, or on a few SST-2 / QNLI examples.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    BertConfig,
    BertModel,
    GPT2Config,
    GPT2LMHeadModel,
    GPT2TokenizerFast,
    LlamaConfig,
    LlamaForCausalLM,
    MPNetConfig,
    MPNetForSequenceClassification,
)

from lmgeometry.activations.heads import head_states
from lmgeometry.cli import main
from lmgeometry.errors import CorpusError, UsageError
from lmgeometry.io import paths
from lmgeometry.io.models import load_model
from lmgeometry.training import finetune as ft
from lmgeometry.training.settings import Settings

POSITIVE = ["wonderful", "great", "lovely", "superb", "delightful", "brilliant", "charming",
            "excellent"]
NEGATIVE = ["terrible", "awful", "boring", "dreadful", "dull", "horrible", "tedious", "poor"]


def toy_task(n: int = 64, seed: int = 0) -> ft.TaskData:
    """Label 1 for texts of positive words, 0 for negative ones: separable by any word."""
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for i in range(n):
        y = i % 2
        texts.append(" ".join(rng.choice(POSITIVE if y else NEGATIVE, size=rng.integers(3, 7))))
        labels.append(y)
    y = np.array(labels)
    return ft.TaskData("sst2", texts[: n // 2], y[: n // 2], texts[n // 2:], y[n // 2:])


def save(model: torch.nn.Module, tokenizer, folder: Path) -> str:
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory, minilm_tokenizer) -> str:
    """A 2-layer BERT (random weights) with MiniLM's WordPiece tokenizer."""
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(minilm_tokenizer), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=128)
    return save(BertModel(config), minilm_tokenizer, tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory, smollm2_tokenizer) -> str:
    """A 2-layer Llama (random weights, tied embeddings) with SmolLM2's tokenizer."""
    torch.manual_seed(0)
    tok = smollm2_tokenizer
    config = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=256, tie_word_embeddings=True,
                         bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    return save(LlamaForCausalLM(config), tok, tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory) -> str:
    """A 2-layer GPT-2 (random weights) with GPT-2's own BPE files from the data mirror."""
    mirror = paths.data_mirror()
    folder = mirror / "gpt2_tokenizer" if mirror else None
    if folder is None or not (folder / "encoder.json").is_file():
        pytest.skip("needs LMGEOMETRY_DATA_MIRROR with gpt2_tokenizer/ (GPT-2's BPE files)")
    tok = GPT2TokenizerFast(vocab=str(folder / "encoder.json"), merges=str(folder / "vocab.bpe"))
    assert len(tok) == 50257
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(tok), n_positions=128, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    return save(GPT2LMHeadModel(config), tok, tmp_path_factory.mktemp("tiny-gpt2"))


TOY = Settings(train_size=64, epochs=4, lr=1e-2, batch_size=8, max_length=32, warmup=0.1)


def weights(folder: Path) -> dict[str, torch.Tensor]:
    return load_file(str(Path(folder) / "model.safetensors"))


# --------------------------------------------------------------------------------------------
# Pieces of the recipe
# --------------------------------------------------------------------------------------------


def test_batch_order_is_a_seeded_length_grouped_partition():
    lengths = np.random.default_rng(1).integers(3, 60, size=1000)
    batches = ft.batch_order(lengths, 16, seed=0, epoch=0, pool=5)
    assert sorted(np.concatenate(batches).tolist()) == list(range(1000))
    assert all(len(b) == 16 for b in batches[:-1] + batches[-1:] if len(b) == 16)
    again = ft.batch_order(lengths, 16, seed=0, epoch=0, pool=5)
    assert all(np.array_equal(a, b) for a, b in zip(batches, again, strict=True))
    other = ft.batch_order(lengths, 16, seed=0, epoch=1, pool=5)
    assert not all(np.array_equal(a, b) for a, b in zip(batches, other, strict=True))
    # within a batch the lengths are close: far less spread than in a random batch
    spread = np.mean([np.ptp(lengths[b]) for b in batches if len(b) == 16])
    assert spread < 0.3 * np.ptp(lengths)


def test_linear_schedule_warms_up_and_decays_to_zero():
    f = ft.linear_schedule(10, 110)
    assert [f(0), f(5), f(10), f(60), f(110), f(200)] == [0.0, 0.5, 1.0, 0.5, 0.0, 0.0]
    assert ft.linear_schedule(0, 4)(0) == 1.0


@pytest.mark.parametrize("change, message", [
    ({"train_size": 0}, "train_size"), ({"epochs": -1}, "epochs"), ({"lr": 0.0}, "lr"),
    ({"lr": float("nan")}, "lr"), ({"batch_size": 1.5}, "batch_size"),
    ({"max_length": 4}, "max_length"), ({"warmup": 1.0}, "warmup"), ({"seed": -2}, "seed"),
    ({"precision": "float16"}, "precision"),
])
def test_settings_refuse_what_cannot_work(change, message):
    with pytest.raises(UsageError, match=message):
        Settings(**change).check()


@pytest.mark.data
def test_task_data_splits_and_sizes():
    sst2 = ft.task_data("sst2", 50, seed=3)
    assert len(sst2.train_texts) == 50 and len(sst2.test_texts) == 872
    assert all(len(t.split()) >= 4 for t in sst2.train_texts)
    assert sst2.digest() == ft.task_data("sst2", 50, seed=3).digest()
    assert sst2.digest() != ft.task_data("sst2", 50, seed=4).digest()
    qnli = ft.task_data("qnli", 4963, seed=0, separator="[SEP]")
    assert len(qnli.test_texts) == 500
    assert not set(qnli.train_texts) & set(qnli.test_texts)  # never trained on held-out pairs
    assert all(" [SEP] " in t for t in qnli.test_texts)
    # the held-out pairs are chapter 6's (qnli_corpus with its defaults)
    from lmgeometry.io.corpus import qnli_corpus

    corpus, labels, is_test = qnli_corpus(1000, 500, 0, "[SEP]")
    assert [s for s, t in zip(corpus.sentences, is_test, strict=True) if t] == qnli.test_texts
    assert labels[is_test].tolist() == qnli.test_labels.tolist()
    with pytest.raises(CorpusError, match="4963"):
        ft.task_data("qnli", 4964)
    with pytest.raises(UsageError, match="unknown task"):
        ft.task_data("mnli", 10)


# --------------------------------------------------------------------------------------------
# Training on a toy task: the loss falls, the head is the model's, a seed fixes the weights
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("base", ["tiny_bert", "tiny_llama"])
def test_training_learns_a_separable_toy_task(base, request, tmp_path):
    model = request.getfixturevalue(base)
    sample = toy_task(128)
    log = ft.train(model, sample, TOY, tmp_path / "out", progress=False)
    loss = np.array(log["loss"])
    assert log["steps"] == len(loss) == 4 * 8
    assert loss[-4:].mean() < 0.5 * loss[:4].mean()
    # the saved folder is a plain transformers classifier that gets the held-out texts right
    tok = AutoTokenizer.from_pretrained(tmp_path / "out")
    clf = AutoModelForSequenceClassification.from_pretrained(tmp_path / "out").eval()
    enc = tok(sample.test_texts, padding=True, return_tensors="pt")
    with torch.inference_mode():
        predicted = clf(**enc).logits.argmax(-1).numpy()
    assert (predicted == sample.test_labels).mean() >= 0.9
    # its own head on the last layer's states at the head token gives the same predictions
    states = head_states(str(tmp_path / "out"), sample.test_texts, root=tmp_path / "heads",
                         progress=False)
    head = ft.load_head(tmp_path / "out")
    assert states.kind == head.kind == ("encoder" if base == "tiny_bert" else "decoder")
    assert np.array_equal(head.predict(states.layer(states.n_layers - 1)), predicted)


def test_same_seed_same_weights(tiny_bert, tmp_path):
    sample = toy_task(32)
    short = Settings(train_size=16, epochs=1, lr=1e-3, batch_size=4, max_length=16)
    for name, seed in (("a", 0), ("b", 0), ("c", 1)):
        ft.train(tiny_bert, sample, Settings(**{**short.__dict__, "seed": seed}),
                 tmp_path / name, progress=False)
    a, b, c = (weights(tmp_path / name) for name in "abc")
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)


def test_mixed_precision_keeps_float32_weights_and_tracks_the_float32_loss(tiny_bert, tmp_path):
    """bfloat16 autocast (an option) changes the arithmetic, not the recipe: the first
    step's loss (same weights, same batch) agrees with float32's to bfloat16's precision, the
    runs then part, and the checkpoint is saved in float32 either way."""
    sample = toy_task(32)
    short = Settings(train_size=16, epochs=1, lr=1e-3, batch_size=4, max_length=16)
    assert short.precision == "float32"  # the default: the same on any CPU
    logs = {p: ft.train(tiny_bert, sample, Settings(**{**short.__dict__, "precision": p}),
                        tmp_path / p, progress=False) for p in ("bfloat16", "float32")}
    first = {p: log["loss"][0] for p, log in logs.items()}
    assert first["bfloat16"] == pytest.approx(first["float32"], rel=2e-2)
    mixed, full = weights(tmp_path / "bfloat16"), weights(tmp_path / "float32")
    assert {t.dtype for t in mixed.values()} == {t.dtype for t in full.values()} == {
        torch.float32}
    assert not all(torch.equal(mixed[k], full[k]) for k in mixed)


def test_heads_of_other_architectures_match_their_models(tmp_path, minilm_tokenizer, tiny_gpt2):
    """MPNet (a two-layer head on <s>) and GPT-2 (score on the last token)."""
    torch.manual_seed(0)
    config = MPNetConfig(vocab_size=len(minilm_tokenizer), hidden_size=32, num_hidden_layers=2,
                         num_attention_heads=2, intermediate_size=64, num_labels=2)
    mpnet = save(MPNetForSequenceClassification(config), minilm_tokenizer, tmp_path / "mpnet")
    assert ft.load_head(mpnet).kind == "encoder"
    sample = toy_task(16)
    log = ft.train(tiny_gpt2, sample, Settings(train_size=8, epochs=1, batch_size=4,
                                               max_length=16), tmp_path / "gpt2",
                   progress=False)
    assert log["kind"] == "decoder" and log["head_initialised"] == ["score.weight"]
    head = ft.load_head(tmp_path / "gpt2")
    states = head_states(str(tmp_path / "gpt2"), sample.test_texts, root=tmp_path / "heads",
                         progress=False)
    tok = AutoTokenizer.from_pretrained(tmp_path / "gpt2")
    clf = AutoModelForSequenceClassification.from_pretrained(tmp_path / "gpt2").eval()
    with torch.inference_mode():
        logits = torch.stack([clf(**tok(t, return_tensors="pt")).logits[0]
                              for t in sample.test_texts]).numpy()
    np.testing.assert_allclose(head.logits(states.layer(2)), logits, atol=1e-4)


# --------------------------------------------------------------------------------------------
# finetune(): the cache, atomic writes, plain loading, the store
# --------------------------------------------------------------------------------------------


SMALL = Settings(train_size=24, epochs=1, batch_size=8, max_length=32)


@pytest.mark.data
def test_finetune_is_cached_and_loads_anywhere(tiny_bert, tmp_path):
    first = ft.finetune(tiny_bert, "sst2", SMALL, root=tmp_path, progress=False)
    assert not first.hit and first.kind == "encoder"
    marker = json.loads((first.folder / ft.MARKER).read_text())
    assert marker["settings"]["train_size"] == 24 and marker["data"]["n_train"] == 24
    assert len(marker["log"]["loss"]) == 3
    stamp = (first.folder / "model.safetensors").stat().st_mtime_ns
    again = ft.finetune(tiny_bert, "sst2", SMALL, root=tmp_path, progress=False)
    assert again.hit and again.folder == first.folder
    assert (again.folder / "model.safetensors").stat().st_mtime_ns == stamp
    other = ft.finetune(tiny_bert, "sst2", Settings(**{**SMALL.__dict__, "lr": 1e-4}),
                        root=tmp_path, progress=False)
    assert other.folder != first.folder  # every setting is in the key
    # plain transformers, the package's loader and the held-out evaluation
    AutoModelForSequenceClassification.from_pretrained(first.folder)
    AutoTokenizer.from_pretrained(first.folder)
    loaded = load_model(str(first.folder))
    assert loaded.kind == "encoder" and loaded.n_layers == 2 and not loaded.caveats
    ev = ft.evaluate(first.folder)
    assert ev.n == 872 and ev.accuracy == pytest.approx(ev.correct.mean())


@pytest.mark.data
def test_a_decoder_checkpoint_feeds_the_activation_store(tiny_llama, tmp_path):
    from lmgeometry.activations.store import activations
    from lmgeometry.io.corpus import sentences

    result = ft.finetune(tiny_llama, "qnli", SMALL, root=tmp_path, progress=False)
    assert result.info["data"]["separator"] == ""
    loaded = load_model(str(result.folder))
    assert loaded.kind == "decoder" and not loaded.caveats
    assert loaded.tokenizer.pad_token is not None
    store = activations(str(result.folder), sentences(["A plain sentence here."], name="t"),
                        root=tmp_path / "store", progress=False)
    assert store.n_layers == 3 and store.n_words == 5


@pytest.mark.data
def test_an_interrupted_run_leaves_no_folder(tiny_bert, tmp_path):
    def stop(step: int, total: int) -> None:
        if step == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ft.finetune(tiny_bert, "sst2", SMALL, root=tmp_path, progress=False, callback=stop)
    assert list(tmp_path.iterdir()) == []


def test_head_states_are_cached_and_batching_does_not_change_them(tiny_llama, tmp_path):
    texts = ["One two three.", "A much longer sentence than the first one, with commas.",
             "Short."]
    states = head_states(tiny_llama, texts, root=tmp_path, batch_tokens=16, progress=False)
    assert states.meta["position"] == "last" and states.states.shape == (3, 3, 32)
    stamp = (states.path / "states.npy").stat().st_mtime_ns
    again = head_states(tiny_llama, texts, root=tmp_path, progress=False)
    assert again.path == states.path
    assert (again.path / "states.npy").stat().st_mtime_ns == stamp
    loaded = load_model(tiny_llama)
    for i, text in enumerate(texts):  # one text at a time, no padding: the last token
        enc = loaded.tokenizer(text, return_tensors="pt")
        with torch.inference_mode():
            hidden = loaded.model(**enc, output_hidden_states=True).hidden_states
        for layer in range(3):
            np.testing.assert_allclose(states.states[layer, i], hidden[layer][0, -1].numpy(),
                                       atol=1e-5)
    truncated = head_states(tiny_llama, texts, max_length=4, root=tmp_path, progress=False)
    assert truncated.path != states.path and truncated.meta["truncated"] == 2


# --------------------------------------------------------------------------------------------
# The command line
# --------------------------------------------------------------------------------------------


@pytest.mark.data
@pytest.mark.parametrize("extra, message", [
    (["--task", "mnli"], "unknown task 'mnli'"),
    (["--task", "qnli", "--train-size", "5000"], "--train-size must be in 1..4963"),
    (["--task", "sst2", "--train-size", "999999"], "--train-size 999999 does not fit sst2"),
    (["--task", "sst2", "--lr", "2"], "lr (--lr) must be"),
    (["--task", "sst2", "--epochs", "0"], "epochs (--epochs) must be a positive integer"),
])
def test_cli_errors_are_one_line(extra, message, tiny_bert, tmp_path, capsys):
    code = main(["finetune", "--model", tiny_bert, "--out", str(tmp_path), *extra])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith("lmgeometry finetune: error:") and message in err
    assert list(tmp_path.iterdir()) == []


def test_cli_unknown_model_is_a_usage_error(tmp_path, capsys):
    code = main(["finetune", "--model", str(tmp_path / "nowhere"), "--task", "sst2"])
    err = capsys.readouterr().err
    assert code == 2 and "no such folder" in err


@pytest.mark.data
def test_cli_prints_the_folder_last(tiny_bert, tmp_path, capsys):
    args = ["finetune", "--model", tiny_bert, "--task", "sst2", "--train-size", "16",
            "--epochs", "1", "--batch-size", "8", "--max-length", "24", "--out", str(tmp_path),
            "--no-eval"]
    assert main(args) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    folder = Path(lines[-1])
    assert folder.parent == tmp_path and (folder / ft.MARKER).is_file()
    assert lines[0].startswith("trained:")
    assert main(args) == 0
    again = capsys.readouterr().out.strip().splitlines()
    assert again[0].startswith("cached:") and again[-1] == lines[-1]
    assert main([*args, "--precision", "bfloat16"]) == 0
    mixed = Path(capsys.readouterr().out.strip().splitlines()[-1])
    assert mixed != folder and ft.read_checkpoint(mixed)["settings"]["precision"] == "bfloat16"
    assert ft.read_checkpoint(folder)["settings"]["precision"] == "float32"


@pytest.mark.data
def test_a_changed_cached_checkpoint_is_trained_again(tiny_bert, tmp_path, capsys):
    """One flipped byte in the cached weights: the checkpoint no longer matches the sha256
    its run recorded, so it is trained again (with a one-line notice), never evaluated."""
    first = ft.finetune(tiny_bert, "sst2", SMALL, root=tmp_path, progress=False)
    weights = first.folder / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-10] ^= 0x01
    weights.write_bytes(bytes(data))
    capsys.readouterr()
    again = ft.finetune(tiny_bert, "sst2", SMALL, root=tmp_path, progress=False)
    err = capsys.readouterr().err
    assert not again.hit and again.folder == first.folder
    assert "model.safetensors missing or changed since training; training it again" in err
    assert ft.finetune(tiny_bert, "sst2", SMALL, root=tmp_path, progress=False).hit

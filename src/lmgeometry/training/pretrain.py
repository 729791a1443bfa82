"""Pretraining a controlled pair from scratch: a masked LM and a causal LM alike in all but
the objective, with checkpoints across training (issue 33's experiment).

The seeds compare BERT with GPT-2, which differ in objective, data, tokenizer and size; a
pair trained here differs in its objective and in what the two architectures fix:

* ``objective="mlm"``: ``BertForMaskedLM`` (post-norm blocks, the MLM head's dense layer and
  norm before the tied output layer), predicting ``mask_rate`` of the tokens (80% [MASK],
  10% a random piece, 10% kept; Devlin et al. 2019, at the higher rate of Wettig et al. 2023);
* ``objective="causal"``: ``GPT2LMHeadModel`` (pre-norm blocks, a final norm), predicting
  every next token.

Both have the same depth, width, heads, feed-forward size (4 x width), GELU, learned absolute
positions (``block`` of them), no dropout and no token types, the same initialisation scale
(0.02) from the same seed, one tokenizer, the same sequences in the same order and the same
token budget, AdamW (Loshchilov & Hutter 2019) with a linear warm-up and decay.

Training text (:func:`pretraining_texts`): WordNet 3.0's definitions (the glosses without their
quoted examples, which WiC reuses) and GLUE SST-2's training rows of at least four words,
unique, less any text that a chapter analyses (MultiNLI dev-matched, the STS pool, WiC, SST-2
dev; compared lower-cased with single spaces). Seeded 2% of the texts are held out. Brown
is left out: its sentences are the chapters' context pool and SemCor's text.

Tokenizer (:func:`train_tokenizer`): a lower-casing WordPiece vocabulary (BERT's normaliser
and pre-tokeniser) of ``vocab_size`` pieces trained with the ``tokenizers`` library on the
training texts; its template frames a text as ``[CLS] ... [SEP]``, for both models (the
causal model's BOS and EOS are [CLS] and [SEP]). Sequences (:func:`pack`): texts in a seeded
order, each ``[CLS] text [SEP]``, concatenated and cut into ``block``-token sequences (no
padding but at the end); the causal model therefore sees each text's [CLS] first, as a BOS.
A token attends only to the tokens of its own text (:func:`text_attention`, both objectives),
and its position counts from its text's [CLS] (:func:`text_positions`): a text alone, numbered
from 0, is all a chapter ever shows the models, and a masked LM whose attention spans the
dozen unrelated texts of a block never learns past the unigram baseline (issue 33).

Held-out learning curves (:func:`evaluate`) at every checkpoint, against a unigram baseline
fitted on the training tokens (add-one smoothing): the causal model's next-token cross-entropy
(perplexity) and the masked LM's cross-entropy and accuracy on a fixed 15% of the held-out
tokens.

Cache: ``paths.cache_dir("pretrained")/<objective>-<key>/`` holds ``step-<n>/`` folders
(``save_pretrained`` and the tokenizer: plain transformers folders every chapter loads) and
``lmgeometry-pretrain.json`` (settings, data digest, learning curves, the sha256 of every
file). It is written beside and renamed into place when complete; on reuse every file is
checked against its sha256, and a damaged run is trained again.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lmgeometry import __version__, sources
from lmgeometry.errors import ModelSpecError, PathError, UsageError
from lmgeometry.io import checksums, data, paths
from lmgeometry.training.loop import linear_schedule, param_groups, quiet
from lmgeometry.training.pretrain_settings import PretrainSettings

if TYPE_CHECKING:
    import argparse

    import torch

__all__ = [
    "checkpoint_steps",
    "evaluate",
    "HELD_OUT_SHARE",
    "MARKER",
    "pack",
    "pretrain",
    "pretrain_cli",
    "Pretrained",
    "pretraining_texts",
    "PretrainSettings",
    "RECIPE_VERSION",
    "split_texts",
    "text_attention",
    "text_positions",
    "train_tokenizer",
    "unigram_baseline",
]

#: Bumped when the recipe changes, so that old runs are not reused.
RECIPE_VERSION = 3

#: The file that marks a complete run folder and records how it was made.
MARKER = "lmgeometry-pretrain.json"

#: Share of the training texts held out for the learning curves.
HELD_OUT_SHARE = 0.02

#: Share of held-out tokens a masked LM is scored on (BERT's rate, one fixed draw).
EVAL_MASK_RATE = 0.15

#: Rows of SST-2's training split need at least this many words.
MIN_WORDS = 4

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def _analysed_texts() -> set[str]:
    """Every sentence a chapter analyses, normalised (see the module docstring)."""
    from lmgeometry.io import corpus

    mnli = data.load_mnli()
    texts = [*mnli["premise"], *mnli["hypothesis"], *corpus.sts_pool(),
             *data.load_sst2("dev")["sentence"]]
    for split in ("train", "dev", "test"):
        wic = data.load_wic(split)
        texts += [*wic["sentence1"], *wic["sentence2"]]
    return {_normal(t) for t in texts if isinstance(t, str)}


def pretraining_texts() -> tuple[list[str], dict[str, int]]:
    """The training text of :func:`pretrain` (module docstring), in a fixed order.

    Returns
    -------
    texts : list of str
        WordNet definitions (synsets in NLTK's order), then SST-2 training rows of at least
        :data:`MIN_WORDS` words; unique, none equal to an analysed sentence.
    counts : dict
        ``wordnet``, ``sst2`` (texts kept of each), ``duplicates`` and ``analysed`` (texts
        dropped as repeats or as sentences a chapter analyses).
    """
    wn = data.wordnet()
    glosses = [" ".join(s.definition().split()) for s in wn.all_synsets()]
    sst2 = [s for s in data.load_sst2("train")["sentence"] if len(s.split()) >= MIN_WORDS]
    analysed = _analysed_texts()
    seen: set[str] = set()
    texts: list[str] = []
    counts = {"wordnet": 0, "sst2": 0, "duplicates": 0, "analysed": 0}
    for source, items in (("wordnet", glosses), ("sst2", sst2)):
        for text in items:
            key = _normal(text)
            if not key or key in seen:
                counts["duplicates"] += 1
            elif key in analysed:
                counts["analysed"] += 1
            else:
                seen.add(key)
                texts.append(text)
                counts[source] += 1
    return texts, counts


def split_texts(texts: Sequence[str], seed: int, share: float = HELD_OUT_SHARE
                ) -> tuple[list[str], list[str]]:
    """``(train, held_out)``: a seeded ``share`` of ``texts`` held out, order kept."""
    n_held = max(1, round(share * len(texts)))
    if len(texts) < 2 * n_held:
        raise UsageError(f"{len(texts)} texts are too few to hold out {n_held}")
    held = np.zeros(len(texts), bool)
    held[np.random.default_rng([seed, 1]).choice(len(texts), n_held, replace=False)] = True
    return ([t for t, h in zip(texts, held, strict=True) if not h],
            [t for t, h in zip(texts, held, strict=True) if h])


def train_tokenizer(texts: Sequence[str], vocab_size: int) -> Any:
    """A lower-casing WordPiece tokenizer trained on ``texts`` (``tokenizers`` library).

    The trainer numbers pieces in an order that changes from run to run (ties are broken in
    hash order), so the trained vocabulary is renumbered canonically: the special tokens, then
    every piece in sorted order. WordPiece encodes by greedy longest match, which the ids do
    not affect.

    Returns
    -------
    transformers.PreTrainedTokenizerFast
        Special tokens [PAD] [UNK] [CLS] [SEP] [MASK] (ids 0-4); [CLS] is also the BOS and
        [SEP] the EOS token; its template frames one text as ``[CLS] text [SEP]``.
    """
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from tokenizers.trainers import WordPieceTrainer
    from transformers import PreTrainedTokenizerFast

    def empty(vocab: dict[str, int] | None = None) -> Tokenizer:
        tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]") if vocab
                        else models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece()
        return tok

    trained = empty()
    trainer = WordPieceTrainer(vocab_size=vocab_size, special_tokens=list(SPECIAL_TOKENS),
                               show_progress=False)
    trained.train_from_iterator(texts, trainer=trainer, length=len(texts))
    pieces = sorted(set(trained.get_vocab()) - set(SPECIAL_TOKENS))
    tok = empty({p: i for i, p in enumerate([*SPECIAL_TOKENS, *pieces])})
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]", bos_token="[CLS]", eos_token="[SEP]",
        model_max_length=10**6)


def pack(ids: Sequence[Sequence[int]], block: int, pad_id: int) -> np.ndarray:
    """Concatenate tokenised texts and cut them into ``block``-token sequences.

    Parameters
    ----------
    ids : sequence of sequences of int
        Each text's ids with its template (``[CLS] ... [SEP]``), in training order.
    block : int
    pad_id : int
        Fills the end of the last sequence.

    Returns
    -------
    ndarray of int64, shape (n_sequences, block)

    Examples
    --------
    >>> pack([[2, 7, 3], [2, 8, 9, 3]], block=4, pad_id=0).tolist()
    [[2, 7, 3, 2], [8, 9, 3, 0]]
    """
    stream = np.fromiter((t for row in ids for t in row), dtype=np.int64)
    n = math.ceil(len(stream) / block)
    out = np.full(n * block, pad_id, dtype=np.int64)
    out[:len(stream)] = stream
    return out.reshape(n, block)


def text_attention(batch: torch.Tensor, cls_id: int, pad_id: int, *, causal: bool
                   ) -> torch.Tensor:
    """Which tokens each token of packed sequences may attend to: those of its own text.

    A text starts at its ``[CLS]`` (:func:`pack`); the tokens before a sequence's first
    ``[CLS]`` (the end of a text cut by the block) form a text of their own. Padding is never
    attended to, and a causal model attends to no later token either.

    Parameters
    ----------
    batch : torch.Tensor of int, shape (n, block)
        Packed sequences, before any masking (``[CLS]`` is never masked).
    cls_id, pad_id : int
    causal : bool

    Returns
    -------
    torch.Tensor of bool, shape (n, 1, block, block)
        ``[s, 0, i, j]`` is True where token ``i`` of sequence ``s`` may attend to token
        ``j``: the 4-D mask a transformers model takes as ``attention_mask`` as it is.

    Examples
    --------
    >>> import torch
    >>> text_attention(torch.tensor([[7, 2, 8, 3, 0]]), 2, 0, causal=False)[0, 0].int().tolist()
    [[1, 0, 0, 0, 0], [0, 1, 1, 1, 0], [0, 1, 1, 1, 0], [0, 1, 1, 1, 0], [0, 1, 1, 1, 0]]
    """
    import torch

    text = (batch == cls_id).cumsum(1)
    allowed = (text[:, :, None] == text[:, None, :]) & (batch != pad_id)[:, None, :]
    if causal:
        n = batch.shape[1]
        allowed &= torch.ones(n, n, dtype=torch.bool, device=batch.device).tril()
    return allowed[:, None]


def text_positions(batch: torch.Tensor, cls_id: int) -> torch.Tensor:
    """Position ids that restart at each text's ``[CLS]``: a text is numbered 0, 1, ... wherever
    :func:`pack` put it, as a chapter numbers a sentence it shows alone.

    The tokens before a sequence's first ``[CLS]`` (the end of a text cut by the block) count
    from 0 too.

    Parameters
    ----------
    batch : torch.Tensor of int, shape (n, block)
        Packed sequences (``[CLS]`` is never masked, so masked inputs give the same ids).
    cls_id : int

    Returns
    -------
    torch.Tensor of int64, shape (n, block)

    Examples
    --------
    >>> import torch
    >>> text_positions(torch.tensor([[7, 2, 8, 3, 2, 9]]), 2).tolist()
    [[0, 0, 1, 2, 0, 1]]
    """
    import torch

    index = torch.arange(batch.shape[1], device=batch.device).expand_as(batch)
    start = torch.where(batch == cls_id, index, torch.zeros_like(index)).cummax(1).values
    return index - start


def checkpoint_steps(total: int, n: int) -> list[int]:
    """Step 0 and ``n`` log-spaced steps up to ``total`` (unique, ascending).

    Examples
    --------
    >>> checkpoint_steps(1000, 4)
    [0, 1, 10, 100, 1000]
    """
    steps = np.unique(np.round(np.geomspace(1, total, n)).astype(int)) if n > 1 else [total]
    return [0, *(int(s) for s in steps)]


def unigram_baseline(train: np.ndarray, vocab_size: int, special: Sequence[int]
                     ) -> np.ndarray:
    """Log-probabilities of a unigram model of the training tokens, add-one smoothed.

    The ``special`` ids (those the model never predicts) get the count of an unseen piece.
    Returns an array of ``vocab_size`` log-probabilities.
    """
    counts = np.bincount(train.ravel(), minlength=vocab_size).astype(float)
    counts[list(special)] = 0.0
    counts += 1.0
    return np.log(counts / counts.sum())


@dataclass(frozen=True)
class Pretrained:
    """A pretraining run's folder, its checkpoints and how it was made.

    ``checkpoints`` maps each saved step to its model folder (load it like any model folder);
    ``final`` is the last one; ``info`` is the folder's ``lmgeometry-pretrain.json``.
    """

    folder: Path
    settings: PretrainSettings
    checkpoints: dict[int, Path]
    info: dict[str, Any] = field(repr=False)
    hit: bool = False

    @property
    def final(self) -> Path:
        return self.checkpoints[max(self.checkpoints)]

    @property
    def curve(self) -> list[dict[str, float]]:
        """The held-out learning curve: one record per checkpoint (see :func:`evaluate`)."""
        return self.info["curve"]


def _data_digest(train: Sequence[str], held: Sequence[str]) -> str:
    return hashlib.sha256(json.dumps([list(train), list(held)]).encode()).hexdigest()


def run_key(settings: PretrainSettings, data_digest: str) -> str:
    """sha256 naming one run: recipe version, settings, training text and the code."""
    payload = {"recipe": RECIPE_VERSION, "settings": asdict(settings), "data": data_digest,
               "code": sources.code_digest(sources.key_files(__name__))}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _checkpoint_folders(folder: Path, info: dict[str, Any]) -> dict[int, Path]:
    return {int(c["step"]): folder / c["folder"] for c in info["curve"]}


def read_run(folder: str | Path) -> dict[str, Any]:
    """A run folder's ``lmgeometry-pretrain.json``.

    Raises
    ------
    ModelSpecError
        ``folder`` is not a complete run written by :func:`pretrain`.
    """
    path = paths.user_path(folder) / MARKER
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ModelSpecError(f"{folder} is not a run written by `lmgeometry pretrain` (no "
                             f"readable {MARKER})") from exc


def _damage(folder: Path) -> str | None:
    """Why a cached run cannot be used: a file missing or changed since it was written."""
    try:
        recorded = read_run(folder).get("files")
    except ModelSpecError:
        return f"has an unreadable {MARKER}"
    if not isinstance(recorded, dict) or not recorded:
        return "records no checksums"
    changed = checksums.changed_files(folder, recorded)
    return f"has {', '.join(changed[:3])} missing or changed since training" if changed else None


def pretrain(settings: PretrainSettings | None = None, *, root: str | Path | None = None,
             device: str | None = None, progress: bool = True,
             callback: Callable[[int, int], None] | None = None) -> Pretrained:
    """Train a model from scratch with ``settings``, or return the cached run.

    Parameters
    ----------
    settings : PretrainSettings, optional
        The objective and every hyperparameter; default ``PretrainSettings()`` (causal).
    root : str or Path, optional
        Run root; default ``paths.cache_dir("pretrained")``.
    device : str, optional
        Torch device; default CUDA when available, else CPU. The device is not part of the
        cache key (a GPU's kernels give slightly different weights than a CPU's).
    progress : bool
        A progress bar on stderr (loss and tokens/s).
    callback : callable, optional
        ``callback(step, steps)`` after each optimiser step; an exception it raises stops the
        run and leaves no folder.

    Returns
    -------
    Pretrained

    Raises
    ------
    UsageError
        A setting that cannot work.
    """
    s = (settings or PretrainSettings()).check()
    texts, counts = pretraining_texts()
    train_texts, held_texts = split_texts(texts, s.seed)
    digest = _data_digest(train_texts, held_texts)
    key = run_key(s, digest)
    base = paths.writable_folder(root if root is not None else paths.cache_dir("pretrained"),
                                 "the pretraining root (--out)")
    final = base / f"{s.objective}-{_slug(s)}-{key[:16]}"
    if (final / MARKER).is_file():
        problem = _damage(final)
        if problem is None:
            info = read_run(final)
            return Pretrained(final, s, _checkpoint_folders(final, info), info, hit=True)
        print(f"lmgeometry: the cached run {final} {problem}; training it again",
              file=sys.stderr, flush=True)
        shutil.rmtree(final)
    if final.exists():
        raise PathError(f"{final} exists but holds no {MARKER} (not written by lmgeometry); "
                        "delete it and run again")
    with paths.building(final, MARKER) as tmp:
        log, curve = _train(s, train_texts, held_texts, tmp, device=device,
                            progress=progress, callback=callback)
        files = {p.relative_to(tmp).as_posix(): checksums.sha256_file(p)
                 for p in sorted(tmp.rglob("*")) if p.is_file()}
        info = {
            "recipe": RECIPE_VERSION, "key": key, "settings": asdict(s),
            "data": {"digest": digest, "n_train": len(train_texts), "n_held_out": len(held_texts),
                     **counts},
            "log": log, "curve": curve,
            "versions": {"lmgeometry": __version__, "torch": metadata.version("torch"),
                         "transformers": metadata.version("transformers"),
                         "tokenizers": metadata.version("tokenizers")},
            "code": sources.key_files(__name__),
            "files": files,
        }
        (tmp / MARKER).write_text(json.dumps(info, indent=1) + "\n")
    checksums.remember(final, info["files"])
    return Pretrained(final, s, _checkpoint_folders(final, info), info, hit=False)


def _slug(s: PretrainSettings) -> str:
    tied = "" if s.tie_embeddings else "-untied"
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", f"L{s.layers}-H{s.width}-{s.tokens // 1000}k{tied}")


def _build(s: PretrainSettings, tokenizer: Any) -> torch.nn.Module:
    """A freshly initialised model of ``s.objective`` (module docstring)."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, GPT2Config, GPT2LMHeadModel

    torch.manual_seed(s.seed)
    special = {"pad_token_id": tokenizer.pad_token_id, "bos_token_id": tokenizer.cls_token_id,
               "eos_token_id": tokenizer.sep_token_id}
    if s.objective == "mlm":
        config = BertConfig(
            vocab_size=len(tokenizer), hidden_size=s.width, num_hidden_layers=s.layers,
            num_attention_heads=s.heads, intermediate_size=4 * s.width, hidden_act="gelu",
            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
            max_position_embeddings=s.block, type_vocab_size=1, initializer_range=0.02,
            tie_word_embeddings=s.tie_embeddings, **special)
        return BertForMaskedLM(config)
    config = GPT2Config(
        vocab_size=len(tokenizer), n_positions=s.block, n_embd=s.width, n_layer=s.layers,
        n_head=s.heads, n_inner=4 * s.width, activation_function="gelu", resid_pdrop=0.0,
        embd_pdrop=0.0, attn_pdrop=0.0, initializer_range=0.02,
        tie_word_embeddings=s.tie_embeddings, **special)
    return GPT2LMHeadModel(config)


def _mask(batch: torch.Tensor, rate: float, tokenizer: Any, gen: torch.Generator,
          replace: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's masking: ``(inputs, labels)``, labels -100 where nothing is predicted."""
    import torch

    special = torch.zeros_like(batch, dtype=torch.bool)
    for t in (tokenizer.pad_token_id, tokenizer.cls_token_id, tokenizer.sep_token_id):
        special |= batch == t
    draw = torch.rand(batch.shape, generator=gen, device=batch.device)
    chosen = (draw < rate) & ~special
    labels = torch.where(chosen, batch, torch.full_like(batch, -100))
    inputs = batch.clone()
    if not replace:
        inputs[chosen] = tokenizer.mask_token_id
        return inputs, labels
    how = torch.rand(batch.shape, generator=gen, device=batch.device)
    inputs[chosen & (how < 0.8)] = tokenizer.mask_token_id
    swap = chosen & (how >= 0.8) & (how < 0.9)
    n_special = len(SPECIAL_TOKENS)
    random_ids = torch.randint(n_special, len(tokenizer), batch.shape, generator=gen,
                               device=batch.device)
    inputs[swap] = random_ids[swap]
    return inputs, labels


def _loss(model: torch.nn.Module, s: PretrainSettings, batch: torch.Tensor, tokenizer: Any,
          gen: torch.Generator) -> torch.Tensor:
    """One batch's mean loss (masked tokens, or every next token)."""
    import torch

    attention = text_attention(batch, tokenizer.cls_token_id, tokenizer.pad_token_id,
                               causal=s.objective == "causal")
    if s.objective == "mlm":
        inputs, labels = _mask(batch, s.mask_rate, tokenizer, gen)
    else:
        inputs = batch
        labels = torch.where(batch != tokenizer.pad_token_id, batch, -100)
    return model(input_ids=inputs, attention_mask=attention, labels=labels,
                 position_ids=text_positions(batch, tokenizer.cls_token_id)).loss


def evaluate(model: torch.nn.Module, objective: str, held: np.ndarray, tokenizer: Any,
             log_unigram: np.ndarray, *, seed: int = 0, batch_size: int = 32
             ) -> dict[str, float]:
    """Held-out loss of ``model`` beside the unigram baseline's.

    Parameters
    ----------
    model : torch.nn.Module
        A ``BertForMaskedLM`` or ``GPT2LMHeadModel``.
    objective : {"mlm", "causal"}
    held : ndarray, shape (n, block)
        Held-out sequences (:func:`pack`).
    tokenizer : PreTrainedTokenizerFast
    log_unigram : ndarray
        :func:`unigram_baseline`.
    seed : int
        The one fixed draw of masked positions (:data:`EVAL_MASK_RATE`, all [MASK]).

    Returns
    -------
    dict
        ``loss`` (mean cross-entropy in nats per predicted token), ``baseline_loss`` (the
        unigram model's on the same tokens), ``perplexity`` and ``baseline_perplexity``
        (their exponentials), ``held_out_tokens`` (predicted); a masked LM adds ``accuracy`` and
        ``baseline_accuracy`` (the most frequent training piece).
    """
    import torch

    device = next(model.parameters()).device
    gen = torch.Generator(device=device).manual_seed(seed)
    was_training = model.training
    model.eval()
    total = base = correct = n = 0.0
    log_uni = torch.as_tensor(log_unigram, device=device, dtype=torch.float32)
    top = int(np.argmax(log_unigram))
    base_correct = 0.0
    with torch.inference_mode():
        for i in range(0, len(held), batch_size):
            batch = torch.as_tensor(held[i:i + batch_size], device=device)
            seen = {"attention_mask": text_attention(
                batch, tokenizer.cls_token_id, tokenizer.pad_token_id,
                causal=objective == "causal"),
                "position_ids": text_positions(batch, tokenizer.cls_token_id)}
            if objective == "mlm":
                inputs, labels = _mask(batch, EVAL_MASK_RATE, tokenizer, gen, replace=False)
                logits = model(input_ids=inputs, **seen).logits
            else:
                logits = model(input_ids=batch, **seen).logits[:, :-1]
                labels = torch.where(batch != tokenizer.pad_token_id, batch, -100)[:, 1:]
            keep = labels != -100
            target = labels[keep]
            picked = logits[keep].float()
            total += float(torch.nn.functional.cross_entropy(picked, target, reduction="sum"))
            base += float(-log_uni[target].sum())
            correct += float((picked.argmax(-1) == target).sum())
            base_correct += float((target == top).sum())
            n += int(keep.sum())
    model.train(was_training)
    out = {"loss": total / n, "baseline_loss": base / n, "perplexity": math.exp(total / n),
           "baseline_perplexity": math.exp(base / n), "held_out_tokens": int(n)}
    if objective == "mlm":
        out |= {"accuracy": correct / n, "baseline_accuracy": base_correct / n}
    return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in out.items()}


def _train(s: PretrainSettings, train_texts: list[str], held_texts: list[str], out: Path, *,
           device: str | None, progress: bool, callback: Callable[[int, int], None] | None
           ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The training loop of :func:`pretrain`, writing ``step-<n>/`` folders into ``out``."""
    import torch
    from tqdm.std import tqdm

    target = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    tokenizer = train_tokenizer(train_texts, s.vocab_size)
    pad = tokenizer.pad_token_id
    order = np.random.default_rng([s.seed, 2]).permutation(len(train_texts))
    train = pack(tokenizer([train_texts[i] for i in order])["input_ids"], s.block, pad)
    held = pack(tokenizer(held_texts)["input_ids"], s.block, pad)
    special = [tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS
               if s.objective == "mlm" or t != "[SEP]"]  # a causal LM predicts [SEP]
    log_unigram = unigram_baseline(train, len(tokenizer), special)
    real_per_sequence = (train != pad).sum(axis=1)
    steps = math.ceil(s.tokens / (s.batch_size * float(real_per_sequence.mean())))
    saves = set(checkpoint_steps(steps, s.checkpoints))

    model = _build(s, tokenizer).to(target)
    optimizer = torch.optim.AdamW(param_groups(model, s.weight_decay), lr=s.lr,
                                  betas=(0.9, 0.98), eps=1e-6)
    factor = linear_schedule(round(s.warmup * steps), steps)
    # the rate of step k + 1, so that the first step already learns (step 1 != step 0)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda k: factor(k + 1))
    gen = torch.Generator(device=target).manual_seed(s.seed)
    curve: list[dict[str, Any]] = []
    losses: list[float] = []
    seen = 0

    def save(step: int) -> None:
        folder = f"step-{step:06d}"
        model.eval()
        with quiet():
            model.save_pretrained(out / folder)
        tokenizer.save_pretrained(out / folder)
        record = evaluate(model, s.objective, held, tokenizer, log_unigram, seed=s.seed)
        curve.append({"step": step, "tokens": seen, "folder": folder, **record})
        model.train()

    model.train()
    save(0)
    bar = tqdm(total=steps, desc=f"pretrain {s.objective}", unit="step", file=sys.stderr,
               disable=not progress, dynamic_ncols=True, mininterval=1.0)
    start, cpu_start = time.perf_counter(), time.process_time()
    step = epoch = 0
    try:
        while step < steps:
            perm = np.random.default_rng([s.seed, 3, epoch]).permutation(len(train))
            for i in range(0, len(perm) - s.batch_size + 1, s.batch_size):
                batch = torch.as_tensor(train[perm[i:i + s.batch_size]], device=target)
                loss = _loss(model, s, batch, tokenizer, gen)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), s.max_grad_norm)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                step += 1
                seen += int((batch != pad).sum())
                losses.append(loss.item())
                rate = seen / max(time.perf_counter() - start, 1e-9)
                bar.set_postfix_str(f"loss {np.mean(losses[-50:]):.3f}, {rate:,.0f} tokens/s",
                                    refresh=False)
                bar.update()
                if step in saves:
                    save(step)
                if callback is not None:
                    callback(step, steps)
                if step >= steps:
                    break
            epoch += 1
    finally:
        bar.close()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    log = {"loss": [round(x, 4) for x in losses], "steps": steps, "epochs": epoch,
           "tokens": seen, "sequences": len(train), "held_out_sequences": len(held),
           "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2),
           "tokens_per_second": round(seen / seconds, 1), "device": str(target),
           "threads": torch.get_num_threads(),
           "parameters": sum(p.numel() for p in model.parameters())}
    return log, curve


def pretrain_cli(args: argparse.Namespace) -> int:
    """``lmgeometry pretrain``: train (or find) a run; prints its learning curve and folder."""
    base = PretrainSettings(
        objective=args.objective, layers=args.layers, width=args.width, heads=args.heads,
        vocab_size=args.vocab_size, block=args.block, tokens=args.tokens,
        batch_size=args.batch_size, lr=args.lr, mask_rate=args.mask_rate,
        tie_embeddings=not args.untied, checkpoints=args.checkpoints, seed=args.seed)
    result = pretrain(base.scaled(args.scale), root=args.out, device=args.device)
    log = result.info["log"]
    state = "cached" if result.hit else "trained"
    print(f"{state}: {args.objective}, {log['parameters']:,} parameters, {log['tokens']:,} "
          f"tokens in {log['seconds']:.0f} s ({log['tokens_per_second']:,.0f} tokens/s on "
          f"{log['device']})")
    for c in result.curve:
        extra = (f", accuracy {c['accuracy']:.1%} (unigram {c['baseline_accuracy']:.1%})"
                 if "accuracy" in c else "")
        print(f"  step {c['step']:>6}: held-out perplexity {c['perplexity']:9.1f} (unigram "
              f"{c['baseline_perplexity']:.1f}){extra}")
    print(result.folder)
    return 0


"""Fine-tuning a model on SST-2 or QNLI (seed 003's experiment), cached like the activation store.

:func:`finetune` trains a standard transformers sequence-classification model on a seeded
sample of a task's training data and saves it, with its tokenizer, as a plain transformers
folder under the cache (``paths.cache_dir("finetuned")``). The folder loads with
``AutoModelForSequenceClassification.from_pretrained`` and ``AutoTokenizer.from_pretrained``,
and :func:`lmgeometry.io.models.load_model` accepts it like any model folder (it loads the base
model under the head, whose hidden states the activation store reads).

Recipe (:class:`Settings`), full fine-tuning as seed 003 did:

* the model: ``AutoModelForSequenceClassification`` with two labels: an encoder's usual head
  (BERT: pooler and linear layer on ``[CLS]``; MPNet: a two-layer head on ``<s>``), a decoder's
  linear head on its last non-padding token, with the EOS token as padding token when the
  tokenizer has none; the head is initialised from the seed;
* AdamW (Loshchilov & Hutter 2019; no weight decay on biases and normalisation weights), a
  learning rate that rises linearly over the first ``warmup`` share of the steps and falls
  linearly to 0, gradient norm clipped at ``max_grad_norm``, cross-entropy loss;
* mixed precision by default (``precision="bfloat16"``): the matrix products of the forward
  and backward passes in bfloat16 under ``torch.autocast``, the weights, optimiser state and
  loss in float32, the checkpoint saved in float32 (``precision="float32"``: all float32);
* batches: each epoch, a seeded permutation of the examples, cut into pools of 50 batches
  whose examples are sorted by length (less padding on a CPU), the batches shuffled again;
  padding on the right with an attention mask;
* deterministic for a seed on a CPU: the seed fixes the training sample, the head's
  initialisation, dropout and the batch order (the same seed gives the same weights, tested).

Data (:func:`task_data`): SST-2 trains on a seeded sample of GLUE's train split (rows of at
least four words, :func:`lmgeometry.io.corpus.sst2_train_sample`) and is scored on the whole
dev split (872 sentences). The mirror holds only QNLI's dev split (5,463 pairs); its pairs in
the order of :func:`lmgeometry.io.corpus.qnli_pairs` (seed 0) are split once: positions
1,000-1,499 are held out (:data:`QNLI_HELD_OUT`: the very pairs chapter 6 holds out with its
defaults), the other 4,963 form the training pool a seeded sample is drawn from. No held-out
pair is ever trained on. A pair is one input text, question then sentence joined by an
encoder's own separator token(s) or a space for a decoder
(:func:`lmgeometry.io.corpus.pair_text`), as chapter 6 joins them.

Cache: the folder's name carries a sha256 over the base model's fingerprint, the task, the
digest of the training sample and every setting (:func:`checkpoint_key`); it is written into a
temporary sibling and renamed into place when complete (:func:`lmgeometry.io.paths.building`),
so a folder with the final name is always whole and a rerun is a cache hit. Its
``lmgeometry-finetune.json`` records the recipe, the data, the loss of every step and the
throughput.
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
from lmgeometry.errors import CorpusError, ModelLoadError, ModelSpecError, PathError, UsageError
from lmgeometry.io import checksums, corpus, data, paths
from lmgeometry.io.models import (
    head_token,
    model_kind,
    pair_separator,
    pretrained_source,
    resolve_fingerprint,
)
from lmgeometry.training.loop import linear_schedule, param_groups, quiet
from lmgeometry.training.settings import Settings

if TYPE_CHECKING:
    import argparse

    import torch

__all__ = [
    "batch_order",
    "checkpoint_key",
    "Evaluation",
    "evaluate",
    "finetune",
    "finetune_cli",
    "FineTuned",
    "Head",
    "held_out",
    "linear_schedule",
    "load_head",
    "MARKER",
    "QNLI_HELD_OUT",
    "read_checkpoint",
    "RECIPE_VERSION",
    "Settings",
    "TASKS",
    "task_data",
    "TaskData",
    "train",
]

#: Bumped when the training recipe changes, so that old checkpoints are not reused.
RECIPE_VERSION = 1

#: The file that marks a complete checkpoint folder and records how it was made.
MARKER = "lmgeometry-finetune.json"

#: QNLI's held-out pairs: positions [start, stop) of ``corpus.qnli_pairs(QNLI_SPLIT_SEED)``.
QNLI_HELD_OUT = (1000, 1500)

#: The seed of the one QNLI permutation every run splits (never the training seed).
QNLI_SPLIT_SEED = 0

#: SST-2 training rows need at least this many words (as chapter 6's ``sst2_corpus``).
SST2_MIN_WORDS = 4


@dataclass(frozen=True)
class _Task:
    name: str
    labels: tuple[str, str]
    held_out: str


#: The tasks: name as printed, label names (index = label id), the held-out set.
TASKS: dict[str, _Task] = {
    "sst2": _Task("SST-2", ("negative", "positive"), "the SST-2 dev split (872 sentences)"),
    "qnli": _Task("QNLI", ("not_entailment", "entailment"),
                  f"QNLI dev pairs {QNLI_HELD_OUT[0]}-{QNLI_HELD_OUT[1] - 1} of the seed-0 "
                  f"order ({QNLI_HELD_OUT[1] - QNLI_HELD_OUT[0]} pairs)"),
}


def _task(task: str) -> _Task:
    if task not in TASKS:
        raise UsageError(f"unknown task {task!r}; the tasks are {', '.join(TASKS)}")
    return TASKS[task]


@dataclass(frozen=True)
class TaskData:
    """A task's training sample and held-out set, as the model reads them (one text each)."""

    task: str
    train_texts: list[str]
    train_labels: np.ndarray
    test_texts: list[str]
    test_labels: np.ndarray
    separator: str = ""

    def digest(self) -> str:
        """sha256 of the training sample (texts, labels, the pair separator)."""
        payload = [self.task, self.separator, self.train_texts,
                   [int(y) for y in self.train_labels]]
        return hashlib.sha256(json.dumps(payload).encode()).hexdigest()


def _qnli_split() -> tuple[Any, Any]:
    """QNLI's training pool and held-out pairs (see the module docstring)."""
    import pandas as pd

    pairs = corpus.qnli_pairs(QNLI_SPLIT_SEED)
    start, stop = QNLI_HELD_OUT
    return pd.concat([pairs.iloc[:start], pairs.iloc[stop:]]), pairs.iloc[start:stop]


def _texts(pairs: Any, separator: str) -> list[str]:
    return [corpus.pair_text(q, s, separator)
            for q, s in zip(pairs["question"], pairs["sentence"], strict=True)]


def held_out(task: str, separator: str = "") -> tuple[list[str], np.ndarray]:
    """A task's held-out texts and labels: SST-2's dev split, QNLI's :data:`QNLI_HELD_OUT`."""
    _task(task)
    if task == "sst2":
        dev = data.load_sst2("dev")
        return dev["sentence"].tolist(), dev["label"].to_numpy(int)
    test = _qnli_split()[1]
    return _texts(test, separator), test["label"].to_numpy(int)


def task_data(task: str, train_size: int, seed: int = 0, separator: str = "") -> TaskData:
    """A task's seeded training sample and its held-out set (see the module docstring).

    Parameters
    ----------
    task : {"sst2", "qnli"}
    train_size : int
        Training examples drawn (``DataFrame.sample(train_size, random_state=seed)``).
    seed : int
    separator : str
        Between a QNLI question and its sentence (:func:`lmgeometry.io.models.pair_separator`).

    Raises
    ------
    UsageError
        An unknown task.
    CorpusError
        ``train_size`` larger than the task's training data.
    """
    _task(task)
    if task == "sst2":
        try:
            train = corpus.sst2_train_sample(train_size, seed, SST2_MIN_WORDS)
        except CorpusError as exc:
            raise CorpusError(f"--train-size {train_size} does not fit sst2: {exc}") from exc
        texts = train["sentence"].tolist()
    else:
        pool, _ = _qnli_split()
        if not 0 < train_size <= len(pool):
            raise CorpusError(
                f"--train-size must be in 1..{len(pool)} for qnli (the mirror's QNLI dev pairs "
                f"less the {QNLI_HELD_OUT[1] - QNLI_HELD_OUT[0]} held out), not {train_size}")
        train = pool.sample(n=train_size, random_state=seed)
        texts = _texts(train, separator)
    test_texts, test_labels = held_out(task, separator)
    return TaskData(task, texts, train["label"].to_numpy(int), test_texts, test_labels,
                    separator)


def checkpoint_key(fingerprint: str, task: str, data_digest: str, settings: Settings) -> str:
    """sha256 naming one checkpoint: recipe version, base model, task, training data, settings
    and the training code (:func:`lmgeometry.sources.key_files` of this module)."""
    payload = {"recipe": RECIPE_VERSION, "model": fingerprint, "task": task,
               "data": data_digest, "settings": asdict(settings),
               "code": sources.code_digest(sources.key_files(__name__))}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _slug(spec: str) -> str:
    name = Path(spec).name if "/" in spec or "\\" in spec else spec
    return re.sub(r"[^A-Za-z0-9_.]+", "-", name).strip("-.")[:40] or "model"


@dataclass(frozen=True)
class FineTuned:
    """A fine-tuned checkpoint folder and how it was made.

    ``info`` is the folder's ``lmgeometry-finetune.json`` (base model, task, settings, data,
    the loss of every step, time and throughput); ``hit`` says whether it came from the cache.
    """

    folder: Path
    model: str
    task: str
    kind: str
    settings: Settings
    info: dict[str, Any] = field(repr=False)
    hit: bool = False


def read_checkpoint(folder: str | Path) -> dict[str, Any]:
    """A checkpoint folder's ``lmgeometry-finetune.json``.

    Raises
    ------
    ModelSpecError
        ``folder`` is not a complete checkpoint written by :func:`finetune`.
    """
    path = paths.user_path(folder) / MARKER
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ModelSpecError(f"{folder} is not a checkpoint written by `lmgeometry finetune` "
                             f"(no readable {MARKER})") from exc


def finetune(model: str, task: str, settings: Settings | None = None, *,
             root: str | Path | None = None, progress: bool = True,
             callback: Callable[[int, int], None] | None = None) -> FineTuned:
    """Fine-tune ``model`` on ``task``, or return the cached checkpoint.

    Parameters
    ----------
    model : str
        An offline alias, a Hugging Face hub id or a local model folder
        (:func:`lmgeometry.io.models.load_model`'s specs).
    task : {"sst2", "qnli"}
    settings : Settings, optional
        Default :class:`Settings`.
    root : str or Path, optional
        Checkpoint root; default ``paths.cache_dir("finetuned")``.
    progress : bool
        A progress bar on stderr (loss and examples/s).
    callback : callable, optional
        ``callback(step, steps)`` after each optimiser step; an exception it raises stops
        the run and leaves no folder.

    Returns
    -------
    FineTuned

    Raises
    ------
    UsageError
        An unknown task or a setting that cannot work (``ModelSpecError`` for a bad model
        spec, ``CorpusError`` for a training sample larger than the data).
    """
    settings = (settings or Settings()).check()
    info = _task(task)
    kind = pretrained_source(model)[2]
    separator = pair_separator(model) if task == "qnli" else ""
    sample = task_data(task, settings.train_size, settings.seed, separator)
    fingerprint = resolve_fingerprint(model)
    key = checkpoint_key(fingerprint, task, sample.digest(), settings)
    base = paths.writable_folder(root if root is not None else paths.cache_dir("finetuned"),
                                 "the checkpoint root")
    final = base / f"{_slug(model)}-{task}-{key[:16]}"
    if (final / MARKER).is_file():
        problem = _damage(final)
        if problem is None:
            return FineTuned(final, model, task, kind, settings, read_checkpoint(final),
                             hit=True)
        print(f"lmgeometry: the cached checkpoint {final} {problem}; training it again",
              file=sys.stderr, flush=True)
        shutil.rmtree(final)
    if final.exists():
        raise PathError(f"{final} exists but holds no {MARKER} (not written by lmgeometry); "
                        "delete it and run again")
    with paths.building(final) as tmp:
        log = train(model, sample, settings, tmp, progress=progress, callback=callback)
        marker = {
            "recipe": RECIPE_VERSION, "key": key, "task": task,
            "base": {"spec": model, "fingerprint": fingerprint, "kind": kind},
            "settings": asdict(settings),
            "data": {"digest": sample.digest(), "n_train": len(sample.train_texts),
                     "separator": separator, "held_out": info.held_out,
                     "train_label_share": float(np.mean(sample.train_labels))},
            "log": log,
            "versions": {"lmgeometry": __version__, "torch": metadata.version("torch"),
                         "transformers": metadata.version("transformers")},
            "code": sources.key_files(__name__),
            "files": {p.name: checksums.sha256_file(p) for p in sorted(tmp.iterdir())
                      if p.is_file()},
        }
        (tmp / MARKER).write_text(json.dumps(marker, indent=1) + "\n")
    checksums.remember(final, marker["files"])
    return FineTuned(final, model, task, kind, settings, marker, hit=False)


def _damage(folder: Path) -> str | None:
    """Why a cached checkpoint cannot be used: a file missing or changed since it was written
    (checked by sha256 once per file and machine, :mod:`lmgeometry.io.checksums`)."""
    try:
        recorded = read_checkpoint(folder).get("files")
    except ModelSpecError:
        return f"has an unreadable {MARKER}"
    if not isinstance(recorded, dict) or not recorded:
        return "records no checksums (written by an older version of lmgeometry)"
    changed = checksums.changed_files(folder, recorded)
    return f"has {', '.join(changed)} missing or changed since training" if changed else None


def batch_order(lengths: Sequence[int] | np.ndarray, batch_size: int, seed: int, epoch: int,
                pool: int = 50) -> list[np.ndarray]:
    """One epoch's batches: shuffled, with examples of similar length batched together.

    A permutation from ``default_rng([seed, epoch])`` is cut into pools of ``pool`` batches;
    within a pool the examples are sorted by length (longest first) and cut into batches;
    then the batches are shuffled. Every example is in exactly one batch.

    Returns
    -------
    list of ndarray
        Example indices of each batch, in training order.
    """
    lengths = np.asarray(lengths)
    rng = np.random.default_rng([seed, epoch])
    perm = rng.permutation(len(lengths))
    batches: list[np.ndarray] = []
    for start in range(0, len(perm), batch_size * pool):
        chunk = perm[start:start + batch_size * pool]
        chunk = chunk[np.argsort(-lengths[chunk], kind="stable")]
        batches += [chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]


def _tokenizer(location: str, options: dict[str, Any]) -> Any:
    """The model's tokenizer, padding on the right, with a padding token."""
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(location, **options)
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"cannot load the tokenizer of {location}: {exc}") from exc
    tokenizer.padding_side = "right"
    if tokenizer.pad_token is None:
        if tokenizer.eos_token is None:
            raise ModelLoadError(f"the tokenizer of {location} has neither a padding nor an "
                                 "EOS token to pad batches with")
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def _classifier(location: str, options: dict[str, Any], tokenizer: Any,
                labels: tuple[str, str]) -> tuple[torch.nn.Module, list[str]]:
    """A sequence-classification model on the pretrained weights; the keys it initialised."""
    import torch
    from transformers import AutoModelForSequenceClassification

    try:
        with quiet():  # the new head's "newly initialised" report is in the returned keys
            model, loading = AutoModelForSequenceClassification.from_pretrained(
                location, num_labels=2, id2label=dict(enumerate(labels)),
                label2id={name: i for i, name in enumerate(labels)}, dtype=torch.float32,
                output_loading_info=True, **options)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelLoadError(f"cannot build a sequence-classification model from {location}: "
                             f"{exc}") from exc
    model.config.pad_token_id = tokenizer.pad_token_id
    model.config.problem_type = "single_label_classification"
    return model, sorted(loading.get("missing_keys", []))


def train(model: str, sample: TaskData, settings: Settings, out: str | Path, *,
          progress: bool = True, callback: Callable[[int, int], None] | None = None
          ) -> dict[str, Any]:
    """Fine-tune ``model`` on ``sample``'s training texts and save it into ``out``, uncached.

    The loop of :func:`finetune` (see the module docstring), for any :class:`TaskData`
    (e.g. a toy task). ``out`` receives the model (``save_pretrained``) and its tokenizer.

    Returns
    -------
    dict
        The log: ``loss`` of every step, ``steps``, ``seconds`` and ``cpu_seconds`` of the
        loop, ``examples``, ``tokens`` (without padding), ``examples_per_second``,
        ``tokens_per_second``, ``threads``, ``head_initialised`` (the weights the
        checkpoint lacked), ``kind``.
    """
    import torch
    from tqdm.std import tqdm

    s = settings.check()
    location, options, kind = pretrained_source(model)
    label = f"{model} on {_task(sample.task).name}"
    out = paths.user_path(out)
    torch.manual_seed(s.seed)
    tokenizer = _tokenizer(location, options)
    model, initialised = _classifier(location, options, tokenizer, TASKS[sample.task].labels)
    enc = tokenizer(sample.train_texts, truncation=True, max_length=s.max_length)
    lengths = np.array([len(ids) for ids in enc["input_ids"]])
    if not len(lengths) or lengths.min() < 1:
        raise UsageError(f"{label}: no training texts, or a text the tokenizer turns into no "
                         "token at all")
    labels = torch.as_tensor(sample.train_labels, dtype=torch.long)
    total = s.epochs * math.ceil(len(lengths) / s.batch_size)
    optimizer = torch.optim.AdamW(param_groups(model, s.weight_decay), lr=s.lr)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, linear_schedule(round(s.warmup * total), total))
    model.train()
    losses: list[float] = []
    seen = tokens = 0
    bar = tqdm(total=total, desc=f"fine-tune {label}", unit="step", file=sys.stderr,
               disable=not progress, dynamic_ncols=True, mininterval=1.0)
    start, cpu_start = time.perf_counter(), time.process_time()
    try:
        for epoch in range(s.epochs):
            for index in batch_order(lengths, s.batch_size, s.seed, epoch):
                batch = tokenizer.pad({k: [v[i] for i in index] for k, v in enc.items()},
                                      return_tensors="pt")
                with torch.autocast("cpu", dtype=torch.bfloat16,
                                    enabled=s.precision == "bfloat16"):
                    logits = model(**batch).logits
                loss = torch.nn.functional.cross_entropy(logits.float(), labels[index])
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), s.max_grad_norm)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                losses.append(loss.item())
                seen, tokens = seen + len(index), tokens + int(lengths[index].sum())
                rate = seen / max(time.perf_counter() - start, 1e-9)
                bar.set_postfix_str(f"loss {np.mean(losses[-20:]):.3f}, {rate:.1f} examples/s",
                                    refresh=False)
                bar.update()
                if callback is not None:
                    callback(len(losses), total)
    finally:
        bar.close()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    model.eval()
    with quiet():
        model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return {"loss": [round(x, 5) for x in losses], "steps": total, "seconds": round(seconds, 2),
            "cpu_seconds": round(cpu, 2),
            "examples": seen, "tokens": tokens,
            "examples_per_second": round(seen / seconds, 2),
            "tokens_per_second": round(tokens / seconds, 1), "threads": torch.get_num_threads(),
            "head_initialised": initialised, "kind": kind}


@dataclass
class Head:
    """A fine-tuned model's own classification head, applied to last-layer hidden states.

    ``X`` holds, per example, the last layer's hidden state at the token the head reads
    (:func:`lmgeometry.io.models.head_token`: an encoder's first token, a decoder's last);
    the head is the model's (BERT: pooler and linear layer; MPNet: its two-layer head;
    decoders: the linear ``score`` layer), so ``predict`` on the unchanged states gives the
    model's own predictions. ``converged`` is always True (the head was trained with the
    model), so it stands where a :class:`lmgeometry.measures.probes.LogisticHead` is read.
    """

    kind: str
    label_names: tuple[str, ...]
    function: Callable[[torch.Tensor], torch.Tensor] = field(repr=False)
    converged: bool = True

    def logits(self, X: np.ndarray, batch: int = 4096) -> np.ndarray:
        """Logits (n, 2) of the rows of ``X`` (n, width)."""
        import torch

        X = np.asarray(X, dtype=np.float32)
        out = []
        with torch.inference_mode():
            for i in range(0, len(X), batch):
                out.append(self.function(torch.from_numpy(X[i:i + batch])).float().numpy())
        return np.concatenate(out) if out else np.zeros((0, len(self.label_names)), np.float32)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Predicted label ids."""
        return self.logits(X).argmax(axis=1)

    def accuracy(self, X: np.ndarray, y: np.ndarray) -> float:
        """Share of rows whose predicted label is ``y``."""
        return float((self.predict(X) == np.asarray(y)).mean())


def _head_function(model: torch.nn.Module) -> Callable[[torch.Tensor], torch.Tensor]:
    """The part of a ``*ForSequenceClassification`` model after its last hidden state."""
    score = getattr(model, "score", None)
    if score is not None:
        return score
    classifier = getattr(model, "classifier", None)
    base = getattr(model, getattr(model, "base_model_prefix", ""), None)
    pooler = getattr(base, "pooler", None)
    if classifier is not None and pooler is not None:
        return lambda X: classifier(pooler(X[:, None, :]))
    if classifier is not None:
        return lambda X: classifier(X[:, None, :])
    raise ModelLoadError(f"{type(model).__name__}: no known classification head (score, "
                         "classifier)")


def load_head(folder: str | Path) -> Head:
    """The head of a fine-tuned folder, checked against the whole model on a probe input.

    Raises
    ------
    ModelLoadError
        The architecture's head is not one :class:`Head` knows, or applying it to the last
        hidden state does not reproduce the model's logits.
    """
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    folder = paths.user_path(folder)
    with quiet():
        model = AutoModelForSequenceClassification.from_pretrained(folder, dtype=torch.float32)
    model.eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    kind = model_kind(model.config)
    function = _head_function(model)
    probe = tokenizer(["A short probe sentence, for the head."], return_tensors="pt")
    with torch.inference_mode():
        out = model(**probe, output_hidden_states=True)
        position = 0 if head_token(kind) == "first" else probe["input_ids"].shape[1] - 1
        mine = function(out.hidden_states[-1][:, position])
    if not torch.allclose(mine, out.logits, atol=1e-4, rtol=1e-4):
        raise ModelLoadError(f"{folder}: the head applied to the last hidden state at the "
                             f"{head_token(kind)} token does not give the model's logits")
    labels = tuple(model.config.id2label[i] for i in range(model.config.num_labels))
    return Head(kind=kind, label_names=labels, function=function)


@dataclass(frozen=True)
class Evaluation:
    """Held-out accuracy of a checkpoint and the per-example correctness behind it."""

    accuracy: float
    n: int
    correct: np.ndarray
    description: str


def evaluate(folder: str | Path, batch_size: int = 32) -> Evaluation:
    """Score a checkpoint on its task's held-out set with plain transformers.

    The folder is loaded with ``AutoModelForSequenceClassification.from_pretrained`` and
    ``AutoTokenizer.from_pretrained``; the inputs are truncated at the run's ``max_length``.
    """
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    marker = read_checkpoint(folder)
    task, max_length = marker["task"], marker["settings"]["max_length"]
    texts, labels = held_out(task, marker["data"]["separator"])
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.padding_side = "right"
    with quiet():
        model = AutoModelForSequenceClassification.from_pretrained(folder, dtype=torch.float32)
    model.eval()
    predicted = np.empty(len(texts), dtype=int)
    order = np.argsort([len(t) for t in texts], kind="stable")
    with torch.inference_mode():
        for i in range(0, len(order), batch_size):
            index = order[i:i + batch_size]
            batch = tokenizer([texts[j] for j in index], padding=True, truncation=True,
                              max_length=max_length, return_tensors="pt")
            predicted[index] = model(**batch).logits.argmax(-1).numpy()
    correct = predicted == labels
    return Evaluation(float(correct.mean()), len(correct), correct, TASKS[task].held_out)


def finetune_cli(args: argparse.Namespace) -> int:
    """``lmgeometry finetune``: train (or find) a checkpoint; its folder is the last line."""
    settings = Settings(train_size=args.train_size, epochs=args.epochs, lr=args.lr,
                        batch_size=args.batch_size, max_length=args.max_length,
                        seed=args.seed, warmup=args.warmup, weight_decay=args.weight_decay,
                        precision=args.precision)
    result = finetune(args.model, args.task, settings, root=args.out)
    log = result.info["log"]
    state = "cached" if result.hit else "trained"
    print(f"{state}: {args.model} on {TASKS[args.task].name}, {log['examples']} examples in "
          f"{log['seconds']:.0f} s ({log['examples_per_second']:.1f} examples/s, "
          f"{log['tokens_per_second']:.0f} tokens/s), final loss "
          f"{np.mean(log['loss'][-20:]):.3f}")
    if not args.no_eval:
        ev = evaluate(result.folder)
        print(f"held-out accuracy: {ev.accuracy:.1%} on {ev.description}")
    print(result.folder)
    return 0

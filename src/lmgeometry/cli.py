"""The ``lmgeometry`` command: models, data, extract, finetune, pretrain, store, book, results.

``publish`` pushes a built book.

An error of the package (:class:`~lmgeometry.errors.LmgeometryError`) ends the command with one
line, ``lmgeometry <command>: error: <what went wrong and the fix>``, and exit status 2 for a
usage error (an argument or setting that cannot work) or 1 for a run that failed; so does a
write the file system refuses (a full disk, a quota, a file-size limit, a read-only folder:
:func:`lmgeometry.errors.environment_error`). Ctrl-C ends it with status 130 and SIGTERM with
status 143 (128 + the signal's number, as a shell reports it), each with one line: what was
being written is removed (a half-written store entry, a running chapter's kernel).
``--debug`` prints the traceback as well.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from lmgeometry import __version__
from lmgeometry.errors import LmgeometryError, UsageError, environment_error, one_line
from lmgeometry.io.paths import TRUST_REMOTE_CODE_ENV

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["build_parser", "main"]


#: Failure messages printed under a verification table; the rest are counted.
MAX_MESSAGES = 10

INTERRUPTED = 130

#: The exit status after SIGTERM: 128 + 15, as a shell reports a process the signal ended.
TERMINATED = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the main thread is, so that every ``finally`` and ``with`` block
    cleans up as for Ctrl-C (:func:`main` installs the handler)."""


def _terminate(signum: int, frame: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process at once
    raise Terminated


def _models(args: argparse.Namespace) -> int:
    from lmgeometry.io.models import models_table

    print(models_table().to_string(index=False))
    return 0


def _report(table: pd.DataFrame, key: str, what: str) -> int:
    """Print a verification table (``key``, status, size) and the failures' messages."""
    from pandas import isna

    from lmgeometry.io.files import human_size

    if table.empty:
        print(f"no {what} to verify")
        return 0
    shown = table.assign(size=["-" if isna(s) else human_size(s) for s in table["size"]])
    print(shown[[key, "status", "size"]].to_string(index=False))
    bad = table[table["status"] != "ok"]
    if bad.empty:
        print(f"\nall {len(table)} {what} verified")
        return 0
    print(f"\n{len(bad)} of {len(table)} {what} failed verification:", file=sys.stderr)
    for message in bad["message"].head(MAX_MESSAGES):
        print(f"- {message}", file=sys.stderr)
    if len(bad) > MAX_MESSAGES:
        print(f"... and {len(bad) - MAX_MESSAGES} more", file=sys.stderr)
    return 1


def _data(args: argparse.Namespace) -> int:
    from lmgeometry.io.datafiles import verify_all

    return _report(verify_all(), "name", "data files")


def _store(args: argparse.Namespace) -> int:
    from lmgeometry.activations import maintenance
    from lmgeometry.activations.store import verify_entries
    from lmgeometry.io.files import human_size

    if args.action == "verify":
        table = verify_entries(args.paths)
        table["entry"] = [Path(path).name for path in table["entry"]]
        return _report(table, "entry", "store entries")
    if args.action == "upgrade":
        table = maintenance.upgrade_entries(args.paths)
        table["entry"] = [Path(path).name for path in table["entry"]]
        table["status"] = table["status"].replace("sealed", "ok")  # _report counts "ok"
        return _report(table, "entry", "store entries")
    if args.action == "list":
        table = maintenance.list_entries(args.paths)
        foreign = table[table["current"].str.startswith(maintenance.NOT_AN_ENTRY)]
        table = table.drop(foreign.index)
        for row in foreign.itertuples():
            print(f"left alone: {row.entry}: {row.current.split(': ', 1)[1]}")
        if table.empty:
            print("no store entries")
            return 0
        shown = table.assign(entry=[Path(p).name for p in table["entry"]],
                             size=[human_size(s) for s in table["size"]],
                             created=table["created"].str[:10])
        print(shown.to_string(index=False))
        print(f"\n{len(table)} entries, {human_size(int(table['size'].sum()))}; "
              f"{int((table['current'] != 'yes').sum())} no longer read by this code "
              "(`lmgeometry store clean` removes them)")
        return 0
    return _clean(args)


def _clean(args: argparse.Namespace) -> int:
    """``store clean``: list what would go and what stays, ask (or need --yes), remove."""
    from lmgeometry.activations import maintenance
    from lmgeometry.io.files import human_size

    plan = maintenance.clean_plan(args.paths, everything=args.all)
    go = plan[plan["remove"]]
    for row in plan[~plan["remove"]].itertuples():
        print(f"left alone: {row.entry}: {row.reason}")
    for row in go.itertuples():
        print(f"would remove {row.entry} ({human_size(row.size)}): {row.reason}")
    total = f"{len(go)} folders, {human_size(int(go['size'].sum()))}"
    if go.empty or args.dry_run:
        print(f"would remove {total}" if not go.empty else "nothing to remove")
        return 0
    if not args.yes:
        if not sys.stdin.isatty():
            raise UsageError(f"store clean would remove {total} (listed above) and asks "
                             "first; pass --yes to remove them (nothing was removed)")
        answer = input(f"remove these {total}? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("nothing removed")
            return 0
    gone = maintenance.remove_planned(plan, everything=args.all)
    for row in gone.itertuples():
        print(f"removed {row.entry} ({human_size(row.size)}): {row.reason}")
    print(f"removed {len(gone)} folders, {human_size(int(gone['size'].sum()))}")
    return 0


def _extract(args: argparse.Namespace) -> int:
    from lmgeometry.activations.store import extract_cli

    return extract_cli(args)


def _finetune(args: argparse.Namespace) -> int:
    from lmgeometry.errors import UsageError
    from lmgeometry.io.models import window
    from lmgeometry.training.finetune import finetune_cli

    limit = window(args.model)
    if limit is not None and args.max_length > limit:
        raise UsageError(f"--max-length {args.max_length} is longer than the {limit} tokens "
                         f"{args.model}'s positions cover; pass --max-length {limit} or less")
    return finetune_cli(args)


def _pretrain(args: argparse.Namespace) -> int:
    from lmgeometry.training.pretrain import pretrain_cli

    _check_device(args.device)
    return pretrain_cli(args)


def _check_device(device: str | None) -> None:
    """Refuse a torch device this machine cannot run on, before anything is built."""
    if device is None:
        return
    import torch

    try:
        kind = torch.device(device).type
    except (RuntimeError, ValueError) as exc:
        raise UsageError(f"--device {device!r} is not a torch device ({exc}); pass cpu or "
                         "cuda (cuda:0, ...), or leave it out") from exc
    if kind == "cuda" and not torch.cuda.is_available():
        raise UsageError(f"--device {device}: this machine has no CUDA device (or this torch "
                         f"build {torch.__version__} has no CUDA support); pass --device cpu "
                         "or leave it out")
    if kind not in ("cpu", "cuda", "mps"):
        raise UsageError(f"--device {device}: pass cpu or cuda (cuda:0, ...)")


def _book(args: argparse.Namespace) -> int:
    """``lmgeometry book``: 0, or 1 when a chapter failed (its failing cell and the
    kernel's traceback are the message); any other problem raises :class:`BookError`."""
    from lmgeometry.errors import ChapterExecutionError
    from lmgeometry.report.book import build_book, parse_overrides

    try:
        build_book(params=parse_overrides(args.param or []), out=args.out,
                   chapters=args.chapters, html=not args.no_html,
                   force=getattr(args, "force", False), profile=getattr(args, "profile", False),
                   jobs=getattr(args, "jobs", 1))
    except ChapterExecutionError as exc:
        print(f"lmgeometry book: error: {exc}", file=sys.stderr)
        return 1
    return 0


def _results(args: argparse.Namespace) -> int:
    """``lmgeometry results export PATH... --out DIR [--format csv|parquet]``."""
    from lmgeometry.report.export import export_many

    for source, written in export_many(args.paths, args.out, format=args.format):
        folders = sorted({str(p.parent) for p in written})
        print(f"{source}: {len(written)} table(s) written as {args.format} to "
              f"{', '.join(folders)}")
    return 0


def _publish(args: argparse.Namespace) -> int:
    """``lmgeometry publish`` (``remote``, ``branch``, ``out``)."""
    from lmgeometry.report.publish import publish
    from lmgeometry.report.toc import project_root

    book_dir = Path(args.out) if args.out else project_root()
    message = publish(book_dir, args.remote, args.branch)
    print(f"published {book_dir / '_build' / 'html'} to {args.remote} {args.branch}: {message}")
    return 0


def _add_debug(parser: argparse.ArgumentParser, default: object) -> None:
    parser.add_argument("--debug", action="store_true", default=default,
                        help="on an error, print the traceback too")
    parser.add_argument("--trust-remote-code", action="store_true", default=default,
                        help="let a model folder or hub repository run its own Python code "
                             "(transformers' trust_remote_code; off by default)")


def _add_extract(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("extract", help="extract hidden states of a corpus into the store")
    p.add_argument("--model", required=True,
                   help="offline alias (see `lmgeometry models`), Hugging Face hub id, or a "
                        "folder holding a saved model and its tokenizer")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--corpus",
                       help="corpus builder: mnli_polysemy, sts or semcor_targets")
    which.add_argument("--sentences", dest="corpus", type=_sentence_file, metavar="FILE",
                       help="a UTF-8 text file of your own sentences, one a line (blank lines "
                            "skipped)")
    p.add_argument("--n", type=_positive, default=None,
                   help="corpus size: sentences for mnli_polysemy and sts (default 1000), "
                        "target lemmas for semcor_targets (default 30; up to 40 sampled "
                        "occurrences each, so about 40 sentences per lemma)")
    p.add_argument("--seed", type=_seed, default=0,
                   help="sampling seed of the corpus (default 0)")
    p.add_argument("--pooling", choices=["mean", "first", "last"], default="mean",
                   help="a word's vector from its token pieces: their mean, or the first or "
                        "last piece (default mean)")
    p.add_argument("--prepend-bos", choices=["auto", "yes", "no"], default="auto",
                   help="decoders only: force a BOS token before each sentence on or off "
                        "(default auto: the tokenizer's own template)")
    p.add_argument("--too-long", choices=["error", "skip"], default="error",
                   help="a sentence longer than the model's window stops the run, or is left "
                        "out and counted (default error)")
    p.add_argument("--dtype", choices=["float16", "float32"], default="float16",
                   help="storage dtype of the vectors (default float16; float32 when values "
                        "exceed float16's range)")
    p.add_argument("--out", default=None,
                   help="store root folder (default: $LMGEOMETRY_CACHE/activations)")
    p.add_argument("--backend", choices=["torch", "onnxruntime"], default="torch",
                   help="what runs the forward passes: torch eager (default), or the model's "
                        "graph exported to ONNX on onnxruntime's CPU provider (1.6-1.9x faster "
                        "on 2 cores; about 0.5-0.9%% of float16 values differ by a rounding "
                        "step, so its entries are kept apart from torch's)")
    p.add_argument("--engine", choices=["local", "ray"], default="local",
                   help="extract in this process, or on a Ray cluster into a sharded entry "
                        "(default local)")
    p.add_argument("--shard-sentences", type=_positive, default=None,
                   help="sentences per shard: batches never cross a shard, and on Ray a shard "
                        "is the unit of work and retry (default 4096 on Ray; the local engine "
                        "plans over the whole corpus, and writes the same bytes as Ray when "
                        "given the same value)")
    p.add_argument("--address", default=None,
                   help="--engine ray: a running Ray cluster ('auto' or host:port; default: "
                        "start a local one for this job)")
    p.add_argument("--workers", type=_positive, default=None,
                   help="--engine ray: model copies (actors; default: as many as the "
                        "cluster's CPUs or GPUs allow)")
    p.add_argument("--cpus-per-worker", type=_positive, default=1,
                   help="--engine ray: CPUs (torch threads) of each worker (default 1)")
    p.add_argument("--gpus-per-worker", type=float, default=0,
                   help="--engine ray: GPUs of each worker; above 0 the model runs on the GPU "
                        "(default 0)")
    _add_debug(p, argparse.SUPPRESS)
    p.set_defaults(func=_extract)


def _add_finetune(sub: argparse._SubParsersAction) -> None:
    from lmgeometry.training.settings import PRECISIONS, Settings

    d = Settings()
    p = sub.add_parser(
        "finetune", help="fine-tune a model on SST-2 or QNLI (cached); prints the folder",
        description="Fine-tune a model's sequence-classification head and body on SST-2 or "
        "QNLI (AdamW, linear warm-up and decay, gradient clipping; deterministic for a seed "
        "on a CPU). The checkpoint is cached under a key over the base model, the task, the "
        "training sample and every setting; a rerun is a cache hit. The last line printed is "
        "the checkpoint folder, which loads with AutoModelForSequenceClassification and "
        "AutoTokenizer.from_pretrained, and which `lmgeometry extract --model` accepts.")
    p.add_argument("--model", required=True,
                   help="offline alias (see `lmgeometry models`), Hugging Face hub id, or a "
                        "folder holding a saved model and its tokenizer")
    p.add_argument("--task", required=True, help="sst2 or qnli")
    p.add_argument("--train-size", type=int, default=d.train_size,
                   help=f"training examples, a seeded sample (default {d.train_size}); SST-2: "
                        "train rows of at least four words; QNLI: the dev pairs not held out")
    p.add_argument("--epochs", type=int, default=d.epochs, help=f"default {d.epochs}")
    p.add_argument("--lr", type=float, default=d.lr, help=f"peak learning rate (default {d.lr})")
    p.add_argument("--batch-size", type=int, default=d.batch_size,
                   help=f"examples per step (default {d.batch_size})")
    p.add_argument("--max-length", type=int, default=d.max_length,
                   help=f"tokens per example, longer ones truncated (default {d.max_length})")
    p.add_argument("--seed", type=_seed, default=d.seed,
                   help="training sample, head initialisation, dropout and batch order "
                        f"(default {d.seed})")
    p.add_argument("--warmup", type=float, default=d.warmup,
                   help=f"share of the steps the learning rate warms up over (default "
                        f"{d.warmup})")
    p.add_argument("--weight-decay", type=float, default=d.weight_decay,
                   help=f"AdamW weight decay (default {d.weight_decay})")
    p.add_argument("--precision", choices=PRECISIONS, default=d.precision,
                   help="float32: everything in float32; bfloat16: mixed precision, the "
                        "passes' matrix products in bfloat16, weights and optimiser in float32 "
                        "(faster only on a CPU with AVX-512 BF16, far slower without) "
                        f"(default {d.precision})")
    p.add_argument("--out", default=None,
                   help="checkpoint root folder (default: $LMGEOMETRY_CACHE/finetuned)")
    p.add_argument("--no-eval", action="store_true",
                   help="skip scoring the checkpoint on the held-out set")
    _add_debug(p, argparse.SUPPRESS)
    p.set_defaults(func=_finetune)


def _add_pretrain(sub: argparse._SubParsersAction) -> None:
    from lmgeometry.training.pretrain_settings import OBJECTIVES, PretrainSettings

    d = PretrainSettings()
    p = sub.add_parser(
        "pretrain", help="train a small masked or causal LM from scratch (cached); prints the "
        "folder", description="Train a BERT-architecture masked LM (--objective mlm) or a "
        "GPT-2-architecture causal LM (--objective causal) from scratch, alike in size, "
        "tokenizer, training text, token budget and seed, with learned absolute positions. "
        "Checkpoints at log-spaced steps are saved as model folders (step-NNNNNN/) that every "
        "command and chapter loads; the held-out learning curve against a unigram baseline is "
        "printed. The run is cached under a key over every setting, the training text and the "
        "code; a rerun is a cache hit (every file checked by sha256). The defaults train in "
        "a few minutes per model on two CPU cores (4,000-5,600 tokens/s measured at 128 "
        "positions; 1,000,000 tokens by default).")
    p.add_argument("--objective", required=True, choices=OBJECTIVES,
                   help="mlm: masked LM (BERT); causal: next-token LM (GPT-2)")
    p.add_argument("--tokens", type=int, default=d.tokens,
                   help=f"training tokens, padding excluded (default {d.tokens:,})")
    p.add_argument("--scale", type=float, default=1.0,
                   help="multiply --tokens (e.g. 30 on a GPU; default 1)")
    p.add_argument("--layers", type=int, default=d.layers, help=f"default {d.layers}")
    p.add_argument("--width", type=int, default=d.width, help=f"hidden size (default {d.width})")
    p.add_argument("--heads", type=int, default=d.heads, help=f"default {d.heads}")
    p.add_argument("--vocab-size", type=int, default=d.vocab_size,
                   help=f"word pieces of the tokenizer trained on the text (default "
                        f"{d.vocab_size})")
    p.add_argument("--block", type=int, default=d.block,
                   help=f"tokens per sequence and learned positions (default {d.block})")
    p.add_argument("--batch-size", type=int, default=d.batch_size,
                   help=f"sequences per step (default {d.batch_size})")
    p.add_argument("--lr", type=float, default=d.lr, help=f"peak learning rate (default {d.lr})")
    p.add_argument("--mask-rate", type=float, default=d.mask_rate,
                   help=f"share of tokens a masked LM predicts (default {d.mask_rate})")
    p.add_argument("--untied", action="store_true",
                   help="an output layer of its own instead of the input embeddings")
    p.add_argument("--checkpoints", type=int, default=d.checkpoints,
                   help=f"log-spaced checkpoints besides step 0 (default {d.checkpoints})")
    p.add_argument("--seed", type=_seed, default=d.seed,
                   help=f"initialisation, data order and masks (default {d.seed})")
    p.add_argument("--device", default=None, help="torch device (default: cuda if available)")
    p.add_argument("--out", default=None,
                   help="run root folder (default: $LMGEOMETRY_CACHE/pretrained)")
    _add_debug(p, argparse.SUPPRESS)
    p.set_defaults(func=_pretrain)


def _add_store(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("store", help="activation store: list, verify, clean or upgrade entries",
                       description="Look after the activation store (STORE ACTION -h: the "
                       "action's options).")
    _add_debug(p, argparse.SUPPRESS)
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION",
                               help="list, verify, clean or upgrade")
    roots = {"nargs": "*", "metavar": "PATH",
             "help": "store entries or store roots (default: the cache's store root)"}
    for name, text in (
            ("list", "every entry, its model, corpus, size and whether this code still reads "
                     "it; other folders under the root are named and left alone"),
            ("verify", "check entries in full: meta.json against its seal, the key against the "
                       "folder's name, file sizes, counts and every file's sha256"),
            ("upgrade", "verify entries written before meta.json had a checksum (their key "
                        "against the inputs meta.json records and the folder's name, every "
                        "file's sha256) and seal them; others are left as they are")):
        a = actions.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        a.add_argument("paths", **roots)
        _add_debug(a, argparse.SUPPRESS)
        a.set_defaults(func=_store)
    text = ("remove entries this code no longer reads, copies the store set aside and "
            "unfinished builds of dead processes; only folders carrying the store's own "
            "signature (a seal or a verified key matching the folder's name) are removed, "
            "symbolic links are never followed, and what would go is listed first")
    a = actions.add_parser("clean", help=text, description=text[0].upper() + text[1:] + ".")
    a.add_argument("paths", nargs="*", metavar="PATH",
                   help="store roots (default: the cache's store root)")
    a.add_argument("--all", action="store_true",
                   help="remove current entries too (they are rebuilt on demand)")
    a.add_argument("--dry-run", action="store_true", help="only list what would go")
    a.add_argument("--yes", action="store_true",
                   help="remove without asking (needed when stdin is not a terminal)")
    _add_debug(a, argparse.SUPPRESS)
    a.set_defaults(func=_store)


def _seed(text: str) -> int:
    """A seed: a whole number from 0 to 2**32 - 1 (what numpy's and torch's generators take)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"must be a whole number from 0 to 4294967295, not "
                                         f"{text!r}")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text!r}")
    return value


def _sentence_file(text: str) -> str:
    """``--sentences FILE``: an existing file, as an absolute path (never a builder's name)."""
    path = Path(text).expanduser()
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"{text!r} is not a file; give a text file of your own "
                                         "sentences, one a line")
    return str(path.resolve())


def build_parser() -> argparse.ArgumentParser:
    """The ``lmgeometry`` argument parser (every option has help text)."""
    parser = argparse.ArgumentParser(prog="lmgeometry",
                                     description=__doc__.split("\n")[0].replace("``", ""))
    _add_debug(parser, False)
    parser.add_argument("--version", action="version", version=f"lmgeometry {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                help="models, data, extract, finetune, pretrain, store, book, "
                                     "results or publish (COMMAND -h: its options)")

    p = sub.add_parser("models", help="list the offline model aliases and their state")
    _add_debug(p, argparse.SUPPRESS)
    p.set_defaults(func=_models)

    p = sub.add_parser("data", help="data files: verify checksums")
    p.add_argument("action", choices=["verify"],
                   help="verify: check every data file against the manifest's sha256")
    _add_debug(p, argparse.SUPPRESS)
    p.set_defaults(func=_data)

    _add_extract(sub)
    _add_finetune(sub)
    _add_pretrain(sub)

    _add_store(sub)

    p = sub.add_parser(
        "book", help="execute the chapters that changed and build the HTML book",
        description="Execute the chapters (a chapter whose source, parameters, package, "
        "environment, models and store entries are unchanged since its last execution is "
        "skipped; see book/NN_name.exec.json) and build the HTML book.")
    p.add_argument("-p", "--param", nargs=2, action="append", default=[],
                   metavar=("NAME", "VALUE"), help="override a chapter parameter (YAML value)")
    p.add_argument("--out", default=None, help="build a separate book in this folder")
    p.add_argument("--chapters", nargs="*", default=None,
                   help="only these chapters (names, or number prefixes: 01 03). With --out, "
                        "the introduction, the book's root page, is executed too when the "
                        "folder has none yet; links to chapters the folder lacks become text")
    p.add_argument("--no-html", action="store_true", help="execute only, skip the HTML build")
    p.add_argument("--force", action="store_true",
                   help="execute every chapter (and build the HTML) even if nothing changed")
    p.add_argument("--profile", action="store_true",
                   help="print where the time went per chapter (also in _build/profile.json)")
    p.add_argument("--jobs", type=_positive, default=min(2, os.cpu_count() or 1),
                   help="chapters executed at the same time, each kernel on cores/jobs threads "
                        "(default: 2, or 1 on one core; each holds its own model in memory)")
    _add_debug(p, argparse.SUPPRESS)
    p.set_defaults(func=_book)

    p = sub.add_parser(
        "results", help="chapters' results files: export their tables to CSV or parquet",
        description="Write every table (list of records) of chapters' results files "
        "(book/NN_name.results.json) to one CSV or parquet file each.")
    p.add_argument("action", choices=["export"],
                   help="export: write each table to OUT/<table>.<format> (OUT/<chapter>/ "
                        "for a folder or several files)")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="results files, or folders holding them (e.g. book/)")
    p.add_argument("--out", required=True, help="folder to write the tables to")
    p.add_argument("--format", choices=["csv", "parquet"], default="csv",
                   help="csv (default) or parquet (typed columns)")
    _add_debug(p, argparse.SUPPRESS)
    p.set_defaults(func=_results)

    p = sub.add_parser(
        "publish", help="push the built HTML book to a gh-pages-style branch (ghp-import)",
        description="Commit _build/html to a branch of the project's git repository with "
        "ghp-import (with .nojekyll) and force-push it. Refuses a book that is not the "
        "successful build of the current chapters or that loads anything from another host.")
    p.add_argument("--remote", required=True,
                   help="git remote name or URL to push to (a local bare repository works)")
    p.add_argument("--branch", default="gh-pages", help="branch to publish (default gh-pages)")
    p.add_argument("--out", default=None,
                   help="publish the separate book built with `lmgeometry book --out` here")
    _add_debug(p, argparse.SUPPRESS)
    p.set_defaults(func=_publish)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command; returns its exit status (see the module docstring)."""
    args = build_parser().parse_args(argv)
    prefix = f"lmgeometry {args.command}"
    if args.trust_remote_code:  # the book's kernels inherit it
        os.environ[TRUST_REMOTE_CODE_ENV] = "1"
    previous = _on_sigterm(_terminate)
    try:
        return int(args.func(args) or 0)
    except Terminated:
        if args.debug:
            traceback.print_exc()
        print(f"{prefix}: terminated (SIGTERM): stopped, and what it was writing removed; "
              f"exit status {TERMINATED}", file=sys.stderr)
        return TERMINATED
    except KeyboardInterrupt:
        if args.debug:
            traceback.print_exc()
        print(f"{prefix}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except LmgeometryError as exc:
        return _fail(prefix, exc, args.debug)
    except OSError as exc:
        fault = environment_error(exc)
        if fault is None:
            raise
        return _fail(prefix, fault, args.debug)
    finally:
        _on_sigterm(previous)


def _fail(prefix: str, exc: LmgeometryError, debug: bool) -> int:
    if debug:
        traceback.print_exc()
    print(f"{prefix}: error: {one_line(exc)}", file=sys.stderr)
    return exc.exit_code


def _on_sigterm(handler: object) -> object:
    """Install ``handler`` for SIGTERM where this is the main thread; the previous one."""
    import threading

    if threading.current_thread() is not threading.main_thread() or handler is None:
        return None
    return signal.signal(signal.SIGTERM, handler)


if __name__ == "__main__":
    sys.exit(main())

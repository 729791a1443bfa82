"""The ``lmgeometry`` command: models, data, extract, book."""

from __future__ import annotations

import argparse
import sys

__all__ = ["build_parser", "main"]


def _models(args: argparse.Namespace) -> int:
    from lmgeometry.io.models import models_table

    print(models_table().to_string(index=False))
    return 0


def _data(args: argparse.Namespace) -> int:
    from lmgeometry.io.data import verify_all

    table = verify_all()
    print(table.to_string(index=False))
    bad = table[table["status"] != "ok"]
    if len(bad):
        print(f"\n{len(bad)} file(s) failed verification; see the messages above.", file=sys.stderr)
        return 1
    print(f"\nall {len(table)} files verified")
    return 0


def _extract(args: argparse.Namespace) -> int:
    from lmgeometry.activations.store import extract_cli

    return extract_cli(args)


def _book(args: argparse.Namespace) -> int:
    from lmgeometry.report.book import build_book_cli

    return build_book_cli(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lmgeometry", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("models", help="list the offline model aliases and their state")
    p.set_defaults(func=_models)

    p = sub.add_parser("data", help="data files: verify checksums")
    p.add_argument("action", choices=["verify"])
    p.set_defaults(func=_data)

    p = sub.add_parser("extract", help="extract hidden states of a corpus into the store")
    p.add_argument("--model", required=True, help="offline alias, hub id or local folder")
    p.add_argument("--corpus", required=True, help="mnli_polysemy, sts, semcor_targets, ...")
    p.add_argument("--n", type=int, default=None, help="number of sentences")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--pooling", choices=["mean", "first", "last"], default="mean")
    p.add_argument("--prepend-bos", choices=["auto", "yes", "no"], default="auto")
    p.add_argument("--too-long", choices=["error", "skip"], default="error")
    p.add_argument("--dtype", choices=["float16", "float32"], default="float16")
    p.add_argument("--out", default=None, help="store root (default: the cache)")
    p.set_defaults(func=_extract)

    p = sub.add_parser(
        "book", help="execute the chapters that changed and build the HTML book",
        description="Execute the chapters (a chapter whose source, parameters, package, "
        "environment, models and store entries are unchanged since its last execution is "
        "skipped; see book/NN_name.exec.json) and build the HTML book.")
    p.add_argument("-p", "--param", nargs=2, action="append", default=[],
                   metavar=("NAME", "VALUE"), help="override a chapter parameter (YAML value)")
    p.add_argument("--out", default=None, help="build a separate book in this folder")
    p.add_argument("--chapters", nargs="*", default=None, help="only these chapters")
    p.add_argument("--no-html", action="store_true", help="execute only, skip the HTML build")
    p.add_argument("--force", action="store_true",
                   help="execute every chapter (and build the HTML) even if nothing changed")
    p.add_argument("--profile", action="store_true",
                   help="print where the time went per chapter (also in _build/profile.json)")
    p.set_defaults(func=_book)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())

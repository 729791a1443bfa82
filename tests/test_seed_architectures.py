"""The seeds' own architectures end to end: GPT-2 and BERT shapes through every chapter.

The seeds study GPT-2 (byte-level BPE with leading-space pieces, learned absolute positions,
no special tokens added) and BERT (WordPiece, [CLS] ... [SEP], token type ids). Their weights
cannot be had here, so the models are built from configs with random weights, small, and with
the real tokenizers: GPT-2's released files from the data mirror, and the bert-base-uncased
WordPiece vocabulary that MiniLM-L6 ships. Each is saved with ``save_pretrained`` and given to
``lmgeometry book`` as a folder, so every chapter of ``_toc.yml`` runs on them exactly as it
would on ``-p models '["gpt2", "bert-base-cased"]'`` (without the hub download). The numbers
describe random weights; the test asks only that every chapter runs and writes its results.

GPT-2's word alignment is checked against an independent computation: each piece's
characters recovered from its bytes (the byte-to-symbol table of OpenAI's ``encoder.py``)
instead of the tokenizer's offsets.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import HARD
from fixtures.seed_models import bert_folder, gpt2_folder

from lmgeometry.claims import CLAIM_COLUMNS
from lmgeometry.report.book import chapter_parameters, read_chapter, toc_chapters

ROOT = Path(__file__).resolve().parents[1]

#: Small sizes for every chapter's parameters (a name applies to every chapter declaring it).
#: A new chapter's numeric parameters need an entry here (checked below), or the book test
#: would run it at its default sizes.
SMALL = {
    "n_sentences": 60, "n_words": 300, "point_budget": 200, "umap_layers": 2, "n_boot": 50,
    "probe_words": 800, "neighbour_queries": 200,
    "hidden_rows": 500, "n_bins": 10, "n_semcor_words": 5, "wic_train_pairs": 60,
    "wic_test_pairs": 60, "n_sts_sentences": 100, "n_mnli_sentences": 60, "n_umap_words": 2,
    "max_view_layers": 4, "n_train": 200, "n_qnli_train": 100, "n_qnli_test": 60,
    "ablation_ks": [0, 1, 3], "ablation_k": 1, "ablation_share": 0.4, "bos_texts": 4,
    "cka_words": 300, "w_boot": 20, "static_k": 5,
    "static_window": 2, "n_draws": 2, "fit_rows": 300, "n_fit": 32, "n_boot_cka": 10, "keep": 1,
    "overlap_k": 5, "tsne_points": 60, "tokens": 8192, "checkpoints": 2, "sts_sentences": 100,
    "finetune_settings": {kind: {task: {"train_size": 32, "epochs": 1, "max_length": 32}
                                 for task in ("sst2", "qnli")} for kind in ("encoder", "decoder")},
}

#: Sentences for the alignment check: leading-space pieces, punctuation, contractions, numbers,
#: non-ASCII letters and symbols whose UTF-8 bytes GPT-2 splits over several pieces.
GPT2_SENTENCES = [
    *HARD,
    "Hello, world! The bank's rates rose 3.5% (again).",
    "Über naïve Ægir visited Kraków—twice…",
    "She said “no” — and left; he didn't.",
]


@pytest.fixture(scope="module")
def seed_models(tmp_path_factory) -> dict[str, Path]:
    """A 2-block GPT-2 with GPT-2's tokenizer and a 3-block BERT with bert-base-uncased's
    WordPiece vocabulary (random weights, width 32; ``tests/fixtures/seed_models.py``)."""
    root = tmp_path_factory.mktemp("seed-models")
    return {"gpt2-arch": gpt2_folder(root / "gpt2-arch"),
            "bert-arch": bert_folder(root / "bert-arch")}


def test_every_numeric_chapter_parameter_has_a_small_value():
    numeric = {name for chapter in toc_chapters(ROOT)
               for name, value in chapter_parameters(read_chapter(chapter.source)).items()
               if isinstance(value, int | float | list | dict) and not isinstance(value, bool)
               and name not in ("seed", "models")}  # a switch (nulls) has no size
    assert numeric <= set(SMALL), f"add small values to SMALL for {sorted(numeric - set(SMALL))}"


@pytest.mark.slow
@pytest.mark.data
def test_saved_models_load_as_gpt2_and_bert(seed_models):
    from lmgeometry.io.models import load_model

    gpt2 = load_model(str(seed_models["gpt2-arch"]), device="cpu")
    assert (gpt2.kind, gpt2.position_scheme, gpt2.max_positions) == ("decoder",
                                                                     "learned absolute", 1024)
    assert len(gpt2.tokenizer) == 50_257 and not gpt2.prepends_bos
    assert gpt2.tokenizer("Hello world")["input_ids"] == [15496, 995]
    assert gpt2.facts()["tied_embeddings"] == "yes"
    bert = load_model(str(seed_models["bert-arch"]), device="cpu")
    assert (bert.kind, bert.position_scheme, bert.n_layers) == ("encoder", "learned absolute", 3)
    ids = bert.tokenizer("Hello world")["input_ids"]
    assert bert.tokenizer.convert_ids_to_tokens(ids) == ["[CLS]", "hello", "world", "[SEP]"]


@pytest.mark.slow
@pytest.mark.data
def test_every_chapter_runs_on_gpt2_and_bert_architectures(seed_models, tmp_path):
    """``lmgeometry book -p models '[gpt2 folder, bert folder]'`` over every chapter."""
    specs = [str(seed_models["gpt2-arch"]), str(seed_models["bert-arch"])]
    args = ["book", "--out", str(tmp_path / "book"), "--no-html", "-p", "models",
            json.dumps(specs)]
    for name, value in SMALL.items():
        args += ["-p", name, json.dumps(value)]
    run = subprocess.run(
        [sys.executable, "-c", "import sys; from lmgeometry.cli import main; sys.exit(main())",
         *args], cwd=ROOT, env=os.environ.copy(), capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-8000:]
    book = tmp_path / "book" / "book"
    for chapter in toc_chapters(ROOT):
        assert (book / f"{chapter.name}.ipynb").is_file(), chapter.name
        results = json.loads((book / f"{chapter.name}.results.json").read_text())
        claims = results.get("claims") or []
        for claim in claims:
            assert set(CLAIM_COLUMNS) <= set(claim), chapter.name
            assert claim["verdict"] in {"holds", "does not hold", "inconclusive"}
    zoo = json.loads((book / "08_model_zoo.results.json").read_text())
    facts = {row["model"]: row for row in zoo["models"]}
    assert facts[specs[0]]["architecture"] == "GPT2LMHeadModel"
    assert facts[specs[0]]["position scheme"] == "learned absolute"
    assert facts[specs[1]]["normalisation"] == "LayerNorm, post-norm"


# ------------------------------------------------------------------------- GPT-2 alignment


def _bytes_to_unicode() -> dict[int, str]:
    """OpenAI's GPT-2 byte-to-symbol table (``encoder.py``): printable bytes map to
    themselves, the other 68 bytes to the code points from 256 on, in byte order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    table, extra = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def _independent_alignment(sentence: str, ids: list[int], vocab: dict[str, int],
                           starts: np.ndarray, ends: np.ndarray) -> list[list[int]]:
    """Each word's piece positions from the pieces' bytes, not the tokenizer's offsets.

    The pieces' bytes, concatenated, are the sentence's UTF-8 bytes; a piece covers the
    characters its bytes belong to, less leading and trailing whitespace, and goes to the word
    it overlaps most (the earlier on a tie); a word left without a piece takes every piece
    that overlaps it.
    """
    symbol_byte = {s: b for b, s in _bytes_to_unicode().items()}
    token = {i: t for t, i in vocab.items()}
    pieces = [bytes(symbol_byte[s] for s in token[i]) for i in ids]
    raw = sentence.encode("utf-8")
    assert b"".join(pieces) == raw, "GPT-2's pieces must spell the sentence byte for byte"
    char_of_byte = np.repeat(np.arange(len(sentence)),
                             [len(c.encode("utf-8")) for c in sentence])
    spans, at = [], 0
    for piece in pieces:
        lo, hi = char_of_byte[at], char_of_byte[at + len(piece) - 1] + 1
        at += len(piece)
        while lo < hi and sentence[lo].isspace():
            lo += 1
        while hi > lo and sentence[hi - 1].isspace():
            hi -= 1
        spans.append((lo, hi))
    overlap = np.array([[max(0, min(hi, e) - max(lo, s)) for s, e in zip(starts, ends,
                                                                           strict=True)]
                        for lo, hi in spans])
    words: list[list[int]] = [[] for _ in starts]
    for pos, row in enumerate(overlap):
        if row.max() > 0:
            words[int(row.argmax())].append(pos)
    for w, got in enumerate(words):
        if not got:
            words[w] = [int(p) for p in np.flatnonzero(overlap[:, w] > 0)]
    return words


@pytest.mark.slow
@pytest.mark.data
def test_gpt2_word_alignment_matches_byte_decoding(seed_models):
    from lmgeometry.activations.extract import encode
    from lmgeometry.io import data
    from lmgeometry.io.corpus import sentences
    from lmgeometry.io.models import load_model

    vocab = json.loads(data.fetch("gpt2_encoder").read_text(encoding="utf-8"))
    model = load_model(str(seed_models["gpt2-arch"]), device="cpu")
    corpus = sentences(GPT2_SENTENCES, name="gpt2-alignment")
    encoding = encode(model, corpus)
    words = corpus.words
    leading = multi_byte = 0
    for sent in encoding.sentences:
        rows = words[words["sentence_id"] == sent.sentence_id]
        text = corpus.sentences[sent.sentence_id]
        ids = [int(i) for i in sent.input_ids]
        expected = _independent_alignment(text, ids, vocab, rows["start"].to_numpy(),
                                          rows["end"].to_numpy())
        al = sent.alignment
        got = [al.piece_pos[al.piece_word == w].tolist() for w in range(al.n_words)]
        assert got == expected, text
        pieces = model.tokenizer.convert_ids_to_tokens(ids)
        leading += sum(p.startswith("Ġ") for p in pieces)
        multi_byte += sum(any(ord(c) > 126 for c in p.lstrip("Ġ")) for p in pieces)
        # a word whose pieces tile it exactly spells itself from their bytes
        byte_of = {s: b for b, s in _bytes_to_unicode().items()}
        for w, (start, end) in enumerate(zip(rows["start"], rows["end"], strict=True)):
            if al.exact[w]:
                spelled = bytes(byte_of[c] for p in got[w] for c in pieces[p])
                assert spelled.decode("utf-8").strip() == text[start:end]
    assert leading > 50 and multi_byte > 10  # the sentences exercise both kinds of piece

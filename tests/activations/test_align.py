"""Word/piece alignment on real tokenizers (WordPiece, byte-level BPE, SentencePiece).

Tokenizers only: no model weights and no torch.
"""

from __future__ import annotations

import numpy as np
import pytest

from lmgeometry.activations.align import AlignmentError, align_sentence, trim_spans

pytestmark = pytest.mark.data


@pytest.fixture(scope="module")
def tokenizers():
    from transformers import AutoTokenizer

    from lmgeometry.io._offline import alias_folder

    return {alias: AutoTokenizer.from_pretrained(alias_folder(alias))
            for alias in ("minilm-l6", "smollm2-135m", "gemma3-270m")}


def _align(tok, corpus, sid):
    text = corpus.sentences[sid]
    enc = tok(text, return_offsets_mapping=True, return_special_tokens_mask=True)
    w = corpus.words[corpus.words["sentence_id"] == sid]
    al = align_sentence(text, enc["offset_mapping"], enc["special_tokens_mask"],
                        w["start"].to_numpy(), w["end"].to_numpy(), sentence_id=sid)
    return enc, w, al


# ------------------------------------------------------------------------------------------
# alignment, tokenizers only


def test_trim_spans_strips_spaces_only():
    text = "a  bc"
    assert trim_spans(text, np.array([[1, 5], [1, 3], [0, 0]])).tolist() == [
        [3, 5], [3, 3], [0, 0]]


@pytest.mark.parametrize("alias", ["minilm-l6", "smollm2-135m", "gemma3-270m"])
def test_alignment_invariants_on_hard_sentences(tokenizers, hard_corpus, alias):
    tok = tokenizers[alias]
    exact = []
    for sid, text in enumerate(hard_corpus.sentences):
        enc, w, al = _align(tok, hard_corpus, sid)
        exact.extend(al.exact)
        special = np.asarray(enc["special_tokens_mask"], dtype=bool)
        spans = trim_spans(text, np.asarray(enc["offset_mapping"]))
        assert al.n_words == len(w)
        assert (al.n_pieces >= 1).all()
        assert not special[al.piece_pos].any(), "a special token was pooled into a word"
        for i, (start, end, word) in enumerate(zip(w["start"], w["end"], w["text"], strict=True)):
            mine = al.piece_pos[al.piece_word == i]
            assert al.first_pos[i] == mine.min() and al.last_pos[i] == mine.max()
            for p in mine:  # every pooled piece overlaps its word
                assert min(spans[p, 1], end) > max(spans[p, 0], start)
            tiled = "".join(text[s:e] for s, e in spans[mine])
            assert al.exact[i] == (tiled == word), (alias, word, tiled)
            if al.shared[i]:
                assert not al.exact[i]
        # whitespace-only pieces (Ġ, ▁▁) belong to no word
        blank = np.flatnonzero(~special & (spans[:, 1] == spans[:, 0]))
        assert not np.isin(blank, al.piece_pos).any()
    assert np.mean(exact) > 0.85  # boundary disagreements are the exception


def test_wordpiece_continuations_and_normalisation(tokenizers, hard_corpus):
    tok = tokenizers["minilm-l6"]
    enc, w, al = _align(tok, hard_corpus, 1)
    pieces = tok.convert_ids_to_tokens(enc["input_ids"])
    i = list(w["text"]).index("antidisestablishmentarianism")
    mine = [pieces[p] for p in al.piece_pos[al.piece_word == i]]
    assert len(mine) > 4 and all(p.startswith("##") for p in mine[1:])
    assert "".join(p.removeprefix("##") for p in mine) == "antidisestablishmentarianism"
    # accents are stripped by BERT's normaliser, but offsets still point at the original text
    j = list(w["text"]).index("Zürich")
    assert [pieces[p] for p in al.piece_pos[al.piece_word == j]] == ["zurich"]
    assert pieces[0] == "[CLS]" and 0 not in al.piece_pos
    assert len(pieces) - 1 not in al.piece_pos  # [SEP]


def test_byte_level_bpe_leading_space_and_double_space(tokenizers, hard_corpus):
    tok = tokenizers["smollm2-135m"]
    enc, w, al = _align(tok, hard_corpus, 0)
    pieces = tok.convert_ids_to_tokens(enc["input_ids"])
    i = list(w["text"]).index("split")
    assert [pieces[p] for p in al.piece_pos[al.piece_word == i]] == ["Ġsplit"]
    # "Don't" is Don + 't for the tokenizer but Do + n't for spaCy: the piece "Don" goes to
    # "Do" (2 characters of overlap against 1), "n't" keeps "'t"
    assert [pieces[p] for p in al.piece_pos[al.piece_word == 0]] == ["Don"]
    assert [pieces[p] for p in al.piece_pos[al.piece_word == 1]] == ["'t"]
    assert not al.shared[:2].any()
    # the double space becomes a lone "Ġ" piece that belongs to no word
    lone = [k for k, p in enumerate(pieces) if p == "Ġ"]
    assert lone and not np.isin(lone, al.piece_pos).any()


def test_sentencepiece_shared_piece(tokenizers, hard_corpus):
    tok = tokenizers["gemma3-270m"]
    enc, w, al = _align(tok, hard_corpus, 3)  # "I'm gonna wanna ..."
    pieces = tok.convert_ids_to_tokens(enc["input_ids"])
    texts = list(w["text"])
    gon, na = texts.index("gon"), texts.index("na")
    # one piece "▁gonna" spans spaCy's "gon" + "na": both words get it, both are marked
    assert [pieces[p] for p in al.piece_pos[al.piece_word == gon]] == ["▁gonna"]
    assert [pieces[p] for p in al.piece_pos[al.piece_word == na]] == ["▁gonna"]
    assert al.shared[gon] and al.shared[na]
    assert pieces[0] == "<bos>" and 0 not in al.piece_pos
    assert int(al.shared.sum()) == 2


def test_word_without_piece_is_an_error_naming_the_sentence(tokenizers):
    tok = tokenizers["smollm2-135m"]
    text = "one  two"
    enc = tok(text, return_offsets_mapping=True, return_special_tokens_mask=True)
    with pytest.raises(AlignmentError, match=r"sentence 17: word 1 ' '"):
        align_sentence(text, enc["offset_mapping"], enc["special_tokens_mask"],
                       [0, 3, 5], [3, 4, 8], sentence_id=17)

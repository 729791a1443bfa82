"""``lmgeometry extract --sentences FILE``: a corpus of your own sentences from a text file
(issue 49, item 7), the same store entry as ``hidden_states(..., cache=True)`` on them."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import save_bert

import lmgeometry
from lmgeometry.activations.store import open_store
from lmgeometry.cli import main
from lmgeometry.errors import CorpusError
from lmgeometry.io.corpus import build, check_name, sentences_file

LINES = ["The bank raised its rates.", "", "  ", "She sat on the river bank.\r"]


def test_a_sentence_file_is_one_sentence_a_line(tmp_path):
    path = tmp_path / "mine.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    check_name(str(path))  # a file is a corpus; no data read
    corpus = sentences_file(path)
    assert corpus.sentences == ["The bank raised its rates.", "She sat on the river bank."]
    assert corpus.name == "custom"
    assert build(str(path)).digest() == corpus.digest()
    with pytest.raises(CorpusError, match="--n \\(n=3\\) sizes the named corpora"):
        build(str(path), n=3)


def test_bad_sentence_files_are_refused(tmp_path):
    with pytest.raises(CorpusError, match="unknown corpus 'nope.txt'.*--sentences FILE"):
        check_name("nope.txt")
    blank = tmp_path / "blank.txt"
    blank.write_text("\n \n")
    with pytest.raises(CorpusError, match="holds no sentence"):
        sentences_file(blank)
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(CorpusError, match="cannot read the sentence file .*UTF-8"):
        sentences_file(binary)


def test_extract_refuses_a_missing_file_and_both_options(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["extract", "--model", "minilm-l6", "--sentences", str(tmp_path / "no.txt")])
    assert exit_.value.code == 2
    assert "is not a file; give a text file of your own sentences" in capsys.readouterr().err
    path = tmp_path / "mine.txt"
    path.write_text("One.\n")
    with pytest.raises(SystemExit) as exit_:
        main(["extract", "--model", "minilm-l6", "--sentences", str(path), "--corpus", "sts"])
    assert exit_.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


@pytest.mark.data
def test_extract_stores_your_sentences_as_hidden_states_does(tmp_path, capsys):
    folder = save_bert(tmp_path / "bert")
    path = tmp_path / "mine.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    root = tmp_path / "store"
    assert main(["extract", "--model", str(folder), "--sentences", str(path), "--dtype",
                 "float32", "--out", str(root)]) == 0
    store = open_store(capsys.readouterr().out.splitlines()[0])
    assert store.meta["counts"]["sentences"] == 2
    same = lmgeometry.hidden_states(folder, ["The bank raised its rates.",
                                             "She sat on the river bank."], cache=True,
                                    dtype="float32", root=root)
    assert same.path == store.path  # the same entry: found, not extracted again
    np.testing.assert_array_equal(same.layer(-1), store.layer(-1))

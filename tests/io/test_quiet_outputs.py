"""Loading a model and extracting in a notebook leave no progress bar or warning in its
outputs (issue 49: a chapter run by papermill kept transformers' "Loading weights" bar, the
store's extraction bar and tqdm's "IProgress not found" warning among its outputs)."""

from __future__ import annotations

import pytest
from conftest import save_bert

from lmgeometry.io.models import load_model


def test_loading_a_model_writes_nothing_to_stderr(tmp_path, capfd):
    from transformers.utils import logging as hf_logging

    folder = save_bert(tmp_path / "bert")
    capfd.readouterr()
    assert hf_logging.is_progress_bar_enabled()
    load_model(str(folder), device="cpu")
    assert capfd.readouterr().err == ""
    assert hf_logging.is_progress_bar_enabled()  # the caller's setting is left as it was


@pytest.mark.data
def test_extraction_shows_its_bar_only_on_a_terminal(tmp_path, capfd):
    from lmgeometry.activations.store import activations
    from lmgeometry.io.corpus import sentences

    folder = save_bert(tmp_path / "bert")
    corpus = sentences(["A bank by the river.", "The bank raised its rates."])
    capfd.readouterr()
    activations(str(folder), corpus, root=tmp_path / "quiet")  # stderr is not a terminal
    assert "extract" not in capfd.readouterr().err
    activations(str(folder), corpus, root=tmp_path / "loud", progress=True)
    assert "extract" in capfd.readouterr().err

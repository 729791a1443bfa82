"""The chapter contract's shared pieces (lmgeometry.chapters.common)."""

import json
from pathlib import Path
from typing import Any, Union

import jupytext
import numpy as np
import pandas as pd
import papermill
import pytest
from conftest import array_store

from lmgeometry.activations.entry import write_meta
from lmgeometry.chapters.common import (
    ChapterResult,
    checked_parameters,
    control_rows,
    controls_for,
)
from lmgeometry.errors import UsageError
from lmgeometry.report.book import chapter_parameters


def _store(tmp_path, kind):
    store = array_store(tmp_path, [np.eye(4)], {"word_index": [0, 1, 0, 1], "text": list("abab")})
    meta = json.loads((store.path / "meta.json").read_text())
    meta["model"]["kind"] = kind
    write_meta(store.path, meta)  # sealed again
    return type(store)(store.path)


def test_controls_follow_the_model_kind(tmp_path):
    decoder = _store(tmp_path / "d", "decoder")
    encoder = _store(tmp_path / "e", "encoder")
    assert controls_for(decoder) == ("none", "first word excluded")
    assert controls_for(encoder) == ("none",)
    assert control_rows(decoder, "none").tolist() == [0, 1, 2, 3]
    assert control_rows(decoder, "first word excluded").tolist() == [1, 3]
    with pytest.raises(ValueError):
        control_rows(decoder, "bos please")


def test_chapter_result_saves_tables_and_claims():
    result = ChapterResult(tables={"per_layer": pd.DataFrame({"layer": [0]})})
    saved = result.results()
    assert set(saved) == {"per_layer", "claims"} and saved["claims"].empty


def test_chapter_result_sentences_by_topic():
    topics = {"verdicts": ["v1", "v2"], "sink": [], "static": ["s1"]}
    result = ChapterResult(topics=topics)
    assert result.sentences == ["v1", "v2", "s1"]  # every topic's sentences, in order
    assert result.sentences_about("sink") == []  # a topic without a sentence is known
    assert result.sentences_about("static", "verdicts") == ["v1", "v2", "s1"]
    assert result.sentences_except("verdicts") == ["s1"]
    with pytest.raises(ValueError, match=r"no sentence topic 'snk'.*'verdicts', 'sink'"):
        result.sentences_about("snk")
    with pytest.raises(ValueError, match="pass only `topics`"):
        ChapterResult(sentences=["other"], topics=topics)
    untagged = ChapterResult(sentences=["a"])
    with pytest.raises(ValueError, match="its topics: none"):
        untagged.sentences_about("sink")


def _blas_threads_now() -> set[int]:
    from threadpoolctl import threadpool_info

    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


def test_with_blas_threads_limits_blas_inside_and_restores_it(monkeypatch) -> None:
    import numpy  # noqa: F401  (loads a BLAS)

    from lmgeometry.chapters.common import BLAS_THREADS_ENV, with_blas_threads

    before = _blas_threads_now()

    @with_blas_threads
    def analyse(x: int) -> tuple[int, set[int]]:
        """Docstring kept."""
        return x, _blas_threads_now()

    monkeypatch.delenv(BLAS_THREADS_ENV, raising=False)
    assert analyse(3) == (3, {1})
    assert analyse.__doc__ == "Docstring kept."
    assert _blas_threads_now() == before
    monkeypatch.setenv(BLAS_THREADS_ENV, "2")
    assert analyse(0)[1] == {2}


@pytest.mark.parametrize("raw", ["0", "-1", "two", ""])
def test_blas_threads_rejects_what_is_not_a_positive_count(monkeypatch, raw: str) -> None:
    from lmgeometry.chapters.common import BLAS_THREADS_ENV, blas_threads

    monkeypatch.setenv(BLAS_THREADS_ENV, raw)
    with pytest.raises(ValueError, match="LMGEOMETRY_BLAS_THREADS"):
        blas_threads()


# --------------------------------------------------------------------------- parameters

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
CALL = "globals().update(checked_parameters(globals()))"


def _namespace(**values: tuple[Any, Any]) -> dict[str, Any]:
    """name=(annotation, value) -> a namespace as a parameters cell leaves it."""
    return {"__annotations__": {k: a for k, (a, _) in values.items()},
            **{k: v for k, (_, v) in values.items()}}


def test_a_json_or_yaml_string_becomes_the_list_or_dict() -> None:
    ns = _namespace(models=(list[str], '["minilm-l6", "gemma3-270m"]'),
                    flow=(list[str], "[minilm-l6]"),
                    ks=(list[int], "[0, 1, 3]"),
                    settings=(dict[str, dict], '{"encoder": {"epochs": 2}}'),
                    layers=(Union[str, list[int]], "[1, 2]"),  # noqa: UP007
                    n_boot=(int, "10"))
    assert checked_parameters(ns) == {
        "models": ["minilm-l6", "gemma3-270m"], "flow": ["minilm-l6"], "ks": [0, 1, 3],
        "settings": {"encoder": {"epochs": 2}}, "layers": [1, 2], "n_boot": 10}


def test_a_value_of_the_right_type_passes_as_it_is() -> None:
    models, settings = ["minilm-l6"], {"encoder": {"sst2": {}}}
    ns = _namespace(models=(list[str], models), settings=(dict[str, dict], settings),
                    share=(float, 1), rate=(float, 0.4), seed=(int, 0), flag=(bool, False),
                    layers=(Union[str, list[int]], "paper"),  # noqa: UP007
                    results_path=(str, "[x].json"))
    checked = checked_parameters({**ns, "not_a_parameter": "[1]"})
    assert checked["models"] is models and checked["settings"] is settings
    assert checked == {k: v for k, v in ns.items() if k != "__annotations__"}
    assert type(checked["share"]) is int  # an int is a float; the value is not converted


@pytest.mark.parametrize(("annotation", "value", "fix"), [
    (list[str], "minilm-l6", """-p models '["minilm-l6"]' or -y 'models: [minilm-l6]'"""),
    (list[str], "[minilm-l6", "not valid YAML or JSON"),
    (list[str], "[1, 2]", "-p models"),
    (list[str], ("a",), "(tuple)"),
    (int, "abc", "-p models 1 or -y 'models: 1'"),
    (int, True, "(bool)"),
    (int, 1.5, "(float)"),
    (str, 3, "-p models text"),
    (dict[str, dict], "[1]", "read as YAML: [1]"),
])
def test_a_value_of_the_wrong_type_names_the_parameter_and_the_fix(annotation, value,
                                                                    fix) -> None:
    with pytest.raises(UsageError, match="parameter models takes") as caught:
        checked_parameters(_namespace(models=(annotation, value)))
    assert fix in str(caught.value) and repr(value) in str(caught.value)
    assert caught.value.exit_code == 2


def test_no_annotations_or_an_unknown_one_is_a_programming_error() -> None:
    with pytest.raises(TypeError, match="name: type = default"):
        checked_parameters({"models": ["a"]})
    with pytest.raises(TypeError, match="unsupported parameter annotation"):
        checked_parameters(_namespace(models=(set, {"a"})))


def _parameters_source(nb) -> str:
    return next(c.source for c in nb.cells if "parameters" in c.metadata.get("tags", []))


@pytest.mark.parametrize("source", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_chapter_parameter_has_a_type_papermill_reports(source: Path,
                                                              tmp_path: Path) -> None:
    """Converted as a user would (jupytext), papermill --help-notebook knows every type."""
    nb = jupytext.read(source)
    ipynb = tmp_path / f"{source.stem}.ipynb"
    jupytext.write(nb, ipynb)
    inferred = papermill.inspect_notebook(str(ipynb))
    declared = chapter_parameters(nb, source.stem)
    assert list(inferred) == list(declared), "papermill and the book read other parameters"
    untyped = [n for n, p in inferred.items() if p["inferred_type_name"] in ("None", "")]
    assert not untyped, f"{source.name}: no type annotation for {', '.join(untyped)}"
    assert "--cwd" in inferred["results_path"]["help"]


@pytest.mark.parametrize("source", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_chapter_checks_its_parameters_first(source: Path) -> None:
    """The defaults type-check and pass unchanged; the first code cell after the parameters
    cell checks them, before it uses any."""
    nb = jupytext.read(source)
    cells = nb.cells
    at = next(i for i, c in enumerate(cells) if "parameters" in c.metadata.get("tags", []))
    namespace: dict[str, Any] = {}
    exec(cells[at].source, namespace)  # noqa: S102  (the chapter's own literals)
    declared = chapter_parameters(nb, source.stem)
    checked = checked_parameters(namespace)
    assert set(checked) == set(declared)
    assert all(checked[n] is namespace[n] for n in declared)
    first = next(c for c in cells[at + 1:] if c.cell_type == "code")
    code = [line for line in first.source.splitlines()
            if line and not line.startswith(("from ", "import "))]
    assert code[0] == CALL, f"{source.name}: first code cell after the parameters: {CALL}"
    assert sum(CALL in c.source for c in cells) == 1

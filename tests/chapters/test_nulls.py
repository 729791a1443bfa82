"""Null models for a chapter's claims (lmgeometry.chapters.nulls)."""

import pytest

from lmgeometry.chapters import nulls
from lmgeometry.claims import Claim, claims_frame


def _claim(model: str, lo: float, hi: float) -> Claim:
    return Claim(seed="001", claim="anisotropy rises", model=model, statistic="rho",
                 value=(lo + hi) / 2, ci_low=lo, ci_high=hi, threshold=0.3, direction="above",
                 rule="r")


def test_null_spec_names_the_untrained_twin():
    assert nulls.null_spec("minilm-l6") == "untrained:minilm-l6"


def test_with_nulls_pairs_each_model_with_its_own_twin_only():
    real = claims_frame([_claim("a", 0.5, 0.7), _claim("b", 0.5, 0.7)])
    twins = claims_frame([_claim("untrained:a", 0.4, 0.6), _claim("untrained:b", -0.1, 0.1),
                          _claim("c", 0.5, 0.6)])  # a row of a model that is no twin: ignored
    found = nulls.with_nulls(real, twins).set_index("model")
    assert found.loc["a", "null_model"] == "untrained:a"
    assert found.loc["a", "null_verdict"] == "holds" and found.loc["a", "discriminates"] is False
    assert found.loc["b", "null_verdict"] == "does not hold"
    assert found.loc["b", "discriminates"] is True
    # no null rows at all: every row keeps no null
    assert (nulls.with_nulls(real, claims_frame([]))["null_model"] == "").all()


def test_permuted_nulls_pair_each_row_with_its_own_statistic_and_say_what_held():
    real = claims_frame([_claim("a", 0.5, 0.7), _claim("b", 0.5, 0.7), _claim("c", 0.1, 0.2)])
    shuffled = [nulls.permuted_claim(_claim(m, 0.5, 0.7), interval)
                for m, interval in (("a", (0.0, -0.1, 0.1)), ("b", (0.45, 0.4, 0.5)))]
    assert [n.model for n in shuffled] == ["labels permuted: a", "labels permuted: b"]
    assert [n.verdict for n in shuffled] == ["does not hold", "holds"]  # the rule, not typed
    found = nulls.with_permuted(real, shuffled).set_index("model")
    assert found.loc["a", "null_model"] == "labels permuted: a" and found.loc["a",
                                                                             "discriminates"]
    assert found.loc["b", "null_verdict"] == "holds" and not found.loc["b", "discriminates"]
    assert found.loc["c", "null_model"] == ""  # no null computed for it: none attached
    said = nulls.null_sentences(found.reset_index())
    assert said[0].endswith("1 of the 2 rows that hold fail their rule.")
    assert said[1:] == ["Anisotropy rises: its rule holds with the labels permuted too for b "
                        "(0.45): it is met by labels the vectors cannot know."]
    assert nulls.null_sentences(real) == []  # no permuted null, nothing to say


@pytest.mark.slow
def test_null_stores_extract_the_twins_of_the_models_on_the_same_corpus(tiny_folder, tmp_path,
                                                                          monkeypatch):
    from lmgeometry.io.corpus import sentences

    monkeypatch.setenv("LMGEOMETRY_CACHE", str(tmp_path / "cache"))
    corpus = sentences(["The cat sat on the mat.", "A dog barked at the moon."])
    stores = nulls.null_stores([str(tiny_folder), f"untrained:{tiny_folder}"], corpus)
    # one twin per model; a spec that already is a twin gets none of its own
    assert list(stores) == [f"untrained:{tiny_folder}"]
    store = stores[f"untrained:{tiny_folder}"]
    assert store.label == f"untrained:{tiny_folder}" and store.n_words == len(corpus.words)

"""Chapter "A controlled pair" (lmgeometry.chapters.pair.analysis, pair_verdicts): known answers on
planted embedding matrices and learning curves, and the drift mechanism on tiny runs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lmgeometry.chapters.pair import analysis as pair
from lmgeometry.chapters.pair import claims as pair_verdicts
from lmgeometry.chapters.pair import sentences as pair_sentences
from lmgeometry.claims import claims_frame
from lmgeometry.training import pretrain as pt
from lmgeometry.training.pretrain_settings import PretrainSettings


def _shifted(n: int, d: int, shift: float, seed: int) -> np.ndarray:
    """Isotropic Gaussian rows moved by ``shift`` along one common unit direction."""
    X = np.random.default_rng(seed).standard_normal((n, d))
    X[:, 0] += shift
    return X


def test_drift_difference_of_identical_matrices_is_exactly_zero():
    W = _shifted(2000, 16, 3.0, 0)
    value, reps, tied, untied = pair_verdicts.drift_difference(W, W.copy(), n_boot=50)
    assert value == 0 and np.all(reps == 0) and np.array_equal(tied, untied)
    claim, unfair = pair_verdicts.drift_claim(W, W.copy(), "m", n_boot=50)
    assert claim.verdict == "does not hold" and claim.ci_low == claim.ci_high == 0
    assert unfair == ""  # the tied matrix drifts (mean cosine 0.36): a fair test


def test_drift_difference_known_mean_cosines():
    # rows N(mu, I_d): cos -> ||mu||^2 / (||mu||^2 + d) for large d; d = 64, ||mu|| = 8 -> 0.5
    tied, untied = _shifted(4000, 64, 8.0, 1), _shifted(4000, 64, 0.0, 2)
    value, reps, c_tied, c_untied = pair_verdicts.drift_difference(tied, untied, n_boot=200)
    assert c_tied[0] == pytest.approx(0.5, abs=0.02) and abs(c_untied[0]) < 0.002
    assert value == pytest.approx(c_tied[0] - c_untied[0])
    assert np.std(reps) < 0.01 and len(reps) == 200
    claim, unfair = pair_verdicts.drift_claim(tied, untied, "m", n_boot=200)
    assert claim.verdict == "holds" and unfair == ""
    # the other way round: the difference is far below 0.02, and the "tied" matrix has no
    # common direction, so there is no drift to remove: not a fair test
    claim, unfair = pair_verdicts.drift_claim(untied, tied, "m", n_boot=200)
    assert claim.verdict == "does not hold" and "no common direction" in unfair


def test_the_output_claim_reads_the_output_matrix_common_direction():
    drifted, isotropic = _shifted(4000, 64, 8.0, 1), _shifted(4000, 64, 0.0, 2)
    claim = pair_verdicts.output_claim(drifted, "m", n_boot=200)
    assert claim.value == pytest.approx(0.5, abs=0.02) and claim.verdict == "holds"
    assert claim.control == pair_verdicts.UNTIED
    assert pair_verdicts.output_claim(isotropic, "m", n_boot=200).verdict == "does not hold"


def _planted_rarity(rare_furthest: bool, n: int = 3000, d: int = 32, seed: int = 0
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Rows along one common direction, the rarest (or the most frequent) the closest to it."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 5000, size=n)
    rank = np.log1p(counts) / np.log1p(counts.max())  # 1: the most frequent
    spread = rank if rare_furthest else 1 - rank
    sign = np.where(np.arange(n) % 2, 1.0, -1.0)[:, None]
    W = np.eye(d)[0] + sign * (2 * spread)[:, None] * np.eye(d)[1]
    return W + rng.normal(size=(n, d)) * 0.01, counts


def test_the_rarity_claim_tells_common_enemies_from_a_frequency_direction():
    plain = np.ones(3000, bool)
    plain[:3] = False  # special tokens are left out
    W, counts = _planted_rarity(rare_furthest=True)
    claim = pair_verdicts.rarity_claim(W, counts, plain, "m", pair_verdicts.TIED, n_boot=100)
    assert claim.value < -0.9 and claim.verdict == "holds"
    assert claim.evidence.startswith("2997 tokens")
    W, counts = _planted_rarity(rare_furthest=False)
    claim = pair_verdicts.rarity_claim(W, counts, plain, "m", pair_verdicts.TIED, n_boot=100)
    assert claim.value > 0.9 and claim.verdict == "does not hold"  # a frequency direction
    said = pair_sentences.drift_sentences(claims_frame([claim]))
    assert said[0].startswith("Along the tied W's common direction the rarest tokens do not")


def test_drift_difference_needs_one_vocabulary():
    with pytest.raises(ValueError, match="same rows"):
        pair_verdicts.drift_difference(np.ones((5, 3)), np.ones((6, 3)))


def _curves(losses: dict[str, list[tuple[float, float]]]) -> pd.DataFrame:
    return pd.DataFrame([{"run": run, "model": run, "step": step, "loss": loss,
                          "baseline_loss": base}
                         for run, points in losses.items()
                         for step, (loss, base) in enumerate(points)])


def test_learned_reads_the_last_checkpoint_against_the_rule():
    table = pair_verdicts.learned(_curves({
        "a": [(9.0, 7.0), (6.0, 7.0)],          # 1 nat below: learned
        "b": [(9.0, 7.0), (6.5, 7.0), (6.95, 7.0)],  # the last checkpoint counts: 0.05
        "c": [(9.0, 7.0), (6.85, 7.0)],         # 0.15 nats: learned
    }))
    assert table["run"].tolist() == ["a", "b", "c"]
    assert table["gain"].tolist() == pytest.approx([1.0, 0.05, 0.15])
    assert table["learned"].tolist() == [True, False, True]
    with pytest.raises(ValueError, match="learning curves"):
        pair_verdicts.learned(pd.DataFrame())


def test_run_settings_change_one_thing():
    s = pair.run_settings(50_000, checkpoints=4, seed=3)
    assert list(s) == list(pair.RUNS)
    assert s["mlm"].objective == "mlm" and s["causal"].objective == "causal"
    # the pair differs only in the objective, the third run only in the tied output layer
    differ = {k for k, v in vars(s["mlm"]).items() if vars(s["causal"])[k] != v}
    assert differ == {"objective"}
    differ = {k for k, v in vars(s["causal"]).items() if vars(s["causal-untied"])[k] != v}
    assert differ == {"tie_embeddings"}
    assert s["causal"].tokens == 50_000 and s["causal"].checkpoints == 4


#: Texts of 40 frequent words and 400 rare ones: the rare pieces are seldom the target, so a
#: tied output layer pushes their (input) rows one way ("common enemies").
_WORDS = [f"w{i:03d}" for i in range(440)]
RARE_TEXT = [" ".join(np.random.default_rng(i).choice(_WORDS[:40], 6)) for i in range(3000)] \
    + [f"{_WORDS[40 + i % 400]} {_WORDS[i % 40]}" for i in range(400)]


@pytest.fixture
def rare_text(monkeypatch):
    monkeypatch.setattr(pt, "pretraining_texts", lambda: (RARE_TEXT, {"rare": len(RARE_TEXT)}))


@pytest.mark.slow
def test_a_tied_output_layer_makes_w_drift_and_an_untied_one_does_not(rare_text, tmp_path):
    from lmgeometry.io.models import input_embeddings, load_model

    tiny = {"layers": 1, "width": 32, "heads": 2, "vocab_size": 600, "block": 32,
            "tokens": 60_000, "batch_size": 8, "checkpoints": 2, "lr": 1e-2}
    runs = pair.train_runs({
        "causal": PretrainSettings(objective="causal", **tiny),
        "causal-untied": PretrainSettings(objective="causal", tie_embeddings=False, **tiny)},
        root=tmp_path)
    W = {n: input_embeddings(load_model(str(r.final))) for n, r in runs.items()}
    W0 = {n: input_embeddings(load_model(str(r.checkpoints[0]))) for n, r in runs.items()}
    # the same initialisation of W in both runs (one seed)
    assert np.array_equal(W0["causal"], W0["causal-untied"])
    claim, unfair = pair_verdicts.drift_claim(W["causal"], W["causal-untied"], "causal",
                                              n_boot=200)
    assert claim.verdict == "holds" and unfair == "", claim


def test_a_model_that_did_not_learn_gets_no_verdict():
    table = pair_verdicts.learned(_curves({"m": [(9.0, 7.0), (6.95, 7.0)],
                                           "c": [(9.0, 7.0), (5.0, 7.0)]}))
    claims = pd.DataFrame({"model": ["m", "m", "c"], "applies": [True, False, True],
                           "applies_reason": ["", "rotary positions", ""]})
    out = pair._unlearned_unfair(claims, table)
    assert out["applies"].tolist() == [False, False, True]
    assert "did not beat its unigram baseline" in out["applies_reason"][0]
    assert out["applies_reason"][1].endswith("; rotary positions")
    assert out["applies_reason"][2] == ""


def test_a_checkpoints_store_entry_is_recorded_so_a_warm_build_can_check_it(tmp_path,
                                                                            monkeypatch):
    # a tiny saved checkpoint folder read through the chapter's own _store, as the book's
    # kernel does: the manifest's store records must name a model the next build can
    # fingerprint (the folder), not the label, or the chapter re-executes on every build
    from conftest import save_bert

    from lmgeometry import trace
    from lmgeometry.io import paths
    from lmgeometry.io.corpus import sentences
    from lmgeometry.report import cache

    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(trace.TRACE_ENV, str(tmp_path / "trace.jsonl"))
    folder = save_bert(tmp_path / "step-000000")
    store = pair._store(folder, sentences(["A short one.", "The bank rose."], name="t"),
                        "pair-mlm@0")
    assert store.label == "pair-mlm@0"  # the tables' model column keeps the label
    records = cache.store_records(trace.read_events(tmp_path / "trace.jsonl"))
    assert [r["model"] for r in records] == [str(folder)]
    assert records[0]["fingerprint"] == store.meta["fingerprint"]
    inputs = cache.BookInputs.current()
    assert cache._store_reasons({"stores": records}, inputs) == []
    # the same entry recorded under its label cannot be checked: the chapter would run again
    labelled = [{**records[0], "model": "pair-mlm@0"}]
    assert "pair-mlm@0" in cache._store_reasons({"stores": labelled}, inputs)[0]
    # a checkpoint trained again (other weights) is caught
    save_bert(folder, positions=32)
    assert "changed" in cache._store_reasons({"stores": records},
                                             cache.BookInputs.current())[0]


def _planted_learning(gains: dict[str, float]) -> pd.DataFrame:
    """learned() on one checkpoint per run whose loss is ``gain`` nats below a 7-nat
    unigram baseline, labelled as the chapter labels its runs."""
    curves = _curves({run: [(7.0 - g, 7.0)] for run, g in gains.items()})
    curves["model"] = curves["run"].map(pair.LABELS)
    curves["perplexity"] = np.exp(curves["loss"])
    curves["baseline_perplexity"] = np.exp(curves["baseline_loss"])
    return pair_verdicts.learned(curves)


def _planted_checkpoints(models) -> tuple[pd.DataFrame, pd.DataFrame]:
    emb = pd.DataFrame([{"model": m, "step": s, "tokens": 1000 * s, "isotropy_raw": 1 - s / 10,
                         "mean_cosine": s / 10} for m in models for s in (0, 4)])
    lay = pd.DataFrame([{"model": m, "step": s, "layer": k, "mean_cosine": k * s / 100,
                         "knn_gain": 0.5 - s / 10} for m in models for s in (0, 4)
                        for k in range(3)])
    return emb, lay


def test_sentences_are_asked_by_run_and_a_run_that_did_not_learn_says_so():
    table = _planted_learning({"mlm": 0.05, "causal": 1.0, "causal-untied": 0.5})
    models = list(pair.LABELS.values())
    per_run = pair._per_run(table, *_planted_checkpoints(models))
    result = pair.PairResult(per_run=per_run)
    # by name, whatever the order of the runs
    assert result.about("pair-causal", "learning").startswith("pair-causal: held-out")
    assert "gain 1.00 nats" in result.about("pair-causal", "learning")
    assert "does not beat it by 0.1" in result.about("pair-mlm", "learning")
    # every sentence about the run that did not learn says so, and only those
    for model in models:
        said = result.about(model, "training")
        assert ("did not beat its unigram baseline" in said) == (model == "pair-mlm"), said
    assert "I(W) 1.00 at initialisation -> 0.60 after 4,000 tokens" in result.about(
        "pair-causal", "training")
    assert "over layers 1-2 the largest mean cosine between words goes 0.00 -> 0.08" in (
        result.about("pair-causal", "training"))
    with pytest.raises(ValueError, match="name a run by its label"):
        result.about("mlm", "learning")


def test_claim_lines_group_the_unfair_tests_by_run():
    table = _planted_learning({"mlm": -0.07, "causal": 1.0})
    rows = [("c1", "pair-mlm", "holds"), ("c1", "pair-causal", "holds"),
            ("c2", "pair-mlm", "holds"), ("c2", "pair-causal", "does not hold"),
            ("c3", "pair-mlm", "holds"), ("c3", "pair-causal", "holds")]
    claims = pd.DataFrame([{"claim": c, "control": "none", "model": m, "verdict": v,
                            "applies": c != "c3", "applies_reason": ""} for c, m, v in rows])
    claims = pair._unlearned_unfair(claims, table)
    lines = pair_sentences.claim_lines(claims, table, {"pair-mlm": "encoder",
                                                       "pair-causal": "decoder"})
    assert lines[:2] == ["C1: holds for pair-causal.", "C2: does not hold for pair-causal."]
    # one line per run, not one caveat per claim
    assert sum("pair-mlm" in line for line in lines) == 1
    assert "gain -0.07" in lines[2] and "none of its 3 claims" in lines[2]
    assert lines[3] == "Not a fair test on pair-causal (the verdict grid gives each reason): c3."
    assert len(lines) == 4


def test_the_intervention_is_no_fair_test_when_a_causal_run_did_not_learn():
    claims = pd.DataFrame({"model": ["pair-causal", "pair-causal"], "applies": [True, True],
                           "applies_reason": ["", ""], "source_chapter": [1, 10]})
    out = pair._unlearned_unfair(claims, _planted_learning({"mlm": 1.0, "causal": 1.0,
                                                            "causal-untied": 0.0}))
    assert out["applies"].tolist() == [True, False]
    assert out["applies_reason"][1].startswith("pair-causal-untied did not beat")
    said = pair_sentences.drift_sentences(out.iloc[1:].assign(
        claim=pair_verdicts.DRIFT_CLAIM, control=pair_verdicts.UNTIED, verdict="holds",
        evidence="e", value=0.3, ci_low=0.2, ci_high=0.4, threshold=0.02))
    assert "This is not a fair test: pair-causal-untied did not beat" in said[0]

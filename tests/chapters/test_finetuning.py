"""Chapter "Fine-tuning and rogue dimensions": analyse() on planted before/after states.

A planted fine-tune keeps the first half of the blocks as they were and replaces the last half
by a cloud with a few high-variance dimensions, one of which carries the label; a planted
non-fine-tune leaves every layer as it was. The verdicts of seed 003's claims must follow.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lmgeometry.chapters.finetuning import analysis as finetuning
from lmgeometry.measures import probes

N_TEST, N_FIT, WIDTH, BLOCKS = 240, 160, 48, 6


def planted(task: str, *, tuned: bool = True, rogue: tuple[int, ...] = (0, 1, 2),
            seed: int = 0, model: str = "planted") -> finetuning.Run:
    """Layers 0..BLOCKS of a pretrained model (one noisy cloud, offset by 5 along the rogue
    dimensions and along ten others) and of its fine-tune (the rogue dimensions' offset gone,
    the ten others' kept)."""
    rng = np.random.default_rng(seed)
    n = N_TEST + N_FIT
    y = np.arange(n) % 2
    base = rng.normal(size=(n, WIDTH))
    kept, offset = np.zeros(WIDTH), np.zeros(WIDTH)
    kept[10:20] = offset[10:20] = offset[list(rogue)] = 5.0
    before = np.stack([base + offset + 0.3 * rng.normal(size=(n, WIDTH))
                       for _ in range(BLOCKS + 1)])
    after = before.copy()
    if tuned:
        top = rng.normal(size=(n, WIDTH)) + kept
        top[:, rogue[0]] += 12.0 * (2 * y - 1)  # the principal rogue dimension holds the label
        for dim in rogue[1:]:
            top[:, dim] *= 6.0
        for layer in range(BLOCKS // 2 + 1, BLOCKS + 1):
            after[layer] = top + 0.3 * rng.normal(size=(n, WIDTH))
    head = probes.fit_logistic(after[-1, N_TEST:], y[N_TEST:], standardise=False,
                               solver="newton-cholesky")
    return finetuning.Run(model=model, kind="decoder", task=task,
                          before=before[:, :N_TEST].astype(np.float32),
                          after=after[:, :N_TEST].astype(np.float32),
                          after_fit=after[:, N_TEST:].astype(np.float32),
                          y_test=y[:N_TEST], y_fit=y[N_TEST:], head=head,
                          info={"settings": {"train_size": N_FIT}, "log": {"loss": [0.7, 0.1]}})


def verdicts(result, model: str = "planted", task: str = "SST-2") -> dict[str, str]:
    claims = result.claims[result.claims["model"] == model]
    rows = claims[claims["statistic"].str.contains(f"({task}, fine-tuned)", regex=False)]
    return {r.statistic.split(" (")[0]: r.verdict for r in rows.itertuples()}


@pytest.fixture(scope="module")
def result():
    runs = [planted("SST-2", seed=0), planted("QNLI", seed=1),
            planted("SST-2", tuned=False, seed=2, model="untouched")]
    return finetuning.analyse(runs, n_boot=200, n_boot_cka=100, ablation_ks=(0, 1, 3, 10),
                              tsne_points=60)


def test_a_planted_fine_tune_satisfies_every_claim(result):
    v = verdicts(result)
    statistic = {key: [s for s in v if s.startswith(prefix)] for key, prefix in (
        ("refines", "mean CKA(pretrained block, same fine-tuned block), first half"),
        ("early", "mean CKA(pretrained block, same fine-tuned block) over blocks 1-3"),
        ("two_blocks", "mean CKA within halves"), ("bow_tie", "two-half contrast"),
        ("dominance", "variance share of the top 3"), ("emergence", "Spearman rho"),
        ("exacerbated", "variance share of the top dimension"),
        ("mean_closer", "sum of |mean| over the fine-tuned last layer's top 3"),
        ("majority", "1-D threshold accuracy minus majority"),
        ("gap", "full fine-tuned model accuracy minus"),
        ("ablation", "accuracy with the bottom "), ("keep", "accuracy unablated minus"))}
    assert all(len(found) >= 1 for found in statistic.values()), statistic
    assert all(v[s] == "holds" for found in statistic.values() for s in found), v
    assert len(statistic["ablation"]) == len(statistic["keep"]) == 2  # zero and mean ablation


def test_an_untouched_model_fails_the_fine_tuning_claims(result):
    v = verdicts(result, "untouched")
    for prefix in ("mean CKA(pretrained block, same fine-tuned block), first half",
                   "two-half contrast", "variance share of the top dimension",
                   "sum of |mean|"):
        (statistic,) = [s for s in v if s.startswith(prefix)]
        assert v[statistic] == "does not hold", (statistic, v[statistic])
    (early,) = [s for s in v if "over blocks 1-3" in s]
    assert v[early] == "holds"  # nothing changed, so the first blocks are preserved too


def test_classifier_claims_get_their_null_with_the_labels_permuted(result):
    claims = result.claims[(result.claims["model"] == "planted")
                           & (result.claims["task"] == "SST-2")]
    labelled = claims["statistic"].str.contains("accuracy|label silhouette|silhouette of the "
                                                "labels")
    # threshold - majority, model - threshold, 2 x 2 ablations, the top 12% zeroed, and the
    # classes' separation by depth and its change by fine-tuning
    assert labelled.sum() == 9
    assert (claims.loc[labelled, "null_model"] == "labels permuted: planted").all()
    # the claims about depth (CKA's halves and first blocks, where rogue dimensions emerge)
    # get the layers in random orders as their null; the variance shares read neither
    depth = claims["rule"].isin([finetuning.THRESHOLDS[k][1] for k in finetuning.SHUFFLED])
    assert depth.sum() == 5
    shuffled = claims[depth].set_index("statistic")
    assert (shuffled["null_model"] == "layers shuffled: planted").all()
    # the last layer's variance shares are about coordinates: their null is a random basis,
    # where the planted rogue coordinates' variance spreads over all of them
    coordinates = claims["rule"].isin([finetuning.THRESHOLDS[k][1] for k in (
        "rogue_dominance", "rogue_exacerbated", "rogue_mean_closer")])
    assert coordinates.sum() == 3
    rotated = claims[coordinates]
    assert (rotated["null_model"] == "basis rotated: planted").all()
    assert (rotated["verdict"] == "holds").all()
    shares = rotated[rotated["statistic"].str.startswith("variance share")]
    assert (shares["null_value"] < shares["value"] / 2).all()
    # the offset left the rogue coordinates only: in a random basis the mean stays about as
    # far from zero (the ten kept offsets), so the rule fails there
    (closer,) = rotated[rotated["statistic"].str.startswith("sum of |mean|")].itertuples()
    assert closer.value < 0.1 and closer.null_value > 0.5 and closer.discriminates
    # three dominant coordinates among 48: in a random basis no three hold half the variance
    dominance = rotated[rotated["statistic"].str.startswith("variance share of the top 3")]
    assert dominance["discriminates"].all()
    assert (claims.loc[~labelled & ~depth & ~coordinates, "null_model"] == "").all()
    # the planted fine-tune changed the last half only: each depth claim holds, and fails
    # with the blocks in random orders (a random half, random first blocks, no trend)
    assert (shuffled["verdict"] == "holds").all() and shuffled["discriminates"].all()
    # where fine-tuning changed no block, any three blocks are as preserved as the first
    # three: the rule holds with the blocks shuffled too (it does not single them out)
    untouched = result.claims[(result.claims["model"] == "untouched")
                              & result.claims["statistic"].str.contains("over blocks 1-3")]
    assert (untouched["verdict"] == "holds").all()
    assert (untouched["null_verdict"] == "holds").all()
    assert not untouched["discriminates"].any()
    rows = claims[labelled].set_index("statistic")
    assert (rows["null_model"] == "labels permuted: planted").all()
    # the label dimension beats the majority class; with the labels permuted the threshold
    # sits at the majority class (its interval covering it), so the rule discriminates
    beats = rows.loc[[s for s in rows.index if s.startswith("1-D threshold accuracy minus")][0]]
    assert beats["verdict"] == "holds" and beats["null_verdict"] != "holds"
    assert beats["null_ci_low"] <= 0 <= beats["null_ci_high"] and beats["discriminates"]
    # keeping the top 3 dimensions leaves every prediction as it was: the difference is 0
    # against any labels, so this claim of no loss holds on its null by construction
    for statistic in (s for s in rows.index if s.startswith("accuracy unablated minus")):
        assert rows.loc[statistic, "null_value"] == 0 and rows.loc[statistic, "null_verdict"] \
            == "holds" and not rows.loc[statistic, "discriminates"]


def test_tables_hold_the_numbers_behind_the_claims(result):
    t = result.tables
    runs = t["runs"].set_index(["model", "task"])
    assert runs.loc[("planted", "SST-2"), "accuracy"] > 0.95
    assert runs.loc[("planted", "SST-2"), "n_test"] == N_TEST
    assert runs.loc[("planted", "SST-2"), "seed_gpt2"] == pytest.approx(0.928)  # a share
    layers = t["layers"]
    last = layers[(layers["model"] == "planted") & (layers["task"] == "SST-2")
                  & (layers["layer"] == BLOCKS)].set_index("state")
    assert last.loc["fine-tuned", "rogue_dim"] == 0 and last.loc["fine-tuned", "threshold_dim"] == 0
    assert last.loc["fine-tuned", "threshold_accuracy"] > 0.95
    assert last.loc["fine-tuned", "variance_share_top3"] > 0.8
    assert last.loc["pretrained", "variance_share_top3"] < 0.2
    assert np.isnan(last.loc["pretrained", "threshold_accuracy"])  # fine-tuned only
    profile = t["profile"]
    tuned = profile[(profile["model"] == "planted") & (profile["task"] == "SST-2")
                    & (profile["state"] == "fine-tuned")]
    assert len(tuned) == WIDTH and tuned["std"].idxmax() == tuned.index[0]  # dimension 0
    # the dimensions' cosine contributions add up to the layer's mean cosine
    assert tuned["cosine_contribution"].sum() == pytest.approx(last.loc["fine-tuned",
                                                                        "mean_cosine"])
    cka = t["cka"]
    one = cka[(cka["model"] == "planted") & (cka["task"] == "SST-2")]
    assert set(one["comparison"]) == {"pretrained", "fine-tuned", "pretrained vs fine-tuned"}
    assert set(one["estimator"]) == {"linear", "debiased"}
    diag = one[(one["comparison"] == "pretrained vs fine-tuned") & (one["layer"] == 1)
               & (one["other_layer"] == 1)]
    assert np.allclose(diag["cka"], 1.0)  # block 1 untouched: identical states
    ablation = t["ablation"]
    none = ablation[(ablation["model"] == "planted") & (ablation["task"] == "SST-2")
                    & (ablation["k"] == 0)]
    assert np.allclose(none["accuracy"], runs.loc[("planted", "SST-2"), "accuracy"])
    assert WIDTH - 3 in set(ablation["k"])  # all but the top 3
    assert set(t["tsne"]["state"]) == {"pretrained", "fine-tuned"}
    assert len(t["tsne"]) == 3 * 2 * 60


def test_the_same_rogue_dimensions_in_both_tasks_overlap(result):
    overlap = result.tables["overlap"].set_index("model")
    assert overlap.loc["planted", "overlap"] >= 3  # the three planted dimensions
    (row,) = result.claims[result.claims["claim"].str.startswith("the same rogue")].itertuples()
    assert row.model == "planted" and row.value == overlap.loc["planted", "overlap"]
    # its null: the same states in one random basis, where shared directions stay shared
    assert row.null_model == "basis rotated: planted"
    assert row.null_ci_low <= row.null_value <= row.null_ci_high


def test_different_rogue_dimensions_do_not_overlap():
    a = planted("SST-2", rogue=tuple(range(10)), seed=3)
    b = planted("QNLI", rogue=tuple(range(20, 30)), seed=4)
    out = finetuning.analyse([a, b], n_boot=100, n_boot_cka=20, tsne_points=0)
    (row,) = out.claims[out.claims["claim"].str.startswith("the same rogue")].itertuples()
    assert row.value <= 2 and row.verdict == "does not hold"
    assert row.null_model == "basis rotated: planted" and row.null_verdict != "holds"
    assert "tsne" not in out.tables


def test_claims_carry_thresholds_rules_and_the_seeds_numbers(result):
    claims = result.claims
    assert claims["rule"].str.len().gt(20).all() and claims["published"].str.len().gt(10).all()
    assert set(claims["seed"]) == {"003"} and set(claims["control"]) == {"none"}
    assert ((claims["ci_low"] <= claims["value"]) & (claims["value"] <= claims["ci_high"])).all()
    # one claim row per statistic, model and task: the scorecard's index stays unique
    assert not claims.duplicated(["claim", "statistic", "model"]).any()
    assert any("held-out accuracy of the fine-tuned models" in s for s in result.sentences)
    # each ablation mode is its own claim, so a sentence never merges the two
    names = set(claims["claim"])
    assert {"zeroing the top-variance dimensions hurts the fine-tuned head more than the "
            "bottom ones", "beyond the paper: mean-setting the top-variance dimensions hurts "
            "the fine-tuned head more than the bottom ones"} <= names
    ablation = [x for x in result.sentences if "top-variance dimensions hurts" in x]
    assert ablation and all(x.count("planted") <= 1 for x in ablation)
    # the overlap of the two fine-tunes is reported beside the pretrained model's
    overlap = result.tables["overlap"].set_index("model").loc["planted"]
    (text,) = [x for x in result.sentences if x.startswith("Rogue dimensions of planted")]
    assert f"against {overlap['overlap_pretrained']:.0f} of 10 for the same model before" in text


def test_a_model_at_chance_is_flagged():
    runs = pd.DataFrame({"model": ["good", "weak"], "task": "QNLI", "accuracy": [0.8, 0.54],
                         "accuracy_lo": [0.76, 0.49], "accuracy_hi": [0.84, 0.58],
                         "majority": 0.514})
    text = finetuning._near_chance(runs)
    assert "weak reaches the majority baseline (51.4%)" in text and "good" not in text
    assert finetuning._near_chance(runs.iloc[:1]) == ""
    touching = runs.assign(accuracy_lo=[0.76, 0.514])  # an interval that ends on the baseline
    assert "weak reaches the majority baseline" in finetuning._near_chance(touching)


@pytest.mark.data
def test_prepare_fine_tunes_and_reads_head_states(tmp_path, monkeypatch, minilm_tokenizer):
    """prepare() end to end on a tiny BERT (random weights, MiniLM's tokenizer), both tasks."""
    import torch
    from transformers import BertConfig, BertModel

    monkeypatch.setenv("LMGEOMETRY_CACHE", str(tmp_path / "cache"))
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(minilm_tokenizer), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=128)
    folder = tmp_path / "tiny-bert"
    BertModel(config).save_pretrained(folder)
    minilm_tokenizer.save_pretrained(folder)
    small = {"train_size": 40, "epochs": 1, "batch_size": 8, "max_length": 48}
    runs = finetuning.prepare([str(folder)], {"encoder": {"sst2": small, "qnli": small}},
                              n_fit=24, progress=False)
    assert [(r.task, r.kind) for r in runs] == [("SST-2", "encoder"), ("QNLI", "encoder")]
    sst2, qnli = runs
    assert sst2.before.shape == sst2.after.shape == (3, 872, 32)
    assert sst2.after_fit.shape == (3, 24, 32) and len(sst2.y_fit) == 24
    assert qnli.after.shape[1] == len(qnli.y_test) == 500
    assert not np.array_equal(sst2.before[-1], sst2.after[-1])  # fine-tuning moved the states
    out = finetuning.analyse(runs, n_boot=50, n_boot_cka=10, tsne_points=30)
    runs_table = out.tables["runs"].set_index("task")
    assert runs_table.loc["SST-2", "train_size"] == 40
    assert 0.0 <= runs_table.loc["SST-2", "accuracy"] <= 1.0
    assert len(out.tables["overlap"]) == 1
    # the chapter's accuracy (the model's head on its head-token states) is plain transformers'
    from lmgeometry.training.finetune import evaluate

    for run in runs:
        (checkpoint,) = [f for f in (tmp_path / "cache" / "finetuned").iterdir()
                         if run.info["key"][:16] in f.name]
        assert runs_table.loc[run.task, "accuracy"] == pytest.approx(
            evaluate(checkpoint).accuracy, abs=1.5 / len(run.y_test))
    again = finetuning.prepare([str(folder)], {"encoder": {"sst2": small}}, tasks=("sst2",),
                               n_fit=24, progress=False)
    assert again[0].info["key"] == sst2.info["key"]  # the checkpoint came from the cache


def test_mean_closer_is_the_ratio_of_summed_absolute_means_in_the_top_dimensions():
    """Known answer: +-1 steps (mean exactly 0) scaled 9, 8, 7 along dimensions 0-2 of the
    fine-tuned states and 1 elsewhere, offsets 1, 0, 0.5 there; the pretrained states offset 2,
    -3, 1 in those dimensions: r = (1 + 0 + 0.5) / (2 + 3 + 1) = 0.25."""
    n, width = 40, 6
    step = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)[:, None]
    after = step * np.array([9.0, 8.0, 7.0, 1.0, 1.0, 1.0]) + [1.0, 0.0, 0.5, 4.0, 4.0, 4.0]
    before = np.zeros((n, width)) + [2.0, -3.0, 1.0, 9.0, 9.0, 9.0]
    counts = np.random.default_rng(0).multinomial(n, np.full(n, 1 / n), size=100)
    ratio, low, high, summed_before, summed_after, dims = finetuning._mean_closer(
        before, after, counts)
    assert dims == (0, 1, 2) and ratio == pytest.approx(0.25)
    assert (summed_before, summed_after) == pytest.approx((6.0, 1.5))
    assert low <= ratio <= high
    # scaling both states leaves it as it is; the same states before and after give 1
    assert finetuning._mean_closer(3 * before, 3 * after, counts)[0] == pytest.approx(0.25)
    assert finetuning._mean_closer(after, after, counts)[:3] == pytest.approx((1.0, 1.0, 1.0))


def test_zeroing_the_top_dimensions_costs_what_the_label_s_dimension_carried(result):
    # the planted head reads the label from the top-variance dimension: zeroing the top 12%
    # (6 of 48) takes it, and the accuracy with it; a head at chance has nothing to lose
    claim = "zeroing the top 12% of the variance dimensions barely changes"
    rows = result.claims[result.claims["claim"].str.startswith(claim)
                         & (result.claims["task"] == "SST-2")].set_index("model")
    assert rows.loc["planted", "verdict"] == "does not hold"
    assert rows.loc["planted", "value"] < -0.3
    assert "top 6 variance dimensions zeroed" in rows.loc["planted", "statistic"]
    # with the labels permuted the zeroed dimension carried nothing to lose
    assert rows.loc["planted", "null_value"] > rows.loc["planted", "value"] + 0.3
    assert abs(rows.loc["untouched", "value"]) < 0.1
    assert finetuning.ablation_dimensions(finetuning.SEED003_HARMLESS_SHARE, 768) == 92


def test_the_planted_fine_tune_separates_its_classes_in_the_last_half_only(result):
    # the label lives in the last half's planted dimension; the first half is label-free
    claim = "after fine-tuning the last half of the blocks separates the classes"
    rows = result.claims[result.claims["claim"].str.startswith(claim)
                         & (result.claims["task"] == "SST-2")].set_index("model")
    assert rows.loc["planted", "verdict"] == "holds" and rows.loc["planted", "value"] > 0.3
    assert rows.loc["planted", "null_verdict"] == "does not hold"  # labels permuted
    assert rows.loc["untouched", "verdict"] == "does not hold"
    # the pretrained model did not separate them: fine-tuning created it (not so untouched)
    emerge = result.claims[result.claims["claim"].str.startswith("fine-tuning creates the last "
                                                                 "half's separation")
                           & (result.claims["task"] == "SST-2")].set_index("model")
    assert emerge.loc["planted", "verdict"] == "holds"
    assert emerge.loc["planted", "value"] == pytest.approx(rows.loc["planted", "value"], abs=0.05)
    assert emerge.loc["untouched", "verdict"] == "does not hold"
    layers = result.tables["layers"]
    ft = layers[(layers["model"] == "planted") & (layers["task"] == "SST-2")
                & (layers["state"] == "fine-tuned")].set_index("layer")["label_silhouette"]
    assert ft.loc[1:3].abs().max() < 0.05 and ft.loc[4:6].min() > 0.3
    assert finetuning._halves(6) == ([1, 2, 3], [4, 5, 6])
    assert finetuning._halves(5) == ([1, 2], [4, 5])

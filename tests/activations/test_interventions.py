"""Token runs under interventions (lmgeometry.activations.interventions) and the sink chapter's
claims (lmgeometry.chapters.sink.analysis), on tiny real models with random weights."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import STORE_TEXTS, save_bert

from lmgeometry.activations import interventions as iv
from lmgeometry.chapters.sink import analysis as sink
from lmgeometry.claims import Claim, claims_frame
from lmgeometry.errors import UsageError
from lmgeometry.io import paths


@pytest.fixture()
def root(tmp_path):
    return tmp_path / "interventions"


def test_intact_run_records_every_token_and_the_loss(tiny_llama, root) -> None:
    run = iv.run_tokens(tiny_llama, STORE_TEXTS, root=root)
    tokens = run.tokens
    assert run.states.shape == (3, len(tokens), 32)
    assert (tokens.groupby("sentence")["position"].min() == 0).all()
    assert sorted(tokens["sentence"].unique()) == list(range(len(STORE_TEXTS)))
    lengths = tokens.groupby("sentence").size().to_numpy()
    assert (run.targets == lengths - 1).all()  # every text token after the first
    assert np.isfinite(run.nll).all() and (run.nll > 0).all()
    assert ((run.attention > 0) & (run.attention <= 1)).all()
    again = iv.run_tokens(tiny_llama, STORE_TEXTS, root=root)
    assert again.path == run.path and again.meta["seconds"] == run.meta["seconds"]


def test_massive_reset_sets_the_first_position_to_the_mean_of_the_others(tiny_llama, root
                                                                         ) -> None:
    run = iv.run_tokens(tiny_llama, STORE_TEXTS, "massive", dims={1: [3, 5]}, root=root)
    S, tokens = np.asarray(run.states[1]), run.tokens
    for _, part in tokens.groupby("sentence"):
        rows = part.index.to_numpy()
        first, rest = rows[part["position"].to_numpy() == 0], rows[part["position"] > 0]
        np.testing.assert_allclose(S[first, [3, 5]], S[rest][:, [3, 5]].mean(0), rtol=1e-5,
                                   atol=1e-6)
    intact = iv.run_tokens(tiny_llama, STORE_TEXTS, root=root)
    assert not np.allclose(np.asarray(intact.states[2]), np.asarray(run.states[2]))
    with pytest.raises(UsageError, match="needs dims"):
        iv.run_tokens(tiny_llama, STORE_TEXTS, "massive", root=root)


def test_zeroed_and_mean_set_the_first_position_to_the_values_and_nothing_else(tiny_llama, root
                                                                              ) -> None:
    intact = iv.run_tokens(tiny_llama, STORE_TEXTS, root=root)
    first = intact.tokens["position"].to_numpy() == 0
    zeroed = iv.run_tokens(tiny_llama, STORE_TEXTS, "massive_zero", dims={1: [3, 5]}, root=root)
    np.testing.assert_array_equal(np.asarray(zeroed.states[1])[first][:, [3, 5]], 0.0)
    # the other dimensions of the replaced layer, and every earlier state, are untouched
    np.testing.assert_allclose(np.asarray(zeroed.states[1])[first][:, :3],
                               np.asarray(intact.states[1])[first][:, :3], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(zeroed.states[0]), np.asarray(intact.states[0]))
    means = sink.position_means(intact, {1: [5, 3]})
    S1 = np.asarray(intact.states[1])[first]
    np.testing.assert_allclose(means[1], [S1[:, 5].mean(), S1[:, 3].mean()], rtol=1e-6)
    fixed = iv.run_tokens(tiny_llama, STORE_TEXTS, "massive_mean", dims={1: [5, 3]},
                          values={1: [7.5, -2.0]}, root=root)
    got = np.asarray(fixed.states[1])[first]
    np.testing.assert_array_equal(got[:, 5], 7.5)
    np.testing.assert_array_equal(got[:, 3], -2.0)
    # the position-0 values change what later positions compute (the model reads them)
    later = ~first
    assert not np.allclose(np.asarray(fixed.states[2])[later], np.asarray(intact.states[2])[later])
    other = iv.run_tokens(tiny_llama, STORE_TEXTS, "massive_mean", dims={1: [5, 3]},
                          values={1: [7.5, -2.5]}, root=root)
    assert other.path != fixed.path  # the values are part of the key
    with pytest.raises(UsageError, match="one finite number per dimension"):
        iv.run_tokens(tiny_llama, STORE_TEXTS, "massive_mean", dims={1: [5, 3]},
                      values={1: [7.5]}, root=root)
    with pytest.raises(UsageError, match="go with the 'massive_mean'"):
        iv.run_tokens(tiny_llama, STORE_TEXTS, "massive_mean", dims={1: [5]}, root=root)
    with pytest.raises(UsageError, match="go with the 'massive_mean'"):
        iv.run_tokens(tiny_llama, STORE_TEXTS, "massive_zero", dims={1: [5]},
                      values={1: [1.0]}, root=root)
    with pytest.raises(UsageError, match="needs dims"):
        iv.run_tokens(tiny_llama, STORE_TEXTS, "massive_zero", root=root)


def test_no_attention_to_the_first_position_and_the_sink_toggle(tiny_llama, root) -> None:
    cut = iv.run_tokens(tiny_llama, STORE_TEXTS, "attention", root=root)
    assert np.allclose(cut.attention, 0.0)
    intact = iv.run_tokens(tiny_llama, STORE_TEXTS, root=root)
    # position 0 attends only to itself in a causal model: its states do not change
    first = intact.tokens["position"].to_numpy() == 0
    np.testing.assert_allclose(np.asarray(cut.states[2])[first],
                               np.asarray(intact.states[2])[first], rtol=1e-4, atol=1e-5)
    toggled = iv.run_tokens(tiny_llama, STORE_TEXTS, "sink", root=root)
    assert toggled.meta["prepend_bos"] and not intact.meta["prepend_bos"]
    assert len(toggled.tokens) == len(intact.tokens) + len(STORE_TEXTS)
    assert (toggled.targets == intact.targets).all()  # the same text tokens are scored


def test_a_token_cut_off_from_its_context_is_computed_as_if_alone(tiny_llama, root) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    cut = iv.run_tokens(tiny_llama, STORE_TEXTS, "isolated", positions=[2], root=root)
    intact = iv.run_tokens(tiny_llama, STORE_TEXTS, root=root)
    assert cut.meta["positions"] == [2] and cut.path != intact.path
    position = cut.tokens["position"].to_numpy()
    # rotary positions, no BOS: a query that sees only itself is the token run alone
    net = AutoModelForCausalLM.from_pretrained(tiny_llama, dtype=torch.float32).eval()
    ids = cut.tokens["token_id"].to_numpy()[position == 2]
    with torch.inference_mode():
        alone = net(input_ids=torch.as_tensor(ids)[:, None], output_hidden_states=True)
    for layer in range(cut.n_layers):
        np.testing.assert_allclose(np.asarray(cut.states[layer])[position == 2],
                                   alone.hidden_states[layer][:, 0].numpy(), rtol=1e-4,
                                   atol=1e-5)
    # earlier tokens never see it (causal mask); later ones read a changed token
    np.testing.assert_allclose(np.asarray(cut.states[2])[position < 2],
                               np.asarray(intact.states[2])[position < 2], rtol=1e-4, atol=1e-5)
    assert not np.allclose(np.asarray(cut.states[2])[position > 2],
                           np.asarray(intact.states[2])[position > 2])
    with pytest.raises(UsageError, match="go with the 'isolated'"):
        iv.run_tokens(tiny_llama, STORE_TEXTS, "isolated", root=root)
    with pytest.raises(UsageError, match="go with the 'isolated'"):
        iv.run_tokens(tiny_llama, STORE_TEXTS, "attention", positions=[2], root=root)
    with pytest.raises(UsageError, match="1 or more"):
        iv.run_tokens(tiny_llama, STORE_TEXTS, "isolated", positions=[0], root=root)


def test_a_damaged_run_is_set_aside_and_rebuilt(tiny_llama, root) -> None:
    run = iv.run_tokens(tiny_llama, STORE_TEXTS[:3], root=root)
    path = run.path / "states.npy"
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(Exception, match="differ"):
        iv.TokenRun(run.path)
    rebuilt = iv.run_tokens(tiny_llama, STORE_TEXTS[:3], root=root)
    assert rebuilt.path == run.path
    assert list(root.glob(".set-aside-*"))


def test_bad_requests_name_the_problem(tiny_llama, root, tmp_path) -> None:
    with pytest.raises(UsageError, match="unknown intervention 'ablate'"):
        iv.run_tokens(tiny_llama, STORE_TEXTS, "ablate", root=root)
    with pytest.raises(UsageError, match="at least one sentence"):
        iv.run_tokens(tiny_llama, [], root=root)
    bert = str(save_bert(tmp_path / "bert"))
    with pytest.raises(UsageError, match="encoder"):
        iv.run_tokens(bert, STORE_TEXTS, "sink", root=root)
    encoder = iv.run_tokens(bert, STORE_TEXTS, root=root)
    assert encoder.kind == "encoder" and np.isnan(encoder.nll).all()


def test_the_chapter_measures_every_model_and_judges_only_working_interventions(
        tiny_llama, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "cache"))
    bert = str(save_bert(tmp_path / "bert"))
    texts = STORE_TEXTS * 2
    result = sink.analyse([bert, tiny_llama], texts, n_boot=50)
    layers = result.tables["layers"]
    assert set(layers[layers["model"] == bert]["condition"]) == {"intact"}
    assert {"intact", "attention", "sink"} <= set(layers[layers["model"] == tiny_llama]
                                                  ["condition"])

    assert set(result.tables["loss"]["model"]) == {tiny_llama}
    frame = result.claims
    assert (frame["model"] == tiny_llama).all() and len(frame)
    judged = frame[frame["applies"]]
    for row in judged.itertuples():
        assert row.ci_low <= row.value <= row.ci_high
    # an intervention whose loss interval reaches twice the intact loss is not judged
    loss = result.tables["loss"].copy()
    loss["usable"] = loss["condition"] != "attention"
    loss["ratio_lo"], loss["ratio_hi"] = 1.5, np.where(loss["usable"], 1.5, 2.5)
    redone = sink._applicability(frame, loss, layers)
    cut = redone[redone["control"] == sink.LABELS["attention"]]
    assert not cut["applies"].any() and cut["applies_reason"].str.contains("broken").all()


def test_the_three_interventions_on_massive_activations_and_their_effect_sizes(
        tiny_llama, tmp_path, monkeypatch) -> None:
    # a random tiny model has no massive activations: the chapter is handed two dimensions
    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(sink, "massive_dims", lambda run: {1: [3, 5]})
    result = sink.analyse([tiny_llama], STORE_TEXTS * 2, n_boot=50)
    layers, loss = result.tables["layers"], result.tables["loss"].set_index("condition")
    assert set(layers["condition"]) == {"intact", *sink.MASSIVE, "attention", "sink",
                                        "isolated"}
    effect = result.tables["cluster_effect"]  # the interventions on the sink, not the control
    assert set(effect["condition"]) == set(sink.SINK_REMOVALS)
    for row in effect.itertuples():
        assert row.removed == pytest.approx(1 - row.intervened / row.intact)
        assert row.removed_lo <= row.removed <= row.removed_hi
    claims = result.claims
    cluster = claims[claims["claim"] == sink.CLUSTER_CLAIM]
    assert set(cluster["control"]) == {sink.LABELS[c] for c in sink.MASSIVE}
    for text, condition, direction in ((sink.LOSS_CLAIMS[0], "massive_mean", "below"),
                                       (sink.LOSS_CLAIMS[1], "massive_zero", "above")):
        row = claims[claims["claim"] == text].iloc[0]
        assert row["value"] == pytest.approx(loss.at[condition, "ratio"])
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(
            (loss.at[condition, "ratio_lo"], loss.at[condition, "ratio_hi"]))
        assert row["direction"] == direction and row["applies"]  # judged whatever the loss
    # first words differ; a prepended BOS is the same vector in every sentence (causal mask)
    assert not sink.first_identical(sink.run_tokens(tiny_llama, STORE_TEXTS))
    assert sink.first_identical(sink.run_tokens(tiny_llama, STORE_TEXTS, "sink"))
    toggled = claims[claims["control"] == sink.LABELS["sink"]]
    assert not toggled.empty  # the sink-toggled rows are anisotropy claims, not cluster ones
    box = sink.findings(result)
    for condition in sink.MASSIVE:
        assert f"{sink._SHORT[condition]} " in box
    assert "% [" in box and ("of it gone: " in box or "none gone: " in box)  # read, with intervals
    assert set(effect["reading"]) <= {"none", "part", "most", "none or part", "part or most",
                                      "none or most"}


def test_sample_sentences_is_seeded_and_checked() -> None:
    pool = [f"sentence {i}" for i in range(50)]
    a, b = sink.sample_sentences(pool, 10, seed=3), sink.sample_sentences(pool, 10, seed=3)
    assert a == b and len(set(a)) == 10 and a == sorted(a, key=pool.index)
    with pytest.raises(ValueError, match="lower n_sentences"):
        sink.sample_sentences(pool, 51)


def test_the_context_control_is_judged_beside_the_same_tokens_with_their_context(
        tiny_llama, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "cache"))
    texts = STORE_TEXTS * 2
    result = sink.analyse([tiny_llama], texts, n_boot=50)
    layers = result.tables["layers"].set_index(["condition", "layer"])
    fifth = sink.run_tokens(tiny_llama, texts).tokens["position"] == sink.ISOLATED_POSITION
    assert fifth.sum() >= 2
    # measured on the fifth tokens, intact and cut off; NaN for the interventions
    assert layers.loc["isolated", "context_silhouette"].iloc[1:-1].notna().all()
    assert layers.loc["intact", "context_silhouette"].iloc[1:-1].notna().all()
    assert layers.loc["attention", "context_silhouette"].isna().all()
    row = result.claims[result.claims["claim"] == sink.CONTEXT_CLAIM].iloc[0]
    inner = layers.loc["isolated"].iloc[1:-1]
    assert row["value"] == pytest.approx(inner["context_silhouette"].max())
    assert row["null_model"] == sink.with_context(tiny_llama)
    assert row["null_value"] == pytest.approx(
        layers.loc["intact", "context_silhouette"].iloc[1:-1].max())
    assert row["discriminates"] == (row["verdict"] == "holds"
                                    and row["null_verdict"] != "holds")
    assert row["ci_low"] <= row["value"] <= row["ci_high"]
    # a random tiny model has no first-token cluster to join: the row says so, unjudged
    has_cluster = (layers.loc["intact", "first_silhouette_lo"].iloc[1:-1] >= 0.5).any()
    assert bool(row["applies"]) == has_cluster
    if not has_cluster:
        assert "no first-token cluster to join" in row["applies_reason"]
    assert "isolated" not in set(result.tables["cluster_effect"]["condition"])


def test_attention_cut_and_sink_toggle_are_one_test_where_they_coincide(
        tiny_llama, tiny_llama_bos, root) -> None:
    # a BOS-prepending rotary decoder: no word attends to the BOS, or there is none
    cut = iv.run_tokens(tiny_llama_bos, STORE_TEXTS, "attention", root=root)
    toggled = iv.run_tokens(tiny_llama_bos, STORE_TEXTS, "sink", root=root)
    assert cut.meta["prepend_bos"] and not toggled.meta["prepend_bos"]
    difference = sink.coincident_runs(cut, toggled)
    assert difference is not None and difference < 1e-5
    # without a BOS, cutting the first word off is not running with a BOS prepended
    assert sink.coincident_runs(iv.run_tokens(tiny_llama, STORE_TEXTS, "attention", root=root),
                                iv.run_tokens(tiny_llama, STORE_TEXTS, "sink", root=root)
                                ) is None
    # other sentences: not aligned, so not one computation
    assert sink.coincident_runs(cut, iv.run_tokens(tiny_llama_bos, STORE_TEXTS[:3], "sink",
                                                   root=root)) is None
    frame = claims_frame([Claim(
        seed="001", claim="c", model="m", control=sink.LABELS[c], statistic="s", value=0.5,
        ci_low=0.4, ci_high=0.6, threshold=0.5, direction="below", rule="r")
        for c in ("attention", "sink")])
    loss = pd.DataFrame(columns=["model", "condition", "usable", "ratio_lo", "ratio_hi"])
    layers = pd.DataFrame(columns=["model", "condition", "first_silhouette_lo"])
    judged = sink._applicability(frame, loss, layers, coincide={"m": difference})
    assert judged["applies"].tolist() == [False, True]
    assert "same computation as the sink token toggled" in judged["applies_reason"].iat[0]

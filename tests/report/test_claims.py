"""The verdict rule and claim records (lmgeometry.measures.stats, lmgeometry.report.claims)."""

import math
import re

import numpy as np
import pandas as pd
import pytest

from lmgeometry.claims import CLAIM_COLUMNS, Claim, claims_frame
from lmgeometry.measures import stats
from lmgeometry.measures.stats import verdict
from lmgeometry.report.claims import scorecard, verdict_counts


@pytest.mark.parametrize(
    ("lo", "hi", "threshold", "direction", "expected"),
    [
        (0.2, 0.4, 0.1, "above", "holds"),
        (0.0, 0.4, 0.1, "above", "inconclusive"),  # straddles the threshold
        (0.1, 0.4, 0.1, "above", "inconclusive"),  # touching is not enough to hold
        (-0.2, 0.05, 0.1, "above", "does not hold"),
        (-0.2, 0.1, 0.1, "above", "inconclusive"),  # the closed interval holds the threshold
        (-0.9, -0.7, -0.5, "below", "holds"),
        (-0.6, -0.4, -0.5, "below", "inconclusive"),
        (-0.5, 0.3, -0.5, "below", "inconclusive"),
        (-0.4, 0.3, -0.5, "below", "does not hold"),
        (math.nan, 0.3, 0.0, "above", "inconclusive"),
    ],
)
def test_verdict_follows_the_interval(lo, hi, threshold, direction, expected):
    assert verdict(lo, hi, threshold, direction) == expected


def test_verdict_refuses_bad_input():
    with pytest.raises(ValueError):
        verdict(0.0, 1.0, 0.5, "up")
    with pytest.raises(ValueError):
        verdict(1.0, 0.0, 0.5, "above")


def _claim(model="m", value=0.3, lo=0.2, hi=0.4, statistic="rho", claim="anisotropy rises",
           **kw):
    return Claim(seed="001", claim=claim, model=model, statistic=statistic,
                 value=value, ci_low=lo, ci_high=hi, threshold=0.1, direction="above",
                 rule="a moderate correlation", **kw)


def test_claim_computes_its_verdict_and_checks_its_interval():
    assert _claim().verdict == "holds"
    assert _claim(lo=-0.1).verdict == "inconclusive"
    with pytest.raises(ValueError):
        _claim(value=0.5)  # outside its own interval
    with pytest.raises(TypeError):
        Claim(seed="001", claim="c", model="m", statistic="s", value=0, ci_low=0, ci_high=0,
              threshold=0, direction="above", rule="r", verdict="holds")  # never typed


def test_claims_frame_and_scorecard():
    frame = claims_frame([_claim("a"), _claim("b", lo=-0.1, value=0.0, hi=0.2)])
    assert list(frame.columns) == list(CLAIM_COLUMNS)
    assert frame["verdict"].tolist() == ["holds", "inconclusive"]
    card = scorecard(frame, models=["b", "a"])
    assert list(card.columns) == ["b", "a"]
    assert card.iloc[0]["a"] == "holds: 0.30 [0.20, 0.40]"
    counts = verdict_counts(frame)
    assert counts.loc["a", "holds"] == 1 and counts.loc["b", "inconclusive"] == 1
    assert counts.loc["a", "does not hold"] == 0


def test_a_claims_preset_is_a_field_and_sets_its_role(tmp_path):
    from lmgeometry.claims import role_of
    from lmgeometry.report.claims import collect_claims
    from lmgeometry.report.results import save_results

    frame = claims_frame([_claim("a", preset="corrected"), _claim("a", preset="ethayarajh2019"),
                          _claim("a")])
    assert frame["preset"].tolist() == ["corrected", "ethayarajh2019", ""]
    # the role comes from the field, not from the statistic's text ("rho" names no preset)
    assert frame["role"].tolist() == ["estimator", "primary", "primary"]
    assert role_of("c", "none", "corrected") == "estimator"
    assert role_of("c", "first word excluded", "corrected") == "control"
    assert role_of("beyond the paper: c", "none", "corrected") == "beyond"
    # a results file written before the field existed is read, its rows with no preset
    old = frame.drop(columns="preset")
    save_results(tmp_path / "03_x.results.json", {"claims": old})
    found = collect_claims(tmp_path)
    assert len(found) == 3 and found["preset"].tolist() == ["", "", ""]
    assert found["role"].tolist() == ["estimator", "primary", "primary"]  # as stored



def test_the_scorecard_counts_a_claim_per_task_by_the_field_not_the_text(tmp_path):
    from lmgeometry.claims import primary_table
    from lmgeometry.report.claims import collect_claims
    from lmgeometry.report.results import save_results

    kinds = {"d1": "decoder"}
    # the statistic's text names no task ("rho"); the field alone makes two rows of one claim
    frame = claims_frame([_claim("d1", task="SST-2"),
                          _claim("d1", lo=-0.4, value=-0.3, hi=-0.2, task="QNLI"),
                          _claim("d1", task="QNLI")])
    assert frame["task"].tolist() == ["SST-2", "QNLI", "QNLI"]
    assert list(frame.columns).index("task") == list(frame.columns).index("preset") + 1
    frame["expected"] = "holds"
    table = primary_table(frame, kinds).set_index("task")
    assert table.loc["SST-2", "outcome"] == "held without a null run"  # agrees, but no null ran
    assert table.loc["QNLI", "outcome"] == "inconclusive"  # one holds, one does not
    assert table.loc["QNLI", "d1"] == ("does not hold: -0.30 [-0.40, -0.20]; "
                                       "holds: 0.30 [0.20, 0.40]")  # both rows, one cell
    # a statistic that names a task in its text is not counted under it without the field
    named = claims_frame([_claim("d1", statistic="share (SST-2, fine-tuned)")])
    assert primary_table(named.assign(expected="holds"), kinds)["task"].tolist() == [""]
    # a results file written before the field existed is read with no task
    save_results(tmp_path / "07_x.results.json", {"claims": frame.drop(columns="task")})
    assert collect_claims(tmp_path)["task"].tolist() == ["", "", ""]


def test_bootstrap_means_resample_items_jointly():
    import numpy as np

    from lmgeometry.measures.stats import weighted_bootstrap_means

    V = np.tile(np.array([1.0, 2.0, 3.0]), (50, 1))  # every item the same
    reps = weighted_bootstrap_means(V, n_boot=20, rng=0)
    assert reps.shape == (20, 3) and np.allclose(reps, [1.0, 2.0, 3.0])
    # weights: an item with weight 0 never counts, NaN entries drop out of their column
    V2 = np.array([[1.0, np.nan], [3.0, 5.0], [100.0, 100.0]])
    reps2 = weighted_bootstrap_means(V2, weights=np.array([1.0, 1.0, 0.0]), n_boot=200, rng=1)
    assert np.nanmax(reps2[:, 0]) <= 3.0 and np.nanmin(reps2[:, 0]) >= 1.0
    assert np.allclose(reps2[np.isfinite(reps2[:, 1]), 1], 5.0)


def test_spearman_trend_known_answers():
    import numpy as np

    from lmgeometry.measures.stats import spearman_trend

    rng = np.random.default_rng(0)
    layers = np.arange(8.0)
    rising = layers + rng.normal(scale=0.01, size=(300, 8))
    rho, lo, hi = spearman_trend(rising, n_boot=200, rng=0)
    assert rho == pytest.approx(1.0) and lo == pytest.approx(1.0) and hi == pytest.approx(1.0)
    rho, lo, hi = spearman_trend(-rising, n_boot=200, rng=0)
    assert rho == pytest.approx(-1.0) and hi == pytest.approx(-1.0)
    # no trend in the population: most intervals (nominally 95%) hold 0
    covered = 0
    for seed in range(40):
        noise = np.random.default_rng(seed).normal(size=(40, 8))
        _, lo, hi = spearman_trend(noise, n_boot=300, rng=seed)
        covered += lo <= 0 <= hi
    assert covered >= 32
    assert np.isnan(spearman_trend(noise[:, :2])[0])  # two layers: no trend


def test_extreme_over_layers_bounds_every_layer():
    from lmgeometry.measures.stats import extreme_over_layers, verdict

    v, lo, hi, at = extreme_over_layers([0.5, 0.2, 0.4], [0.45, 0.15, 0.35], [0.55, 0.25, 0.45])
    assert (v, lo, hi, at) == (0.2, 0.15, 0.25, 1)
    assert verdict(lo, hi, 0.1, "above") == "holds"  # every layer's interval is above 0.1
    assert verdict(lo, hi, 0.2, "above") == "inconclusive"
    v, lo, hi, at = extreme_over_layers([0.5, 0.2], [0.4, 0.1], [0.6, 0.3], which="max")
    assert (v, lo, hi, at) == (0.5, 0.4, 0.6, 0)


def test_group_bootstrap_and_intervals_known_answers():
    values = np.arange(12.0)
    boot = stats.GroupBootstrap(np.repeat(np.arange(6), 2), n_boot=400, rng=0)
    mean, reps = boot.ratio(values)
    assert mean == pytest.approx(values.mean()) and reps.shape == (400,)
    # replicate b is the mean over the drawn sentences, each counted as often as drawn
    counts = np.repeat(boot.counts[5], 2)
    assert reps[5] == pytest.approx((counts * values).sum() / counts.sum())
    lo, hi = stats.percentile_interval(reps, mean)
    assert lo < mean < hi
    # the jackknife of a mean over blocks gives the usual standard error
    block_means = np.array([1.0, 2.0, 4.0, 5.0])
    reps = np.array([np.delete(block_means, j).mean() for j in range(4)])
    lo, hi = stats.jackknife_interval(reps, block_means.mean())
    se = block_means.std(ddof=1) / 2
    assert (hi - lo) / 2 == pytest.approx(3.182446 * se, rel=1e-5)  # t(0.975, 3 df)


def test_claim_sentences_name_a_kind_only_when_both_of_its_models_agree():
    from lmgeometry.report.claims import claim_sentences

    kinds = {"e1": "encoder", "e2": "encoder", "d1": "decoder", "d2": "decoder"}
    frame = claims_frame([
        _claim("e1"), _claim("e2"), _claim("d1"),
        _claim("d2", lo=-0.1, value=0.0, hi=0.2),
        Claim(seed="000", claim="anisotropy rises", model="d1", statistic="s", value=0.3,
              ci_low=0.2, ci_high=0.4, threshold=0.5, direction="above", rule="r",
              control="first word excluded"),
    ])
    (sentence,) = claim_sentences(frame, kinds)
    assert sentence == ("Anisotropy rises: holds for both encoders (e1, e2) and holds for d1; "
                        "inconclusive for d2. With the first word excluded: does not hold for d1.")
    frame = claims_frame([_claim("d1", value=0.0, lo=-0.2, hi=0.05),
                          _claim("d2", value=0.0, lo=-0.2, hi=0.05)])
    assert claim_sentences(frame, kinds) == [
        "Anisotropy rises: does not hold for either decoder (d1, d2)."]


def test_bootstrap_spearman_and_percentile_interval():
    import numpy as np

    from lmgeometry.measures.stats import bootstrap_spearman, percentile_interval, poisson_weights

    x = np.arange(200.0)
    rho, lo, hi = bootstrap_spearman(x, x ** 3, n_boot=100, rng=0)  # monotone: rho 1
    assert rho == pytest.approx(1.0) and lo == pytest.approx(1.0)
    noise = np.random.default_rng(1).normal(size=(2, 300))
    rho, lo, hi = bootstrap_spearman(*noise, n_boot=300, rng=1)
    assert lo < rho < hi and lo < 0 < hi
    assert percentile_interval([0.4, 0.5, 0.6], 0.9) == (pytest.approx(0.405), 0.9)  # widened
    w = poisson_weights(2000, 50, np.random.default_rng(2))
    assert w.shape == (2000, 50) and abs(w.mean() - 1) < 0.02 and abs(w.var() - 1) < 0.05


def test_collect_claims_and_kind_verdicts(tmp_path):
    from lmgeometry.claims import kind_verdicts
    from lmgeometry.report.claims import collect_claims
    from lmgeometry.report.results import save_results

    good = claims_frame([_claim("enc-a"), _claim("enc-b"), _claim("dec-a"),
                         _claim("dec-b", lo=-0.2, value=0.0, hi=0.05)])
    save_results(tmp_path / "03_x.results.json", {"claims": good})
    save_results(tmp_path / "01_y.results.json", {"claims": [{"claim": "old", "holds": True}]})
    save_results(tmp_path / "90_scorecard.results.json", {"claims": good})
    found = collect_claims(tmp_path, exclude=["90_scorecard.results.json"])
    assert found["chapter"].unique().tolist() == ["03_x"]  # old-style claims are skipped
    assert len(found) == 4
    kinds = {"enc-a": "encoder", "enc-b": "encoder", "dec-a": "decoder", "dec-b": "decoder"}
    table = kind_verdicts(found, kinds)
    assert table.loc[0, "encoder"] == "holds" and table.loc[0, "decoder"] == "mixed"
    # one model of a kind cannot speak for the kind
    table = kind_verdicts(found[found["model"] != "enc-b"], kinds)
    assert table.loc[0, "encoder"] == "one model: holds"
    assert collect_claims(tmp_path / "none").empty
    # a reader reads only the chapters that run before it
    save_results(tmp_path / "99_about.results.json", {"claims": good})
    assert collect_claims(tmp_path, before="90_scorecard.results.json")["chapter"].unique(
        ).tolist() == ["03_x"]


def _row(model, verdict_range, **kw):
    lo, hi = verdict_range
    return _claim(model, value=(lo + hi) / 2, lo=lo, hi=hi, **kw)


def test_primary_table_compares_fair_stand_ins_with_what_the_seed_reports():
    from lmgeometry.claims import primary_table, seed_summary

    kinds = {"e1": "encoder", "e2": "encoder", "d1": "decoder", "d2": "decoder"}
    frame = claims_frame([_row("e1", (0.2, 0.4)), _row("e2", (0.3, 0.5)),
                          _row("d1", (-0.3, -0.1)), _row("d2", (0.2, 0.3)),
                          _row("d1", (0.2, 0.4), control="first word excluded")])
    frame["expected"] = ["holds", "holds", "holds", "holds", "holds"]
    frame["calibration"] = [[{"seed_model": "BERT", "value": 0.5, "verdict": "holds",
                              "reported": "holds"}]] * 5
    frame.loc[frame["model"] == "d2", ["applies", "applies_reason"]] = [False, "rotary"]
    table = primary_table(frame, kinds, models=["e1", "e2", "d1", "d2"])
    rows = table.set_index("kind")
    assert rows.loc["encoder", "outcome"] == "held without a null run"
    assert rows.loc["decoder", "how it fails"] == "no null to tell"
    # d2 is no fair test: only d1 counts, and its interval is wholly on the other side
    assert rows.loc["decoder", "outcome"] == "contradicted"
    assert rows.loc["decoder", "d2"] == "not a fair test"
    assert "d2: rotary" in rows.loc["decoder", "why not testable"]
    assert rows.loc["encoder", "calibration"] == "BERT 0.5: holds"
    assert len(table) == 2  # the control row is not primary
    summary = seed_summary(table).set_index("seed")
    assert summary.loc["001", "held without a null run"] == 1
    assert summary.loc["001", "contradicted"] == 1
    frame["reproducible"] = False
    frame["reproducible_reason"] = "released numbers below the estimator's floor"
    again = primary_table(frame, kinds).set_index("kind")
    assert set(again["outcome"]) == {"not testable here"}
    frame["calibration"] = [[{"seed_model": "BERT", "value": 0.05, "verdict": "does not hold",
                              "reported": "holds"}]] * 5
    assert primary_table(frame, kinds)["calibration"].str.endswith(
        "[rule fails the seed]").all()


def test_a_new_results_file_makes_the_gathering_chapter_stale(tmp_path, monkeypatch) -> None:
    """The scorecard gathers every results file: one that appears is an input change."""
    from lmgeometry import trace
    from lmgeometry.report import cache, results
    from lmgeometry.report.claims import collect_claims

    book = tmp_path / "book"
    row = {c: None for c in CLAIM_COLUMNS}
    for name in ("01_a", "02_b"):
        results.save_results(book / f"{name}.results.json", {"claims": [row]})
    log = tmp_path / "trace.jsonl"
    monkeypatch.setenv(trace.TRACE_ENV, str(log))
    found = collect_claims(book, before="90_scorecard.results.json")
    monkeypatch.delenv(trace.TRACE_ENV)
    assert sorted(found["chapter"]) == ["01_a", "02_b"]
    recorded = {"inputs": cache.input_records(trace.read_events(log), book)}
    assert cache._input_reasons(recorded, book) == []
    results.save_results(book / "99_later.results.json", {"claims": []})  # runs after it
    assert cache._input_reasons(recorded, book) == []
    results.save_results(book / "09_new.results.json", {"claims": [row]})
    reasons = cache._input_reasons(recorded, book)
    assert len(reasons) == 1 and "appeared or went" in reasons[0]
    (book / "09_new.results.json").unlink()
    (book / "02_b.results.json").unlink()
    assert any("appeared or went" in r for r in cache._input_reasons(recorded, book))


def _grid_row(model, claim, statistic, value, lo, hi, **kw):
    return Claim(seed="000", claim=claim, model=model, statistic=statistic, value=value,
                 ci_low=lo, ci_high=hi, threshold=0.1, direction="above", rule="r",
                 published="a long published sentence", **kw)


def _grid_claims():
    rows = [
        _grid_row("enc", "no clusters", "sil [corrected estimators]", value=0.2,
                  lo=0.15, hi=0.3, figure="silhouette"),
        _grid_row("enc", "no clusters", "sil [ethayarajh2019 estimators]",
               value=0.05, lo=0.0, hi=0.1, figure="silhouette"),
        _grid_row("dec", "no clusters", "sil [corrected estimators]", value=0.01,
               lo=-0.1, hi=0.05, figure="silhouette"),
        _grid_row("dec", "no clusters", "sil [ethayarajh2019 estimators]",
               value=0.5, lo=0.4, hi=0.6, figure="silhouette"),
        _grid_row("dec", "no clusters", "sil [corrected estimators]", value=0.3,
               lo=0.2, hi=0.4, control="first word excluded", figure="silhouette"),
        _grid_row("dec", "beyond the paper: <b>bold</b>", "s", value=0.3, lo=0.2,
               hi=0.4, figure="fig-ch03-x"),
    ]
    return claims_frame(rows)


def test_verdict_grid_rows_tell_statistics_apart_and_leave_out_published():
    from lmgeometry.report.claims import verdict_grid

    grid = verdict_grid(_grid_claims(), ["dec", "enc"])
    assert list(grid.columns) == ["claim", "test", "control", "rule", "dec", "enc", "figure",
                                  "statistic"]
    assert grid["test"].tolist() == ["corrected estimators", "Ethayarajh's estimators", "", ""]
    assert grid["control"].tolist() == ["none", "none", "first word excluded", "none"]
    assert grid.loc[0, "dec"] == "does not hold: 0.01 [-0.10, 0.05]"
    assert grid.loc[0, "enc"] == "holds: 0.20 [0.15, 0.30]"
    assert grid.loc[2, "enc"] == ""  # no such row for the encoder
    assert grid.loc[0, "rule"] == "above 0.1"
    assert grid.loc[0, "statistic"] == "sil [corrected estimators]"  # dec, the first column
    assert verdict_grid(_grid_claims().iloc[:0]).empty


def test_show_verdict_grid_links_colours_and_drops_constant_columns(monkeypatch):
    from lmgeometry.report import claims as claim_tables
    from lmgeometry.report import figures

    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw=False: shown.append(
        obj if raw else obj.data))
    figures.reset_numbering()
    figures.show(__import__("plotly.graph_objects").graph_objects.Figure(), "silhouette")
    frame = _grid_claims()
    frame.loc[frame.index[-1], "applies"] = False
    claim_tables.show_verdict_grid(frame[frame["control"] == "none"], ["enc", "dec"])
    page = shown[-1]
    assert 'id="verdicts"' in page and "a long published sentence" not in page
    headers = re.findall(r"<th>([^<]*)</th>", page)
    assert headers == ["claim", "test", "rule", "enc", "dec", "evidence"]  # no control column
    assert f'<a href="#{figures.figure_anchor("silhouette")}">Figure 1</a>' in page
    assert '<a href="#fig-ch03-x">section</a>' in page
    assert '<td class="txt lmg-holds">holds: 0.20 [0.15, 0.30]</td>' in page
    assert '<td class="txt lmg-unfair">not a fair test</td>' in page
    assert "&lt;b&gt;bold&lt;/b&gt;" in page and "<b>bold</b>" not in page


def test_findings_box_is_generated_from_the_claims_and_escaped():
    from lmgeometry.report.claims import findings_box

    frame = _grid_claims()
    box = findings_box(frame, {"enc": "encoder", "dec": "<decoder>"}, question="Q?",
                       caveat="C.", models=["enc", "dec"])
    assert box.startswith('<div class="admonition note lmg-findings">')
    assert "<p><b>Question.</b> Q?</p>" in box
    assert '<p class="lmg-caveat"><b>Main caveat.</b> C.</p>' in box
    # the answer stays open; the per-model tallies are folded under it
    assert box.index("The verdicts, from this run") < box.index(
        "<details><summary><b>Every verdict, per model</b> (2 models)</summary>")
    # a plain-English answer, when given, comes first
    said = findings_box(frame, question="Q?", answer="Yes: both decoders split.")
    assert said.index('<p class="lmg-answer"><b>Answer.</b> Yes: both decoders split.</p>') < \
        said.index("The verdicts, from this run")
    assert box.index("<details>") < box.index("<b>enc</b> (encoder)") < box.index("</details>")
    assert ("\u201cno clusters\u201d <span class=\"lmg-stat\">(the numbers: sil)</span>: "
            "holds for enc (corrected estimators 0.20 [0.15, 0.30]) and dec (Ethayarajh&#x27;s "
            "estimators 0.50 [0.40, 0.60]); inconclusive for enc "
            "(Ethayarajh&#x27;s estimators 0.05 [0.00, 0.10]); does not hold for dec (corrected "
            "estimators 0.01 [-0.10, 0.05]).") in box
    assert "<b>enc</b> (encoder): 2 tests of the seed's claims: 1 holds, 1 inconclusive." in box
    assert ("<b>dec</b> (&lt;decoder&gt;): 2 tests of the seed's claims: 1 holds, 1 does not "
            "hold; 1 test beyond the seed: 1 holds; first word excluded: 1 of 1 verdicts "
            "change.") in box
    assert '<a href="#verdicts">' in box
    assert "<decoder>" not in box
    # a holding row whose rule also holds on the model's untrained copy says so
    twin = frame.copy()
    twin.loc[(twin["model"] == "enc") & (twin["verdict"] == "holds"), "null_verdict"] = "holds"
    twin = twin.assign(null_model="untrained:enc")
    assert "0.20 [0.15, 0.30], as on an untrained copy)" in findings_box(
        twin, models=["enc"], question="Q?")
    # a null of unknown kind is not named as one
    assert "0.20 [0.15, 0.30], as on its null)" in findings_box(
        twin.assign(null_model=None), models=["enc"], question="Q?")
    # or, where the null is its statistic with the labels permuted, says that
    shuffled = twin.assign(null_model="labels permuted: enc")
    assert "0.20 [0.15, 0.30], as with the labels permuted)" in findings_box(
        shuffled, models=["enc"], question="Q?")


def test_findings_box_without_seed_claims_or_rows():
    from lmgeometry.report.claims import findings_box

    beyond = _grid_claims().iloc[[-1]]
    box = findings_box(beyond, {"dec": "decoder"}, question="Q?")
    assert "the verdict grid</a>, after the evidence):</p><p>None.</p>" in box
    assert "<b>dec</b> (decoder): 1 test beyond the seed: 1 holds." in box
    assert "Main caveat" not in box
    assert "<ul>" not in findings_box(beyond.iloc[:0], question="Q?")


def test_findings_box_counts_a_controls_rows_that_are_not_a_fair_test():
    from lmgeometry.report.claims import findings_box

    frame = _grid_claims()
    unfair = frame[frame["control"] == "none"].iloc[[0]].assign(
        control="standardised dimensions", applies=False, applies_reason="by construction")
    box = findings_box(pd.concat([frame, unfair], ignore_index=True), models=["enc", "dec"],
                       question="Q?")
    # every row of that control is unfair: no verdict to compare, the count is still stated
    assert "standardised dimensions: 1 not a fair test here" in box
    assert "first word excluded: 1 of 1 verdicts change." in box


_NUMERIC = [{"seed_model": "BERT", "value": 0.5, "verdict": "holds", "reported": "holds"}]


def _numeric(frame):
    """A claims table whose rows' rule was run on a seed model's number (a numeric tier)."""
    return frame.assign(calibration=[_NUMERIC] * len(frame))


def _nulls(*rows):
    """Null rows of untrained twins ``u:<model>`` for :func:`attach_nulls`."""
    return claims_frame([_row(f"u:{m}", r) for m, r in rows])


def test_attach_nulls_pairs_each_row_with_its_twins_same_statistic():
    from lmgeometry.claims import NULL_COLUMNS, attach_nulls

    frame = claims_frame([_row("e1", (0.2, 0.4)), _row("e1", (0.2, 0.4), statistic="other"),
                          _row("e2", (-0.3, -0.1))])
    nulls = claims_frame([_row("u:e1", (-0.1, 0.05)), _row("u:e2", (0.2, 0.3))])
    found = attach_nulls(frame, nulls, {"e1": "u:e1", "e2": "u:e2"})
    assert list(found.columns) == list(CLAIM_COLUMNS) and set(NULL_COLUMNS) <= set(found)
    first, other, fails = (found.iloc[i] for i in range(3))
    assert first["null_model"] == "u:e1" and first["null_verdict"] == "does not hold"
    assert first["null_value"] == pytest.approx(-0.025) and first["discriminates"] is True
    # a statistic the twin was not measured with has no null: nothing is guessed
    assert other["null_model"] == "" and math.isnan(other["null_value"])
    assert other["discriminates"] is None
    # a row that does not hold does not discriminate (the rule holds on its evidence, not
    # on the null, is false), whatever its null says
    assert fails["null_verdict"] == "holds" and fails["discriminates"] is False
    assert frame["null_model"].tolist() == ["", "", ""]  # the input is not changed


def test_a_rule_that_holds_on_the_untrained_twin_is_not_reproduced():
    from lmgeometry.claims import attach_nulls, primary_table, seed_summary

    kinds = {"e1": "encoder", "e2": "encoder"}
    frame = _numeric(claims_frame([_row("e1", (0.2, 0.4)), _row("e2", (0.3, 0.5))])).assign(
        expected="holds")
    both = {"e1": "u:e1", "e2": "u:e2"}

    def outcome(nulls):
        return primary_table(attach_nulls(frame, nulls, both), kinds).iloc[0]

    assert outcome(_nulls(("e1", (-0.1, 0.05)), ("e2", (0.0, 0.05))))["outcome"] == "reproduced"
    held = outcome(_nulls(("e1", (-0.1, 0.05)), ("e2", (0.2, 0.3))))
    assert held["outcome"] == "also true of an untrained model"
    assert held["e2"].endswith("; untrained: 0.25, holds")
    # one twin missing: the rule is not shown to fail its null for every stand-in
    assert outcome(_nulls(("e1", (-0.1, 0.05))))["outcome"] == "held without a null run"
    # inconclusive on the twin is not "holds": the rule still separates nothing there
    assert outcome(_nulls(("e1", (-0.1, 0.05)), ("e2", (0.0, 0.3))))["outcome"] == "reproduced"
    summary = seed_summary(primary_table(attach_nulls(frame, _nulls(
        ("e1", (0.2, 0.3)), ("e2", (0.2, 0.3))), both), kinds))
    assert summary.iloc[0]["also true of an untrained model"] == 1


def test_a_rule_that_holds_with_the_labels_permuted_is_not_reproduced():
    from lmgeometry.claims import AGREEING, attach_nulls, primary_table, seed_summary
    from lmgeometry.claims.record import is_permuted, permuted_model

    kinds = {"e1": "encoder", "e2": "encoder"}
    frame = _numeric(claims_frame([_row("e1", (0.2, 0.4)), _row("e2", (0.3, 0.5))])).assign(
        expected="holds")
    named = {m: permuted_model(m) for m in kinds}
    assert named["e1"] == "labels permuted: e1" and is_permuted(named["e1"])

    def permuted(*rows):
        return claims_frame([_row(permuted_model(m), r) for m, r in rows])

    def outcome(nulls, null_of=named):
        return primary_table(attach_nulls(frame, nulls, null_of), kinds).iloc[0]

    failed = outcome(permuted(("e1", (-0.1, 0.05)), ("e2", (0.0, 0.05))))
    assert failed["outcome"] == "reproduced" and failed["fails its null"] == "yes"
    assert failed["e1"].endswith("; labels permuted: -0.03, does not hold")
    held = outcome(permuted(("e1", (-0.1, 0.05)), ("e2", (0.2, 0.3))))
    assert held["outcome"] == "also true with labels permuted"
    assert held["outcome"] in AGREEING and held["fails its null"] == "no"
    # where an untrained twin's rule holds too, the untrained model is named
    mixed = pd.concat([permuted(("e1", (0.2, 0.3))), _nulls(("e2", (0.2, 0.3)))])
    assert outcome(mixed, {"e1": named["e1"], "e2": "u:e2"})["outcome"] == \
        "also true of an untrained model"
    summary = seed_summary(primary_table(attach_nulls(frame, permuted(
        ("e1", (0.2, 0.3)), ("e2", (0.2, 0.3))), named), kinds))
    assert summary.iloc[0]["also true with labels permuted"] == 1
    assert summary.iloc[0]["also true of an untrained model"] == 0


def test_nulls_of_two_kinds_attach_in_turn_and_name_their_outcome():
    """A depth claim's null is its layers in random orders, a labelled claim's the labels
    permuted: attached one after the other, each row keeps its own; a depth rule that holds
    on shuffled layers too is said so (it is met without any order of depth)."""
    from lmgeometry.claims import AGREEING, attach_nulls, primary_table, seed_summary
    from lmgeometry.claims.record import null_kind, permuted_model, shuffled_model

    kinds = {"e1": "encoder"}
    frame = _numeric(claims_frame([_row("e1", (0.2, 0.4)),
                                   _row("e1", (0.2, 0.4), claim="a trend over layers")])).assign(
        expected="holds")
    permuted = claims_frame([_row(permuted_model("e1"), (-0.1, 0.05))])
    shuffled = claims_frame([_row(shuffled_model("e1"), (-0.6, 0.6),
                                  claim="a trend over layers")])
    both = attach_nulls(attach_nulls(frame, permuted, {"e1": permuted_model("e1")}),
                        shuffled, {"e1": shuffled_model("e1")})
    assert [null_kind(m) for m in both["null_model"]] == ["labels permuted", "layers shuffled"]
    assert both["discriminates"].tolist() == [True, True]
    table = primary_table(both, kinds).set_index("claim")
    assert table.loc["a trend over layers", "e1"].endswith("; layers shuffled: 0.00, "
                                                          "inconclusive")
    assert (table["outcome"] == "reproduced").all()
    # a shuffled null that holds too: the rule shows no order of depth
    held = claims_frame([_row(shuffled_model("e1"), (0.2, 0.4), claim="a trend over layers")])
    again = primary_table(attach_nulls(frame, held, {"e1": shuffled_model("e1")}), kinds)
    row = again.set_index("claim").loc["a trend over layers"]
    assert row["outcome"] == "also true with the layers shuffled" and row["outcome"] in AGREEING
    assert seed_summary(again).iloc[0]["also true with the layers shuffled"] == 1


@pytest.mark.parametrize(("interval", "null", "expected"), [
    ((-0.3, -0.2), (0.0, 0.2), "opposite"),   # wholly below the twin: the other way
    ((0.02, 0.08), (-0.1, 0.0), "weaker"),    # the claimed side of the twin, short of 0.1
    ((-0.1, 0.05), (-0.05, 0.05), "weaker"),  # no different from the twin: not the opposite
])
def test_a_contradiction_is_told_opposite_from_weaker_by_the_null(interval, null, expected):
    from lmgeometry.claims import attach_nulls, primary_table, seed_summary, shortfall

    frame = _numeric(claims_frame([_row("d1", interval)])).assign(expected="holds")
    found = attach_nulls(frame, _nulls(("d1", null)), {"d1": "u:d1"})
    assert shortfall(found.iloc[0]) == expected
    table = primary_table(found, {"d1": "decoder"})
    assert table.iloc[0]["outcome"] == "contradicted"
    assert table.iloc[0]["how it fails"] == expected
    assert seed_summary(table).iloc[0][f"of which {expected}"] == 1


def test_numeric_and_quoted_rules_are_counted_apart_and_each_row_shows_its_units():
    from lmgeometry.claims import primary_table, seed_summary, tier_totals

    quoted = [{"seed_model": "GPT-2", "value": None, "verdict": None, "reported": "holds"}]
    kinds = {"e1": "encoder", "e2": "encoder"}
    numeric_rows = [_row("e1", (0.2, 0.4)), _row("e2", (0.3, 0.5)),
                    _row("e1", (-0.3, -0.2), control="first word excluded")]
    words_rows = [_row(m, (0.2, 0.4), claim="words only") for m in ("e1", "e2")]
    frame = claims_frame([*numeric_rows, *words_rows]).assign(expected="holds")
    frame["calibration"] = [_NUMERIC] * 3 + [quoted] * 2
    table = primary_table(frame, kinds).set_index("claim")
    assert table.loc["anisotropy rises", "calibration kind"] == "numeric"
    assert table.loc["words only", "calibration kind"] == "quoted"
    assert table.loc["anisotropy rises", "fair stand-ins"] == 2
    # the control flips e1's verdict: the row says which control
    assert table.loc["anisotropy rises", "controls that flip it"] == "first word excluded"
    assert table.loc["words only", "controls that flip it"] == ""
    assert table.loc["anisotropy rises", "fails its null"] == "no null run"
    summary = seed_summary(table.reset_index())
    assert summary[["calibration", "claims", "rows"]].values.tolist() == [
        ["numeric", 1, 1], ["quoted", 1, 1]]
    totals = tier_totals(summary)
    assert totals["numeric"]["held without a null run"] == 1
    assert totals["quoted"]["held without a null run"] == 1  # never added to the numeric tier

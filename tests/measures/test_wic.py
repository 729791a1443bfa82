"""The Word-in-Context threshold: known answers on separable, tied and repeated similarities."""

from __future__ import annotations

import math

import pytest

from lmgeometry.measures.wic import evaluate_wic, fit_wic_threshold, wic_accuracy


def test_wic_threshold_on_separable_data():
    sims = [0.3, 0.1, 0.8, 0.2, 0.6]
    labels = ["F", "F", "T", "F", "T"]
    t = fit_wic_threshold(sims, labels)
    assert 0.3 < t < 0.6
    assert t == pytest.approx(0.45)  # the midpoint between the classes
    assert wic_accuracy(sims, labels, t) == 1.0


def test_wic_threshold_ties_go_to_smallest_candidate():
    sims = [0.1, 0.2, 0.3, 0.4, 0.5]
    labels = [True, False, True, False, True]
    # training accuracy of the candidates -0.9, .15, .25, .35, .45, 1.5: 3, 2, 3, 2, 3, 2 of 5
    t = fit_wic_threshold(sims, labels)
    assert t == pytest.approx(0.1 - 1.0)
    assert wic_accuracy(sims, labels, t) == pytest.approx(0.6)


def test_wic_threshold_handles_repeated_values_and_numeric_labels():
    sims = [0.5, 0.5, 0.5, 0.9]
    labels = [0, 0, 1, 1]
    # candidates: -0.5 (acc 2/4), 0.7 (acc 3/4), 1.9 (acc 2/4)
    assert fit_wic_threshold(sims, labels) == pytest.approx(0.7)


def test_evaluate_wic_reports_every_split():
    out = evaluate_wic(
        [0.1, 0.2, 0.7, 0.9], [False, False, True, True],
        [0.0, 0.5, 0.6], ["F", "T", "F"],
        [0.95, 0.05], [1, 0],
    )
    assert out["threshold"] == pytest.approx(0.45)
    assert out["train_accuracy"] == 1.0
    assert out["dev_accuracy"] == pytest.approx(2 / 3)
    assert out["test_accuracy"] == 1.0
    assert (out["n_train"], out["n_dev"], out["n_test"]) == (4, 3, 2)
    # training labels are balanced: the majority label is True (>= 0.5)
    assert out["majority_dev"] == pytest.approx(1 / 3)
    no_test = evaluate_wic([0.1, 0.9], [0, 1], [0.2], [0])
    assert math.isnan(no_test["test_accuracy"]) and no_test["n_test"] == 0


def test_wic_labels_are_validated():
    with pytest.raises(ValueError):
        wic_accuracy([0.1], ["maybe"], 0.0)
    with pytest.raises(ValueError):
        fit_wic_threshold([0.1, 0.2], [2, 0])

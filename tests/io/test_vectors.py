"""Tests of the word-level package resources (word frequencies)."""

from __future__ import annotations

from lmgeometry.io import vectors


def test_word_frequency():
    the, bank = vectors.word_frequency("the"), vectors.word_frequency("bank")
    assert 0.01 < the < 0.1
    assert 0 < bank < the
    assert vectors.word_frequency("qwzxvqwzxv") == 0.0

"""The seeds' reference numbers on word benchmarks, as published.

* :data:`ETHAYARAJH2019_TABLE1` -- Ethayarajh (2019), Table 1: GloVe, FastText and the PC1
  static embeddings of ELMo, BERT and GPT-2 on nine word-vector benchmarks (seed 001);
* :data:`BIS2021_WORDSIM` -- Biš, Podkorytov and Liu (2021), Tables 2 and 3: word similarity on
  a model's input embedding matrix before and after centring, scaled centring and removing the
  top PCs (seed 004);
* :func:`reference_frame` -- any of them as a long frame.

References
----------
Ethayarajh, K. (2019). How contextual are contextualized word representations? EMNLP.
Biš, D., Podkorytov, M., Liu, X. (2021). Too much in common: shifting of embeddings in
transformer language models and its implications. NAACL.
"""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd

__all__ = [
    "BIS2021_MODELS",
    "BIS2021_TABLE3_COLUMNS",
    "BIS2021_WORDSIM",
    "ETHAYARAJH2019_COLUMNS",
    "ETHAYARAJH2019_TABLE1",
    "reference_frame",
]


ETHAYARAJH2019_COLUMNS: dict[str, str] = {
    "SimLex999": "simlex999",
    "MEN": "men",
    "WS353": "ws353",
    "RW": "rw",
    "Google": "google",
    "MSR": "msr",
    "SemEval2012(2)": "semeval2012",
    "BLESS": "bless",
    "AP": "ap",
}
"""Table 1 column headers of Ethayarajh (2019) -> the benchmark names used here."""


_E19_ROWS: dict[str, tuple[float, ...]] = {
    # Transcribed from seed 001 (Ethayarajh 2019, Table 1); the text table is complete (12 rows
    # x 9 columns). The paper marks the best result per column in bold; that is not kept.
    "GloVe": (0.194, 0.216, 0.339, 0.127, 0.189, 0.312, 0.097, 0.390, 0.308),
    "FastText": (0.239, 0.239, 0.432, 0.176, 0.203, 0.289, 0.104, 0.375, 0.291),
    "ELMo, Layer 1": (0.276, 0.167, 0.317, 0.148, 0.170, 0.326, 0.114, 0.410, 0.308),
    "ELMo, Layer 2": (0.215, 0.151, 0.272, 0.133, 0.130, 0.268, 0.132, 0.395, 0.318),
    "BERT, Layer 1": (0.315, 0.200, 0.394, 0.208, 0.236, 0.389, 0.166, 0.365, 0.321),
    "BERT, Layer 2": (0.320, 0.166, 0.383, 0.188, 0.230, 0.385, 0.149, 0.365, 0.321),
    "BERT, Layer 11": (0.221, 0.076, 0.319, 0.135, 0.175, 0.290, 0.149, 0.370, 0.289),
    "BERT, Layer 12": (0.233, 0.082, 0.325, 0.144, 0.184, 0.307, 0.144, 0.360, 0.294),
    "GPT-2, Layer 1": (0.174, 0.012, 0.176, 0.183, 0.052, 0.081, 0.033, 0.220, 0.184),
    "GPT-2, Layer 2": (0.135, 0.036, 0.171, 0.180, 0.045, 0.062, 0.021, 0.245, 0.184),
    "GPT-2, Layer 11": (0.126, 0.034, 0.165, 0.182, 0.031, 0.038, 0.045, 0.270, 0.189),
    "GPT-2, Layer 12": (0.140, -0.009, 0.113, 0.163, 0.020, 0.021, 0.014, 0.225, 0.172),
}


ETHAYARAJH2019_TABLE1: dict[str, dict[str, float]] = {
    row: dict(zip(ETHAYARAJH2019_COLUMNS.values(), values, strict=True))
    for row, values in _E19_ROWS.items()
}
"""Ethayarajh (2019), Table 1: static embeddings on word-vector benchmarks.

Rows are GloVe, FastText and the *PC static embeddings* of ELMo, BERT and GPT-2 (the first
principal component of a word's contextualised representations in one layer; layers 3-10 were
left out of the paper's table). Columns (see :data:`ETHAYARAJH2019_COLUMNS`): Spearman
correlation for SimLex-999, MEN, WS353, RW; 3CosAdd accuracy for Google and MSR analogies;
the SemEval-2012 task 2 score of the Word Embeddings Benchmarks package; cluster purity for
BLESS and AP. Evaluated with the Word Embeddings Benchmarks package (paper's footnote 2), i.e.
the ``web`` protocol here.
"""


BIS2021_MODELS: tuple[str, ...] = (
    "BERT-base-cased",
    "BERT-large-cased",
    "RoBERTa-base",
    "RoBERTa-large",
    "GPT-2-small",
    "GPT-2-medium",
)


_BIS_T2: dict[str, dict[str, tuple[float, float]]] = {
    # Seed 004 (Biš et al. 2021), Table 2: (cosine, inner product); Pearson r x 100 averaged
    # over the five Table 3 benchmarks (the caption lists four data sets, but the averages
    # equal the mean of all five Table 3 columns, WordSim-Sim and WordSim-Rel counted apart).
    "BERT-base-cased": {
        "original": (62.29, 60.91),
        "centered": (60.44, 60.08),
        "centered_scaled": (62.32, 62.41),
        "post_process": (65.57, 66.10),
    },
    "BERT-large-cased": {
        "original": (61.90, 59.42),
        "centered": (58.66, 57.99),
        "centered_scaled": (61.18, 61.05),
        "post_process": (65.72, 65.89),
    },
    "RoBERTa-base": {
        "original": (66.81, 66.01),
        "centered": (66.85, 67.03),
        "centered_scaled": (67.02, 66.95),
        "post_process": (66.87, 67.15),
    },
    "RoBERTa-large": {
        "original": (61.29, 44.79),
        "centered": (64.09, 63.78),
        "centered_scaled": (65.49, 64.16),
        "post_process": (64.38, 65.17),
    },
    "GPT-2-small": {
        "original": (64.71, 59.45),
        "centered": (64.95, 66.04),
        "centered_scaled": (66.57, 67.32),
        "post_process": (67.85, 67.67),
    },
    "GPT-2-medium": {
        "original": (65.53, 59.20),
        "centered": (66.83, 67.90),
        "centered_scaled": (67.95, 68.22),
        "post_process": (68.05, 67.81),
    },
}


BIS2021_TABLE3_COLUMNS: dict[str, str] = {
    "MEN": "men",
    "RW": "rw",
    "Simlex-999": "simlex999",
    "WordSim-Sim": "ws353_sim",
    "WordSim-Rel": "ws353_rel",
}
"""Table 3 column headers of Biš et al. (2021) -> the benchmark names used here."""


_BIS_T3: dict[str, dict[str, tuple[tuple[float, float], ...]]] = {
    # Seed 004, Table 3 (appendix C): per benchmark (inner product, cosine) -- the table's
    # header is "<.,.> / cos". The paper spells the BERT rows "Bert-"; the model names are
    # normalised to Table 2's. Table 3 has no "Centered" rows.
    "BERT-base-cased": {
        "original": (
            (65.53, 67.07), (61.22, 63.72), (52.52, 52.37), (75.03, 75.57), (50.27, 52.70),
        ),
        "centered_scaled": (
            (69.32, 68.36), (63.57, 63.94), (47.34, 47.96), (78.58, 77.36), (53.23, 53.96),
        ),
        "post_process": (
            (72.20, 70.91), (67.71, 68.20), (53.60, 52.53), (79.38, 78.15), (57.63, 58.04),
        ),
    },
    "BERT-large-cased": {
        "original": (
            (64.64, 67.20), (58.94, 61.89), (52.68, 52.91), (73.44, 76.32), (47.40, 51.16),
        ),
        "centered_scaled": (
            (68.63, 67.69), (61.67, 62.19), (48.66, 48.53), (77.47, 77.45), (48.81, 50.02),
        ),
        "post_process": (
            (72.12, 71.07), (67.22, 68.07), (55.41, 53.77), (78.80, 78.88), (55.90, 56.79),
        ),
    },
    "GPT-2-small": {
        "original": (
            (65.55, 71.16), (58.08, 63.99), (50.43, 51.45), (72.98, 78.32), (50.19, 58.63),
        ),
        "centered_scaled": (
            (75.55, 74.10), (64.05, 64.94), (51.60, 50.36), (81.41, 80.61), (63.98, 62.86),
        ),
        "post_process": (
            (76.00, 75.34), (65.30, 66.56), (53.74, 53.15), (80.70, 80.79), (62.62, 63.40),
        ),
    },
    "GPT-2-medium": {
        "original": (
            (65.01, 71.55), (58.55, 65.22), (51.13, 52.51), (72.67, 78.48), (48.65, 59.90),
        ),
        "centered_scaled": (
            (76.10, 75.02), (64.14, 65.34), (54.22, 53.30), (80.85, 80.56), (65.79, 65.51),
        ),
        "post_process": (
            (75.92, 75.25), (64.80, 66.11), (54.65, 54.19), (79.99, 80.25), (63.71, 64.43),
        ),
    },
    "RoBERTa-base": {
        "original": (
            (72.83, 72.70), (64.72, 66.61), (55.17, 54.84), (78.00, 78.62), (59.31, 61.27),
        ),
        "centered_scaled": (
            (74.18, 73.33), (65.38, 66.35), (54.16, 53.77), (79.35, 79.10), (61.66, 62.53),
        ),
        "post_process": (
            (74.22, 73.13), (65.45, 66.11), (53.87, 53.35), (79.64, 79.08), (62.58, 62.70),
        ),
    },
    "RoBERTa-large": {
        "original": (
            (42.92, 63.44), (49.72, 64.31), (45.75, 54.54), (58.09, 73.46), (27.47, 50.69),
        ),
        "centered_scaled": (
            (70.55, 70.95), (63.09, 65.63), (55.24, 54.18), (75.72, 77.34), (56.19, 59.35),
        ),
        "post_process": (
            (72.01, 70.55), (63.11, 63.64), (52.48, 50.93), (77.87, 77.09), (60.36, 59.71),
        ),
    },
}


BIS2021_WORDSIM: dict[str, Any] = {
    "table2": {
        model: {
            variant: {"cosine": cos, "dot": dot} for variant, (cos, dot) in variants.items()
        }
        for model, variants in _BIS_T2.items()
    },
    "table3": {
        model: {
            variant: {
                bench: {"dot": dot, "cosine": cos}
                for bench, (dot, cos) in zip(BIS2021_TABLE3_COLUMNS.values(), cells, strict=True)
            }
            for variant, cells in variants.items()
        }
        for model, variants in _BIS_T3.items()
    },
}
"""Biš et al. (2021), Tables 2 and 3: word similarity on a model's input embedding matrix.

Values are Pearson's r x 100 between the human score and the cosine (``"cosine"``) or inner
product (``"dot"``) of two words' embedding rows, pairs containing sub-word units filtered out
(so the pair sets differ between models). ``table2[model][variant]`` is the average over the
five benchmarks; ``table3[model][variant][benchmark]`` the per-benchmark value (benchmarks
``men``, ``rw``, ``simlex999``, ``ws353_sim``, ``ws353_rel``). Variants: ``original``,
``centered`` (mean subtracted; Table 2 only), ``centered_scaled`` (``e(w) - ||e(w)|| mu_hat``
with ``mu_hat`` the mean of the unit-normalised rows) and ``post_process`` (their eq. 11:
centre, then remove the top ``ceil(d/100)`` principal components).
"""


def reference_frame(
    name: Literal["ethayarajh2019_table1", "bis2021_table2", "bis2021_table3"],
) -> pd.DataFrame:
    """The reference numbers of one seed table as a long frame.

    Parameters
    ----------
    name
        ``"ethayarajh2019_table1"`` (columns ``embedding, benchmark, value``; see
        :data:`ETHAYARAJH2019_TABLE1`), ``"bis2021_table2"`` (``model, variant, score, value``)
        or ``"bis2021_table3"`` (``model, variant, benchmark, score, value``; see
        :data:`BIS2021_WORDSIM`).

    Returns
    -------
    pandas.DataFrame
        One row per printed number, in the paper's row order.
    """
    rows: list[dict[str, Any]] = []
    if name == "ethayarajh2019_table1":
        for emb, cells in ETHAYARAJH2019_TABLE1.items():
            rows += [{"embedding": emb, "benchmark": b, "value": v} for b, v in cells.items()]
    elif name == "bis2021_table2":
        for model, variants in BIS2021_WORDSIM["table2"].items():
            for variant, cells in variants.items():
                rows += [
                    {"model": model, "variant": variant, "score": s, "value": v}
                    for s, v in cells.items()
                ]
    elif name == "bis2021_table3":
        for model, variants in BIS2021_WORDSIM["table3"].items():
            for variant, benches in variants.items():
                for bench, cells in benches.items():
                    rows += [
                        {"model": model, "variant": variant, "benchmark": bench, "score": s,
                         "value": v}
                        for s, v in cells.items()
                    ]
    else:
        raise ValueError(f"unknown reference table {name!r}")
    return pd.DataFrame(rows)

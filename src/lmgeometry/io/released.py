"""Numbers the seed papers' authors released: Ethayarajh (2019)'s per-layer statistics
(kawine/contextual), as tables."""

from __future__ import annotations

import json
from collections.abc import Iterable

import pandas as pd

from lmgeometry.errors import DataError
from lmgeometry.io.datafiles import _check_choice, fetch

__all__ = [
    "ETHAYARAJH2019_MODELS",
    "load_ethayarajh2019",
]

#: The models whose per-layer statistics Ethayarajh (2019) released: file folder -> name.
ETHAYARAJH2019_MODELS: dict[str, str] = {"bert": "BERT", "elmo": "ELMo", "gpt2": "GPT-2"}

_E19_STATS = {
    "mean cosine similarity across words": "baseline_cosine",
    "mean cosine similarity between sentence and words": "intrasim",
    "variance explained for random words": "mev_baseline",
    "word norm mean": "word_norm_mean",
    "word norm std": "word_norm_std",
}


def _e19_layers(columns: Iterable[str]) -> dict[str, int]:
    return {c: int(c.removeprefix("layer_")) for c in columns if c.startswith("layer_")}


def load_ethayarajh2019(model: str) -> dict[str, pd.DataFrame]:
    """The per-layer numbers Ethayarajh (2019) released for one model (kawine/contextual).

    Computed by the authors' ``analyze.py`` on their STS data, with their estimators (see
    :data:`lmgeometry.measures.contextual.PRESETS`, ``"ethayarajh2019"``); raw, not adjusted
    for anisotropy. The authors' README says they are close to, not exactly, the paper's
    charts.

    Parameters
    ----------
    model : {"bert", "elmo", "gpt2"}
        BERT-base (cased, 12 layers), ELMo (2 layers), GPT-2 (small, 12 layers).

    Returns
    -------
    dict of DataFrame
        ``"layers"``: one row per layer (0 = input): ``layer``, ``baseline_cosine`` (mean
        cosine across words: the anisotropy baseline), ``intrasim`` (mean cosine between a
        sentence's mean vector and its words), ``mev_baseline`` (variance explained by the first
        direction of random words; their truncated SVD), ``word_norm_mean``, ``word_norm_std``.
        ``"self_similarity"`` and ``"variance_explained"``: long frames ``word``, ``layer``,
        ``selfsim`` / ``mev``, one row per word and layer (MEV from layer 1: the authors skip
        layer 0); about 6,900 (ELMo, GPT-2) or 8,200 (BERT) words.
    """
    _check_choice(model, ETHAYARAJH2019_MODELS, "Ethayarajh (2019) model")
    raw = json.loads(fetch(f"ethayarajh2019_{model}_embedding_space_stats").read_text())
    unknown = set(raw) - set(_E19_STATS)
    if unknown:
        raise DataError(f"ethayarajh2019 {model}: unexpected statistics {sorted(unknown)}")
    layers = pd.DataFrame({_E19_STATS[k]: {_e19_layers([c])[c]: v for c, v in per.items()}
                           for k, per in raw.items()}).rename_axis("layer").sort_index()
    layers = layers.reset_index()[["layer", *_E19_STATS.values()]]
    out = {"layers": layers}
    for stem, value in (("self_similarity", "selfsim"), ("variance_explained", "mev")):
        wide = pd.read_csv(fetch(f"ethayarajh2019_{model}_{stem}"), keep_default_na=False,
                           na_values=[""], dtype={"word": str})
        long = wide.melt(id_vars="word", var_name="layer", value_name=value)
        long["layer"] = long["layer"].map(_e19_layers(wide.columns)).astype(int)
        out[stem] = long.sort_values(["layer", "word"], kind="stable").reset_index(drop=True)
    return out

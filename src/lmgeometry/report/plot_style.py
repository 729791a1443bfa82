"""Plot style shared by the figure builders: the model palette, reader-facing labels, colour scales
and the menus' settings.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

import numpy as np

from lmgeometry.io._offline import ALIASES

__all__ = [
    "SHADOW",
    "PALETTE",
    "MODEL_ORDER",
    "COLOR_CAP_PERCENTILE",
    "LABELS",
    "MODEL_NAMES",
    "display_names",
    "value_label",
    "VALUE_LABELS",
    "plain",
    "label",
    "model_color",
    "scene_axis_titles",
    "GRAY_CONTEXT",
    "SELECT_MENU",
    "color_bounds",
]


SHADOW = "rgba(160,160,160,0.25)"


#: Kelly's (1965) colours of maximum contrast (white and black left out): 20 categories
#: that stay distinct from each other and from the gray shadow.
PALETTE = ["#875692", "#F38400", "#0067A5", "#BE0032", "#008856", "#F3C300", "#A1CAF1",
           "#E68FAC", "#604E97", "#882D17", "#8DB600", "#F99379", "#C2B280", "#654522",
           "#E25822", "#2B3D26", "#B3446C", "#DCD300", "#848482", "#F6A600"]


#: The registry's models (the offline aliases) in their fixed order: model ``i`` of it is drawn
#: in ``PALETTE[i]`` in every figure (:func:`model_color`).
MODEL_ORDER: tuple[str, ...] = tuple(ALIASES)


#: Continuous colour scales end at this percentile of the values: a skewed attribute such as
#: the position in the sentence would otherwise put most points in one end of the scale.
COLOR_CAP_PERCENTILE = 95.0


#: Reader-facing names of the measure and column names that reach legends and axes.
LABELS = {
    "upos": "part of speech (UPOS)",
    "selfsim": "SelfSim",
    "intrasim": "IntraSim",
    "selfsim_adj": "SelfSim, anisotropy-adjusted",
    "intrasim_adj": "IntraSim, anisotropy-adjusted",
    "mev": "MEV",
    "sigma_1": "σ₁",
    "sigma_2": "σ₂",
    "sigma_3": "σ₃",
    # chapter 1's per-layer and cluster tables
    "position_lead": "lead of position in variance explained (ω²)",
    "position0_share": "share of first words",
    # chapter 4's Table 1: the isotropy of W (Biš et al. 2021)
    "isotropy_raw": "I(W)",
    "isotropy_centered": "I(W), centred",
    "isotropy_top_pcs_removed": "I(W), top PCs removed (eq. 11)",
    "isotropy_top_pcs_removed_original": "I(W), top PCs removed (Mu & Viswanath)",
    "top_eigvec_mean_cosine": "|cos(top eigenvector, mean row)|",
    "norm_count_spearman": "rank correlation of row norm and count",
    "mean_vector_ratio": "norm of the mean row / mean norm",
    "mean_cosine_centered": "mean cosine, centred",
    "n_rows": "rows",
    "isoscore": "IsoScore",
    # chapter 6's layer table
    "threshold_one_class": "threshold answers one class",
    # claims tables
    "ci_low": "95% interval, low",
    "ci_high": "95% interval, high",
    # the estimator presets of chapter 3 (seed 001)
    "ethayarajh2019": "Ethayarajh's estimators",
    "corrected": "corrected estimators",
    # the decoders' control: "none" is the seed's protocol, every word kept
    "none": "all words",
}


#: Reader-facing names of the models (the aliases and run names are for the command line and
#: the results files): every legend, panel title and hover label shows these.
MODEL_NAMES = {
    "minilm-l6": "MiniLM",
    "mpnet-base": "MPNet",
    "smollm2-135m": "SmolLM2",
    "gemma3-270m": "Gemma 3",
    "pair-mlm": "pair: masked LM",
    "pair-causal": "pair: causal LM",
    "pair-causal-untied": "pair: causal LM, untied",
}


#: Reader-facing names of the values of a column, where the value alone says nothing: the
#: chapters' ``control`` "none" (no control: the seed's own protocol) stood alone as a panel
#: title (issue 49).
VALUE_LABELS: dict[str, dict[str, str]] = {
    "control": {"none": "all words (the seed's protocol)"},
}


def value_label(column: str, value: object) -> str:
    """The reader-facing name of ``value`` in ``column`` (:data:`VALUE_LABELS`, else
    :func:`label`)."""
    named = VALUE_LABELS.get(column, {}).get(str(value))
    return plain(named) if named is not None else label(value)


def plain(text: object) -> str:
    """``text`` for a plotly title, legend or hover: a model alias as its display name
    (:data:`MODEL_NAMES`: ``"minilm-l6"`` -> ``"MiniLM"``), angle brackets as entities, so that
    a token such as ``<s>`` or ``<bos>`` is shown as written (plotly reads ``<s>`` as a
    strike-through tag and drops tags it does not know)."""
    text = str(text)
    return MODEL_NAMES.get(text, text).replace("<", "&lt;").replace(">", "&gt;")


_ALIAS = re.compile(r"(?<![\w/.-])(" + "|".join(
    re.escape(m) for m in sorted(MODEL_NAMES, key=len, reverse=True)) + r")(?![\w-])")


def display_names(text: str) -> str:
    """``text`` with every model alias written as its display name (:data:`MODEL_NAMES`):
    ``"smollm2-135m, layer 13"`` -> ``"SmolLM2, layer 13"``. A path or a longer name that
    contains an alias (``.../smollm2-135m/``, ``pair-causal-untied``) is left as it is.

    Examples
    --------
    >>> display_names("minilm-l6 / none; pair-causal-untied and pair-causal")
    'MiniLM / none; pair: causal LM, untied and pair: causal LM'
    """
    return _ALIAS.sub(lambda m: MODEL_NAMES[m.group(1)], str(text))


def label(name: object) -> str:
    """The reader-facing name of a measure or column: :data:`LABELS`, else underscores as
    spaces (``mean_cosine_centered`` -> ``mean cosine centered``); angle brackets escaped
    (:func:`plain`)."""
    text = str(name)
    return plain(LABELS.get(text, text.replace("_", " ")))


def _r(a: np.ndarray, decimals: int = 3) -> np.ndarray:
    return np.round(np.asarray(a, dtype=np.float64), decimals)


def _category_colors(categories: Sequence[str]) -> dict[str, str]:
    return {c: PALETTE[i % len(PALETTE)] for i, c in enumerate(categories)}


def model_color(model: object) -> str:
    """The colour of ``model`` in every figure of the book.

    Parameters
    ----------
    model
        A model's name as the chapters write it: an offline alias (``minilm-l6``), a hub id
        or a folder.

    Returns
    -------
    str
        ``PALETTE[i]`` for model ``i`` of :data:`MODEL_ORDER`; any other name gets one of the
        palette's remaining colours, chosen by a checksum of the name (the same in every
        figure and every run; two such names may share a colour).
    """
    name = str(model)
    if name in MODEL_ORDER:
        return PALETTE[MODEL_ORDER.index(name) % len(PALETTE)]
    rest = len(PALETTE) - len(MODEL_ORDER)
    return PALETTE[len(MODEL_ORDER) + zlib.crc32(name.encode("utf-8")) % rest]


def _colors_by(column: str, values: Sequence[object]) -> dict[object, str]:
    """Colour of each of ``values`` (in their order) of the column ``column``: the model
    colours (:func:`model_color`) for the ``model`` column or values that are all registry
    models, else the palette in order."""
    values = list(values)
    if column == "model" or (values and all(str(v) in MODEL_ORDER for v in values)):
        return _distinct_model_colors(values)
    return {v: PALETTE[i % len(PALETTE)] for i, v in enumerate(values)}


def _distinct_model_colors(models: Sequence[object]) -> dict[object, str]:
    """:func:`model_color` of each of ``models``, except that a model outside the registry
    whose checksum colour another model of the same figure already has takes the first
    palette colour after the registry's that none of them has (chapter 10's "pair-causal"
    and "pair-causal-untied" shared one); so a figure never draws two models alike, and
    the registry's models keep their colours."""
    colors: dict[object, str] = {}
    registry = [m for m in models if str(m) in MODEL_ORDER]
    used = {model_color(m) for m in registry}
    for m in models:
        color = model_color(m)
        if str(m) not in MODEL_ORDER and color in used:
            free = [c for c in PALETTE[len(MODEL_ORDER):] + PALETTE[:len(MODEL_ORDER)]
                    if c not in used]
            color = free[0] if free else color
        colors[m] = color
        used.add(color)
    return colors


def scene_axis_titles(title: str) -> tuple[str, str, str]:
    """Axis titles of a 3-D scatter whose figure is titled ``title``: the projection's
    components (``PC 1``... for a PCA, ``UMAP 1``... for a UMAP, ``t-SNE 1``... for a t-SNE),
    else the coordinates themselves (``x``, ``y``, ``z``).

    Parameters
    ----------
    title
        The figure's title, which names its projection.

    Returns
    -------
    tuple of str
        The titles of the x, y and z axes.
    """
    for key, prefix in (("PCA", "PC"), ("UMAP", "UMAP"), ("T-SNE", "t-SNE"), ("TSNE", "t-SNE")):
        if key in title.upper():
            return (f"{prefix} 1", f"{prefix} 2", f"{prefix} 3")
    return ("x", "y", "z")


#: ``layout.meta`` of a categorical figure whose legend click shows one category in colour
#: over the others in gray (drawn by ``_ext/lmgeometry_figures.js``) instead of hiding it.
GRAY_CONTEXT = {"legendClick": "gray-context"}


#: ``layout.meta`` of a figure whose first dropdown is drawn as a native ``<select>`` above
#: the plot (by ``_ext/lmgeometry_figures.js``): a list of dozens of words that fits any
#: screen, where plotly's own dropdown is taller than the figure.
SELECT_MENU = {"menu": "select"}


def color_bounds(values: np.ndarray, cap: float | None = COLOR_CAP_PERCENTILE
                 ) -> tuple[float, float]:
    """``(cmin, cmax)`` of a continuous colour scale: the minimum and the ``cap`` percentile
    (the maximum when ``cap`` is None). Values above ``cmax`` get the top colour."""
    values = np.asarray(values, dtype=np.float64)
    top = float(np.nanmax(values)) if cap is None else float(np.nanpercentile(values, cap))
    return float(np.nanmin(values)), top


def _continuous_marker(color: np.ndarray, color_title: str, showscale: bool, size: int,
                       scale_of: np.ndarray, cap: float | None) -> dict:
    """Marker of ``color`` on the scale of all the values ``scale_of``, cut at the ``cap``
    percentile; the colour bar says where it is cut."""
    bounds = color_bounds(scale_of, cap)
    title = color_title
    if bounds[1] < np.nanmax(np.asarray(scale_of, dtype=np.float64)):
        title = f"{color_title}<br><sup>top colour: {bounds[1]:g}<br>and more ({cap:g}th pct)</sup>"
    return {"size": size, "color": color, "colorscale": "Viridis", "cmin": bounds[0],
            "cmax": bounds[1], "showscale": showscale, "colorbar": {"title": title}}

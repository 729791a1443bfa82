"""Each chapter's frozen parameters: the same defaults as its ``analyse``, frozen, and a bad
value refused once, naming the parameter (as chapter 3's ``ContextParams``)."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from lmgeometry.chapters.common import check_whole
from lmgeometry.chapters.drift import analysis as drift
from lmgeometry.chapters.finetuning import analysis as finetuning
from lmgeometry.chapters.geometry import analysis as geometry
from lmgeometry.chapters.part_of_speech import analysis as part_of_speech
from lmgeometry.chapters.rogue_dimensions import analysis as rogue_dimensions
from lmgeometry.chapters.senses import analysis as senses
from lmgeometry.chapters.zoo import analysis as model_zoo
from lmgeometry.errors import UsageError

#: (Params class, the analyse that builds it, bad values: field -> value).
CHAPTERS = [
    (part_of_speech.PartOfSpeechParams, part_of_speech.analyse,
     {"seed": "0", "probe_words": 0, "point_budget": -3, "n_boot": 2.5}),
    (geometry.GeometryParams, geometry.analyse,
     {"seed": -1, "n_words": 0, "point_budget": 1.5, "umap_layers": -1, "n_boot": True}),
    (drift.DriftParams, drift.analyse,
     {"seed": -1, "point_budget": 0, "hidden_rows": 0, "n_bins": 0.5, "n_boot": -1}),
    (senses.SensesParams, senses.analyse,
     {"seed": -2, "n_boot": None, "n_draws": 0, "fit_rows": 0, "view_layers": -1,
      "umap_words": 1.0, "min_contexts": 0}),
    (rogue_dimensions.RogueParams, rogue_dimensions.analyse,
     {"seed": -1, "n_boot": 0.5, "ablation_k": 0, "cka_words": 0}),
    (finetuning.FinetuningParams, finetuning.analyse,
     {"seed": -1, "n_boot": -1, "n_boot_cka": 1.5, "keep": 0, "overlap_k": 0,
      "tsne_points": -1}),
    (model_zoo.ZooParams, model_zoo.analyse,
     {"seed": 0.0, "n_words": 0, "point_budget": 0, "n_boot": -1, "w_boot": None,
      "min_contexts": 1, "n_intra_sentences": 0}),
]


@pytest.mark.parametrize(("cls", "entry", "bad"), CHAPTERS,
                         ids=lambda x: getattr(x, "__name__", ""))
def test_defaults_are_analyse_s_defaults(cls, entry, bad):
    """The dataclass and the public entry cannot drift apart: same names, same defaults."""
    signature = inspect.signature(entry).parameters
    for f in dataclasses.fields(cls):
        assert signature[f.name].default == f.default, f.name


@pytest.mark.parametrize(("cls", "entry", "bad"), CHAPTERS,
                         ids=lambda x: getattr(x, "__name__", ""))
def test_the_value_is_frozen(cls, entry, bad):
    params = cls()
    with pytest.raises(dataclasses.FrozenInstanceError):
        params.seed = 1


@pytest.mark.parametrize(("cls", "name", "value"),
                         [(cls, name, value) for cls, _, bad in CHAPTERS
                          for name, value in bad.items()],
                         ids=lambda x: getattr(x, "__name__", str(x)))
def test_a_bad_value_names_its_parameter(cls, name, value):
    with pytest.raises(UsageError, match=rf"^{name}=.*: pass a whole number"):
        cls(**{name: value})


def test_the_lowest_allowed_values_pass():
    """The bounds are inclusive: no bootstrap and one word are allowed; a seed of None is
    refused, not skipped."""
    assert part_of_speech.PartOfSpeechParams(probe_words=1, point_budget=1, n_boot=0).n_boot == 0
    with pytest.raises(UsageError, match="^seed=None: pass a whole number"):
        part_of_speech.PartOfSpeechParams(seed=None)
    check_whole("k", 3, 3)
    with pytest.raises(UsageError, match="k=2: pass a whole number of 3 or more"):
        check_whole("k", 2, 3)


def test_geometry_allows_no_umap_layer():
    assert geometry.GeometryParams(n_words=1, point_budget=1, umap_layers=0,
                                   n_boot=0).umap_layers == 0


def test_drift_allows_every_row_and_checks_the_device():
    """``hidden_rows=None`` means every row; ``device`` is a name or None."""
    assert drift.DriftParams(hidden_rows=None, device=None).hidden_rows is None
    with pytest.raises(UsageError, match="^device=0: pass a device name"):
        drift.DriftParams(device=0)


def test_rogue_params_check_pooling_ks_and_ratio():
    p = rogue_dimensions.RogueParams(ablation_ks=[0, 3], sink_ratio=2)
    assert p.ablation_ks == (0, 3)
    with pytest.raises(UsageError, match="^pooling='max': pass one of auto, last, mean"):
        rogue_dimensions.RogueParams(pooling="max")
    with pytest.raises(UsageError, match="^a value of ablation_ks=-1: pass a whole number"):
        rogue_dimensions.RogueParams(ablation_ks=[0, -1])
    with pytest.raises(UsageError, match="^ablation_ks='3': pass a list"):
        rogue_dimensions.RogueParams(ablation_ks="3")
    with pytest.raises(UsageError, match="^sink_ratio=0: pass a number above 0"):
        rogue_dimensions.RogueParams(sink_ratio=0)


def test_finetuning_params_check_the_grid_and_the_share():
    assert finetuning.FinetuningParams(ablation_ks=[0, 1], ablation_share=0.5).ablation_ks == (0, 1)
    with pytest.raises(UsageError, match="^a value of ablation_ks=2.5: pass a whole number"):
        finetuning.FinetuningParams(ablation_ks=[0, 2.5])
    for share in (0, 1, 1.5, "0.4"):
        with pytest.raises(UsageError, match=r"^ablation_share=.*: pass a share between 0 and 1"):
            finetuning.FinetuningParams(ablation_share=share)

"""Sharded extraction on a local Ray cluster (lmgeometry.activations.distributed).

One local cluster of 2 CPUs serves the module; every job runs 2 actors, each loading a real
(randomly initialised) 2-layer BERT saved with the MiniLM tokenizer. The sharded entry must
hold the same bytes as the single-process entry with the same ``shard_sentences``, also
after a worker process is killed mid-job and after an interrupted job is run again.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import STORE_TEXTS as TEXTS
from conftest import save_bert

from lmgeometry.activations.distributed import SHARD_RECORD, shard_spans
from lmgeometry.activations.store import activations
from lmgeometry.cli import main
from lmgeometry.errors import SentenceTooLongError, StoreError, UsageError
from lmgeometry.io import models
from lmgeometry.io.corpus import sentences

ray = pytest.importorskip("ray")

pytestmark = [pytest.mark.data, pytest.mark.slow]

SHARD = 2  # sentences per shard: 12 shards over the 24 sentences


@pytest.fixture(scope="module")
def cluster():
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level="ERROR")
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    return str(save_bert(tmp_path_factory.mktemp("tiny-bert")))


@pytest.fixture(scope="module")
def corpus():
    return sentences(TEXTS * 3, name="ray-test")


@pytest.fixture(scope="module")
def local(tiny_folder, corpus, tmp_path_factory):
    """The local entry, on one torch thread like each worker (the same summation order)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return activations(tiny_folder, corpus, root=tmp_path_factory.mktemp("local"),
                           shard_sentences=SHARD, progress=False)
    finally:
        torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def sharded(cluster, tiny_folder, corpus, tmp_path_factory):
    return ray_entry(tiny_folder, corpus, tmp_path_factory.mktemp("ray"))


def assert_same_entry(a, b) -> None:
    """Byte-identical layers and special tokens, equal tables."""
    assert (a.n_layers, a.n_words, a.n_special) == (b.n_layers, b.n_words, b.n_special)
    for i in range(a.n_layers):
        assert np.asarray(a.layer(i, dtype=None)).tobytes() == \
            np.asarray(b.layer(i, dtype=None)).tobytes(), i
        assert a.special_layer(i).tobytes() == b.special_layer(i).tobytes(), i
    pd.testing.assert_frame_equal(a.words, b.words)
    pd.testing.assert_frame_equal(a.special, b.special)


def ray_entry(tiny_folder, corpus, root, **kwargs):
    return activations(tiny_folder, corpus, root=root, shard_sentences=SHARD, engine="ray",
                       workers=2, progress=False, **kwargs)


def test_shard_spans_tile_the_corpus():
    spans = shard_spans(7, 3)
    assert [(s.first, s.stop) for s in spans] == [(0, 3), (3, 6), (6, 7)]
    assert [s.name for s in spans] == ["shard_00000", "shard_00001", "shard_00002"]
    with pytest.raises(ValueError, match="positive"):
        shard_spans(7, 0)


def test_sharded_entry_equals_the_local_one(tiny_folder, corpus, local, sharded):
    store = sharded
    assert store.path.name == local.path.name  # the same key: either is the other's cache hit
    assert len(store.shards) == 12 and store.meta["extraction"]["engine"] == "ray"
    assert store.meta["extraction"]["workers"] == 2
    assert store.meta["counts"] == local.meta["counts"]
    assert_same_entry(local, store)
    store.verify()
    blocks = list(store.layer_blocks(-1))
    assert [start for start, _ in blocks] == [s["rows"][0] for s in store.shards]
    assert np.array_equal(np.concatenate([b for _, b in blocks]), store.layer(-1, dtype=None)[:])
    rows = np.array([5, 0, store.n_words - 1])
    assert np.array_equal(store.layer(1, rows), local.layer(1, rows))
    assert not list(store.path.parent.glob(".partial-*"))
    # a second call is a cache hit: no Ray job
    again = ray_entry(tiny_folder, corpus, store.path.parent)
    assert again.meta["created"] == store.meta["created"]


def test_onnxruntime_on_ray_writes_the_local_bytes(cluster, tiny_folder, corpus, tmp_path):
    """Each worker runs the model's exported graph on one thread, as the local path does on
    one: the sharded onnxruntime entry holds the local one's bytes under the same key; a worker
    with a GPU is refused for this backend before any job starts."""
    pytest.importorskip("onnxruntime")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        local = activations(tiny_folder, corpus, root=tmp_path / "local", shard_sentences=SHARD,
                            progress=False, backend="onnxruntime")
    finally:
        torch.set_num_threads(threads)
    store = ray_entry(tiny_folder, corpus, tmp_path / "ray", backend="onnxruntime")
    assert store.path.name == local.path.name
    assert store.meta["extraction"]["backend"] == "onnxruntime"
    assert store.meta["options"]["backend"] == "onnxruntime"
    assert_same_entry(local, store)
    store.verify()
    with pytest.raises(UsageError, match="runs on the CPU.*backend 'torch'"):
        ray_entry(tiny_folder, corpus, tmp_path / "gpu", backend="onnxruntime",
                  gpus_per_worker=1)
    assert not (tmp_path / "gpu").exists() or not any((tmp_path / "gpu").iterdir())


def _worker_pids() -> list[int]:
    """Processes of live ShardWorker actors (Ray names them ``ray::ShardWorker...``)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if cmd.startswith(b"ray::ShardWorker"):
                pids.append(int(proc.name))
    return pids


def test_a_killed_worker_is_replaced_and_its_shard_retried(cluster, tiny_folder, corpus, local,
                                                          tmp_path):
    killed: list[int] = []

    def kill_one(done: int, total: int) -> None:
        if not killed:
            pids = _worker_pids()
            assert pids, "no ShardWorker process found"
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])

    store = ray_entry(tiny_folder, corpus, tmp_path, callback=kill_one)
    assert killed
    assert_same_entry(local, store)
    store.verify()
    after = {json.loads((store.path / "shards" / s["name"] / SHARD_RECORD).read_text())["pid"]
             for s in store.shards}
    assert store.meta["extraction"]["worker_processes"] == len(after) >= 2


def test_an_interrupted_job_resumes_with_the_missing_shards(cluster, tiny_folder, corpus,
                                                            local, tmp_path):
    def stop_after_three(done: int, total: int) -> None:
        if done >= 3 * SHARD:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ray_entry(tiny_folder, corpus, tmp_path, callback=stop_after_three)
    assert not (tmp_path / local.path.name).exists()  # nothing that looks complete
    [partial] = tmp_path.glob(".partial-*")
    finished = sorted(p for p in (partial / "shards").iterdir() if not p.name.startswith("."))
    assert 3 <= len(finished) < 12
    # a damaged finished shard is extracted again, not reused
    damaged = finished[0] / "layer_01.npy"
    data = bytearray(damaged.read_bytes())
    data[-1] ^= 0xFF
    damaged.write_bytes(bytes(data))
    store = ray_entry(tiny_folder, corpus, tmp_path)
    assert store.meta["extraction"]["shards_reused"] == len(finished) - 1
    assert_same_entry(local, store)
    assert not partial.exists()


def test_a_damaged_shard_is_named_on_open(cluster, tiny_folder, corpus, tmp_path):
    store = ray_entry(tiny_folder, corpus, tmp_path)
    target = store.path / "shards" / "shard_00003" / "layer_02.npy"
    with open(target, "r+b") as handle:
        handle.truncate(target.stat().st_size - 8)
    with pytest.raises(StoreError, match=r"shards/shard_00003/layer_02.npy has .*\(truncated\)"):
        type(store)(store.path)


def test_a_worker_error_is_raised_as_itself(cluster, tiny_folder, tmp_path):
    long = sentences(["A fine sentence.", " ".join(["word"] * 80) + "."], name="too-long")
    with pytest.raises(SentenceTooLongError, match="accepts at most 64"):
        activations(tiny_folder, long, root=tmp_path, shard_sentences=1, engine="ray",
                    workers=2, progress=False)
    assert not list(tmp_path.glob("too-long-*"))


def test_ray_needs_a_spec_not_a_loaded_model(tiny_folder, corpus, tmp_path):
    loaded = models.load_model(tiny_folder, device="cpu")
    with pytest.raises(ValueError, match="pass its spec"):
        activations(loaded, corpus, root=tmp_path, engine="ray")


def test_extract_cli_on_ray(cluster, tiny_folder, tmp_path, capsys, monkeypatch):
    code = main(["extract", "--model", tiny_folder, "--corpus", "sts", "--n", "12",
                 "--engine", "ray", "--workers", "2", "--shard-sentences", "5",
                 "--out", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].endswith("3 shards")
    assert Path(out[-2]).is_dir()
    assert main(["extract", "--model", tiny_folder, "--corpus", "sts", "--n", "12",
                 "--workers", "2", "--out", str(tmp_path)]) == 2
    assert "apply to --engine ray" in capsys.readouterr().err


def test_layer_view_indexes_across_shards(local, sharded):
    store = sharded
    view, full = store.layer(2, dtype=None), local.layer(2, dtype=None)
    assert type(view).__name__ == "LayerView" and view.shape == full.shape
    assert view.dtype == full.dtype and len(view) == len(full)
    cut = store.shards[1]["rows"][0]
    mask = np.zeros(len(full), bool)
    mask[::3] = True
    for key in (slice(None), slice(cut - 2, cut + 30), slice(5, 5), slice(-4, None),
                np.array([cut, 0, len(full) - 1, cut - 1]), mask, (slice(3, cut + 1), [0, 5])):
        assert np.array_equal(view[key], full[key]), key
    assert np.array_equal(view[cut], full[cut]) and np.array_equal(view[-1, 3], full[-1, 3])
    assert np.array_equal(view[cut, 2:5], full[cut, 2:5])
    assert np.array_equal(np.asarray(view, dtype=np.float32), local.layer(2))


def test_isotropy_measures_stream_over_shards(local, sharded):
    """Read 7 rows at a time from the shards' maps: the values of the in-memory layer."""
    from lmgeometry.measures import centering, isoscore, isotropy, mean_cosines

    store = sharded
    view, X = store.layer(-1, dtype=None), local.layer(-1)
    for measure in (isotropy.isotropy_partition, isoscore.isoscore, mean_cosines.mean_cosine):
        assert measure(view, chunk_rows=7) == pytest.approx(measure(X), rel=1e-9), measure
    for transform in (centering.center, centering.scaled_center, centering.remove_top_pcs):
        np.testing.assert_allclose(transform(view, chunk_rows=7), transform(X),
                                   rtol=1e-5, atol=1e-6, err_msg=transform.__name__)


def test_context_measures_and_cka_stream_over_shards(local, sharded):
    """The word- and sentence-grouped measures and CKA, 7 rows at a time from the shards."""
    from lmgeometry.measures import contextual, similarity
    from lmgeometry.measures.unit_rows import UnitRows

    words = local.words
    memory = contextual.context_tables(local.layer(-1), words, n_intra_sentences=None)
    stream = contextual.context_tables(
        UnitRows.stream(sharded.layer(-1, dtype=None), chunk_rows=7), words,
        n_intra_sentences=None)
    assert stream.baseline_cosine == pytest.approx(memory.baseline_cosine, rel=1e-9)
    pd.testing.assert_frame_equal(stream.words, memory.words, rtol=1e-9)
    pd.testing.assert_frame_equal(stream.sentences, memory.sentences, rtol=1e-9)
    for debiased in (False, True):
        assert similarity.linear_cka(sharded.layer(1, dtype=None), sharded.layer(-1, dtype=None),
                                     debiased=debiased, chunk_rows=7) == pytest.approx(
            similarity.linear_cka(local.layer(1), local.layer(-1), debiased=debiased),
            rel=1e-6)


def _frames(result) -> dict[str, pd.DataFrame]:
    """Every table of a chapter's result (dataclass fields, one level of mappings deep)."""
    import dataclasses

    out = {}
    for f in dataclasses.fields(result):
        value = getattr(result, f.name)
        items = value.items() if isinstance(value, dict) else [("", value)]
        out |= {f"{f.name}.{k}": v for k, v in items if isinstance(v, pd.DataFrame)}
    return out


def test_chapters_run_unchanged_on_a_sharded_entry(tiny_folder, local, sharded):
    """The chapters read stores through `Store` only: on the Ray-written entry their
    analyses (chapters 1, 2, 3, 8, chapter 4's hidden states and chapter 6's task tables)
    give the tables they give on the local entry."""
    from lmgeometry.chapters.context import analysis as context_measures
    from lmgeometry.chapters.drift import analysis as drift
    from lmgeometry.chapters.geometry import analysis as geometry
    from lmgeometry.chapters.part_of_speech import analysis as part_of_speech
    from lmgeometry.chapters.rogue_dimensions import analysis as rogue_dimensions
    from lmgeometry.chapters.zoo import analysis as model_zoo

    analyses = {
        "geometry": lambda s: geometry.analyse({"tiny": s}, n_words=100, point_budget=50,
                                               umap_layers=0, n_boot=20),
        "part of speech": lambda s: part_of_speech.analyse({"tiny": s}),
        "context measures": lambda s: context_measures.analyse(
            {"tiny": s}, authors=False, glove=False, n_boot=20, min_contexts=2,
            neighbour_queries=50, min_count=2),
        "model zoo": lambda s: model_zoo.analyse({tiny_folder: s}),
    }
    for name, analyse in analyses.items():
        a, b = _frames(analyse(local)), _frames(analyse(sharded))
        assert a.keys() == b.keys() and len(a) >= 2, name
        for key in a:
            pd.testing.assert_frame_equal(a[key], b[key], obj=f"{name}: {key}")
    n_sentences = local.words["sentence_id"].nunique()
    labels = np.arange(n_sentences) % 2
    is_test = np.arange(n_sentences) % 3 == 0
    tasks = [rogue_dimensions.task_tables(s, labels, is_test, n_boot=20, ablation_ks=(0, 1, 3),
                                          ablation_k=1) for s in (local, sharded)]
    frames = [k for k, v in tasks[0].items() if isinstance(v, pd.DataFrame)]
    assert len(frames) >= 2
    for key in frames:
        pd.testing.assert_frame_equal(tasks[1][key], tasks[0][key], obj=f"rogue: {key}")
    hidden, on_shards = (drift.hidden_state_layers(s, n_boot=20) for s in (local, sharded))
    assert hidden.keys() == on_shards.keys()
    for key, table in on_shards.items():
        pd.testing.assert_frame_equal(table, hidden[key], obj=f"drift: {key}")

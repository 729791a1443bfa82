"""Hidden states from ONNX Runtime: a model exported once, every layer an output of its graph.

:func:`onnx_graph` exports a model's body (no language-model head, as the extractor runs it:
``input_ids`` and ``attention_mask`` in, ``output_hidden_states=True``) with
``torch.onnx.export``, batch and sequence axes dynamic, one output per hidden state
(``hidden_00`` = the embedding output ... ``hidden_LL`` = the last layer's, exactly what
``transformers`` returns). The graph is cached under ``paths.cache_dir("onnx")``, keyed on
the model's fingerprint, the exporter and the versions of torch, transformers and onnx
(:func:`graph_key`); it is written atomically, its sha256 is recorded in ``meta.json`` and
checked on every reuse (once per file and machine: :mod:`lmgeometry.io.checksums`), and a
graph whose bytes changed is exported again.

:class:`OnnxModel` runs the graph on onnxruntime's CPU provider, every graph optimisation on,
``intra_op_num_threads`` = the threads given (torch's by default). It is called like the
torch model (``model(input_ids=..., attention_mask=..., output_hidden_states=True)``) and
returns ``.hidden_states`` as a tuple of float32 torch tensors, so the extractor's loop runs
it unchanged: :func:`with_onnx` gives a :class:`LoadedModel` whose ``model`` is the graph.

:func:`float16_agreement` says what the difference from torch does to a float16 store: how
many stored values would change.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata as metadata
import json
import logging
import re
import shutil
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import torch

from lmgeometry import sources
from lmgeometry.activations.extract import _base_module
from lmgeometry.errors import OptionalDependencyError, UsageError
from lmgeometry.io import checksums, paths

if TYPE_CHECKING:
    from lmgeometry.io.models import LoadedModel

__all__ = [
    "BACKEND",
    "EXPORTERS",
    "Exporter",
    "float16_agreement",
    "FORMAT_VERSION",
    "graph_key",
    "onnx_graph",
    "onnx_model",
    "OnnxModel",
    "OnnxOutput",
    "OPSET",
    "with_onnx",
]

logger = logging.getLogger(__name__)

#: The backend's name, for a store key that must tell its entries from torch's.
BACKEND = "onnxruntime"

#: Version of the cached folder's layout; part of the key.
FORMAT_VERSION = 1

#: ONNX opset of the exported graphs (onnxruntime 1.31 runs up to 23).
OPSET = 18

Exporter = Literal["torchscript", "dynamo"]

#: ``torchscript``: ``torch.onnx.export(dynamo=False)``, the traced exporter (needs ``onnx``;
#: seconds for MiniLM). ``dynamo``: the ``torch.export`` exporter (also needs ``onnxscript``).
EXPORTERS: tuple[str, ...] = ("torchscript", "dynamo")

_GRAPH = "model.onnx"
_META = "meta.json"
#: Where each optional package is pinned.
_PINNED = {"onnxruntime": "requirements.txt", "onnx": "requirements.txt",
           "onnxscript": "requirements-bench.txt"}


def _require(module: str) -> Any:
    try:
        return __import__(module)
    except ImportError as exc:
        raise OptionalDependencyError(
            f"the ONNX backend needs the {module} package, which is not installed; "
            f"`pip install -r {_PINNED[module]}` installs the pinned version") from exc


def _versions(exporter: str) -> dict[str, str]:
    names = ["torch", "transformers", "onnx"] + (["onnxscript"] if exporter == "dynamo" else [])
    found = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "absent"
    return found


def graph_key(model: LoadedModel, exporter: Exporter = "torchscript") -> str:
    """sha256 naming one exported graph: model fingerprint, exporter, opset, library
    versions and the code of this module (by syntax, :func:`lmgeometry.sources.key_files`)."""
    payload = {"format": FORMAT_VERSION, "model": model.fingerprint, "kind": model.kind,
               "layers": model.n_layers, "exporter": exporter, "opset": OPSET,
               "versions": _versions(exporter),
               "code": sources.code_digest(sources.key_files(__name__))}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


class _HiddenStates(torch.nn.Module):
    """The model body as the extractor calls it, returning the tuple of hidden states."""

    def __init__(self, net: torch.nn.Module, decoder: bool) -> None:
        super().__init__()
        self.net = net
        self.decoder = decoder

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor
                ) -> tuple[torch.Tensor, ...]:
        kwargs: dict[str, Any] = {"input_ids": input_ids, "attention_mask": attention_mask,
                                  "output_hidden_states": True, "return_dict": True}
        if self.decoder:
            kwargs["use_cache"] = False
        return tuple(getattr(self.net(**kwargs), "hidden_states", None) or ())


def _trace_inputs(model: LoadedModel) -> tuple[torch.Tensor, torch.Tensor]:
    """Two rows of 8 token ids, the second padded after 5: the graph must keep the mask."""
    vocab = int(getattr(model.tokenizer, "vocab_size", 0) or len(model.tokenizer))
    ids = torch.arange(16, dtype=torch.long).reshape(2, 8) * 7 % max(vocab - 1, 1) + 1
    mask = torch.ones_like(ids)
    mask[1, 5:] = 0
    return ids.to(model.device), mask.to(model.device)


def _export(model: LoadedModel, path: Path, exporter: str) -> None:
    """Write the graph of ``model``'s body to ``path`` (checked: every hidden state)."""
    _require("onnx")
    wrapper = _HiddenStates(_base_module(model), model.kind == "decoder").eval()
    ids, mask = _trace_inputs(model)
    with torch.inference_mode():
        got = len(wrapper(ids, mask))
    if got != model.n_layers + 1:
        raise UsageError(
            f"{model.name}: its forward pass gave {got} hidden states with "
            f"output_hidden_states=True, not {model.n_layers + 1} (the embeddings and every "
            "layer); the ONNX backend exports them all, so it needs a transformers model that "
            "returns them (AutoModel, AutoModelForCausalLM). Use the torch backend for this "
            "model.")
    names = [f"hidden_{i:02d}" for i in range(got)]
    axes = {"batch": 0, "sequence": 1}
    if exporter == "dynamo":
        _require("onnxscript")
        dims = {a: torch.export.Dim(a) for a in axes}
        shapes = {n: {i: dims[a] for a, i in axes.items()} for n in ("input_ids", "attention_mask")}
        options: dict[str, Any] = {"dynamo": True, "dynamic_shapes": shapes, "optimize": True}
    else:
        dynamic = {n: {i: a for a, i in axes.items()}
                   for n in ("input_ids", "attention_mask", *names)}
        options = {"dynamo": False, "dynamic_axes": dynamic}
    with warnings.catch_warnings():  # shape conditions frozen by the trace: the tests run
        warnings.simplefilter("ignore", torch.jit.TracerWarning)  # other shapes, one token too
        warnings.filterwarnings("ignore", message="Exporting aten::index")  # no negative index
        torch.onnx.export(wrapper, (ids, mask), str(path), input_names=["input_ids",
                          "attention_mask"], output_names=names, opset_version=OPSET, **options)


def _folder(model: LoadedModel, key: str, root: Path | None) -> Path:
    base = paths.user_path(root) if root is not None else paths.cache_dir("onnx")
    slug = re.sub(r"[^A-Za-z0-9_.]+", "-", model.name).strip("-.")[:40] or "model"
    return base / f"{slug}-{key[:20]}"


def _whole(folder: Path, key: str) -> bool:
    """Whether ``folder`` holds the graph of ``key`` as written (sha256 of every file)."""
    try:
        meta = json.loads((folder / _META).read_text())
    except (OSError, ValueError):
        return False
    if meta.get("key") != key or not meta.get("files"):
        return False
    changed = checksums.changed_files(folder, meta["files"])
    if changed:
        logger.warning("cached ONNX graph %s: %s changed since it was written; exporting "
                       "again", folder, ", ".join(changed))
    return not changed


def onnx_graph(model: LoadedModel, *, exporter: Exporter = "torchscript",
               root: str | Path | None = None) -> Path:
    """The exported graph of ``model`` (``model.onnx``), from the cache or exported now.

    Parameters
    ----------
    model : LoadedModel
        A float32 model whose forward pass returns every hidden state.
    exporter : {"torchscript", "dynamo"}
        Which ``torch.onnx.export`` path writes the graph (:data:`EXPORTERS`).
    root : path, optional
        Cache folder (default ``<cache>/onnx``).

    Returns
    -------
    pathlib.Path
        The graph file; its folder's ``meta.json`` records the key, versions and sha256.

    Raises
    ------
    UsageError
        An unknown exporter, or a model that does not return its hidden states.
    OptionalDependencyError
        ``onnx`` (or ``onnxscript`` for ``dynamo``) is not installed.
    """
    if exporter not in EXPORTERS:
        raise UsageError(f"exporter must be one of {EXPORTERS}, not {exporter!r}")
    key = graph_key(model, exporter)
    final = _folder(model, key, None if root is None else Path(root))
    if final.is_dir() and _whole(final, key):
        return final / _GRAPH
    shutil.rmtree(final, ignore_errors=True)
    with paths.building(final, marker=_META) as tmp:
        t0 = time.perf_counter()
        _export(model, tmp / _GRAPH, exporter)
        files = {p.name: checksums.sha256_file(p) for p in sorted(tmp.iterdir())}
        meta = {"key": key, "model": model.name, "fingerprint": model.fingerprint,
                "kind": model.kind, "n_layers": model.n_layers, "exporter": exporter,
                "opset": OPSET, "versions": _versions(exporter),
                "export_seconds": round(time.perf_counter() - t0, 2), "files": files}
        (tmp / _META).write_text(json.dumps(meta, indent=1))
    checksums.remember(final, files)
    return final / _GRAPH


@dataclasses.dataclass(frozen=True)
class OnnxOutput:
    """What :class:`OnnxModel` returns: the hidden states, embeddings first."""

    hidden_states: tuple[torch.Tensor, ...]

    @property
    def last_hidden_state(self) -> torch.Tensor:
        """The last layer's hidden states."""
        return self.hidden_states[-1]


class OnnxModel:
    """An exported graph on onnxruntime, called like the torch model body.

    Parameters
    ----------
    path : path
        The graph (:func:`onnx_graph`).
    threads : int, optional
        Intra-op threads (default ``torch.get_num_threads()``, the cores torch was given).
    """

    def __init__(self, path: str | Path, *, threads: int | None = None) -> None:
        ort = _require("onnxruntime")
        self.path = Path(path)
        self.threads = int(threads or torch.get_num_threads())
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        self.session = ort.InferenceSession(str(self.path), options,
                                            providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.outputs = [o.name for o in self.session.get_outputs()]
        self.device = torch.device("cpu")
        self._dtype = torch.zeros((), dtype=torch.float32)

    def __call__(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None, *,
                 output_hidden_states: bool = True, return_dict: bool = True,
                 use_cache: bool = False) -> OnnxOutput:
        """Every hidden state of one padded batch, as float32 torch tensors on the CPU."""
        if not output_hidden_states or use_cache:
            raise UsageError("the ONNX graph gives every hidden state and keeps no cache: call "
                             "it with output_hidden_states=True and use_cache=False")
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        feed = {"input_ids": input_ids, "attention_mask": attention_mask}
        arrays = {name: feed[name].detach().cpu().numpy().astype(np.int64, copy=False)
                  for name in self.inputs}
        out = self.session.run(self.outputs, arrays)
        return OnnxOutput(tuple(torch.from_numpy(a) for a in out))

    def parameters(self) -> Iterator[torch.Tensor]:
        """One float32 scalar: the type the graph computes in (the extractor checks it)."""
        yield self._dtype

    def eval(self) -> OnnxModel:
        """Already in inference mode; returns itself."""
        return self


def onnx_model(model: LoadedModel, *, threads: int | None = None,
               exporter: Exporter = "torchscript", root: str | Path | None = None) -> OnnxModel:
    """:class:`OnnxModel` of ``model``'s cached graph (exported on first use)."""
    if model.device.type != "cpu":
        raise UsageError(f"{model.name} is on {model.device}; the ONNX backend runs on the CPU "
                         "(onnxruntime's CPU provider): load it with device='cpu'")
    return OnnxModel(onnx_graph(model, exporter=exporter, root=root), threads=threads)


def with_onnx(model: LoadedModel, **options: Any) -> LoadedModel:
    """``model`` with its torch module replaced by its graph on onnxruntime
    (:func:`onnx_model`'s ``options``): ``extract.iter_batches`` runs it unchanged.

    ``LoadedModel.facts()`` reads the torch modules and does not work on the result: take the
    facts from ``model``.
    """
    return dataclasses.replace(model, model=onnx_model(model, **options))


def float16_agreement(reference: np.ndarray, other: np.ndarray) -> dict[str, float]:
    """How far ``other`` is from ``reference``, and what that does to values stored in float16.

    With d = |other - reference| elementwise and u(x) the spacing of float16 at |x| (one unit
    in the last place of the stored value):

    * ``max_abs`` = max d; ``max_rel`` = max d / max |reference| (relative to the largest
      value, since elementwise ratios blow up near zero);
    * ``below_half_ulp`` = share of elements with d < u(reference) / 2: a difference that
      small changes the stored value only when the value lies within d of a rounding
      boundary;
    * ``changed`` = number of elements whose float16 values differ, ``beyond_one_ulp`` = those
      that differ by more than one float16 step.

    Parameters
    ----------
    reference, other : numpy.ndarray
        Arrays of one shape, float32 (values within float16's range).

    Returns
    -------
    dict
        ``n``, ``max_abs``, ``max_rel``, ``below_half_ulp``, ``changed``, ``beyond_one_ulp``.
    """
    ref = np.asarray(reference, dtype=np.float32)
    oth = np.asarray(other, dtype=np.float32)
    if ref.shape != oth.shape:
        raise ValueError(f"reference {ref.shape} and other {oth.shape} differ in shape")
    diff = np.abs(oth - ref)
    r16, o16 = ref.astype(np.float16), oth.astype(np.float16)
    ulp = np.spacing(np.abs(r16)).astype(np.float32)
    step = np.abs(o16.astype(np.float32) - r16.astype(np.float32))
    top = float(np.abs(ref).max()) if ref.size else 0.0
    return {"n": int(ref.size), "max_abs": float(diff.max()) if ref.size else 0.0,
            "max_rel": float(diff.max()) / top if top else 0.0,
            "below_half_ulp": float((diff < ulp / 2).mean()) if ref.size else 1.0,
            "changed": int((r16 != o16).sum()), "beyond_one_ulp": int((step > ulp).sum())}

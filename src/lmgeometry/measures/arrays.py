"""Arrays of any float type, numpy or torch, turned once into what the measures compute on.

The measures are numpy code. A researcher's hidden states are often torch tensors, on a GPU,
in float16 or bfloat16 (TransformerLens and nnsight keep what the model computes in), or
numpy arrays of ml_dtypes' ``bfloat16``. ``np.asarray`` takes none of the awkward ones: a
bfloat16 tensor raises ``TypeError: Got unsupported ScalarType BFloat16``, a CUDA tensor or
one that requires grad raises too. :func:`as_numpy` converts such an input once, at a public
measure's entry (:func:`float_arrays` is the decorator that does it), and leaves every numpy
array it can already compute on as it is, the same object (so a float16 memory map of a store
layer is still read in chunks, and the book's float32 inputs give the numbers they gave).

Rules (:func:`as_numpy`):

* a torch tensor (recognised by its type's module, without importing torch) is detached and
  moved to the CPU; a float16 or bfloat16 tensor becomes float32 (exact: every float16 and
  bfloat16 value is a float32 value), float32 and float64 keep their type, integer and
  boolean tensors theirs;
* a numpy array of a float type numpy cannot compute on (ml_dtypes' ``bfloat16``,
  ``float8_*``) becomes float32; numpy's own float16 stays float16 (the measures that take
  float16 memory maps read it in float32 or float64 chunks);
* a list or tuple of such arrays (``cka_matrix``'s layers) is converted element by element;
* anything else (a list of numbers, a memory map, a lazy layer view, a DataFrame) is passed on
  unchanged.

:func:`layer_states` takes what interpretability libraries hand back, a mapping from hook or
module names to per-layer tensors (a TransformerLens ``ActivationCache``, a dict of nnsight's
saved outputs), into one ``(layers, rows, width)`` array the measures take.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np

__all__ = ["as_numpy", "float_arrays", "layer_states"]

F = TypeVar("F", bound=Callable[..., Any])

#: numpy dtypes the measures compute on (anything else of kind "V" or an ml_dtypes float is
#: converted to float32).
_NUMPY_FLOATS = frozenset({np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64),
                           np.dtype(np.longdouble)})

#: torch dtypes kept as they are (numpy has the same type).
_TORCH_KEPT = frozenset({"torch.float32", "torch.float64", "torch.int8", "torch.int16",
                         "torch.int32", "torch.int64", "torch.uint8", "torch.bool"})


def _is_torch_tensor(x: Any) -> bool:
    """Whether ``x`` is a torch tensor (``torch.Tensor`` or a subclass), without importing
    torch: its class or a base class is defined in a ``torch`` module."""
    return any(c.__module__.split(".")[0] == "torch" and c.__name__ == "Tensor"
               for c in type(x).__mro__)


def _is_odd_float(dtype: np.dtype) -> bool:
    """A float type numpy cannot do arithmetic in (ml_dtypes' bfloat16, float8_*, ...)."""
    if dtype in _NUMPY_FLOATS or dtype.kind in "biuc":
        return False
    return dtype.kind == "V" or type(dtype).__module__.startswith("ml_dtypes") or (
        "float" in dtype.name)


def as_numpy(x: Any) -> Any:
    """``x`` as an array a measure can compute on (module docstring for the rules).

    Parameters
    ----------
    x : numpy.ndarray, torch.Tensor, list or tuple of them, or anything else
        A measure's array argument.

    Returns
    -------
    numpy.ndarray or the input
        The same object when it is already usable (float16/32/64 numpy, memory maps, anything
        that is not an array); else a CPU numpy array (float32 for 16-bit floats).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.ones((2, 3), dtype=np.float32)
    >>> as_numpy(x) is x
    True
    >>> import ml_dtypes
    >>> as_numpy(x.astype(ml_dtypes.bfloat16)).dtype
    dtype('float32')
    """
    if isinstance(x, np.ndarray):
        return x.astype(np.float32) if _is_odd_float(x.dtype) else x
    if _is_torch_tensor(x):
        t = x.detach()
        if str(t.dtype) not in _TORCH_KEPT:
            if not t.is_floating_point():
                raise TypeError(f"a measure needs a real-valued tensor, got {t.dtype}; "
                                "convert it with .float()")
            t = t.float()
        return t.cpu().resolve_conj().resolve_neg().numpy()
    if isinstance(x, list | tuple) and x and all(
            isinstance(v, np.ndarray) or _is_torch_tensor(v) for v in x):
        return type(x)(as_numpy(v) for v in x)
    return x


def float_arrays(*names: str) -> Callable[[F], F]:
    """Decorator: the named arguments of a measure go through :func:`as_numpy` on entry.

    A float32 or float64 numpy argument is passed on as the same object, so the decorated
    measure computes what it computed before; a torch tensor (any device, float16, bfloat16,
    float32), an ml_dtypes bfloat16 array or a list of either is converted once here.

    Parameters
    ----------
    *names : str
        Parameter names of the decorated function (positional or keyword).
    """

    def decorate(fn: F) -> F:
        params = list(inspect.signature(fn).parameters)
        missing = [n for n in names if n not in params]
        if missing:
            raise TypeError(f"{fn.__name__} has no parameter {', '.join(missing)}")
        where = [(params.index(n), n) for n in names]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if args:
                args = list(args)  # type: ignore[assignment]
                for i, _ in where:
                    if i < len(args):
                        args[i] = as_numpy(args[i])  # type: ignore[index]
            for _, n in where:
                if n in kwargs:
                    kwargs[n] = as_numpy(kwargs[n])
            return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


_INDEX = re.compile(r"^\d+$")


def _layer_keys(keys: list[str], hook: str | None) -> dict[int, str]:
    """Layer index -> key: the keys named ``hook`` (their last dotted part, ``hook_``
    stripped) that hold one integer part (the layer), or with ``hook=None`` every key that
    holds one."""
    chosen: dict[int, list[str]] = {}
    for key in keys:
        parts = str(key).split(".")
        numbers = [int(p) for p in parts if _INDEX.match(p)]
        if len(numbers) != 1:
            continue
        if hook is not None and parts[-1].removeprefix("hook_") != hook.removeprefix("hook_"):
            continue
        chosen.setdefault(numbers[0], []).append(str(key))
    if not chosen:
        names = ", ".join(sorted(map(str, keys))[:6])
        raise ValueError(f"no key of the mapping names a layer{'' if hook is None else ' and '}"
                         f"{'' if hook is None else repr(hook)} (keys: {names}"
                         f"{', ...' if len(keys) > 6 else ''}); pass hook= as the keys' last "
                         "part, e.g. 'resid_post' for 'blocks.3.hook_resid_post'")
    doubled = {i: k for i, k in chosen.items() if len(k) > 1}
    if doubled:
        i, k = next(iter(doubled.items()))
        raise ValueError(f"layer {i} has {len(k)} keys ({', '.join(k)}); pass hook= to say "
                         "which, e.g. hook='resid_post'")
    return {i: k[0] for i, k in sorted(chosen.items())}


def layer_states(cache: Mapping[str, Any], hook: str | None = "resid_post", *,
                 mask: Any = None, flatten: bool = True) -> np.ndarray:
    """Per-layer activations of a TransformerLens or nnsight run, stacked for the measures.

    ``cache`` maps names to tensors, one per layer: a TransformerLens ``ActivationCache``
    (``blocks.3.hook_resid_post``, ``blocks.3.attn.hook_pattern``), a dict of nnsight's saved
    outputs keyed by module path (``model.layers.3``, ``transformer.h.3.mlp``), or any dict of
    arrays. The keys whose last dotted part is ``hook`` (``hook_`` prefix optional) and which
    name one layer by an integer part are taken in increasing layer order; ``hook=None`` takes
    every key that names one layer. A value that is a tuple (a block's output, as nnsight saves
    it) gives its first element; each is converted by :func:`as_numpy` (any device, bfloat16
    included). No TransformerLens or nnsight import: the mapping is read by its keys.

    Parameters
    ----------
    cache : mapping of str to array
        The run's activations.
    hook : str or None
        The last part of the keys to take (``"resid_post"``, ``"attn_out"``, ``"pattern"``).
    mask : array of shape (batch, pos), optional
        The attention mask of the batch (1 or True for a real token): only those rows are kept
        (padding left out), in batch then position order.
    flatten : bool
        True: ``(batch, pos, width)`` (or ``(pos, width)``) values become ``(rows, width)``,
        rows in batch then position order. False: each value as it is (e.g. attention patterns
        ``(batch, heads, query, key)``), stacked.

    Returns
    -------
    numpy.ndarray
        ``(layers, rows, width)`` (``flatten=True``) or ``(layers, *value.shape)``.

    Raises
    ------
    ValueError
        No key names a layer and ``hook``, one layer has several such keys, the values' shapes
        differ, or the mask does not fit them.

    Examples
    --------
    >>> import numpy as np
    >>> cache = {f"blocks.{i}.hook_resid_post": np.full((1, 3, 2), i, np.float32)
    ...          for i in range(2)}
    >>> cache["blocks.0.hook_attn_out"] = np.zeros((1, 3, 2))
    >>> layer_states(cache).shape
    (2, 3, 2)
    """
    keys = _layer_keys(list(cache.keys()), hook)
    values = []
    for key in keys.values():
        value = cache[key]
        value = as_numpy(value[0] if isinstance(value, tuple) else value)
        values.append(np.asarray(value))
    shapes = {v.shape for v in values}
    if len(shapes) != 1:
        raise ValueError(f"the layers' values differ in shape ({sorted(shapes)}); take one "
                         "hook at a time")
    stacked = np.stack(values)
    if not flatten:
        return stacked
    if stacked.ndim == 3:  # (layers, pos, width): one sequence
        stacked = stacked[:, None]
    if stacked.ndim != 4:
        raise ValueError(f"flatten=True needs (batch, pos, width) or (pos, width) values, got "
                         f"{stacked.shape[1:]}; pass flatten=False")
    rows = stacked.reshape(len(stacked), -1, stacked.shape[-1])
    if mask is None:
        return rows
    keep = np.asarray(as_numpy(mask)).astype(bool)
    if keep.shape != stacked.shape[1:3]:
        raise ValueError(f"mask has shape {keep.shape}, the values (batch, pos) "
                         f"{stacked.shape[1:3]}")
    return rows[:, keep.reshape(-1)]

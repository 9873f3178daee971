"""Hostile inputs shared by the safety tests: broken checkpoint folders built from one tiny random
BERT (hidden 32, 2 layers), each broken in one way a careless or hostile user could manage."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import torch
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

from explorer.model.checkpoints import embedded_encoder_dir


def _config_edit(**changes):
    def edit(folder: Path) -> None:
        cfg = json.loads((folder / "config.json").read_text())
        cfg.update(changes)
        (folder / "config.json").write_text(json.dumps(cfg))
    return edit


def _write(name: str, data: bytes):
    return lambda folder: (folder / name).write_bytes(data)


def _vocab_without_unk(folder: Path) -> None:
    """A WordPiece vocab.txt (no tokenizer.json) that lacks [UNK]: fine until a word it does not know."""
    (folder / "tokenizer.json").unlink()
    words = (embedded_encoder_dir() / "vocab.txt").read_text(encoding="utf-8").splitlines()
    (folder / "vocab.txt").write_text("\n".join(w for w in words if w != "[UNK]") + "\n", encoding="utf-8")


def _empty_weights_huge_vocab(folder: Path) -> None:
    """No tensors at all, and a config asking for 40M rows x 32: 4.9 GB to draw at random."""
    from safetensors.torch import save_file

    _config_edit(vocab_size=40_000_000)(folder)
    save_file({}, str(folder / "model.safetensors"))


def _links_out(*names: str):
    def edit(folder: Path) -> None:  # /etc/passwd: outside every root the tests set
        for name in names:
            (folder / name).unlink()
            (folder / name).symlink_to("/etc/passwd")
    return edit


def _shards_at(*shards: str):
    """model.safetensors replaced by an index whose weight_map names `shards`."""
    def edit(folder: Path) -> None:
        (folder / "model.safetensors").unlink()
        (folder / "model.safetensors.index.json").write_text(json.dumps(
            {"metadata": {}, "weight_map": {f"w{i}": s for i, s in enumerate(shards)}}))
    return edit


# name -> (how it is broken, the words the one-line message must contain)
BROKEN = {
    "ids-0-1-7": (_config_edit(id2label={"0": "a", "1": "b", "7": "c"}, label2id={"a": 0, "b": 1, "c": 7}),
                  "0, 1, 7"),
    "num-labels-5": (_config_edit(id2label={str(i): f"L{i}" for i in range(5)},
                                  label2id={f"L{i}": i for i in range(5)}), "do not match its weights"),
    "num-labels-0": (_config_edit(id2label={}, label2id={}, num_labels=0), "cannot load"),
    "hidden-size": (_config_edit(hidden_size=36), "do not match its weights"),
    "invalid-json": (_write("config.json", b"{not json"), "not a valid JSON"),
    "id2label-list": (_config_edit(id2label=["a", "b", "c"]), "cannot load"),
    "no-model-type": (_config_edit(model_type=None), "cannot load"),
    "unknown-model-type": (_config_edit(model_type="nonesuch"), "nonesuch"),
    "garbage-weights": (_write("model.safetensors", b"garbage" * 10), "cannot load"),
    "no-weights": (lambda f: (f / "model.safetensors").unlink(), "model.safetensors"),
    "pickle-only": (lambda f: (f / "model.safetensors").rename(f / "pytorch_model.bin"), "convert-checkpoint"),
    "id2label-ints": (_config_edit(id2label={"0": 1, "1": 2, "2": 3}, label2id={"1": 0, "2": 1, "3": 2}),
                      "one value is 1"),
    "id2label-null": (_config_edit(id2label={"0": None, "1": "b", "2": "c"}), "one value is None"),
    "vocab-no-unk": (_vocab_without_unk, "fails on a character outside its vocabulary"),
    "empty-weights-40M-vocab": (_empty_weights_huge_vocab, "HEAD_EXPLORER_NEW_WEIGHTS_MB"),
    "nan-layer-norm-eps": (_config_edit(layer_norm_eps=float("nan")), "layer_norm_eps = nan, which is not a finite"),
    "negative-layers": (_config_edit(num_hidden_layers=-1), "num_hidden_layers = -1, which cannot be negative"),
    "config-links-out": (_links_out("config.json"), "'config.json' links outside HEAD_EXPLORER_ROOTS"),
    "weights-link-out": (_links_out("model.safetensors"), "'model.safetensors' links outside HEAD_EXPLORER_ROOTS"),
    "vocab-links-out": (lambda f: (f / "vocab.txt").symlink_to("/etc/passwd"), "'vocab.txt' links outside"),
    # A sharded checkpoint's index names files the loader opens as folder / name: only files of the folder.
    "shard-in-next-folder": (_shards_at("../ok/model.safetensors"), "names the shard '../ok/model.safetensors'"),
    "shard-etc-passwd": (_shards_at("/etc/passwd"), "names the shard '/etc/passwd', which is not a file"),
    "shard-index-not-json": (_write("model.safetensors.index.json", b"{nope"), "does not name its shards"),
    "shard-index-a-pipe": (lambda f: os.mkfifo(f / "model.safetensors.index.json"), "does not name its shards"),
}


def broken_checkpoints(root: Path) -> dict[str, Path]:
    """{name: folder} under `root`: a working tiny BERT ("ok") and one folder per BROKEN entry."""
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=64, num_labels=3)
    ok = root / "ok"
    BertForSequenceClassification(cfg).save_pretrained(ok)
    AutoTokenizer.from_pretrained(str(embedded_encoder_dir())).save_pretrained(ok)
    out = {"ok": ok}
    for name, (edit, _) in BROKEN.items():
        shutil.copytree(ok, root / name)
        edit(root / name)
        out[name] = root / name
    return out

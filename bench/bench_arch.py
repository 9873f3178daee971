"""Other architectures: one analysis (encoder with attention maps and every hidden state, the own head
derived from the model and run by its real code at every layer, rollout) against one plain
model(**enc) forward, on tiny random deberta-v2 and llama checkpoints (hidden 32, 2 layers) built in
a temporary folder. The tiny models make the fixed costs of our head run (a stub base model, a
TorchFunctionMode that follows the data flow) as visible as they can be.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import torch

from bench.timing import interleaved, row

TEXT = "I honestly did not expect much, but the acting was wonderful and the ending made me smile."


def against_forward(ck, text: str, analysis, what: str) -> dict:
    """A row: `analysis()` (one analysis of `text`) against one plain model(**enc) forward, interleaved;
    `what` names the analysis and model, the token count is added."""
    from explorer.model.analysis import encode, encoder_inputs

    enc, _ = encode(ck, text)
    inputs = encoder_inputs(enc, ck)

    def forward():
        with torch.inference_mode():
            ck.model(**inputs)

    plain, ours = interleaved([forward, analysis], rounds=40)
    n = enc["input_ids"].shape[1]
    return row(f"{what}, {n} tokens / one model(**enc) forward", ours, plain, "ratio <= 1.5", ours / plain <= 1.5)


def _row(model_type: str, root: Path, replay: bool = True) -> dict:
    """`replay` False: the own head runs its real code every time (OwnHead.program None), as it does for a
    head whose Python reads tensor values: what the replay (explorer/model/replay.py) saves per analysis."""
    from explorer.model.analysis import analyze
    from explorer.model.checkpoints import load_checkpoint
    from explorer.model.heads import build_head
    from tests.tiny_archs import save

    ck = load_checkpoint(str(save(model_type, root)))
    head = build_head(ck, "own")
    if not replay:
        head.own.program = None
    what = f"analyze, tiny {model_type}" + ("" if replay else ", own head without replay")
    out = against_forward(ck, TEXT, lambda: analyze(ck, head, TEXT), what)
    return out if replay else {**out, "target": "info", "ok": True}


def run() -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["HEAD_EXPLORER_ROOTS"] = os.pathsep.join(
            [str(root), *os.environ.get("HEAD_EXPLORER_ROOTS", "").split(os.pathsep)]).rstrip(os.pathsep)
        return [_row("deberta-v2", root), _row("llama", root), _row("llama", root, replay=False)]

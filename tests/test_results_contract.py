"""One contract for every result type: `to_dict()` is a JSON-safe dict (json.dumps takes it as it is) and
`to_json()` is that dict as a JSON string. Every JsonResult subclass in explorer/ is built here from a run
on a tiny model, so a new result type without a case fails `test_every_result_type_is_covered`."""
import importlib
import json
import pkgutil

import pandas as pd
import pytest
import torch

import explorer
from explorer.results import JsonResult

TEXT = "Peter lives in Berlin and likes it."


def _result_types() -> set[type]:
    for info in pkgutil.walk_packages(explorer.__path__, "explorer."):
        if not info.name.startswith(("explorer.ui", "explorer.cli", "explorer.__main__", "explorer._app")):
            importlib.import_module(info.name)
    found, todo = set(), [JsonResult]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("explorer."):
                found.add(sub)
            todo.append(sub)
    return found


@pytest.fixture(scope="module")
def results(tiny, tiny_root, token_checkpoint, tmp_path_factory) -> list:
    from explorer.data.tag_report import tag_report
    from explorer.data.tags import read_tags
    from explorer.explain.token_attribution import every_label
    from explorer.model.checkpoints import load_checkpoint
    from explorer.model.convert import convert_checkpoint
    from explorer.model.heads import build_head
    from explorer.model.token_analysis import analyze_tokens

    ck = tiny["bert"]
    a = explorer.analyze(ck, TEXT)
    sampled = explorer.attribute(ck, TEXT, method="lime")
    tok = load_checkpoint(str(token_checkpoint))
    tok_head = build_head(tok, "own")
    ta = analyze_tokens(tok, tok_head, TEXT)
    df = pd.DataFrame({"text": [f"text number {i} is {w}" for i in range(24) for w in ("good",)],
                       "label": [("alpha", "beta", "gamma")[i % 3] for i in range(24)]})
    audit = explorer.audit(df, ck, folds=2)
    explained = explorer.explain_data(df.assign(rationale="good"), ck, rationale="rationale", max_rows=6,
                                      methods=["saliency", "input_x_gradient"])
    report = explorer.inspect(df)
    scanned = explorer.scan(df, ck)
    tags = tag_report(read_tags(b"Peter B-PER\nlives O\n\nBerlin B-LOC\n", name="t.conll"))
    pickled = tiny_root / "contract-bin"
    ck.model.config.save_pretrained(pickled)
    ck.tokenizer.save_pretrained(pickled)
    torch.save({k: v.contiguous() for k, v in ck.model.state_dict().items()}, pickled / "pytorch_model.bin")
    conversion = convert_checkpoint(str(pickled), str(tmp_path_factory.mktemp("out") / "converted"))
    return [a, explorer.attribute(ck, TEXT, method="saliency"), sampled, sampled.sampling, ta, *ta.grouped()[:1],
            every_label(tok, tok_head, text=TEXT, token=1, method="saliency"), explorer.figures.head_view(a, layer=1),
            report, report.report, audit, audit.audit, tags, conversion, explained, scanned,
            explorer.scan(df, ck, baseline=ck).baseline,
            explorer.counterfactual(ck, TEXT, max_edits=1)]


def test_every_result_type_is_covered(results):
    missing = _result_types() - {type(r) for r in results}
    assert not missing, f"result types without a case here: {sorted(t.__qualname__ for t in missing)}"


def test_to_dict_is_json_safe_and_to_json_is_its_string(results):
    for r in results:
        d = r.to_dict()
        assert isinstance(d, dict), type(r)
        text = json.dumps(d)  # no default=: numpy, tensors or sets would raise here
        assert isinstance(r.to_json(), str) and json.loads(r.to_json()) == json.loads(text), type(r)
        assert not any(isinstance(v, torch.Tensor) for v in d.values())

"""AppTest for the Data & labels and Fine-tune pages."""
import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from explore_helpers import give_csv
from explorer.ui.session import DATA_KEY
from explorer.ui.running import HELD
from explorer.ui.views.finetune import FINETUNE

FT_JOB = HELD.format(FINETUNE)  # where ui.run holds the session's fine-tune, as (inputs, job)

pytestmark = [pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent


def _app():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    return at


def _charts(at) -> dict:
    return {json.loads(c.proto.spec)["layout"]["title"]["text"]: json.loads(c.proto.spec) for c in at.get("plotly_chart")}


def _warnings(at) -> str:
    return " ".join(w.value for w in at.warning)


def test_data_page_finds_and_fixes_a_permuted_mapping():
    at = _app()
    at.switch_page("pages/data.py").run()
    assert not at.exception and not at.error
    at.number_input(key="data_per_class").set_value(20).run()
    assert "Permuted labels" not in _warnings(at) and at.success  # demo labels match minilm-sentiment
    at.checkbox(key="data_permute").check().run()
    assert not at.exception
    assert "Permuted labels" in _warnings(at)
    assert at.get("download_button")  # the corrected config.json is offered
    charts = _charts(at)
    heat = charts["CSV label vs. checkpoint prediction"]
    assert heat["data"][0]["type"] == "heatmap" and sum(map(sum, heat["data"][0]["z"])) == 60
    assert heat["layout"]["xaxis"]["title"]["text"] and heat["layout"]["yaxis"]["title"]["text"]
    at.button(key="data_apply").click().run()
    assert not at.exception and "Permuted labels" not in _warnings(at)
    assert at.session_state[DATA_KEY].label_column == "label"
    # the other fix stays on offer after the data was fixed (item 6): a config.json renaming the
    # checkpoint's ids to the CSV's names
    (dl,) = at.get("download_button")
    assert dl.proto.label == "Download a corrected config.json" and at.success
    assert at.status[0].proto.label.startswith("Labels checked in")  # long work shows itself (item 7)


def test_data_page_bad_column_choice_is_one_error_line():
    at = _app()
    at.switch_page("pages/data.py").run()
    at.number_input(key="data_per_class").set_value(10).run()
    at.selectbox(key="data_text_column").set_value("label").run()
    at.selectbox(key="data_label_column").set_value("label").run()
    assert not at.exception and len(at.error) == 1
    assert "both the text and the label" in at.error[0].value and "\n" not in at.error[0].value


def test_data_page_upload_asks_for_a_file():
    at = _app()
    at.switch_page("pages/data.py").run()
    at.radio(key="data_source").set_value("upload").run()
    assert not at.exception and at.info  # asks for a file; the uploader itself is not scriptable in AppTest


def test_finetune_page_trains_registers_and_offers_zip():
    at = _app()
    give_csv(at, _small_csv(), "small.csv")
    at.switch_page("pages/finetune.py").run()
    assert not at.exception
    at.number_input(key="ft_epochs_head").set_value(5).run()
    at.button(key="ft_start").click().run()
    job = at.session_state[FT_JOB][1]  # (inputs, an explorer.runtime.jobs.Job)
    assert job.wait(60)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    name = job.name
    # named for what it is: checkpoint, mode, data, epochs, time (UTC)
    assert re.fullmatch(r"minilm-sentiment-head-small-5ep-\d{4}-\d{6}", name), name
    from explorer.ui import MODELS

    owner = at.session_state["_model_owner"].id
    assert MODELS.names(owner) == [name]
    ck = MODELS.get(owner, name)
    assert job.result.checkpoint is None  # only the bounded store holds the model
    titles = _charts(at)
    assert "Validation confusion matrix" in titles and "Loss and validation score per epoch" in titles
    assert len(titles["Loss and validation score per epoch"]["data"][0]["x"]) == 5
    at.button(key="ft_prepare").click().run()  # its zip is built once, on request, and kept on disk
    assert not at.exception and at.get("download_button")
    # selectable on the other pages: the home page analyses the text with the fine-tuned model
    at.switch_page("pages/home.py").run()
    at.selectbox(key="checkpoint").set_value(name)
    at.text_area(key="text").input("what a lovely day").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    from explorer.model.analysis import analyze
    from explorer.model.heads import build_head

    want = analyze(ck, build_head(ck, "own"), "what a lovely day").logits
    logits = _charts(at)["Logits per label (not probabilities)"]["data"][0]
    assert logits["x"] == ["negative", "neutral", "positive"]
    np.testing.assert_allclose(_values(logits["y"]), want, atol=1e-4)


def test_finetune_page_stop_keeps_the_best_epoch_and_its_model_joins_the_sidebar():
    from explorer.ui import MODELS

    at = _app()
    give_csv(at, _small_csv(), "small.csv")
    at.switch_page("pages/finetune.py").run()
    at.checkbox(key="ft_early").uncheck().run()
    at.number_input(key="ft_epochs_head").set_value(500).run()
    at.button(key="ft_start").click().run()
    job = at.session_state[FT_JOB][1]
    assert not at.button(key="ft_stop").disabled and at.button(key="ft_start").disabled  # running: one at a time
    while len(job.progress) < 2 and not job.wait(0.1):  # two epochs ended: one of them is kept
        pass
    at.button(key="ft_stop").click().run()
    assert job.wait(60) and job.why == "user"
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    res = job.result
    assert res.stopped and 1 <= res.best_epoch <= len(res.history) < 500
    assert f"Stopped when asked, after epoch {len(res.history)} of 500 planned." in [i.value for i in at.info]
    assert MODELS.names(at.session_state["_model_owner"].id) == [job.name]  # kept, and in the sidebar's list
    assert at.button(key="ft_stop").disabled and not at.button(key="ft_start").disabled


def test_finetune_page_refuses_a_full_run_over_the_memory_budget_in_one_line(monkeypatch):
    from explorer.ui import JOBS

    monkeypatch.setenv("HEAD_EXPLORER_TRAIN_MB", "600")  # below MiniLM's ~430 MB of weight copies + batch 512
    at = _app()
    at.switch_page("pages/finetune.py").run()
    at.radio(key="ft_mode").set_value("full").run()
    at.number_input(key="ft_batch").set_value(512).run()
    at.number_input(key="ft_max_length").set_value(512).run()
    free = JOBS.free
    at.button(key="ft_start").click().run()
    assert not at.exception and len(at.error) == 1, [e.value for e in at.error]
    msg = at.error[0].value
    assert "\n" not in msg and "HEAD_EXPLORER_TRAIN_MB" in msg and "batch 512 × length 512" in msg, msg
    assert FT_JOB not in at.session_state and JOBS.free == free  # refused before a slot was taken


def test_finetune_page_shows_a_waiting_job_its_place_and_wait_and_stop_takes_it_out_of_line():
    import threading

    from explorer.ui import JOBS

    release = threading.Event()
    blockers = [JOBS.start(f"other-student-{i}", "fine-tune", f"busy-{i}", lambda progress, stop: release.wait(30))
                for i in range(JOBS.free)]  # every slot taken by other sessions (one each)
    try:
        at = _app()
        at.switch_page("pages/finetune.py").run()
        at.button(key="ft_start").click().run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        job = at.session_state[FT_JOB][1]
        assert job.waiting and JOBS.waiting() == [job]
        shown = " ".join(i.value for i in at.info)
        assert "place 1 in the queue" in shown and "Stop leaves the queue" in shown, shown
        at.button(key="ft_stop").click().run()
        assert job.done and JOBS.waiting() == [] and job.progress == []  # left the line, never trained
    finally:
        release.set()
        for b in blockers:
            b.wait(10)


def _values(y):
    if isinstance(y, dict):  # plotly ships numpy arrays as base64 typed arrays
        return np.frombuffer(base64.b64decode(y["bdata"]), dtype=y["dtype"])
    return np.asarray(y, dtype=float)


def _small_csv() -> bytes:
    from explorer.data.dataset import demo_frame

    return demo_frame(per_class=20, seed=4).to_csv(index=False).encode()


def test_a_permuted_checkpoints_confusion_keeps_the_csvs_order_and_says_its_own(tiny_root):
    """on a checkpoint whose id order differs from the CSV's, the confusion matrix's columns came in
    the checkpoint's id order, uncaptioned, so its diagonal was not "same name"."""
    import pandas as pd
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    folder = tiny_root / "tiny-rotated"
    if not folder.exists():
        names = ("gamma", "alpha", "beta")
        torch.manual_seed(1)
        cfg = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=64, num_labels=3, id2label=dict(enumerate(names)),
                         label2id={n: i for i, n in enumerate(names)})
        BertForSequenceClassification(cfg).save_pretrained(folder)
        for f in (tiny_root / "tiny-bert").iterdir():
            if "token" in f.name or f.name.startswith("vocab"):
                (folder / f.name).write_bytes(f.read_bytes())
    from explorer.ui.session import Upload

    raw = pd.DataFrame({"text": ["one film", "two films", "three films"] * 4,
                        "label": ["alpha", "beta", "gamma"] * 4}).to_csv(index=False).encode()
    at = _app()
    for k, v in {"checkpoint": "other…", "checkpoint_other": str(folder), "data_source": "upload",
                 "data_uploaded": Upload(raw, "abc.csv")}.items():
        at.session_state[k] = v
    at.switch_page("pages/data.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    heat = _charts(at)["CSV label vs. checkpoint prediction"]["data"][0]
    assert list(heat["x"]) == list(heat["y"]) == ["alpha", "beta", "gamma"]
    assert "its own id order is 0: gamma, 1: alpha, 2: beta" in " ".join(c.value for c in at.caption)
    # a folder's path in the label was cut to "…/sent…": its last part, the path in the help
    box = at.checkbox(key="data_compare")
    assert box.label == "Check against 'tiny-rotated'" and box.help == str(folder)

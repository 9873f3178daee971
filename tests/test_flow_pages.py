"""The practitioner flow in AppTest: Fine-tune counts epochs from the start, trains the sidebar's
head and names it, names the kept epoch, zips each session model once and offers every one; the Data
page shows the columns it guessed and a categorical label axis; accepted audit fixes become the next
version of the dataset that Data, Label audit and Fine-tune use."""
import dataclasses
import json
import threading
from pathlib import Path

import pandas as pd
import torch
import pytest
from streamlit.testing.v1 import AppTest

from explorer.data.dataset import demo_frame, read_csv
from explorer.ui.session import DATA_KEY, Upload
from explorer.ui.running import HELD
from explorer.ui.views.finetune import FINETUNE

FT_JOB = HELD.format(FINETUNE)  # where ui.run holds the session's fine-tune, as (inputs, job)

ROOT = Path(__file__).resolve().parent.parent


def _app(**state):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    for k, v in state.items():
        at.session_state[k] = v
    at.run()
    return at


def _captions(at) -> str:
    return " | ".join(c.value for c in at.caption)


def _upload(at, raw: bytes, name: str) -> None:
    """The Data page as after an upload (the uploader itself cannot be scripted in AppTest)."""
    at.session_state["data_uploaded"] = Upload(raw, name)
    at.session_state["data_source"] = "upload"


@pytest.mark.slow
def test_finetune_progress_head_kept_epoch_and_every_model_downloadable(monkeypatch):
    from explorer.train import finetune as ft
    from explorer.ui import MODELS

    gate, real = threading.Event(), ft._train_head
    monkeypatch.setattr(ft, "_train_head", lambda *a: gate.wait(60) and real(*a))  # held before epoch 1
    saves, real_save = [], ft.save
    monkeypatch.setattr(ft, "save", lambda ck, out: saves.append(out) or real_save(ck, out))
    at = _app()
    _upload(at, demo_frame(per_class=10, seed=4).to_csv(index=False).encode(), "tweets.csv")
    at.switch_page("pages/data.py").run()
    at.switch_page("pages/finetune.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "Head trained: 'own' from the sidebar (bert" in _captions(at)  # the sidebar's head, named
    at.number_input(key="ft_epochs_head").set_value(5).run()
    at.button(key="ft_start").click().run()
    (bar,) = at.get("progress")
    assert bar.proto.text == "Epoch 1 of 5 running…"  # not "of 1", nor "Epoch 0", before the first epoch ends
    gate.set()
    job = at.session_state[FT_JOB][1]
    assert job.wait(60)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    res = job.result
    assert f"Kept epoch {res.best_epoch} of 5 planned:" in _captions(at)
    curve = [json.loads(c.proto.spec) for c in at.get("plotly_chart")
             if json.loads(c.proto.spec)["layout"]["title"]["text"] == "Loss and validation score per epoch"][0]
    assert curve["layout"]["shapes"][0]["x0"] == res.best_epoch  # the kept epoch, marked
    # the zip: built on request, once, then offered from disk
    assert not at.get("download_button")
    at.button(key="ft_prepare").click().run()
    assert not at.exception and len(saves) == 1 and at.get("download_button")
    # an earlier model stays downloadable once a later one exists
    owner = at.session_state["_model_owner"].id
    MODELS.add(owner, dataclasses.replace(MODELS.get(owner, job.name), name="finetuned-later000"))
    at.run()
    picker = at.selectbox(key="ft_download_model")
    assert picker.options == ["finetuned-later000", job.name]
    picker.set_value(job.name).run()
    assert not at.exception and at.get("download_button") and len(saves) == 1  # not rebuilt


def test_finetune_refuses_a_sidebar_head_it_cannot_train_in_one_line():
    at = _app(head="mean-linear")
    at.switch_page("pages/finetune.py").run()
    assert not at.exception and len(at.error) == 1
    msg = at.error[0].value
    assert "\n" not in msg and "'mean-linear'" in msg and "own head" in msg
    assert at.button(key="ft_start").disabled


def test_data_page_shows_guessed_columns_categorical_labels_and_a_real_remove_button():
    at = _app()
    raw = pd.DataFrame({"review": ["good film", "bad film", "so so film"] * 4, "stars": ["2", "0", "1"] * 4})
    _upload(at, raw.to_csv(index=False).encode(), "stars.csv")
    at.switch_page("pages/data.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.selectbox(key="data_text_column").value == "review"
    assert at.selectbox(key="data_label_column").value == "stars"
    bars = [json.loads(c.proto.spec) for c in at.get("plotly_chart")
            if json.loads(c.proto.spec)["data"][0]["type"] == "bar"][0]
    assert bars["layout"]["xaxis"]["type"] == "category"
    caption = _captions(at)
    assert "×" not in caption and "remove it with the button below" in caption
    at.button(key="data_forget").click().run()
    assert not at.exception and "data_uploaded" not in at.session_state and at.info  # asks for a file again


def test_accepted_audit_fixes_become_the_dataset_fine_tune_uses():
    from test_audit import FLIPPED, planted

    df = planted()
    at = _app(checkpoint="minilm")
    _upload(at, df.to_csv(index=False).encode(), "labels.csv")
    at.switch_page("pages/data.py").run()
    at.checkbox(key="data_compare").uncheck().run()  # minilm has no trained head to compare with
    assert not at.exception and not at.error, [e.value for e in at.error]
    at.switch_page("pages/audit.py").run()
    at.button(key="audit_run").click().run()
    found = at.session_state["audit_result"].found
    accept = [r for r in FLIPPED if r in set(found.flagged)][:3]
    assert len(accept) == 3
    at.session_state["audit_accepted"] = set(accept)
    at.run()
    at.button(key="audit_use").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    src = at.session_state[DATA_KEY]
    assert (src.version, src.changed) == (2, 3)
    new = read_csv(src.bytes).frame
    changed = [i for i in range(len(df)) if new.loc[i, "label"] != df.loc[i, "label"]]
    assert changed == sorted(accept)  # exactly the accepted rows, relabelled
    assert all(new.loc[r, "label"] == str(found.suggested(r)) for r in accept)
    assert "labels.csv, version 2: 3 rows changed" in _captions(at)  # a new audit is on version 2
    at.button(key="audit_run").click().run()
    again = at.session_state["audit_result"].found
    assert [again.given(r) for r in accept] == [found.suggested(r) for r in accept]
    at.switch_page("pages/finetune.py").run()
    assert "Data: labels.csv, version 2: 3 rows changed" in _captions(at)
    at.switch_page("pages/data.py").run()  # the Data page keeps the version (and names it)
    assert at.session_state[DATA_KEY].bytes == src.bytes and "version 2: 3 rows changed" in _captions(at)
    at.button(key="data_original").click().run()
    assert at.session_state[DATA_KEY].version == 1


@pytest.mark.slow
def test_a_second_fine_tune_is_the_one_downloaded_and_each_is_named_for_what_it_is():
    """After a head-mode fine-tune and then a full one, the download picker stayed on the first
    model and its zip held the head-mode model. The picker follows the newest; the zip holds its weights."""
    import io
    import re
    import zipfile

    from safetensors.torch import load as load_safetensors

    from explorer.runtime import scratch
    from explorer.ui import MODELS

    at = _app()
    _upload(at, demo_frame(per_class=4, seed=4).to_csv(index=False).encode(), "tweets.csv")
    at.switch_page("pages/data.py").run()
    at.switch_page("pages/finetune.py").run()
    at.number_input(key="ft_max_length").set_value(16).run()
    names = []
    for mode, epochs in (("head", 2), ("full", 1)):
        at.radio(key="ft_mode").set_value(mode).run()
        at.number_input(key=f"ft_epochs_{mode}").set_value(epochs).run()
        at.button(key="ft_start").click().run()
        job = at.session_state[FT_JOB][1]
        assert job.wait(120) and job.error is None, job.error
        at.run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        names.append(job.name)
        # named for what it is: checkpoint, mode, data, epochs, time (UTC)
        assert re.fullmatch(rf"minilm-sentiment-{mode}-tweets-{epochs}ep-\d{{4}}-\d{{6}}", job.name), job.name
        assert at.selectbox(key="ft_download_model").value == job.name  # the newest, not the one picked before
        at.button(key="ft_prepare").click().run()
        assert not at.exception and at.get("download_button")
    owner = at.session_state["_model_owner"].id
    newest = MODELS.get(owner, names[1]).model.state_dict()
    with zipfile.ZipFile(scratch.process_folder() / f"{names[1]}.zip") as zf:
        weights = load_safetensors(zf.read(f"{names[1]}/model.safetensors"))
    key = next(k for k in weights if "encoder.layer.0.attention.self.query.weight" in k)
    assert torch.equal(weights[key], newest[key])  # the full fine-tune's encoder, trained
    first = MODELS.get(owner, names[0]).model.state_dict()
    assert not torch.equal(first[key], newest[key])  # a head-mode zip would hold the untouched encoder


def test_model_names_say_what_they_are_and_never_repeat_within_a_second():
    from datetime import datetime, timezone

    from explorer.train.finetune import session_name

    when = datetime(2026, 12, 5, 7, 31, 2, tzinfo=timezone.utc)
    names = [session_name("/models/My Model", mode="full", data="tweets v2.csv", epochs=3, when=when) for _ in range(3)]
    assert names == ["My_Model-full-tweets_v2-3ep-1205-073102", "My_Model-full-tweets_v2-3ep-1205-073102-2",
                     "My_Model-full-tweets_v2-3ep-1205-073102-3"]  # path-safe: the zip and its folder bear it
    assert session_name("minilm", mode="head", data="demo.csv", epochs=None,
                        when=when) == "minilm-head-demo-30ep-1205-073102"


def test_a_stopped_fine_tune_counts_its_epochs_against_the_planned_ones(minilm):
    """After Stop at epoch 3 of 10 the page read "Kept epoch 3 of 3"."""
    from explorer.data.dataset import prepare
    from explorer.train.finetune import Settings, finetune

    data = prepare(read_csv(demo_frame(per_class=4, seed=4).to_csv(index=False).encode()), "text", "label")
    done = []
    res = finetune(minilm, data, settings=Settings(epochs=10, max_length=16), on_epoch=done.append,
                   stop=lambda: len(done) >= 3)
    assert res.stopped and len(res.history) == 3 and res.epochs == 10

    def page():
        import streamlit as st

        from explorer.ui.views import finetune

        finetune.draw_finetune_result(st.session_state["res"], "m")

    at = AppTest.from_function(page, default_timeout=60)
    at.session_state["res"] = res
    at.run()
    assert not at.exception
    assert [i.value for i in at.info] == ["Stopped when asked, after epoch 3 of 10 planned."]
    assert f"Kept epoch {res.best_epoch} of 10 planned:" in _captions(at)

"""Issue 19's practitioner flow in AppTest: Fine-tune counts epochs from the start, trains the sidebar's
head and names it, names the kept epoch, zips each session model once and offers every one; the Data
page shows the columns it guessed and a categorical label axis; accepted audit fixes become the next
version of the dataset that Data, Label audit and Fine-tune use."""
import dataclasses
import json
import threading
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from explorer.data.dataset import demo_frame, read_csv
from explorer.ui.session import DATA_KEY, Upload

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
    assert bar.proto.text == "Epoch 0 of 5"  # not "of 1" before the first epoch ends
    gate.set()
    job = at.session_state["ft_job"]
    assert job.wait(60)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    res = job.result
    assert f"Kept epoch {res.best_epoch} of 5:" in _captions(at)
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

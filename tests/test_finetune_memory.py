"""Full fine-tuning's memory bound: batch x length x rows x the model's shape, checked against
HEAD_EXPLORER_TRAIN_MB before anything starts (CLI: exit 2, one line; page: one line, no slot taken);
validation in batches gives the unbatched logits."""

import pytest
import torch
from transformers import GPT2Config

from explorer import cli
from explorer.data.dataset import prepare, read_csv
from explorer.runtime.budget import FULL_PASS, Dims, token_passes
from explorer.train import finetune as ft
from explorer.train.finetune import MIN_LENGTH, FinetuneError, Settings, check_memory, full_memory

ROWS = "".join(f"sentence number {i} is {'here and there ' * (i % 7)},{['pos', 'neg'][i % 2]}\n" for i in range(40))


@pytest.fixture
def data():
    return prepare(read_csv(("text,label\n" + ROWS).encode()))


def test_dims_come_from_each_family_s_own_config_names(tiny):
    for ck in tiny.values():  # BertConfig, DistilBertConfig (dim, n_layers, n_heads, hidden_dim), RobertaConfig
        assert Dims.of(ck.model.config) == Dims(layers=2, hidden=32, intermediate=64, heads=4)
    gpt2 = GPT2Config(n_embd=48, n_layer=3, n_head=6)
    assert Dims.of(gpt2) == Dims(layers=3, hidden=48, intermediate=4 * 48, heads=6)  # n_inner=None: 4 x hidden


def test_estimate_grows_with_batch_length_rows_and_model(tiny, minilm):
    ck = tiny["bert"]
    base = full_memory(ck, 8, length=64, rows=100)
    assert full_memory(ck, 16, length=64, rows=100) > base and full_memory(ck, 8, length=128, rows=100) > base
    assert full_memory(ck, 8, length=64, rows=1000) > base and full_memory(minilm, 8, length=64, rows=100) > base
    # attention's scores grow with length squared: doubling it more than doubles one step's activations
    step = lambda n: full_memory(ck, 8, length=n, rows=0) - full_memory(ck, 0, length=n, rows=0)  # noqa: E731
    assert step(256) > 2 * step(128)


def test_over_budget_is_refused_with_the_largest_batch_that_fits(tiny, monkeypatch):
    ck = tiny["bert"]
    monkeypatch.setenv(ft.TRAIN_ENV, "1024")  # 100,000 rows x 512 tokens take ~650 MB of it
    with pytest.raises(FinetuneError) as err:
        check_memory(ck, Settings(mode="full", batch_size=512, max_length=512), rows=100_000)
    p = err.value.params
    assert err.value.key == "finetune_memory" and p["fit_length"] == 512 and 1 <= p["fit_batch"] < 512
    assert (full_memory(ck, p["fit_batch"], length=512, rows=100_000) <= 1024 * 2**20
            < full_memory(ck, p["fit_batch"] + 1, length=512, rows=100_000))
    assert p["need"] * 2**20 >= full_memory(ck, 512, length=512, rows=100_000)
    msg = str(err.value)
    assert "\n" not in msg and f"batch {p['fit_batch']} × length 512 fits" in msg and "HEAD_EXPLORER_TRAIN_MB" in msg
    assert "\n" not in err.value.message("vi") and "HEAD_EXPLORER_TRAIN_MB" in err.value.message("vi")
    check_memory(ck, Settings(mode="full", batch_size=p["fit_batch"], max_length=512), rows=100_000)  # that one passes
    check_memory(ck, Settings(mode="head", batch_size=512, max_length=512), rows=100_000)  # head mode: no such pass


def test_when_no_batch_fits_the_longest_length_at_batch_one_is_named(tiny, monkeypatch):
    ck = tiny["bert"]
    budget = full_memory(ck, 1, length=200, rows=10) // 2**20 + 1
    monkeypatch.setenv(ft.TRAIN_ENV, str(budget))
    with pytest.raises(FinetuneError) as err:
        check_memory(ck, Settings(mode="full", batch_size=4, max_length=4096), rows=10)
    p = err.value.params
    assert p["fit_batch"] == 1 and 200 <= p["fit_length"] < 4096
    assert (full_memory(ck, 1, length=p["fit_length"], rows=10) <= budget * 2**20
            < full_memory(ck, 1, length=p["fit_length"] + 1, rows=10))
    monkeypatch.setenv(ft.TRAIN_ENV, "1")  # below even the weights' copies
    with pytest.raises(FinetuneError) as err:
        check_memory(ck, Settings(mode="full", batch_size=4, max_length=MIN_LENGTH), rows=10)
    assert err.value.key == "finetune_memory_model" and "head mode" in str(err.value)


def test_finetune_itself_refuses_before_copying_the_model(tiny, data, monkeypatch):
    monkeypatch.setenv(ft.TRAIN_ENV, "1")
    copies = []
    monkeypatch.setattr(ft, "trainable_copy", lambda *a, **k: copies.append(a) or pytest.fail("copied"))
    with pytest.raises(FinetuneError, match="HEAD_EXPLORER_TRAIN_MB"):
        ft.finetune(tiny["bert"], data, settings=Settings(mode="full", epochs=1, max_length=64))
    assert copies == []


def test_cli_over_budget_exits_2_with_one_line_and_writes_nothing(tiny_root, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good.csv").write_text("text,label\n" + ROWS)
    code = cli.main(["finetune", "--csv", "good.csv", "--checkpoint", str(tiny_root / "tiny-bert"), "--mode", "full",
                     "--batch-size", "4096", "--max-length", "128", "--epochs", "1", "--out", "out"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: full fine-tuning at batch 4096"), err
    assert "HEAD_EXPLORER_TRAIN_MB" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.csv"]


@pytest.mark.parametrize("arch", ["bert", "roberta"])
def test_batched_validation_equals_the_unbatched_forward(tiny, data, arch):
    ck = tiny[arch]
    texts = list(data.texts[:13])  # ragged lengths: each batch pads differently
    model = ck.model.eval()
    with torch.no_grad():
        enc = ck.tokenizer(texts, truncation=True, max_length=64, padding=True, return_tensors="pt")
        whole = model(**enc).logits.float()
    for batch in (1, 4, 13, 64):  # the validation's batched forward: predict_batches, as the full fine-tune calls it
        got = torch.from_numpy(ft.predict_batches(ck.tokenizer, model, texts, batch_size=batch, max_length=64))
        assert got.shape == whole.shape
        torch.testing.assert_close(got, whole, atol=1e-5, rtol=1e-5)


def test_full_finetune_validates_in_batches_of_the_training_size(tiny, data, monkeypatch):
    sizes = []
    real = ft.predict_batches

    def spy(tokenizer, model, texts, pairs=None, **kw):
        sizes.append((len(texts), kw["batch_size"]))
        return real(tokenizer, model, texts, pairs, **kw)

    monkeypatch.setattr(ft, "predict_batches", spy)
    result = ft.finetune(tiny["bert"], data, settings=Settings(mode="full", epochs=2, batch_size=3, max_length=32))
    assert sizes == [(8, 3), (8, 3)] and result.confusion.sum() == 8  # 20% of 40 rows, each epoch


def test_tokenized_rows_are_int32_and_read_back_as_the_tokenizer_wrote_them(tiny, data):
    tok = tiny["bert"].tokenizer
    texts = list(data.texts)
    rows = ft._TokenizedRows(tok, texts, torch.zeros(len(texts)), 32, chunk=7)  # chunks that do not divide the rows
    enc = tok(texts, truncation=True, max_length=32)
    assert len(rows) == len(texts)
    assert all(v.dtype.name == "int32" for vs in rows.enc.values() for v in vs)
    assert [rows[i]["input_ids"] for i in range(len(texts))] == enc["input_ids"]


# ---- token passes: rows x length x epochs, for sentence and token fine-tunes alike ----------------------------

def test_token_passes_count_rows_length_and_full_mode_epochs():
    assert token_passes(1000, 128, epochs=30, full=False) == 1000 * 128  # features once
    assert token_passes(1000, 64, epochs=3, full=True) == 1000 * 64 * 3 * FULL_PASS


def test_past_the_work_budget_is_refused_with_the_most_rows_and_the_longest_length_that_fit(monkeypatch):
    monkeypatch.setenv(ft.WORK_ENV, "1000000")
    s = Settings(mode="full", epochs=3, max_length=128)
    with pytest.raises(FinetuneError) as err:
        ft.check_work(s, 10_000)
    p = err.value.params
    assert err.value.key == "finetune_work" and p["fit_rows"] == "868" and p["fit_length"] == 11
    assert token_passes(868, 128, 3, full=True) <= 1_000_000 < token_passes(869, 128, 3, full=True)
    assert token_passes(10_000, 11, 3, full=True) <= 1_000_000
    msg = str(err.value)
    assert "\n" not in msg and "HEAD_EXPLORER_TRAIN_TOKENS" in msg and "868 rows fit" in msg, msg
    assert "\n" not in err.value.message("vi") and "868" in err.value.message("vi")
    ft.check_work(s, 868)
    with pytest.raises(FinetuneError) as err:  # no length of 8 or more fits every row: rows only
        ft.check_work(s, 100_000)
    assert err.value.key == "finetune_work_rows" and err.value.params["fit_rows"] == "868"


def test_a_100000_sentence_token_fine_tune_is_refused_before_it_starts(tiny_root, tmp_path, capsys, monkeypatch):
    """A head-mode fine-tune on a 100,000-sentence CoNLL file held a job slot past 420 s: now one line, at once."""
    import time

    monkeypatch.delenv(ft.WORK_ENV, raising=False)
    conll = tmp_path / "big.conll"
    conll.write_text("".join(f"Alice{i} B-PER\nlives O\nin O\nParis B-LOC\n\n" for i in range(100_000)))
    start = time.monotonic()
    code = cli.main(["finetune", "--csv", str(conll), "--checkpoint", str(tiny_root / "tiny-bert"),
                     "--mode", "head", "--out", str(tmp_path / "out")])
    lines = capsys.readouterr().err.splitlines()  # a note (a new token head for this sentence model), the error
    err = lines[-1]
    assert code == 2 and [x for x in lines if x.startswith("error: ")] == [err], lines
    assert err.startswith("error: fine-tuning 100,000 rows at length 128 for 30 epoch(s) in head mode"), err
    assert "HEAD_EXPLORER_TRAIN_TOKENS" in err and "31,250 rows fit" in err and "length 40" in err, err
    assert time.monotonic() - start < 60 and not (tmp_path / "out").exists()

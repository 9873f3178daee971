"""Token data in, tag checks and token-head fine-tuning: CoNLL and tokens/tags CSVs, subword
alignment, invalid BIO, a permuted tag map, one line for each bad input, and a fine-tuned token model
that transformers' pipeline() loads and that gives back the tags it learnt."""
import json
import random

import numpy as np
import pytest
from transformers import AutoTokenizer, pipeline

from explorer.cli import main
from explorer.data.dataset import DataError
from explorer.data.subwords import IGNORE, align_labels
from explorer.data.tag_report import invalid_sequences, scheme, tag_report
from explorer.data.tags import layout, read_tags
from explorer.model.checkpoints import embedded_encoder_dir, load_checkpoint
from explorer.train.finetune import Settings, export
from explorer.train.finetune_tags import finetune_tags

PER, LOC = ("alice", "bob", "carol", "dave"), ("paris", "london", "berlin", "rome")


def _sentences(n: int = 40, seed: int = 0) -> list[list[tuple[str, str]]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        p, loc = rng.choice(PER), rng.choice(LOC)
        if i % 3 == 0:
            out.append([(p, "B-PER"), ("lives", "O"), ("in", "O"), ("new", "B-LOC"), ("york", "I-LOC")])
        elif i % 3 == 1:
            out.append([(p, "B-PER"), ("lives", "O"), ("in", "O"), (loc, "B-LOC")])
        else:
            out.append([(loc, "B-LOC"), ("is", "O"), ("home", "O"), ("to", "O"), (p, "B-PER")])
    return out


def _conll(sents, rename: dict | None = None) -> bytes:
    rename = rename or {}
    return "\n\n".join("\n".join(f"{w} {rename.get(t, t)}" for w, t in s) for s in sents).encode() + b"\n"


@pytest.fixture(scope="module")
def ner(tiny_root, minilm):
    """A token classifier (B-PER, I-LOC, ...) trained here in head mode, saved under the allowed roots."""
    data = read_tags(_conll(_sentences()), name="ner.conll")
    result = finetune_tags(minilm, data, settings=Settings(mode="head", epochs=20, learning_rate=5e-3, batch_size=8,
                                                  max_length=32))
    assert result.metrics["f1"] == 1.0 and result.problem_type == "token-classification"
    return export(result, tiny_root / "tiny-ner")


# ---- reading -------------------------------------------------------------------------------------


def test_conll_file_is_read_with_docstart_extra_columns_and_blank_lines(tmp_path):
    path = tmp_path / "train.conll"
    path.write_text("-DOCSTART- -X- -X- O\n\nEU NNP B-NP B-ORG\nrejects VBZ B-VP O\n\n\n"
                    "Peter NNP B-NP B-PER\nBlackburn NNP I-NP I-PER\n")
    data = read_tags(path)
    assert data.layout == "conll" and data.words == (("EU", "rejects"), ("Peter", "Blackburn"))
    assert data.tags == (("B-ORG", "O"), ("B-PER", "I-PER")) and data.tag_names == ("B-ORG", "B-PER", "I-PER", "O")


def test_tokens_tags_csv_is_read_from_space_separated_and_json_cells():
    raw = b'tokens,tags\nEU rejects German,B-ORG O B-MISC\n"[""Peter"", ""Blackburn""]","[""B-PER"", ""I-PER""]"\n'
    assert layout(raw) == "tags_csv"
    data = read_tags(raw)
    assert data.layout == "csv" and (data.tokens_column, data.tags_column) == ("tokens", "tags")
    assert data.words == (("EU", "rejects", "German"), ("Peter", "Blackburn"))
    assert data.tags[1] == ("B-PER", "I-PER")


def test_numeric_ner_tags_are_named_by_id2label_and_refused_without_names():
    raw = b"words,ner_tags\n\"['EU', 'rejects']\",\"[3, 0]\"\n"
    data = read_tags(raw, id2label={0: "O", 3: "B-ORG"})
    assert data.tags == (("B-ORG", "O"),)
    with pytest.raises(DataError, match="numbers") as err:
        read_tags(raw)
    assert err.value.key == "tags_numbers_no_names" and "\n" not in str(err.value)
    with pytest.raises(DataError, match="numbers"):  # placeholder names name nothing
        read_tags(raw, id2label={0: "LABEL_0", 3: "LABEL_3"})


def test_sentence_csv_and_prose_are_not_token_data():
    assert layout(b"text,label\ngood film,positive\nbad film,negative\n") == "csv"
    assert layout(b"a few words of prose\nand another line that runs longer\nshort one\n") == "csv"
    assert layout(b"text\tlabel\ngood\tpositive\nbad\tnegative\n") == "csv"  # one-word texts, a TSV header
    with pytest.raises(DataError) as err:
        read_tags(b"text,label\ngood film,positive\n", name="s.csv")
    assert err.value.key == "tags_layout" and "CoNLL" in str(err.value) and "text,label" in str(err.value)


def test_labels_go_on_the_first_subword_and_minus_100_elsewhere():
    tok = AutoTokenizer.from_pretrained(str(embedded_encoder_dir()))
    words = [["Blackburnshire", "is", "here"]]
    enc = align_labels(tok, words, [[1, 0, 0]])
    word_ids = enc.word_ids(0)
    assert word_ids.count(0) > 1  # the first word is split into subwords
    labels = enc["labels"][0]
    assert labels[0] == IGNORE and labels[-1] == IGNORE  # [CLS], [SEP]
    first = word_ids.index(0)
    assert labels[first] == 1 and all(labels[i] == IGNORE for i, w in enumerate(word_ids) if w == 0 and i != first)
    assert [labels[word_ids.index(w)] for w in (1, 2)] == [0, 0]


# ---- tag checks ------------------------------------------------------------------------------------


def test_scheme_is_detected_from_tag_names():
    assert scheme(["O", "B-PER", "I-PER"]) == "IOB2"
    assert scheme(["O", "B-PER", "E-PER", "S-LOC"]) == "BIOES"
    assert scheme(["O", "I-PER"]) == "IO"
    assert scheme(["PER", "O"]) == "none"


def test_invalid_bio_sequences_are_counted_with_examples():
    tags = [["O", "I-PER", "B-LOC", "I-PER"], ["B-PER", "I-PER", "O"], ["I-LOC"]]
    n, examples = invalid_sequences(tags, "IOB2")
    assert n == 3
    assert examples[0] == {"sentence": 1, "word": 2, "tag": "I-PER", "previous": "O"}
    assert examples[1] == {"sentence": 1, "word": 4, "tag": "I-PER", "previous": "B-LOC"}
    assert invalid_sequences([["B-PER", "I-PER", "E-PER", "O", "S-LOC"]], "BIOES")[0] == 0
    assert invalid_sequences([["O", "E-PER"]], "BIOES")[0] == 1
    data = read_tags(b"a O\nb I-PER\n\nc B-LOC\nd I-LOC\n")
    report = tag_report(data)
    assert report.invalid == 1 and "invalid_tags" in report.kinds and report.scheme == "IOB2"
    assert "first subword" in report.notes[-1]


def test_permuted_tag_map_is_found_with_the_right_suggestion(ner):
    ck = load_checkpoint(str(ner))
    sents = _sentences(12, seed=1)
    right = tag_report(read_tags(_conll(sents)), ck)
    assert right.suggested_mapping == {} and right.accuracy_before == 1.0
    assert "permuted_mapping" not in right.kinds and "subword" in right.notes[-1]
    cycle = {"B-PER": "B-LOC", "B-LOC": "O", "O": "B-PER"}  # PER words now say B-LOC, and so on
    report = tag_report(read_tags(_conll(sents, cycle)), ck)
    assert "permuted_mapping" in report.kinds
    assert report.suggested_mapping == {"B-LOC": "B-PER", "O": "B-LOC", "B-PER": "O", "I-LOC": "I-LOC"}
    assert report.accuracy_before < 0.2 and report.accuracy_after == 1.0
    assert report.confusion.sum() == sum(len(s) for s in sents)


def test_tags_one_side_lacks_and_generic_names_are_reported(ner, tiny_root):
    ck = load_checkpoint(str(ner))
    report = tag_report(read_tags(b"alice B-PER\nlives O\nin O\nparis B-GPE\n"), ck)
    unseen = next(i for i in report.issues if i.kind == "unseen_tags")
    assert unseen.detail == {"csv_only": ["B-GPE"], "checkpoint_only": ["B-LOC", "I-LOC"]}
    assert "CSV" not in unseen.message and "in the file only: B-GPE" in unseen.message  # not only CSVs hold tags
    # valid BIO data that simply does not use some of the checkpoint's tags is not an issue, only a note
    fine = tag_report(read_tags(b"alice B-PER\nlives O\nin O\nparis B-LOC\n"), ck)
    assert "unseen_tags" not in fine.kinds and not fine.issues, fine.issues
    assert any("also has tags this file does not use (I-LOC): fine" in n for n in fine.notes), fine.notes
    cfg = json.loads((ner / "config.json").read_text())
    generic = tiny_root / "tiny-ner-generic"
    if not generic.exists():
        import shutil

        shutil.copytree(ner, generic)
        cfg["id2label"] = {k: f"LABEL_{k}" for k in cfg["id2label"]}
        cfg["label2id"] = {v: int(k) for k, v in cfg["id2label"].items()}
        (generic / "config.json").write_text(json.dumps(cfg))
    report = tag_report(read_tags(_conll(_sentences(4))), load_checkpoint(str(generic)))
    assert "generic_label_names" in report.kinds and "unseen_tags" not in report.kinds


# ---- bad input: one line, exit 2 ---------------------------------------------------------------------


BAD = {
    "tags_length": b"tokens,tags\nEU rejects German,B-ORG O\n",
    "tags_empty_sentence": b"tokens,tags\nEU rejects,B-ORG O\n,\n",
    "tags_numbers_no_names": b"tokens,tags\nEU rejects,3 0\n",
    "tags_conll_line": b"EU B-ORG\nrejects\nGerman B-MISC\n\nPeter B-PER\nBlackburn I-PER\n",
}


@pytest.mark.parametrize("key", sorted(BAD))
def test_bad_token_data_is_one_line_and_exit_2(key, tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_bytes(BAD[key])
    with pytest.raises(DataError) as err:
        read_tags(path)
    assert err.value.key == key
    assert main(["inspect-data", "--csv", str(path)]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.count("\n") == 1 and cap.err.startswith("error: ")
    out = tmp_path / "model"
    assert main(["finetune", "--csv", str(path), "--checkpoint", "minilm", "--out", str(out)]) == 2
    assert not out.exists()  # nothing half-written


def test_a_100000_token_sentence_is_one_line():
    raw = ("\n".join(f"w{i} O" for i in range(100_000)) + "\n").encode()
    with pytest.raises(DataError) as err:
        read_tags(raw)
    assert err.value.key == "tags_long_sentence" and "100,000" in str(err.value)


def test_sequence_checkpoint_given_token_data_and_the_reverse(ner, tiny_root, tmp_path, capsys):
    conll = tmp_path / "ner.conll"
    conll.write_bytes(_conll(_sentences(4)))
    assert main(["inspect-data", "--csv", str(conll), "--checkpoint", str(tiny_root / "tiny-bert")]) == 2
    err = capsys.readouterr().err
    assert "sentence classifier" in err and err.count("\n") == 1
    sentences = tmp_path / "s.csv"
    sentences.write_text("text,label\nalice lives in paris,B-PER\nbob is here,O\n")
    assert main(["inspect-data", "--csv", str(sentences), "--checkpoint", str(ner)]) == 2
    err = capsys.readouterr().err
    assert "token classifier" in err and err.count("\n") == 1
    out = tmp_path / "model"
    assert main(["finetune", "--csv", str(sentences), "--checkpoint", str(ner), "--out", str(out)]) == 2
    assert "token classifier" in capsys.readouterr().err and not out.exists()


def test_inspect_data_reports_tags_as_json(ner, tmp_path, capsys):
    path = tmp_path / "permuted.conll"
    path.write_bytes(_conll(_sentences(9, seed=2), {"B-PER": "B-LOC", "B-LOC": "B-PER"}))
    assert main(["inspect-data", "--csv", str(path), "--checkpoint", str(ner), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["task"] == "token-classification" and out["scheme"] == "IOB2" and out["layout"] == "conll"
    assert out["suggested_mapping"]["B-LOC"] == "B-PER" and out["accuracy_after"] == 1.0


# ---- fine-tuning ----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_full_finetune_with_trainer_exports_a_model_pipeline_reads(minilm, tmp_path, capsys):
    path = tmp_path / "train.csv"
    sents = _sentences(30, seed=3)
    path.write_text("tokens,tags\n" + "".join(f"{' '.join(w for w, _ in s)},{' '.join(t for _, t in s)}\n"
                                              for s in sents))
    out = tmp_path / "ner-full"
    assert main(["finetune", "--csv", str(path), "--checkpoint", "minilm", "--mode", "full", "--epochs", "4",
                 "--lr", "5e-4", "--batch-size", "8", "--max-length", "32", "--out", str(out), "--json"]) == 0
    cap = capsys.readouterr()
    summary = json.loads(cap.out)
    assert "new token-classification head" in cap.err
    assert summary["task"] == "token-classification" and summary["f1"] == 1.0
    assert set(summary["labels"]) == {"B-LOC", "B-PER", "I-LOC", "O"}
    ner_pipe = pipeline("token-classification", model=str(out), device="cpu")
    assert set(ner_pipe.model.config.id2label.values()) == {"B-LOC", "B-PER", "I-LOC", "O"}
    found = {e["word"]: e["entity"] for e in ner_pipe("carol lives in new york")}
    assert found == {"carol": "B-PER", "new": "B-LOC", "york": "I-LOC"}
    grouped = ner_pipe("bob lives in rome", aggregation_strategy="simple")
    assert [(e["entity_group"], e["word"]) for e in grouped] == [("PER", "bob"), ("LOC", "rome")]


def test_head_finetune_reports_progress_and_stops(minilm):
    data = read_tags(_conll(_sentences(20)))
    rows = []
    result = finetune_tags(minilm, data, settings=Settings(mode="head", epochs=50, learning_rate=5e-3, batch_size=8,
                                                  max_length=32), on_epoch=rows.append, stop=lambda: len(rows) >= 3)
    assert result.stopped and len(result.history) == 3 and [r.epoch for r in rows] == [1, 2, 3]
    assert {"precision", "recall", "f1", "accuracy", "val_loss"} <= set(rows[-1].row)
    assert result.checkpoint.model.config.id2label == dict(enumerate(data.tag_names))
    assert np.isfinite(rows[-1].row["val_loss"])


def test_a_token_head_other_than_own_is_one_line(minilm):
    from explorer.train.finetune import FinetuneError

    with pytest.raises(FinetuneError, match="own head") as err:
        finetune_tags(minilm, read_tags(_conll(_sentences(6))), settings=Settings(head="mean-linear"))
    assert "\n" not in str(err.value)


def test_byte_level_words_are_tokenized_as_running_text():
    from tiny_tokenizers import roberta_style

    from explorer.data.subwords import first_subwords

    tok = roberta_style()
    words = [["hello", "world", "again"]]
    enc = align_labels(tok, words, [[1, 2, 3]])
    assert enc["input_ids"][0] == tok("hello world again")["input_ids"]  # "Ġworld", not "world" as a text start
    ids = enc.word_ids(0)
    assert [enc["labels"][0][i] for i in first_subwords(ids)] == [1, 2, 3]
    bert = AutoTokenizer.from_pretrained(str(embedded_encoder_dir()))
    assert align_labels(bert, words, [[1, 2, 3]])["input_ids"][0] == bert("hello world again")["input_ids"]

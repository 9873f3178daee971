"""Explanations of one analysis: attention, vectors, dropout, attributions, the encoder, what-if, compare."""

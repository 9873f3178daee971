"""Explanations of one analysis: vectors, dropout, attributions and their faithfulness, the encoder, what-if."""

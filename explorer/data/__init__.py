"""Labelled data: CSV reading, the label report, the label audit and its export, token data (tags)."""

"""Labelled data: reading, label names, the mapping against a checkpoint, the label report, the audit, token data."""

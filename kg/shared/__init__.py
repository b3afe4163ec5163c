"""Utilities every layer may use and that use no layer: text (script detection, token counts), ids,
disjoint sets, retrying, private files, processes and redaction."""

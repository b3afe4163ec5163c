"""The corpus layer: sections, chunks, tables and figures; enhanced chunking; the ingest pipeline."""

"""The control: APPEND ingest with no maintenance at all (what small files cost when nobody fixes them)."""

"""Squad's own files as teams write them (``history.md``, ``decisions.md``), read for import."""

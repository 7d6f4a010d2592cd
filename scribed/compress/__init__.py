"""Compressors: turn a (redacted) session into a :class:`~scribed.models.Summary`."""

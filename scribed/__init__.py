"""scribed: the Scribe of tiered agent memory (hot → cold → wiki)."""

__version__ = "0.1.0"

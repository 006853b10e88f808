"""arena: a tournament runner for Four-in-a-Row bots."""

__version__ = "0.1.0"

"""Croupier: an event-sourced card game service."""

__version__ = "0.1.0"

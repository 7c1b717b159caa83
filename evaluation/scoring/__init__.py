"""Scoring core: per-candidate losses of a system given the context (see lm.py for the fast path)."""

from .base import CandidateScore, ContextTemplate, select

__all__ = ["CandidateScore", "ContextTemplate", "select"]

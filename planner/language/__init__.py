"""The deterministic instruction decomposer, split by job (see ``parser``'s docstring)."""

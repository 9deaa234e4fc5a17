"""The episode error type, shared by the format (episodes.py) and validation (episode_validation.py)
so neither imports the other's module back."""

from __future__ import annotations


class EpisodeError(ValueError):
    """One or more problems with an episode; each line names the episode and the field."""

    def __init__(self, problems: str | list[str]) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


def _join(base: str, sub: str) -> str:
    return f"{base}.{sub}" if sub else base


def _fail(episode_id: str, path: str, message: str) -> EpisodeError:
    return EpisodeError(f"episode {episode_id}: {path}: {message}")

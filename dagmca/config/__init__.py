"""Every setting of a session, with its default (`SessionConfig`, in session.py), and
the --sampling setting's parameters (sampling.py)."""

from dagmca.config.sampling import SAMPLING_KEYS, parse_sampling
from dagmca.config.session import DEFAULT_OBSERVERS, DEFAULT_PERSPECTIVES, SessionConfig

__all__ = ["DEFAULT_OBSERVERS", "DEFAULT_PERSPECTIVES", "SAMPLING_KEYS", "SessionConfig", "parse_sampling"]

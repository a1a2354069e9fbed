"""Every setting of a session, with its default (`SessionConfig`, in session.py, its
fields declared by group in groups.py), where each value comes from (sources.py), and
the --sampling setting's parameters (sampling.py)."""

from dagmca.config.groups import DEFAULT_OBSERVERS, DEFAULT_PERSPECTIVES
from dagmca.config.sampling import SAMPLING_KEYS, parse_sampling
from dagmca.config.session import SessionConfig

__all__ = ["DEFAULT_OBSERVERS", "DEFAULT_PERSPECTIVES", "SAMPLING_KEYS", "SessionConfig", "parse_sampling"]

"""The --sampling setting: extra sampling parameters for the endpoint, as text."""

from __future__ import annotations

# what --sampling may set: the OpenAI-compatible penalties and llama.cpp's (vLLM takes
# the first three and top_k/top_p/min_p)
SAMPLING_KEYS = frozenset(
    {
        "presence_penalty",
        "frequency_penalty",
        "repeat_penalty",
        "repeat_last_n",
        "dry_multiplier",
        "dry_base",
        "dry_allowed_length",
        "dry_penalty_last_n",
        "top_k",
        "top_p",
        "min_p",
    }
)


def parse_sampling(text: str) -> dict[str, float]:
    """'repeat_penalty=1.1,dry_multiplier=0.8' as parameters; 'none' or '': none."""
    if text.strip().lower() in {"", "none"}:
        return {}
    params: dict[str, float] = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in SAMPLING_KEYS:
            keys = ", ".join(sorted(SAMPLING_KEYS))
            raise ValueError(f"{item.strip()!r} is not KEY=NUMBER with KEY one of {keys}")
        try:
            params[key] = float(value)
        except ValueError:
            raise ValueError(f"{item.strip()!r}: {value.strip()!r} is not a number") from None
    return params

"""Generators of the time series that drive changing links (docs/models/schedules.md):
mahimahi delivery traces (`traces`), rain fades by ITU-R P.1853 (`rain_fade`) with DVB-S2
adaptive coding and modulation (`modcod`), and LEO paths with handovers (`leo`)."""

# The most samples a preset generates for one run (one a second: 11.6 days), so that a long
# duration is refused before it fills the memory with rows.
MAX_SAMPLES = 1_000_000


def check_samples(count: int, what: str) -> None:
    if count > MAX_SAMPLES:
        raise ValueError(
            f"the run needs {count:,} {what}; at most {MAX_SAMPLES:,}: shorten the duration"
        )

"""/metrics as Prometheus' own parser reads it: every sample by (name, sorted labels)."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def samples_of(text: str) -> Samples:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sample's value; 0 when it is not there (a counter nothing has moved yet)."""
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)

"""The relevance set for agent text search (cards/, queries.json, sources.json) and the
rankers measured on it; `python bench/relevance.py` runs the benchmark (README.md here).

This package and the script bench/relevance.py share the dotted name `bench.relevance`: on
import the package wins, and the script is only ever run by path (a type checker given both
reports a duplicate module; give it this package only)."""

"""PostgreSQL: a batch of new agents, with every row that goes with them, written in one statement.

A registration writes the agent, its card version, its signature checks and endorsement, ~20
search terms, its text vector, its tag-count deltas and an audit entry. Written as one statement
per table, and the agent and card once per row (their keys come back one by one), a group commit
of three registrations cost the web process ~2 ms of CPU in the driver and took eight round
trips. Here the tables are chained by data-modifying CTEs: the agents' keys, returned by their
INSERT, are joined to the other rows by each agent's position in the batch. One round trip, and
the whole batch stands or falls together, as before (a duplicate URL fails it: `GroupCommitter`
then writes each registration alone). Foreign keys are checked at the end of the statement, when
every row is in place.

How the rows travel:
- the wide tables (agents, cards, audit entries, signature checks and endorsements) as one JSON
  array each, read by `json_populate_recordset`. They went first as one array per column, ~60 in
  all: the driver converted the statement (its placeholders) on every call, as it caches none
  over 50 parameters or 4,096 characters, and dumped each array, ~0.4–0.5 ms of CPU for a
  statement of one to three registrations. Now there are 15 parameters and ~3,500 characters,
  and a statement costs the web process 0.45–0.91 ms in all, against 0.78–1.68
  (`CatalogService._write_registrations`, 3,000 registrations in batches of one and three,
  interleaved runs);
- long text (the profile, the description) and raw cards as binary arrays beside the JSON,
  joined by position: escaped inside JSON they cost the database a parse. With the profile in the
  JSON, an import of 10,000 took PostgreSQL 0.33–0.36 ms of CPU a card, against 0.25–0.29 with
  arrays (three interleaved runs); now 0.22–0.25, against 0.22–0.25;
- terms (~20 an agent) as three strings: their agents' positions as an array literal, their
  kinds and their values each joined by a character none holds (`joined`), which `string_to_array`
  splits again. As three binary arrays, the 21,000 terms of 1,000 bench agents cost the driver
  20–28 ms of CPU to dump; as strings, 3.5–6 ms, and the database took as long either way;
- text vectors and tag-count deltas as binary arrays (`%(name)b`): few of them and long. In text
  form the driver would escape every element that holds a quote or backslash with a regular
  expression.

The statement runs on a driver cursor (`registry.db.driver_cursor`), without SQLAlchemy's result
objects. With the terms as strings, a statement of one registration cost the web process
0.29–0.38 ms of CPU against 0.39–0.50 before, one of three 0.36–0.58 against 0.47–0.79 (same
measure, three interleaved rounds).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import orjson
from sqlalchemy import JSON, Connection, LargeBinary, Table, Text
from sqlalchemy.dialects import postgresql

from registry.db import driver_cursor
from registry.schema import Agent, AgentCard, AuditEntry, CardEndorsement, SignatureCheck

_DIALECT = postgresql.dialect()
_UNIT_SEPARATOR = "\x1f"


class _Records:
    """Rows of a table as one JSON parameter (`name`), read back by `json_populate_recordset` as
    the relation `name`, typed as the table's rows. Rows are bind-processed as
    `DriverStatement.prepare` makes them: a JSON column's value is already its JSON text and goes
    in as it is (a `json` column keeps it verbatim). A bytes or long-text column goes beside it as
    a binary array (`name`_`column`), joined by position: in JSON it would be hex or an escaped
    string for the database to parse.

    With `numbered`, each row goes with the agent at position `n` (1-based) in the batch: `n`
    travels as the row's `agent_pk`, and the join to `keys` replaces it with the agent's key.
    """

    def __init__(self, table: Table, columns: Sequence[str], name: str, *, numbered: bool = False) -> None:
        self.name = name
        self.columns = tuple(c for c in columns if not (numbered and c == "agent_pk"))
        self._numbered = numbered
        self._arrays = tuple(c for c in self.columns if isinstance(table.c[c].type, (LargeBinary, Text)))
        self._json = frozenset(c for c in self.columns if isinstance(table.c[c].type, JSON))
        self._fields = tuple(c for c in self.columns if c not in self._arrays)
        source = f"json_populate_recordset(NULL::{table.name}, CAST(%({name})s AS json))"
        source += " WITH ORDINALITY AS " + name if self._arrays else " AS " + name
        source += "".join(f" JOIN unnest(CAST(%({name}_{c})b AS {table.c[c].type.compile(dialect=_DIALECT)}[])) "
                          f"WITH ORDINALITY AS {name}_{c}({c}, ordinality) USING (ordinality)" for c in self._arrays)
        if numbered:
            source += f" JOIN keys ON keys.n = {name}.agent_pk"
        # The columns in order, each from the relation that holds it.
        values = [f"{name}_{c}.{c}" if c in self._arrays else f"{name}.{c}" for c in self.columns]
        columns = ["agent_pk"] * numbered + list(self.columns)
        self.insert = (f"INSERT INTO {table.name} ({', '.join(columns)}) "
                       f"SELECT {', '.join(['keys.pk'] * numbered + values)} FROM {source}")

    def bind(self, parameters: dict[str, Any], rows: Sequence[dict[str, Any]], numbers: Sequence[int] = ()) -> None:
        json_columns = self._json
        records = [{c: orjson.Fragment(row[c]) if c in json_columns and row[c] is not None else row[c] for c in self._fields}
                   for row in rows]
        if self._numbered:
            for record, n in zip(records, numbers, strict=True):
                record["agent_pk"] = n
        parameters[self.name] = orjson.dumps(records).decode()
        for column in self._arrays:
            parameters[f"{self.name}_{column}"] = [row[column] for row in rows]


def joined(values: Sequence[str]) -> tuple[str, str]:
    """(`values` joined into one string, the separator): a character that none of them holds, the
    unit separator unless one does, for `string_to_array` to split them again."""
    text = _UNIT_SEPARATOR.join(values)
    if text.count(_UNIT_SEPARATOR) == max(len(values) - 1, 0):
        return text, _UNIT_SEPARATOR
    held = set(text)
    separator = next(chr(c) for c in range(0xE000, 0x110000) if chr(c) not in held)  # a private use character
    return separator.join(values), separator


@functools.lru_cache(maxsize=32)
def new_agents_statement(agent_columns: tuple[str, ...], card_columns: tuple[str, ...], check_columns: tuple[str, ...] | None,
                         endorsement_columns: tuple[str, ...] | None, audit_columns: tuple[str, ...] | None) -> NewAgentsStatement:
    """The statement for batches giving these columns (None: that table gets no rows)."""
    return NewAgentsStatement(agent_columns, card_columns, check_columns, endorsement_columns, audit_columns)


class NewAgentsStatement:
    """INSERT new agents and their rows; returns (n, pk) for the agent at position n (1-based)."""

    def __init__(self, agent_columns: tuple[str, ...], card_columns: tuple[str, ...], check_columns: tuple[str, ...] | None,
                 endorsement_columns: tuple[str, ...] | None, audit_columns: tuple[str, ...] | None) -> None:
        self._agents = _Records(Agent.__table__, agent_columns, "a")
        self._cards = _Records(AgentCard.__table__, card_columns, "cards", numbered=True)
        self._checks = _Records(SignatureCheck.__table__, check_columns, "checks", numbered=True) if check_columns else None
        self._endorsements = (_Records(CardEndorsement.__table__, endorsement_columns, "endorsements", numbered=True)
                              if endorsement_columns else None)
        self._audit = _Records(AuditEntry.__table__, audit_columns, "log") if audit_columns else None
        ctes = [
            f"new_agents AS ({self._agents.insert} RETURNING pk, id)",
            "keys AS (SELECT o.n, new_agents.pk FROM unnest(CAST(%(ids)b AS text[])) WITH ORDINALITY AS o(id, n) "
            "JOIN new_agents ON new_agents.id = o.id)",
        ]
        ctes += [f"{records.name}_rows AS ({records.insert})" for records in (self._cards, self._checks, self._endorsements) if records]
        ctes += [
            "terms AS (INSERT INTO agent_terms (agent_pk, kind, value) SELECT keys.pk, v.kind, v.value "
            "FROM unnest(CAST(%(terms_n)s AS integer[]), string_to_array(%(terms_kind)s, %(terms_sep)s), "
            "string_to_array(%(terms_value)s, %(terms_sep)s)) AS v(n, kind, value) JOIN keys USING (n))",
            "search AS (INSERT INTO agent_search (agent_pk, document_tsv) SELECT keys.pk, v.vector "
            "FROM unnest(CAST(%(search_n)b AS bigint[]), CAST(%(search_vector)b AS tsvector[])) AS v(n, vector) "
            "JOIN keys USING (n))",
            "deltas AS (INSERT INTO tag_count_deltas (tag, delta) "
            "SELECT * FROM unnest(CAST(%(delta_tag)b AS text[]), CAST(%(delta_n)b AS integer[])))",
        ]
        if self._audit:
            ctes.append(f"audit AS ({self._audit.insert})")
        self.sql = "WITH " + ",\n".join(ctes) + "\nSELECT n, pk FROM keys"

    def run(self, conn: Connection, agents: list[dict[str, Any]], cards: list[dict[str, Any]],
            checks: list[tuple[int, dict[str, Any]]], endorsements: list[tuple[int, dict[str, Any]]],
            terms: list[tuple[int, str, str]], vectors: list[str], deltas: list[tuple[str, int]],
            audit: list[dict[str, Any]]) -> list[int]:
        """Write the batch; the new agents' pks in order. Rows of children are (n, row), n 1-based."""
        parameters: dict[str, Any] = {"ids": [row["id"] for row in agents]}
        self._agents.bind(parameters, agents)
        self._cards.bind(parameters, cards, range(1, len(cards) + 1))
        for records, rows in ((self._checks, checks), (self._endorsements, endorsements)):
            if records:
                records.bind(parameters, [row for _, row in rows], [n for n, _ in rows])
        if self._audit:
            self._audit.bind(parameters, audit)
        values, separator = joined([value for _, _, value in terms])
        parameters.update(
            terms_n="{" + ",".join([str(n) for n, _, _ in terms]) + "}", terms_sep=separator,
            terms_kind=separator.join([kind for _, kind, _ in terms]), terms_value=values,
            search_n=list(range(1, len(vectors) + 1)), search_vector=vectors,
            delta_tag=[tag for tag, _ in deltas], delta_n=[n for _, n in deltas],
        )
        with driver_cursor(conn, self.sql, parameters) as cursor:
            cursor.execute(self.sql, parameters)
            keys = dict(cursor.fetchall())
        return [keys[n] for n in range(1, len(agents) + 1)]

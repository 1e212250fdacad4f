"""Trust and the relay name the catalog's tables by string (they may not import the catalog):
every column they name must exist in the catalog's models, with the same kind of type."""

from __future__ import annotations

import pytest
from sqlalchemy import TableClause

from registry.relay.catalog_tables import AGENTS as RELAY_AGENTS
from registry.schema import Base
from registry.trust.models import AGENT_CARDS, AGENT_TERMS, AGENTS


@pytest.mark.parametrize("view", [AGENTS, AGENT_CARDS, AGENT_TERMS, RELAY_AGENTS], ids=lambda view: view.name)
def test_every_named_column_is_the_models_column(view: TableClause) -> None:
    model = Base.metadata.tables[view.name]
    for column in view.columns:
        assert column.name in model.c, f"{view.name}.{column.name} is not a column of the model"
        assert isinstance(model.c[column.name].type, type(column.type)), f"{view.name}.{column.name}"

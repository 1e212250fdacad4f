"""A change event as the subscriber receives it: a CloudEvents 1.0 event in structured JSON mode
(CloudEvents HTTP binding §3.2), written by the CloudEvents SDK."""

from __future__ import annotations

import datetime as dt
from typing import Any

from cloudevents.core.bindings.http import to_structured
from cloudevents.core.formats.json import JSONFormat
from cloudevents.core.v1.event import CloudEvent

FORMAT = JSONFormat()


def cloudevent_body(
    event_id: str, kind: str, agent_id: str, at: dt.datetime, data: dict[str, Any], *, source: str, owner: str | None
) -> bytes:
    """The event's JSON. `data` as recorded (`registry.change_events.agent_data`): its `ownerId`, a
    number of this database, is given to the subscriber as the owner's principal name."""
    shown = {key: value for key, value in data.items() if key != "ownerId"} | {"owner": owner}
    attributes = {
        "id": event_id,  # the same in every delivery and replay: a subscriber drops duplicates by it
        "source": source,
        "type": kind,
        "subject": agent_id,
        "time": at,
        "datacontenttype": "application/json",
    }
    return to_structured(CloudEvent(attributes=attributes, data=shown), FORMAT).body

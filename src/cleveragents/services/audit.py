"""Audit events: who did what, when, through which surface (``ca:AuditEvent``).

An event is a few triples; a caller adds them to the commit that makes the audited
write, so the write and its record land together or not at all.
"""

from __future__ import annotations

import json
from typing import Any

import pyoxigraph as ox

from cleveragents.services.entities import TYPE, new_iri, now_literal
from cleveragents.vocabulary import ca

AUDIT_EVENT = ox.NamedNode(ca.AuditEvent)
EVENT_TYPE = ox.NamedNode(ca.eventType)
CREATED_AT = ox.NamedNode(ca.createdAt)
USER_IDENTITY = ox.NamedNode(ca.userIdentity)
DETAILS = ox.NamedNode(ca.details)


def event(event_type: str, identity: str, details: dict[str, Any]) -> tuple[ox.NamedNode, list[tuple]]:
    """A new audit event node and its triples (details become a JSON string)."""
    node, _ = new_iri("audit")
    triples = [
        (node, TYPE, AUDIT_EVENT),
        (node, EVENT_TYPE, ox.Literal(event_type)),
        (node, CREATED_AT, now_literal()),
        (node, USER_IDENTITY, ox.Literal(identity)),
        (node, DETAILS, ox.Literal(json.dumps(details, sort_keys=True, default=str))),
    ]
    return node, triples

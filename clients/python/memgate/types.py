"""Typed replies. Field names are the wire's in snake_case; ``raw`` keeps the reply as sent (fields added later included)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Literal, Optional, Union

Role = Literal["user", "agent", "system", "tool"]
Encoding = Literal["json", "msgpack"]
#: A fact value: text, number, boolean, or money ``{"amount": ..., "currency": ...}``.
FactValue = Union[str, int, float, bool, Dict[str, Any]]


@dataclass(frozen=True)
class Fact:
    key: str
    field: str
    value: FactValue
    source: str
    valid_from: str
    recorded_at: str

    @classmethod
    def from_wire(cls, d: Dict[str, Any]) -> "Fact":
        return cls(d["key"], d["field"], d["value"], d["source"], d["validFrom"], d["recordedAt"])


@dataclass(frozen=True)
class Context:
    """The ``context`` reply of a session start: ready for the system prompt."""

    session_id: str
    profile: Dict[str, FactValue]
    facts: List[Fact]
    possibly: List[Fact]
    recent: List[Dict[str, Any]]
    summaries: List[Dict[str, Any]]
    context_block: str
    tools: List[Dict[str, Any]]
    took_ms: float
    raw: Dict[str, Any] = field(repr=False, default_factory=dict)

    @classmethod
    def from_wire(cls, d: Dict[str, Any]) -> "Context":
        return cls(
            session_id=d["sessionId"],
            profile=d.get("profile", {}),
            facts=[Fact.from_wire(f) for f in d.get("facts", [])],
            possibly=[Fact.from_wire(f) for f in d.get("possibly", [])],
            recent=d.get("recent", []),
            summaries=d.get("summaries", []),
            context_block=d.get("contextBlock", ""),
            tools=d.get("tools", []),
            took_ms=d.get("tookMs", 0),
            raw=d,
        )


@dataclass(frozen=True)
class Ack:
    """A durable turn: ``duplicate`` is true when this ``turn_id`` was already stored (``seq`` is the first one's)."""

    turn_id: str
    seq: int
    duplicate: bool

    @classmethod
    def from_wire(cls, d: Dict[str, Any]) -> "Ack":
        return cls(d["turnId"], d["seq"], bool(d.get("duplicate", False)))


@dataclass(frozen=True)
class SearchResult:
    text: str
    score: float
    confidence: str
    source: str
    turn_refs: List[str]
    valid_at: str
    fact: Optional[Dict[str, Any]] = None
    outdated: Optional[Dict[str, Any]] = None

    @classmethod
    def from_wire(cls, d: Dict[str, Any]) -> "SearchResult":
        return cls(d["text"], d["score"], d["confidence"], d["source"], d.get("turnRefs", []), d.get("validAt", ""), d.get("fact"), d.get("outdated"))


@dataclass(frozen=True)
class SearchReply:
    results: List[SearchResult]
    took_ms: float
    partial: bool = False

    @classmethod
    def from_wire(cls, d: Dict[str, Any]) -> "SearchReply":
        return cls([SearchResult.from_wire(r) for r in d.get("results", [])], d.get("tookMs", 0), bool(d.get("partial", False)))


@dataclass(frozen=True)
class Entity:
    """One record of the bi-temporal timeline; ``status`` is active, superseded, retracted or expired."""

    key: str
    field: str
    value: FactValue
    status: str
    source: str
    valid_from: str
    valid_until: Optional[str]
    recorded_at: str
    raw: Dict[str, Any] = field(repr=False, default_factory=dict)

    @classmethod
    def from_wire(cls, d: Dict[str, Any]) -> "Entity":
        return cls(d["key"], d["field"], d["value"], d["status"], d["source"], d["validFrom"], d.get("validUntil"), d["recordedAt"], d)


@dataclass(frozen=True)
class FlushReport:
    """What one extraction run did (``ran`` false with ``skipped`` saying why, e.g. nothing buffered)."""

    ran: bool
    skipped: Optional[str]
    turns_read: int
    facts_extracted: int
    entities_inserted: int
    duration_ms: float
    raw: Dict[str, Any] = field(repr=False, default_factory=dict)

    @classmethod
    def from_wire(cls, d: Dict[str, Any]) -> "FlushReport":
        return cls(bool(d.get("ran")), d.get("skipped"), d.get("turnsRead", 0), d.get("factsExtracted", 0), d.get("entitiesInserted", 0), d.get("durationMs", 0), d)

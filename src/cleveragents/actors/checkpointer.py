"""LangGraph checkpoints in the store: a ``BaseCheckpointSaver`` over the graph and the data dir.

Each checkpoint is a ``ca:ActorCheckpoint`` node, written by one commit through the commit
engine (so SHACL checks it and history keeps it), linked to its parent checkpoint by
``prov:wasDerivedFrom``. The node is the index: thread, namespace, id, step, source and
the sha256 of its payload. The bytes live under the data dir, written before the commit,
so a checkpoint the graph names always has its bytes (a process killed between the two
leaves only an unreferenced file):

    <root>/<thread>/payload/<hash>        the checkpoint without channel values, and metadata
    <root>/<thread>/blobs/<hash>          one channel value at one version (a value is stored
                                          once, not once per checkpoint, like LangGraph's savers)
    <root>/<thread>/writes/<hash>.json    pending writes of one checkpoint, per task

Payloads are the configured serializer's typed bytes (``JsonPlusSerializer`` by default).
Pending writes are kept on disk only: they are the in-flight half of a step, and a commit
per task write would double the graph traffic of a run for data LangGraph discards once the
next checkpoint exists.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import random
import shutil
import tempfile
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

import pyoxigraph as ox
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_checkpoint_metadata,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from cleveragents.graph.commit import CommitRequest, CommitResult
from cleveragents.graph.store import GraphStore
from cleveragents.terms import CA, ID, PROV, RDF_TYPE, XSD

_TYPE = ox.NamedNode(RDF_TYPE)
_CHECKPOINT = ox.NamedNode(CA + "ActorCheckpoint")
_DERIVED = ox.NamedNode(PROV + "wasDerivedFrom")
_P = {name: ox.NamedNode(CA + name) for name in (
    "threadId", "checkpointNamespace", "checkpointId", "payloadHash", "payloadBytes", "checkpointStep",
)}
_INT = ox.NamedNode(XSD + "integer")


class GraphWriter(Protocol):
    """What the checkpointer needs of a writer session: the store and its one commit path."""

    store: GraphStore

    def commit(self, request: CommitRequest) -> CommitResult: ...


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


def checkpoint_iri(thread_id: str, checkpoint_ns: str, checkpoint_id: str) -> ox.NamedNode:
    return ox.NamedNode(f"{ID}actor-checkpoint/{_digest(thread_id, checkpoint_ns, checkpoint_id)[:40]}")


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _typed_to_json(value: tuple[str, bytes]) -> list[str]:
    return [value[0], base64.b64encode(value[1]).decode()]


def _typed_from_json(value: list[str]) -> tuple[str, bytes]:
    return value[0], base64.b64decode(value[1])


class StoreCheckpointSaver(BaseCheckpointSaver[str]):
    """Checkpoints of LangGraph runs recorded in the graph, with their bytes under ``root``."""

    def __init__(self, writer: GraphWriter, root: Path, *, serde: SerializerProtocol | None = None,
                 agent: str = "cleveragents") -> None:
        super().__init__(serde=serde)
        self.writer = writer
        self.root = root
        self.agent = agent
        self._lock = threading.RLock()
        self.commits = 0

    # --- files -------------------------------------------------------------------------

    def _thread_dir(self, thread_id: str) -> Path:
        return self.root / quote(thread_id, safe="")

    def _blob_path(self, thread_id: str, ns: str, channel: str, version: Any) -> Path:
        return self._thread_dir(thread_id) / "blobs" / _digest(ns, channel, str(version))

    def _writes_path(self, thread_id: str, ns: str, checkpoint_id: str) -> Path:
        return self._thread_dir(thread_id) / "writes" / f"{_digest(ns, checkpoint_id)}.json"

    def _load_blobs(self, thread_id: str, ns: str, versions: ChannelVersions) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for channel, version in versions.items():
            path = self._blob_path(thread_id, ns, channel, version)
            if not path.is_file():
                continue
            typed = _typed_from_json(json.loads(path.read_bytes()))
            if typed[0] != "empty":
                values[channel] = self.serde.loads_typed(typed)
        return values

    def _read_writes(self, thread_id: str, ns: str, checkpoint_id: str) -> dict[str, list[Any]]:
        path = self._writes_path(thread_id, ns, checkpoint_id)
        return json.loads(path.read_bytes()) if path.is_file() else {}

    def _pending(self, thread_id: str, ns: str, checkpoint_id: str) -> list[tuple[str, str, Any]]:
        stored = self._read_writes(thread_id, ns, checkpoint_id)
        rows = []
        for key, (task_id, channel, typed, task_path) in stored.items():
            idx = int(key.rsplit("\x00", 1)[1])
            rows.append((writes_sort_key(task_path, task_id, idx), task_id, channel, typed))
        rows.sort(key=lambda row: row[0])
        return [(task_id, channel, self.serde.loads_typed(_typed_from_json(typed)))
                for _, task_id, channel, typed in rows]

    # --- graph -------------------------------------------------------------------------

    def _rows(self, where: str, *, order: str = "DESC(?id)", limit: int | None = None) -> list[dict[str, str]]:
        query = (
            "SELECT ?thread ?ns ?id ?hash ?parent WHERE { ?c a ca:ActorCheckpoint ; ca:threadId ?thread ; "
            "ca:checkpointNamespace ?ns ; ca:checkpointId ?id ; ca:payloadHash ?hash . "
            f"{where} OPTIONAL {{ ?c prov:wasDerivedFrom ?p . ?p ca:checkpointId ?parent }} }} "
            f"ORDER BY ?thread ?ns {order}" + (f" LIMIT {int(limit)}" if limit is not None else "")
        )
        out = []
        for row in self.writer.store.query(query):
            out.append({name: (row[name].value if row[name] is not None else None)
                        for name in ("thread", "ns", "id", "hash", "parent")})
        return out

    def _tuple(self, row: dict[str, str], config: RunnableConfig | None = None) -> CheckpointTuple | None:
        thread_id, ns, checkpoint_id = row["thread"], row["ns"], row["id"]
        path = self._thread_dir(thread_id) / "payload" / row["hash"]
        if not path.is_file():
            return None
        payload = json.loads(path.read_bytes())
        checkpoint: Checkpoint = self.serde.loads_typed(_typed_from_json(payload["checkpoint"]))
        metadata = self.serde.loads_typed(_typed_from_json(payload["metadata"]))
        own = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}}
        return CheckpointTuple(
            config=config if config and get_checkpoint_id(config) else own,
            checkpoint={**checkpoint,
                        "channel_values": self._load_blobs(thread_id, ns, checkpoint["channel_versions"])},
            metadata=metadata,
            parent_config=({"configurable": {"thread_id": thread_id, "checkpoint_ns": ns,
                                             "checkpoint_id": row["parent"]}} if row["parent"] else None),
            pending_writes=self._pending(thread_id, ns, checkpoint_id),
        )

    @staticmethod
    def _literal_filter(variable: str, value: str) -> str:
        return f"FILTER(?{variable} = {ox.Literal(value)})"

    # --- the saver interface ------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        configurable = config["configurable"]
        where = self._literal_filter("thread", str(configurable["thread_id"])) + self._literal_filter(
            "ns", configurable.get("checkpoint_ns", ""))
        checkpoint_id = get_checkpoint_id(config)
        if checkpoint_id:
            where += self._literal_filter("id", checkpoint_id)
        with self._lock:
            rows = self._rows(where, limit=1)
            return self._tuple(rows[0], config) if rows else None

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        where = ""
        if config:
            configurable = config["configurable"]
            if configurable.get("thread_id") is not None:
                where += self._literal_filter("thread", str(configurable["thread_id"]))
            if configurable.get("checkpoint_ns") is not None:
                where += self._literal_filter("ns", configurable["checkpoint_ns"])
            if checkpoint_id := get_checkpoint_id(config):
                where += self._literal_filter("id", checkpoint_id)
        if before and (before_id := get_checkpoint_id(before)):
            where += f"FILTER(?id < {ox.Literal(before_id)})"
        with self._lock:
            rows = self._rows(where)
        remaining = limit
        for row in rows:
            if remaining is not None and remaining <= 0:
                return
            with self._lock:
                found = self._tuple(row)
            if found is None:
                continue
            if filter and not all(found.metadata.get(k) == v for k, v in filter.items()):
                continue
            if remaining is not None:
                remaining -= 1
            yield found

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        ns = configurable.get("checkpoint_ns", "")
        parent_id = configurable.get("checkpoint_id")
        stripped = dict(checkpoint)
        values: dict[str, Any] = stripped.pop("channel_values")  # type: ignore[misc]
        full_metadata = get_checkpoint_metadata(config, metadata)
        with self._lock:
            for channel, version in new_versions.items():
                typed = self.serde.dumps_typed(values[channel]) if channel in values else ("empty", b"")
                _atomic_write(self._blob_path(thread_id, ns, channel, version),
                              json.dumps(_typed_to_json(typed)).encode())
            payload = json.dumps({
                "checkpoint": _typed_to_json(self.serde.dumps_typed(stripped)),
                "metadata": _typed_to_json(self.serde.dumps_typed(full_metadata)),
            }).encode()
            digest = hashlib.sha256(payload).hexdigest()
            _atomic_write(self._thread_dir(thread_id) / "payload" / digest, payload)
            node = checkpoint_iri(thread_id, ns, checkpoint["id"])
            triples: list[tuple[Any, Any, Any]] = [
                (node, _TYPE, _CHECKPOINT),
                (node, _P["threadId"], ox.Literal(thread_id)),
                (node, _P["checkpointNamespace"], ox.Literal(ns)),
                (node, _P["checkpointId"], ox.Literal(checkpoint["id"])),
                (node, _P["payloadHash"], ox.Literal(digest)),
                (node, _P["payloadBytes"], ox.Literal(str(len(payload)), datatype=_INT)),
            ]
            step = full_metadata.get("step")
            if isinstance(step, int):
                triples.append((node, _P["checkpointStep"], ox.Literal(str(step), datatype=_INT)))
            if parent_id:
                triples.append((node, _DERIVED, checkpoint_iri(thread_id, ns, parent_id)))
            remove = list(self._live(node))
            self.writer.commit(CommitRequest(
                add=triples, remove=remove, message=f"checkpoint {thread_id} {checkpoint['id']}",
                cause="actor-checkpoint", agent=self.agent))
            self.commits += 1
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}}

    def _live(self, node: ox.NamedNode) -> Iterator[tuple[Any, Any, Any]]:
        for quad in self.writer.store.live_quads(node):
            yield (quad.subject, quad.predicate, quad.object)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        ns = configurable.get("checkpoint_ns", "")
        checkpoint_id = configurable["checkpoint_id"]
        with self._lock:
            stored = self._read_writes(thread_id, ns, checkpoint_id)
            for idx, (channel, value) in enumerate(writes):
                index = WRITES_IDX_MAP.get(channel, idx)
                key = f"{task_id}\x00{index}"
                # A regular write is kept once; special channels (errors, interrupts) are replaced.
                if index >= 0 and key in stored:
                    continue
                stored[key] = [task_id, channel, _typed_to_json(self.serde.dumps_typed(value)), task_path]
            _atomic_write(self._writes_path(thread_id, ns, checkpoint_id), json.dumps(stored).encode())

    def delete_thread(self, thread_id: str) -> None:
        with self._lock:
            nodes = [ox.NamedNode(row["c"].value) for row in self.writer.store.query(
                f"SELECT ?c WHERE {{ ?c a ca:ActorCheckpoint ; ca:threadId {ox.Literal(str(thread_id))} }}")]
            if nodes:
                self.writer.commit(CommitRequest(retract_subjects=nodes, message=f"delete thread {thread_id}",
                                                 cause="actor-checkpoint-delete", agent=self.agent))
            shutil.rmtree(self._thread_dir(str(thread_id)), ignore_errors=True)

    def get_next_version(self, current: str | None, channel: None) -> str:
        """``<counter>.<random>``, zero-padded so versions sort as strings (as LangGraph's own savers)."""
        if current is None:
            number = 0
        elif isinstance(current, int):
            number = current
        else:
            number = int(str(current).split(".")[0])
        return f"{number + 1:032}.{random.random():016}"

    # --- async twins: the same work on a worker thread -------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        found = await asyncio.to_thread(lambda: list(self.list(config, filter=filter, before=before, limit=limit)))
        for item in found:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

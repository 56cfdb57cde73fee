"""LangGraph checkpoints in the store: a ``BaseCheckpointSaver`` over the graph and the data dir.

Each checkpoint is a ``ca:ActorCheckpoint`` node in the graph, written through the commit
engine (so SHACL checks it and history keeps it) and linked to its parent checkpoint by
``prov:wasDerivedFrom``; the node carries thread, namespace, id, step and the sha256 and
size of its payload. The bytes live under the data dir, written (and fsync'd) before the
node is recorded:

    <root>/<thread>/index.jsonl           one line per checkpoint: ns, id, parent, payload hash
    <root>/<thread>/payload/<hash>        the checkpoint without channel values, and metadata
    <root>/<thread>/blobs/<hash>          one channel value at one version (a value is stored
                                          once, not once per checkpoint, as LangGraph's savers do)
    <root>/<thread>/writes/<hash>.json    pending writes of one checkpoint, per task

Reads come from the thread's index file, so a step does not wait for a SPARQL query. The
graph records are written in **batches**: ``flush()`` commits every checkpoint not yet
recorded in one commit (the runtime flushes at the end of a run, when it stops with an
error, and ``record_every`` checkpoints); a commit costs hundreds of milliseconds on an
indexed store, more than a whole model turn's other work. A process killed before a flush
loses no checkpoint: the index file is the write-ahead log, and the first use of the
thread afterwards records what the graph is missing. Payloads are the configured
serializer's typed bytes (``JsonPlusSerializer`` by default). Pending writes are kept on
disk only: they are the in-flight half of a step, discarded once the next checkpoint exists.
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
import time
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
from cleveragents.graph.workspace import Workspace, held_writer
from cleveragents.terms import CA, ID, PROV, RDF_TYPE, XSD
from cleveragents.vocabulary import ca

_TYPE = ox.NamedNode(RDF_TYPE)
_CHECKPOINT = ox.NamedNode(ca.ActorCheckpoint)
_DERIVED = ox.NamedNode(PROV + "wasDerivedFrom")
_P = {
    name: ox.NamedNode(CA + name)
    for name in (
        "threadId",
        "checkpointNamespace",
        "checkpointId",
        "payloadHash",
        "payloadBytes",
        "checkpointStep",
    )
}
_INT = ox.NamedNode(XSD + "integer")


class GraphWriter(Protocol):
    """What the checkpointer needs of a writer session: the store and its one commit path."""

    @property
    def store(self) -> GraphStore: ...  # read-only: WorkspaceWriter opens it on each read

    def commit(self, request: CommitRequest) -> CommitResult: ...


class WorkspaceWriter:
    """A ``GraphWriter`` that holds the store's writer only while it commits.

    For runs whose tools write to the store themselves (a session's orchestrator calls
    ``plan use``): holding the one writer for the whole run would make them wait for it."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws

    @property
    def store(self) -> GraphStore:
        return held_writer(self.ws.store_dir) or GraphStore.open_read_only(self.ws.store_dir)

    def commit(self, request: CommitRequest) -> CommitResult:
        with self.ws.writer() as writer:
            return writer.commit(request)


_MISSING = object()


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

    def __init__(
        self,
        writer: GraphWriter,
        root: Path,
        *,
        serde: SerializerProtocol | None = None,
        agent: str = "cleveragents",
        record_every: int = 32,
        full_every: int = 64,
    ) -> None:
        """``record_every``: record in the graph once this many checkpoints wait (1: every put)."""
        super().__init__(serde=serde)
        self.writer = writer
        self.root = root
        self.agent = agent
        self.record_every = max(1, record_every)
        self.full_every = max(1, full_every)
        # Per (thread, ns, channel): the last version written or read and its value (the base
        # of the next delta), and how many deltas lead to it from the last whole blob.
        self._last_value: dict[tuple[str, str, str], tuple[str, Any]] = {}
        self._delta_depth: dict[tuple[str, str, str], int] = {}
        self._lock = threading.RLock()
        self._index: dict[str, list[dict[str, Any]]] = {}
        self._pending_records: list[tuple[str, dict[str, Any]]] = []
        self.commits = 0
        # Seconds each put and each graph flush took, for the orchestration-overhead benchmark.
        self.put_seconds: list[float] = []
        self.flush_seconds: list[float] = []

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
            found = self._load_blob(thread_id, ns, channel, str(version))
            if found is not _MISSING:
                values[channel] = found
        return values

    def _load_blob(self, thread_id: str, ns: str, channel: str, version: str) -> Any:
        """One channel value: a whole blob, or a delta (``{"base", "keep", "tail"}``) applied
        to its base version's value, resolved iteratively from the last whole one."""
        chain: list[dict[str, Any]] = []
        current = version
        while True:
            cached = self._last_value.get((thread_id, ns, channel))
            if cached is not None and cached[0] == current:
                value: Any = cached[1]
                break
            path = self._blob_path(thread_id, ns, channel, current)
            if not path.is_file():
                return _MISSING
            stored = json.loads(path.read_bytes())
            if isinstance(stored, dict):
                chain.append(stored)
                current = stored["base"]
                continue
            typed = _typed_from_json(stored)
            if typed[0] == "empty":
                return _MISSING
            value = self.serde.loads_typed(typed)
            break
        for delta in reversed(chain):
            value = list(value[: delta["keep"]]) + list(self.serde.loads_typed(_typed_from_json(delta["tail"])))
        return value

    def _blob_bytes(self, key: tuple[str, str, str], version: str, value: Any, present: bool) -> bytes:
        """A list channel that grew by appending (LangGraph's ``messages``) is stored as the
        new items over its previous version, so a turn costs what it added, not the whole
        conversation again; every ``full_every``-th version of a channel is whole, which
        bounds a cold read's chain."""
        if not present:
            return json.dumps(_typed_to_json(("empty", b""))).encode()
        previous = self._last_value.get(key)
        depth = self._delta_depth.get(key, 0)
        # A copy: the next version is compared with this one as it is now.
        self._last_value[key] = (version, list(value) if isinstance(value, list) else value)
        if (
            previous is not None
            and isinstance(value, list)
            and isinstance(previous[1], list)
            and depth + 1 < self.full_every
            and len(previous[1]) <= len(value)
            and all(a is b or a == b for a, b in zip(previous[1], value, strict=False))
        ):
            self._delta_depth[key] = depth + 1
            tail = self.serde.dumps_typed(value[len(previous[1]) :])
            return json.dumps({"base": previous[0], "keep": len(previous[1]), "tail": _typed_to_json(tail)}).encode()
        self._delta_depth[key] = 0
        return json.dumps(_typed_to_json(self.serde.dumps_typed(value))).encode()

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
        return [
            (task_id, channel, self.serde.loads_typed(_typed_from_json(typed))) for _, task_id, channel, typed in rows
        ]

    # --- the thread index (the write-ahead log of the graph records) ----------------------

    def _index_path(self, thread_id: str) -> Path:
        return self._thread_dir(thread_id) / "index.jsonl"

    def _entries(self, thread_id: str) -> list[dict[str, Any]]:
        """The thread's checkpoints in the order written; the first use records any the graph lacks."""
        if thread_id not in self._index:
            path = self._index_path(thread_id)
            entries = (
                [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []
            )
            self._index[thread_id] = entries
            if entries:
                recorded = self._recorded_ids(thread_id)
                missing = [e for e in entries if e["id"] not in recorded]
                if missing:
                    self._pending_records.extend((thread_id, e) for e in missing)
                    self.flush()
        return self._index[thread_id]

    def _recorded_ids(self, thread_id: str) -> set[str]:
        rows = self.writer.store.query(
            f"SELECT ?id WHERE {{ ?c a ca:ActorCheckpoint ; ca:threadId {ox.Literal(thread_id)} ; "
            "ca:checkpointId ?id }"
        )
        return {row["id"].value for row in rows}

    def _threads(self) -> list[str]:
        if not self.root.is_dir():
            return []
        from urllib.parse import unquote

        return sorted(unquote(p.name) for p in self.root.iterdir() if (p / "index.jsonl").is_file())

    def _tuple(
        self, thread_id: str, entry: dict[str, Any], config: RunnableConfig | None = None
    ) -> CheckpointTuple | None:
        ns, checkpoint_id = entry["ns"], entry["id"]
        path = self._thread_dir(thread_id) / "payload" / entry["hash"]
        if not path.is_file():
            return None
        payload = json.loads(path.read_bytes())
        checkpoint: Checkpoint = self.serde.loads_typed(_typed_from_json(payload["checkpoint"]))
        metadata = self.serde.loads_typed(_typed_from_json(payload["metadata"]))
        own = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}}
        return CheckpointTuple(
            config=config if config and get_checkpoint_id(config) else own,
            checkpoint={
                **checkpoint,
                "channel_values": self._load_blobs(thread_id, ns, checkpoint["channel_versions"]),
            },
            metadata=metadata,
            parent_config=(
                {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": entry["parent"]}}
                if entry["parent"]
                else None
            ),
            pending_writes=self._pending(thread_id, ns, checkpoint_id),
        )

    def _latest_first(self, thread_id: str, ns: str | None) -> list[dict[str, Any]]:
        entries = [e for e in self._entries(thread_id) if ns is None or e["ns"] == ns]
        return sorted(entries, key=lambda e: (e["ns"], e["id"]), reverse=True)

    # --- graph records ------------------------------------------------------------------

    def _triples(self, thread_id: str, entry: dict[str, Any]) -> list[tuple[Any, Any, Any]]:
        node = checkpoint_iri(thread_id, entry["ns"], entry["id"])
        triples: list[tuple[Any, Any, Any]] = [
            (node, _TYPE, _CHECKPOINT),
            (node, _P["threadId"], ox.Literal(thread_id)),
            (node, _P["checkpointNamespace"], ox.Literal(entry["ns"])),
            (node, _P["checkpointId"], ox.Literal(entry["id"])),
            (node, _P["payloadHash"], ox.Literal(entry["hash"])),
            (node, _P["payloadBytes"], ox.Literal(str(entry["bytes"]), datatype=_INT)),
        ]
        if isinstance(entry.get("step"), int):
            triples.append((node, _P["checkpointStep"], ox.Literal(str(entry["step"]), datatype=_INT)))
        if entry["parent"]:
            triples.append((node, _DERIVED, checkpoint_iri(thread_id, entry["ns"], entry["parent"])))
        return triples

    def flush(self) -> CommitResult | None:
        """Record every checkpoint written since the last flush, in one commit."""
        with self._lock:
            if not self._pending_records:
                return None
            batch, self._pending_records = self._pending_records, []
            add = [t for thread_id, entry in batch for t in self._triples(thread_id, entry)]
            threads = sorted({thread_id for thread_id, _ in batch})
            started = time.perf_counter()
            try:
                result = self.writer.commit(
                    CommitRequest(
                        add=add,
                        message=f"{len(batch)} actor checkpoint(s) of {', '.join(threads)}",
                        cause="actor-checkpoint",
                        agent=self.agent,
                    )
                )
            except BaseException:
                self._pending_records = batch + self._pending_records
                raise
            self.commits += 1
            self.flush_seconds.append(time.perf_counter() - started)
            return result

    # --- the saver interface ------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        checkpoint_id = get_checkpoint_id(config)
        with self._lock:
            for entry in self._latest_first(thread_id, configurable.get("checkpoint_ns", "")):
                if checkpoint_id is None or entry["id"] == checkpoint_id:
                    return self._tuple(thread_id, entry, config)
        return None

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        configurable = (config or {}).get("configurable", {})
        threads = [str(configurable["thread_id"])] if configurable.get("thread_id") is not None else self._threads()
        ns = configurable.get("checkpoint_ns")
        checkpoint_id = get_checkpoint_id(config) if config else None
        before_id = get_checkpoint_id(before) if before else None
        remaining = limit
        for thread_id in threads:
            with self._lock:
                entries = self._latest_first(thread_id, ns)
            for entry in entries:
                if remaining is not None and remaining <= 0:
                    return
                if checkpoint_id and entry["id"] != checkpoint_id:
                    continue
                if before_id and entry["id"] >= before_id:
                    continue
                with self._lock:
                    found = self._tuple(thread_id, entry)
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
        stripped = dict(checkpoint)
        values: dict[str, Any] = stripped.pop("channel_values")  # type: ignore[misc]
        full_metadata = get_checkpoint_metadata(config, metadata)
        started = time.perf_counter()
        with self._lock:
            entries = self._entries(thread_id)
            for channel, version in new_versions.items():
                data = self._blob_bytes((thread_id, ns, channel), str(version), values.get(channel), channel in values)
                _atomic_write(self._blob_path(thread_id, ns, channel, version), data)
            payload = json.dumps(
                {
                    "checkpoint": _typed_to_json(self.serde.dumps_typed(stripped)),
                    "metadata": _typed_to_json(self.serde.dumps_typed(full_metadata)),
                }
            ).encode()
            digest = hashlib.sha256(payload).hexdigest()
            _atomic_write(self._thread_dir(thread_id) / "payload" / digest, payload)
            step = full_metadata.get("step")
            entry = {
                "ns": ns,
                "id": checkpoint["id"],
                "parent": configurable.get("checkpoint_id"),
                "hash": digest,
                "bytes": len(payload),
                "step": step if isinstance(step, int) else None,
            }
            with open(self._index_path(thread_id), "a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            entries.append(entry)
            self._pending_records.append((thread_id, entry))
            self.put_seconds.append(time.perf_counter() - started)
            if len(self._pending_records) >= self.record_every:
                self.flush()
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}}

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
        thread_id = str(thread_id)
        with self._lock:
            self._pending_records = [(t, e) for t, e in self._pending_records if t != thread_id]
            nodes = [
                ox.NamedNode(row["c"].value)
                for row in self.writer.store.query(
                    f"SELECT ?c WHERE {{ ?c a ca:ActorCheckpoint ; ca:threadId {ox.Literal(thread_id)} }}"
                )
            ]
            if nodes:
                self.writer.commit(
                    CommitRequest(
                        retract_subjects=nodes,
                        message=f"delete thread {thread_id}",
                        cause="actor-checkpoint-delete",
                        agent=self.agent,
                    )
                )
            shutil.rmtree(self._thread_dir(thread_id), ignore_errors=True)
            self._index.pop(thread_id, None)
            for key in [k for k in self._last_value if k[0] == thread_id]:
                self._last_value.pop(key, None)
                self._delta_depth.pop(key, None)

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

"""``agents actor run``: an actor alone, from files or the registry, with manual context."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from cleveragents.actors import definition, pricing, standalone
from cleveragents.actors.definition import ActorFile
from cleveragents.actors.standalone import ActorAnswer
from cleveragents.config import Config
from cleveragents.errors import UsageError
from cleveragents.services import actor_registry, providers
from cleveragents.services.actor_contexts import ActorContexts

__all__ = ["ActorContexts", "context_files", "contexts", "merge_files", "run"]
from cleveragents.graph.workspace import Workspace


def contexts(config: Config, context_dir: Path | None = None) -> ActorContexts:
    return ActorContexts(context_dir or config.data_dir / "actor-contexts")


def merge_files(files: list[ActorFile]) -> ActorFile:
    """Several ``--config`` files as one: later files see earlier files' actors; the last names the default."""
    if len(files) == 1:
        return files[0]
    last = files[-1]
    actors: dict[str, Any] = {}
    routes: dict[str, Any] = {}
    global_context: dict[str, Any] = {}
    for loaded in files:
        actors.update(loaded.actors)
        routes.update(loaded.routes)
        global_context.update(loaded.global_context)
    return ActorFile(
        source=", ".join(f.source for f in files),
        text=last.text,
        name=last.name,
        description=last.description,
        default_actor=last.default_actor,
        actors=actors,
        routes=routes,
        global_context=global_context,
        data=last.data,
    )


def context_files(config: Config, refs: list[str], context_dir: Path | None = None) -> list[dict[str, str]]:
    """``--context`` values: a file or directory path, or the name of a stored actor context."""
    store = contexts(config, context_dir)
    out: list[dict[str, str]] = []
    for ref in refs:
        path = Path(ref)
        if path.exists():
            for file in sorted(path.rglob("*")) if path.is_dir() else [path]:
                if file.is_file():
                    out.append({"path": str(file), "content": file.read_text(encoding="utf-8", errors="replace")})
        else:
            out.extend({"path": f.path, "content": f.content} for f in store.files(ref))
    return out


def run(
    config: Config,
    ws: Workspace,
    prompt: str,
    *,
    config_files: list[Path],
    actor: str | None = None,
    context: list[str] | None = None,
    context_dir: Path | None = None,
    arguments: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
    on_token: Callable[[str], None] | None = None,
    env: Mapping[str, str] | None = None,
) -> ActorAnswer:
    if not prompt.strip():
        raise UsageError("the prompt is empty: give one with --prompt")
    if config_files:
        loaded = merge_files([definition.load(p, arguments=arguments, env=env) for p in config_files])
        name = actor
    else:
        if not actor:
            raise UsageError("give --config FILE or --actor NAME (a registered actor)")
        _, loaded = actor_registry.resolve(ws, actor, env=env)
        name = None
    files = context_files(config, context or [], context_dir)
    run_context = {**dict(arguments or {}), "files": files, "prompt": prompt}
    answer = standalone.run(
        loaded,
        prompt,
        settings=providers.settings(config),
        actor_name=name,
        context=run_context,
        overrides=overrides,
        on_token=on_token,
        env=env,
    )
    prices = pricing.load_prices(Path(config.value("providers.prices_file")))
    answer.cost_usd = pricing.cost(prices, answer.model, answer.usage.as_dict())
    return answer

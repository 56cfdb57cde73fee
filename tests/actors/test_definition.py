"""Actor files: the v3 schema, Jinja2 in a sandbox, ${ENV} interpolation, one clear error each."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from cleveragents.actors.definition import load, parse
from cleveragents.errors import ValidationError

EXAMPLE = Path(__file__).parents[2] / "examples" / "actors" / "openai-compatible.yaml"

GRAPH = """
name: local/review-flow
cleveragents: {version: "3.0", default_actor: flow}
global_context:
  languages: [python, rust]
actors:
  analyst:
    type: llm
    config:
      actor: anthropic/claude-sonnet-4
      temperature: 0.1
      system_prompt: "Analyse {{ context.target }} in {{ context.languages | join(', ') }}."
    skills: [local/file-ops]
    lsp: {languages: [python]}
  writer:
    type: llm
    config: {provider: openai, model: gpt-4o, max_tokens: 512}
  flow:
    type: graph
    route: main
routes:
  main:
    type: graph
    entry_point: start
    nodes:
      start: {type: start}
      analyze: {type: agent, agent: analyst}
      write: {type: agent, agent: writer}
      end: {type: end}
    edges:
      - {source: start, target: analyze}
      - {source: analyze, target: write, condition: {context_value: needs_text, equals: true}}
      - {source: analyze, target: end}
      - {source: write, target: end}
"""


def test_the_example_for_any_openai_compatible_server_is_configured_by_the_environment():
    actor_file = load(EXAMPLE, env={"OPENAI_MODEL": "llama3.1", "OPENAI_TEMPERATURE": "0.7"})
    actor = actor_file.actor()
    assert str(actor.model_ref()) == "openai-compatible/llama3.1"
    assert actor.config["temperature"] == 0.7  # coerced from the environment's string
    defaulted = load(EXAMPLE, env={}).actor()
    assert str(defaulted.model_ref()) == "openai-compatible/gpt-4o-mini" and defaulted.config["temperature"] == 0.2
    prompt = actor_file.render_prompt(actor, {"files": [{"path": "notes.md", "content": "remember the milk"}]})
    assert "Answer in a concise way." in prompt and "--- notes.md\nremember the milk" in prompt


def test_graph_actors_routes_and_deferred_system_prompts():
    actor_file = parse(GRAPH, "flow.yaml", env={})
    assert actor_file.name == "local/review-flow" and actor_file.default_actor == "flow"
    assert actor_file.actor().type == "graph" and actor_file.actor().route == "main"
    analyst = actor_file.actor("analyst")
    assert analyst.system_prompt.startswith("Analyse {{ context.target }}")  # kept for run time
    assert actor_file.render_prompt(analyst, {"target": "auth.py"}) == "Analyse auth.py in python, rust."
    assert actor_file.routes["main"]["edges"][1]["condition"] == {"context_value": "needs_text", "equals": True}


def test_load_time_jinja_builds_structure_from_the_global_context():
    text = textwrap.dedent("""
        name: local/generated
        global_context:
          models: [gpt-4o, gpt-4o-mini]
        actors:
        {% for model in context.models %}
          {{ model | replace('-', '_') | replace('.', '_') }}:
            type: llm
            config: {provider: openai, model: {{ model }}}
        {% endfor %}
        """)
    actor_file = parse(text, "gen.yaml", env={})
    assert sorted(actor_file.actors) == ["gpt_4o", "gpt_4o_mini"]
    assert actor_file.actor("gpt_4o_mini").config["model"] == "gpt-4o-mini"


def test_actor_arguments_reach_templates():
    text = (
        "name: local/a\nactors:\n  a:\n    type: llm\n    config:\n      actor: openai/gpt-4o\n"
        '      system_prompt: "Focus on {{ context.module }}."\n'
    )
    actor_file = parse(text, "a.yaml", arguments={"module": "billing"}, env={})
    assert actor_file.render_prompt(actor_file.actor(), {}) == "Focus on billing."


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # A template reaching for attributes outside the sandbox.
        (
            "name: local/x\nactors:\n  a:\n    type: llm\n    config: {actor: openai/gpt-4o}\n"
            "    description: \"{{ ''.__class__.__mro__ }}\"\n",
            "reaches outside the sandbox",
        ),
        # An unset ${VAR} without a default, named with its key path.
        (
            "name: local/x\nactors:\n  a:\n    type: llm\n"
            "    config: {actor: openai/gpt-4o, base_url: '${NOPE_URL}'}\n",
            "actors.a.config.base_url: environment variable NOPE_URL is not set and has no default",
        ),
        # A YAML that is not an actor file.
        (
            "services:\n  web:\n    image: nginx\n",
            "not an actor file: no 'actors' (or 'agents') map (top-level keys: services)",
        ),
        ("- just\n- a list\n", "not an actor file"),
        ("name: local/x\nactors:\n  a: {type: llm, config: {actor: openai/gpt-4o}\n", "not valid YAML"),
    ],
)
def test_bad_input_gets_one_clear_error(text, message):
    with pytest.raises(ValidationError) as caught:
        parse(text, "bad.yaml", env={})
    assert message in caught.value.message
    assert caught.value.message.startswith("bad.yaml")


def test_a_schema_error_names_the_file_the_line_and_the_key_path():
    text = textwrap.dedent("""\
        name: local/x
        actors:
          a:
            type: llm
            config:
              actor: openai/gpt-4o
              sytem_prompt: typo
        """)
    with pytest.raises(ValidationError) as caught:
        parse(text, "typo.yaml", env={})
    assert caught.value.message.startswith("typo.yaml:7: actors.a.config.sytem_prompt: unknown key 'sytem_prompt'")
    text = text.replace("sytem_prompt: typo", "temperature: 9")
    with pytest.raises(ValidationError, match=r"typo\.yaml:7: actors\.a\.config\.temperature: 9 is greater"):
        parse(text, "typo.yaml", env={})


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("agent: analyst", "agent: nobody", "routes.main.nodes.analyze.agent: no actor 'nobody'"),
        ("target: write, condition", "target: nowhere, condition", "routes.main.edges[1].target: no node 'nowhere'"),
        ("route: main", "route: other", "actors.flow.route: no route 'other' (routes: main)"),
        (
            "{source: start, target: analyze}",
            "{source: start, target: end}",
            "routes.main: nodes not reachable from 'start': analyze, write",
        ),
        (
            "{source: write, target: end}",
            "{source: write, target: analyze}",
            "routes.main: the graph has a cycle: analyze -> write -> analyze",
        ),
    ],
)
def test_graph_references_are_checked(old, new, message):
    with pytest.raises(ValidationError) as caught:
        parse(GRAPH.replace(old, new), "flow.yaml", env={})
    assert caught.value.message == f"flow.yaml: {message}"


def test_circular_composition_is_refused():
    text = "name: local/c\nactors:\n  a: {type: llm, config: {actor: b}}\n  b: {type: llm, config: {actor: a}}\n"
    with pytest.raises(ValidationError, match="circular actor reference: a -> b -> a"):
        parse(text, "c.yaml", env={})


def test_json_files_are_actor_files_too():
    text = '{"name": "local/j", "actors": {"a": {"type": "llm", "config": {"actor": "openai/${M:-gpt-4o}"}}}}'
    assert str(parse(text, "j.json", env={}).actor().model_ref()) == "openai/gpt-4o"

"""The infrastructure analyzer: Compose, Kubernetes and generic YAML; secrets; bad input; renderings."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from cleveragents.analyzers._config_tree import MAX_ENTITIES
from cleveragents.analyzers.configuration import ANALYZERS as CONFIGURATION_ANALYZERS
from cleveragents.analyzers.infrastructure import ANALYZERS, CLUSTER_SCOPED, K8S
from cleveragents.indexing.emit import entity_lines
from cleveragents.indexing.link import SymbolTable
from cleveragents.indexing.model import Analyzer, FileAnalysis, Reference, RenderRequest
from cleveragents.tbox import show_term
from cleveragents.tbox.detail_levels import effective_levels
from cleveragents.terms import UKO_INFRA
from corpora.fetch import corpus_dir
from tests.analyzers.support import RESOURCE_IRI, RESOURCE_ULID, analyze, entity, graph, iri, select, source

INFRA = ANALYZERS[0]
CONFIGURATION = CONFIGURATION_ANALYZERS[0]

SERVICE, DEPLOYMENT_UNIT, PORT = UKO_INFRA + "Service", UKO_INFRA + "DeploymentUnit", UKO_INFRA + "Port"
CONFIG_FILE, CONFIG_BLOCK, CONFIG_KEY = UKO_INFRA + "ConfigFile", UKO_INFRA + "ConfigBlock", UKO_INFRA + "ConfigKey"
ENV_VAR, ENDPOINT = UKO_INFRA + "EnvironmentVariable", UKO_INFRA + "Endpoint"
CONNECTS_TO, EXPOSES, USES_CONFIG = UKO_INFRA + "connectsTo", UKO_INFRA + "exposes", UKO_INFRA + "usesConfig"


def value(analysis: FileAnalysis, key: str, local: str) -> list[object]:
    return entity(analysis, key).values.get(UKO_INFRA + local, [])


def links(analysis: FileAnalysis, key: str, predicate: str) -> list[str]:
    return [target for p, target in entity(analysis, key).links if p == predicate]


def refs(analysis: FileAnalysis, key: str, predicate: str) -> list[Reference]:
    return [r for r in analysis.references if r.source == key and r.predicate == predicate]


def level_names(types: tuple[str, ...]) -> list[str]:
    return [level.name for level in effective_levels(types[0])]


def render(analyzer: Analyzer, path: str, text: str | bytes, key: str, level: str) -> str:
    data = text.encode() if isinstance(text, str) else text
    node = entity(analyzer.analyze(source(path, data)), key)
    depth = level_names(node.types).index(level)
    return analyzer.render(RenderRequest(key, node.types, path, data, node.span, level, depth))


def everything_shown(analyzer: Analyzer, path: str, text: str) -> str:
    """All the file's triples, references and problems, and every node rendered at every level."""
    src = source(path, text)
    analysis = analyzer.analyze(src)
    parts = entity_lines(analysis, src, RESOURCE_ULID, RESOURCE_IRI)
    parts += [repr(r) for r in analysis.references] + [repr(p) for p in analysis.problems]
    for node in analysis.entities:
        parts.append(repr(node.symbols))
        for depth, level in enumerate(level_names(node.types)):
            parts.append(analyzer.render(RenderRequest(node.key, node.types, path, src.data, node.span, level, depth)))
    return "\n".join(parts)


# ── Docker Compose ─────────────────────────────────────────────────

COMPOSE = """\
x-logging: &logging
  driver: json-file
  options: {max-size: 10m}

services:
  web:
    image: nginx:1.25
    build:
      context: ./web
      dockerfile: Dockerfile.prod
    ports:
      - "8080:80/udp"
      - "127.0.0.1:8443:443"
      - 9000
      - "${WEB_PORT:-8081}:81"
      - target: 5000
        published: "5001"
        protocol: tcp
        mode: host
    expose: ["3000"]
    environment:
      - LOG_LEVEL=debug
      - WEB_SECRET_KEY=swordfish-list
      - PASSTHROUGH
    env_file:
      - .env
      - path: ../shared/common.env
        required: false
    depends_on:
      - api
    volumes:
      - static:/usr/share/nginx/html:ro
      - ./conf:/etc/nginx/conf.d
    logging: *logging
  api:
    image: "registry.local/api:${TAG:-latest}"
    environment:
      DATABASE_URL: postgres://app:urlsecret@db:5432/app
      API_TOKEN: swordfish-map
      WORKERS: 4
    depends_on:
      db:
        condition: service_healthy
      cache:
        condition: service_started
    deploy:
      replicas: 3
      resources:
        limits: {cpus: "0.50", memory: 512M}
    secrets: [db_password]
  db:
    image: postgres:16
    environment:
      POSTGRES_PASSWORD: swordfish-db
  cache:
    image: redis:7
volumes:
  static:
secrets:
  db_password:
    file: ./db_password.txt
"""


@pytest.fixture(scope="module")
def compose() -> FileAnalysis:
    return analyze(INFRA, "deploy/compose.yaml", COMPOSE)


def test_compose_file_and_services(compose: FileAnalysis) -> None:
    file_node = compose.entities[0]
    assert file_node.key == "" and file_node.types == (CONFIG_FILE, DEPLOYMENT_UNIT)
    assert ("config", "deploy/compose.yaml") in file_node.symbols
    services = [e for e in compose.entities if SERVICE in e.types]
    assert [e.key for e in services] == ["service/web", "service/api", "service/db", "service/cache"]
    assert all(DEPLOYMENT_UNIT in e.types and e.parent == "" for e in services)
    assert value(compose, "service/web", "image") == ["nginx:1.25"]
    assert value(compose, "service/api", "image") == ["registry.local/api:${TAG:-latest}"]
    assert value(compose, "service/api", "replicas") == [3]
    assert entity(compose, "service/web").span.start_line == 6
    assert not compose.problems


def test_compose_ports_short_and_long(compose: FileAnalysis) -> None:
    udp = entity(compose, "service/web/port/8080:80/udp")
    assert udp.types == (PORT, ENDPOINT) and udp.parent == "service/web"
    assert value(compose, udp.key, "portNumber") == [80]
    assert value(compose, udp.key, "publishedPort") == [8080]
    assert value(compose, udp.key, "protocol") == ["udp"]
    assert value(compose, "service/web/port/8443:443/tcp", "portNumber") == [443]
    assert value(compose, "service/web/port/9000/tcp", "portNumber") == [9000]
    assert value(compose, "service/web/port/9000/tcp", "publishedPort") == []
    assert value(compose, "service/web/port/5001:5000/tcp", "publishedPort") == [5001]
    assert value(compose, "service/web/port/3000/tcp", "portNumber") == [3000]
    interpolated = "service/web/port/${WEB_PORT:-8081}:81/tcp"
    assert value(compose, interpolated, "portNumber") == [81] and value(compose, interpolated, "publishedPort") == []
    store = graph(INFRA, "deploy/compose.yaml", COMPOSE)
    web = iri("deploy/compose.yaml", "service/web")
    rows = select(store, f"SELECT ?n WHERE {{ <{web}> uko-infra:exposes ?p . ?p uko-infra:portNumber ?n }}")
    assert sorted(int(r["n"]) for r in rows) == [80, 81, 443, 3000, 5000, 9000]
    detail = render(INFRA, "deploy/compose.yaml", COMPOSE, "service/web", "ENDPOINT_DETAIL")
    assert "published on 127.0.0.1:8443" in detail and "mode host" in detail
    assert "exposed to other services only" in detail


def test_compose_environment_list_and_map(compose: FileAnalysis) -> None:
    level = entity(compose, "service/web/env/LOG_LEVEL")
    assert level.types == (ENV_VAR,) and level.parent == "service/web"
    assert value(compose, level.key, "configValue") == ["debug"]
    assert value(compose, level.key, "keyPath") == ["services.web.environment.LOG_LEVEL"]
    assert value(compose, "service/web/env/PASSTHROUGH", "configValue") == []
    assert value(compose, "service/api/env/WORKERS", "configValue") == ["4"]
    assert value(compose, "service/api/env/DATABASE_URL", "configValue") == ["postgres://app:****@db:5432/app"]
    for key in ("service/web/env/WEB_SECRET_KEY", "service/api/env/API_TOKEN", "service/db/env/POSTGRES_PASSWORD"):
        assert value(compose, key, "isSecret") == [True]
        assert value(compose, key, "configValue") == ["****"]


def test_compose_depends_on_short_and_long_forms(compose: FileAnalysis) -> None:
    assert links(compose, "service/web", CONNECTS_TO) == ["service/api"]
    assert links(compose, "service/api", CONNECTS_TO) == ["service/db", "service/cache"]
    store = graph(INFRA, "deploy/compose.yaml", COMPOSE)
    rows = select(store, "SELECT ?a ?b WHERE { ?a uko-infra:connectsTo ?b }")
    assert {(r["a"].split("#")[1], r["b"].split("#")[1]) for r in rows} == {
        ("service/web", "service/api"),
        ("service/api", "service/db"),
        ("service/api", "service/cache"),
    }
    graph_text = render(INFRA, "deploy/compose.yaml", COMPOSE, "", "SERVICE_GRAPH")
    assert "depends on db (service_healthy), cache (service_started)" in graph_text


def test_compose_env_files_volumes_and_secrets_are_used(compose: FileAnalysis) -> None:
    targets = [r.targets for r in refs(compose, "service/web", USES_CONFIG)]
    assert targets == [(("deploy/.env", 0.9),), (("shared/common.env", 0.9),)]
    assert all(r.namespace == "config" for r in compose.references)
    assert links(compose, "service/web", USES_CONFIG) == ["volumes.static"]
    assert links(compose, "service/api", USES_CONFIG) == ["secrets.db_password"]
    # Keys the service entity does not describe itself are config keys under it; the alias is followed.
    assert value(compose, "service/web/logging.driver", "configValue") == ["json-file"]
    assert value(compose, "service/web/logging.options.max-size", "configValue") == ["10m"]
    assert value(compose, "service/web/build.dockerfile", "keyPath") == ["services.web.build.dockerfile"]


def test_compose_is_recognised_by_content_and_name() -> None:
    stack = "services:\n  app:\n    image: busybox\n"
    assert entity(analyze(INFRA, "ops/stack.yml", stack), "service/app").types == (SERVICE, DEPLOYMENT_UNIT)
    assert INFRA.file_types("docker-compose.override.yml") == (CONFIG_FILE, DEPLOYMENT_UNIT)
    assert INFRA.file_types("values.yaml") == (CONFIG_FILE,)
    # A mapping that merely has 'services' is not a Compose file.
    plain = analyze(INFRA, "catalog.yaml", "services:\n  billing: {owner: team-a}\n")
    assert not [e for e in plain.entities if SERVICE in e.types]
    assert value(plain, "services.billing.owner", "configValue") == ["team-a"]


def test_compose_renderings_grow_level_by_level() -> None:
    path = "deploy/compose.yaml"
    shown = {level: render(INFRA, path, COMPOSE, "service/api", level) for level in level_names((SERVICE,))}
    assert shown["SERVICE_LISTING"] == "service api"
    assert "depends on db" in shown["SERVICE_GRAPH"] and "env" not in shown["SERVICE_GRAPH"]
    assert "env DATABASE_URL" in shown["CONFIG_KEYS"] and "= postgres" not in shown["CONFIG_KEYS"]
    assert "env WORKERS = 4" in shown["CONFIG_VALUES"] and "replicas 3" not in shown["CONFIG_VALUES"]
    assert "replicas 3" in shown["RESOURCE_LIMITS"] and "limits cpus=0.50, memory=512M" in shown["RESOURCE_LIMITS"]
    assert shown["FULL_CONFIG"].startswith("  api:\n    image:") and shown["FULL_CONFIG"].endswith(
        "secrets: [db_password]"
    )
    # With the deployment: what it depends on and uses, from this file.
    assert "# service db" in shown["WITH_DEPLOYMENT"] and "file: ./db_password.txt" in shown["WITH_DEPLOYMENT"]
    web = render(INFRA, path, COMPOSE, "service/web", "WITH_DEPLOYMENT")
    assert "# built from deploy/web/Dockerfile.prod" in web and "# environment from shared/common.env" in web
    listing = render(INFRA, path, COMPOSE, "", "SERVICE_LISTING").splitlines()
    assert listing[0] == "compose.yaml (Compose)"
    assert [line.strip() for line in listing if "service" in line] == [
        "service web",
        "service api",
        "service db",
        "service cache",
    ]
    whole = [render(INFRA, path, COMPOSE, "", level) for level in level_names((CONFIG_FILE,))]
    assert len(set(whole)) == len(whole)


# ── Kubernetes ─────────────────────────────────────────────────────

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: shop
spec:
  replicas: 2
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api, tier: backend}
    spec:
      initContainers:
        - name: migrate
          image: shop/api:1.4
          args: ["migrate", "--password=swordfish-flag"]
      containers:
        - name: api
          image: shop/api:1.4
          ports:
            - {containerPort: 8080, name: http}
            - {containerPort: 9090, protocol: UDP}
          env:
            - name: DB_PASSWORD
              value: swordfish-env
            - name: API_KEY
              valueFrom:
                secretKeyRef: {name: api-secrets, key: api-key}
            - name: LOG_LEVEL
              valueFrom:
                configMapKeyRef: {name: api-config, key: log.level}
          envFrom:
            - configMapRef: {name: api-config}
            - secretRef: {name: api-secrets}
          resources:
            requests: {cpu: 100m, memory: 128Mi}
            limits: {cpu: "1", memory: 512Mi}
      volumes:
        - name: config
          configMap: {name: api-config}
"""

SERVICE_DOC = """\
apiVersion: v1
kind: Service
metadata:
  name: api
  namespace: shop
spec:
  selector: {app: api}
  ports:
    - {name: http, port: 80, targetPort: http}
"""

MORE = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: api-config, namespace: shop}
data:
  log.level: info
  cache_token: swordfish-cm
  app.properties: |
    url=http://example.com
    secret.key=swordfish-embedded
---
apiVersion: v1
kind: Secret
metadata:
  name: api-secrets
  namespace: shop
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"data":{"api-key":"c3dvcmRmaXNoLWItNjQ="}}'
type: Opaque
data:
  api-key: c3dvcmRmaXNoLWItNjQ=
stringData:
  note: swordfish-string-data
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: shop}
spec:
  tls: [{hosts: [shop.example.com]}]
  rules:
    - host: shop.example.com
      http:
        paths:
          - {path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
          - {path: /legacy, pathType: Exact, backend: {service: {name: legacy, port: {name: http}}}}
"""

K8S_SECRETS = [
    "swordfish-flag",
    "swordfish-env",
    "swordfish-cm",
    "swordfish-embedded",
    "swordfish-string-data",
    "c3dvcmRmaXNoLWItNjQ=",
]


def test_deployment_containers_ports_env() -> None:
    analysis = analyze(INFRA, "k8s/deployment.yaml", DEPLOYMENT)
    assert not analysis.problems
    deployment = entity(analysis, "Deployment/shop/api")
    assert deployment.types == (DEPLOYMENT_UNIT, SERVICE)
    assert (K8S, "shop/Deployment/api") in deployment.symbols
    assert value(analysis, deployment.key, "replicas") == [2]
    assert value(analysis, deployment.key, "resourceKind") == ["Deployment"]
    assert value(analysis, deployment.key, "clusterNamespace") == ["shop"]
    container = entity(analysis, "Deployment/shop/api/container/api")
    assert container.parent == deployment.key and value(analysis, container.key, "image") == ["shop/api:1.4"]
    assert entity(analysis, "Deployment/shop/api/container/migrate").parent == deployment.key
    udp = "Deployment/shop/api/container/api/port/9090/udp"
    assert value(analysis, udp, "portNumber") == [9090] and value(analysis, udp, "protocol") == ["udp"]
    assert sorted(links(analysis, deployment.key, EXPOSES)) == [
        "Deployment/shop/api/container/api/port/8080/tcp",
        udp,
    ]
    password = "Deployment/shop/api/container/api/env/DB_PASSWORD"
    assert value(analysis, password, "isSecret") == [True] and value(analysis, password, "configValue") == ["****"]
    api_key = "Deployment/shop/api/container/api/env/API_KEY"
    assert value(analysis, api_key, "isSecret") == [True] and value(analysis, api_key, "configValue") == []
    assert [r.targets for r in refs(analysis, api_key, USES_CONFIG)] == [
        (("shop/Secret/api-secrets/api-key", 0.9), ("shop/Secret/api-secrets", 0.9))
    ]
    log_level = "Deployment/shop/api/container/api/env/LOG_LEVEL"
    assert refs(analysis, log_level, USES_CONFIG)[0].targets[0] == ("shop/ConfigMap/api-config/log.level", 0.9)
    env_from = [r.targets for r in refs(analysis, container.key, USES_CONFIG)]
    assert env_from == [(("shop/ConfigMap/api-config", 0.9),), (("shop/Secret/api-secrets", 0.9),)]
    assert [r.targets for r in refs(analysis, deployment.key, USES_CONFIG)] == [(("shop/ConfigMap/api-config", 0.9),)]
    assert all(r.namespace == K8S for r in analysis.references)
    limits = render(INFRA, "k8s/deployment.yaml", DEPLOYMENT, deployment.key, "RESOURCE_LIMITS")
    assert "replicas 2" in limits and "limits cpu=1, memory=512Mi" in limits and "requests cpu=100m" in limits


def test_service_in_another_file_finds_the_deployment_through_its_pod_labels() -> None:
    service = analyze(INFRA, "k8s/service.yaml", SERVICE_DOC)
    deployment = entity(analyze(INFRA, "k8s/deployment.yaml", DEPLOYMENT), "Deployment/shop/api")
    (selector,) = refs(service, "Service/shop/api", CONNECTS_TO)
    assert selector.namespace == K8S and selector.targets == (("shop/pods/app=api", 0.9),)
    # The selector is a subset of the pod labels: the Deployment defines exactly that name.
    assert (K8S, "shop/pods/app=api") in deployment.symbols
    assert (K8S, "shop/pods/app=api,tier=backend") in deployment.symbols
    assert (K8S, "shop/pods/app=api") not in entity(service, "Service/shop/api").symbols
    port = entity(service, "Service/shop/api/port/80/tcp")
    assert value(service, port.key, "portNumber") == [80]
    assert "target port http" in render(INFRA, "k8s/service.yaml", SERVICE_DOC, port.key, "ENDPOINT_DETAIL")


def linked(*files: tuple[Analyzer, str, str]) -> set[tuple[str, str, str, float]]:
    """Resolve every reference of ``files`` with the indexer's symbol table, as an index run does."""
    table = SymbolTable()
    analyses = [(path, analyze(analyzer, path, text)) for analyzer, path, text in files]
    for path, analysis in analyses:
        for node in analysis.entities:
            for namespace, name in node.symbols:
                table.define(namespace, name, iri(path, node.key))
    return {
        (iri(path, r.source), r.predicate, target, confidence)
        for path, analysis in analyses
        for r in analysis.references
        for target, confidence in table.resolve(r)
    }


def test_the_linker_joins_services_workloads_and_env_files_across_files() -> None:
    edges = linked(
        (INFRA, "k8s/deployment.yaml", DEPLOYMENT),
        (INFRA, "k8s/service.yaml", SERVICE_DOC),
        (INFRA, "k8s/more.yaml", MORE),
        (INFRA, "deploy/compose.yaml", COMPOSE),
        (CONFIGURATION, "deploy/.env", "LOG_LEVEL=debug\n"),
    )
    service, deployment = iri("k8s/service.yaml", "Service/shop/api"), iri("k8s/deployment.yaml", "Deployment/shop/api")
    assert (service, CONNECTS_TO, deployment, 0.9) in edges
    api_key = iri("k8s/deployment.yaml", "Deployment/shop/api/container/api/env/API_KEY")
    assert (api_key, USES_CONFIG, iri("k8s/more.yaml", "Secret/shop/api-secrets/api-key"), 0.9) in edges
    assert (iri("k8s/more.yaml", "Ingress/shop/web"), CONNECTS_TO, service, 0.9) in edges
    assert (iri("deploy/compose.yaml", "service/web"), USES_CONFIG, iri("deploy/.env"), 0.9) in edges


def test_objects_in_one_file_link_without_the_linker() -> None:
    text = DEPLOYMENT + "---\n" + SERVICE_DOC + "---\n" + MORE
    analysis = analyze(INFRA, "k8s/all.yaml", text)
    assert not analysis.problems
    assert links(analysis, "Service/shop/api", CONNECTS_TO) == ["Deployment/shop/api"]
    assert links(analysis, "Deployment/shop/api/container/api/env/API_KEY", USES_CONFIG) == [
        "Secret/shop/api-secrets/api-key"
    ]
    assert links(analysis, "Deployment/shop/api/container/api/env/LOG_LEVEL", USES_CONFIG) == [
        "ConfigMap/shop/api-config/log.level"
    ]
    assert links(analysis, "Ingress/shop/web", CONNECTS_TO) == ["Service/shop/api"]
    # Only what this file lacks goes to the linker: the legacy backend.
    assert [(r.source, r.targets) for r in analysis.references] == [
        ("Ingress/shop/web", (("shop/Service/legacy", 0.9),))
    ]
    store = graph(INFRA, "k8s/all.yaml", text)
    service = iri("k8s/all.yaml", "Service/shop/api")
    rows = select(store, f"SELECT ?d WHERE {{ <{service}> uko-infra:connectsTo ?d . ?d a uko-infra:DeploymentUnit }}")
    assert [r["d"] for r in rows] == [iri("k8s/all.yaml", "Deployment/shop/api")]


def test_configmap_secret_and_ingress() -> None:
    analysis = analyze(INFRA, "k8s/more.yaml", MORE)
    config = entity(analysis, "ConfigMap/shop/api-config")
    assert config.types == (CONFIG_BLOCK,) and (K8S, "shop/ConfigMap/api-config") in config.symbols
    level = entity(analysis, "ConfigMap/shop/api-config/log.level")
    assert level.types == (CONFIG_KEY,) and (K8S, "shop/ConfigMap/api-config/log.level") in level.symbols
    assert value(analysis, level.key, "configValue") == ["info"]
    assert value(analysis, "ConfigMap/shop/api-config/cache_token", "isSecret") == [True]
    assert "secret.key=****" in value(analysis, "ConfigMap/shop/api-config/app.properties", "configValue")[0]
    secret = entity(analysis, "Secret/shop/api-secrets")
    assert value(analysis, secret.key, "isSecret") == [True]
    keys = [e for e in analysis.entities if e.parent == secret.key and e.types == (CONFIG_KEY,) and e.symbols]
    assert [e.name for e in keys] == ["api-key", "note"]
    assert all(value(analysis, e.key, "isSecret") == [True] and not value(analysis, e.key, "configValue") for e in keys)
    route = entity(analysis, "Ingress/shop/web/route/shop.example.com/api")
    assert route.types == (ENDPOINT,)
    assert value(analysis, route.key, "hostName") == ["shop.example.com"]
    assert value(analysis, route.key, "routePath") == ["/api"]
    assert value(analysis, route.key, "protocol") == ["https"]
    assert route.key in links(analysis, "Ingress/shop/web", EXPOSES)
    assert {r.targets for r in refs(analysis, "Ingress/shop/web", CONNECTS_TO)} == {
        (("shop/Service/api", 0.9),),
        (("shop/Service/legacy", 0.9),),
    }
    detail = render(INFRA, "k8s/more.yaml", MORE, route.key, "ENDPOINT_DETAIL")
    assert "Prefix -> service api:80 (TLS)" in detail


def test_kubernetes_secrets_never_leave_the_file() -> None:
    text = DEPLOYMENT + "---\n" + SERVICE_DOC + "---\n" + MORE
    shown = everything_shown(INFRA, "k8s/all.yaml", text)
    for secret in K8S_SECRETS:
        assert secret not in shown, secret
    full = render(INFRA, "k8s/all.yaml", text, "Secret/shop/api-secrets", "FULL_CONFIG")
    assert "api-key: ****" in full and "note: ****" in full and "last-applied-configuration: '****'" in full
    assert "type: Opaque" in full


def test_kubernetes_lists_defaults_and_other_kinds() -> None:
    text = """\
apiVersion: v1
kind: List
items:
  - apiVersion: batch/v1
    kind: CronJob
    metadata: {name: nightly}
    spec:
      schedule: "0 3 * * *"
      jobTemplate:
        spec:
          template:
            metadata: {labels: {job: nightly}}
            spec:
              containers: [{name: run, image: busybox}]
  - apiVersion: v1
    kind: Namespace
    metadata: {name: shop}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  resources: {requests: {storage: 10Gi}}
"""
    analysis = analyze(INFRA, "k8s/list.yaml", text)
    assert not analysis.problems
    cron = entity(analysis, "CronJob/default/nightly")
    assert (K8S, "default/pods/job=nightly") in cron.symbols
    assert value(analysis, "CronJob/default/nightly/container/run", "image") == ["busybox"]
    assert entity(analysis, "Namespace/_/shop").types == (CONFIG_BLOCK,)
    assert value(analysis, "Namespace/_/shop", "clusterNamespace") == []
    claim = "PersistentVolumeClaim/default/data"
    assert "storage 10Gi" in render(INFRA, "k8s/list.yaml", text, claim, "RESOURCE_LIMITS")
    assert value(analysis, f"{claim}/spec.resources.requests.storage", "configValue") == ["10Gi"]


def test_kubernetes_renderings() -> None:
    path = "k8s/all.yaml"
    text = DEPLOYMENT + "---\n" + SERVICE_DOC + "---\n" + MORE
    listing = render(INFRA, path, text, "", "SERVICE_LISTING")
    assert listing.splitlines() == [
        "all.yaml (Kubernetes)",
        "  Deployment shop/api",
        "    init container migrate",
        "    container api",
        "  Service shop/api",
        "  ConfigMap shop/api-config",
        "  Secret shop/api-secrets",
        "  Ingress shop/web",
    ]
    graph_text = render(INFRA, path, text, "", "SERVICE_GRAPH")
    assert "selects pods app=api" in graph_text and "routes to api, legacy" in graph_text
    container = "Deployment/shop/api/container/api"
    keys = render(INFRA, path, text, container, "CONFIG_KEYS")
    assert "env LOG_LEVEL" in keys and "from ConfigMap api-config key log.level" in keys
    full = render(INFRA, path, text, container, "FULL_CONFIG")
    assert full.startswith("        - name: api") and "value: ****" in full
    deployment = render(INFRA, path, text, container, "WITH_DEPLOYMENT")
    assert deployment.startswith("apiVersion: apps/v1\nkind: Deployment")
    # The descriptor's related manifests in this file follow it: the ConfigMap and Secret it uses.
    assert "# ConfigMap shop/api-config" in deployment and "# Secret shop/api-secrets" in deployment


# ── Generic YAML ───────────────────────────────────────────────────

GENERIC = """\
defaults: &defaults
  adapter: postgres
  host: localhost
  password: swordfish-anchor
development:
  <<: *defaults
  database: dev_db
  host: devhost
steps:
  - name: build
    run: make
  - name: test
    run: make test
tags: [a, b, c]
deep: {l2: {l3: {l4: {l5: {l6: {l7: leaf}}}}}}
long: [LONG]
""".replace("LONG", ", ".join(f"{{n: {i}}}" for i in range(60)))


def test_generic_yaml_tree_merge_keys_and_caps() -> None:
    analysis = analyze(INFRA, "config/database.yml", GENERIC)
    assert not analysis.problems
    assert entity(analysis, "defaults").types == (CONFIG_BLOCK,)
    assert entity(analysis, "defaults.adapter").types == (CONFIG_KEY,)
    # Merge keys: merged values appear under the merging mapping; explicit keys win.
    assert value(analysis, "development.adapter", "configValue") == ["postgres"]
    assert value(analysis, "development.host", "configValue") == ["devhost"]
    assert value(analysis, "development.password", "configValue") == ["****"]
    assert value(analysis, "development.database", "keyPath") == ["development.database"]
    assert entity(analysis, "steps[1]").types == (CONFIG_BLOCK,)
    assert value(analysis, "steps[1].run", "configValue") == ["make test"]
    assert value(analysis, "tags", "configValue") == ["[a, b, c]"]
    # Depth 6 is the last level: what lies deeper is the value of a depth-6 key.
    assert value(analysis, "deep.l2.l3.l4.l5.l6", "configValue") == ["{l7: leaf}"]
    assert not [e for e in analysis.entities if e.key.startswith("deep.l2.l3.l4.l5.l6.")]
    assert entity(analysis, "long").types == (CONFIG_KEY,)
    assert value(analysis, "long", "configValue")[0].startswith("[{n: 0}, {n: 1}")
    assert "swordfish-anchor" not in everything_shown(INFRA, "config/database.yml", GENERIC)


def test_a_secret_shared_through_an_alias_is_masked_where_it_is_written() -> None:
    text = "defaults:\n  value: &pw swordfish-alias\nlogin:\n  password: *pw\n"
    analysis = analyze(INFRA, "app.yaml", text)
    assert value(analysis, "defaults.value", "configValue") == ["****"]
    assert value(analysis, "defaults.value", "isSecret") == [True]
    assert "swordfish-alias" not in everything_shown(INFRA, "app.yaml", text)
    assert render(INFRA, "app.yaml", text, "", "FULL_CONFIG") == text.replace("swordfish-alias", "****")


def test_crlf_files_keep_exact_spans() -> None:
    text = 'services:\r\n  web:\r\n    image: nginx\r\n    ports:\r\n      - "80:80"\r\n'
    analysis = analyze(INFRA, "compose.yml", text)
    assert entity(analysis, "service/web/port/80:80/tcp").span.literal() == "5:8-5:15"
    assert render(INFRA, "compose.yml", text, "service/web", "FULL_CONFIG") == text[11:].rstrip()


def test_generic_multi_document_and_scalar_roots() -> None:
    analysis = analyze(INFRA, "docs.yaml", "a: 1\n---\n- x\n- {y: 2}\n---\nplain text\n")
    assert [e.key for e in analysis.entities] == [
        "",
        "doc1",
        "doc1/a",
        "doc2",
        "doc2/[0]",
        "doc2/[1]",
        "doc2/[1].y",
        "doc3",
    ]
    assert value(analysis, "doc3", "configValue") == ["plain text"]


# ── Bad input ──────────────────────────────────────────────────────


def test_syntax_error_keeps_the_file_and_earlier_documents() -> None:
    text = "kind: ok\nname: first\n---\nbroken: [1, 2\nnext: 3\n"
    analysis = analyze(INFRA, "broken.yaml", text)
    assert analysis.entities[0].key == "" and analysis.entities[0].types == (CONFIG_FILE,)
    assert value(analysis, "name", "configValue") == ["first"]
    (problem,) = analysis.problems
    assert problem.message.startswith("YAML syntax error") and problem.span.start_line == 5
    store = graph(INFRA, "broken.yaml", text)
    assert select(store, "SELECT ?n WHERE { ?f ca:parseErrorCount ?n }") == [{"n": "1"}]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", None),
        (b"# only a comment\n", None),
        (b"name: caf\xe9\nport: 80\n", "invalid UTF-8"),
        (b"a: \x01b\n", "control characters"),
        (b"key: [" * 2000, "YAML syntax error"),
        (b"\tkey: 1\n", "YAML syntax error"),
        (b"a: *undefined\n", "found undefined alias"),
    ],
)
def test_bad_input_never_raises(data: bytes, message: str | None) -> None:
    analysis = analyze(INFRA, "bad.yaml", data)
    assert analysis.entities[0].key == ""
    if message is None:
        assert not analysis.problems and len(analysis.entities) == 1
    else:
        assert any(message in p.message for p in analysis.problems)
    for level in level_names((CONFIG_FILE,)):
        assert isinstance(render(INFRA, "bad.yaml", data, "", level), str)


def test_any_prefix_of_a_file_is_analyzed_and_rendered() -> None:
    for path, text in (("deploy/compose.yaml", COMPOSE), ("k8s/all.yaml", DEPLOYMENT + "---\n" + MORE)):
        data = text.encode()
        for cut in range(0, len(data), 29):
            analysis = analyze(INFRA, path, data[:cut])
            assert not [p for p in analysis.problems if "analyzer error" in p.message], (path, cut)
            for node in analysis.entities[:: max(1, len(analysis.entities) // 5)]:
                request = RenderRequest(node.key, node.types, path, data[:cut], node.span, "CONFIG_VALUES", 5)
                assert INFRA.render(request)


def test_invalid_utf8_keeps_byte_spans() -> None:
    data = b"name: caf\xe9\nport: 80\n"
    analysis = analyze(INFRA, "bad.yaml", data)
    port = entity(analysis, "port")
    assert data[port.span.start_byte : port.span.end_byte] == b"port: 80"


def test_alias_bomb_is_capped() -> None:
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"{c}: &{c} [" + ", ".join([f"*{p}"] * 9) + "]" for p, c in zip("abcdefgh", "bcdefghi", strict=True)]
    lines += ["loop: &loop [*loop]", "after: kept"]
    text = "\n".join(lines) + "\n"
    started = time.perf_counter()
    analysis = analyze(INFRA, "bomb.yaml", text)
    assert time.perf_counter() - started < 5
    assert len(analysis.entities) < MAX_ENTITIES / 2
    assert value(analysis, "after", "configValue") == ["kept"]
    assert any("aliases repeat" in p.message for p in analysis.problems)
    assert len(render(INFRA, "bomb.yaml", text, "", "RESOURCE_LIMITS")) < 200_000
    assert render(INFRA, "bomb.yaml", text, "", "FULL_CONFIG") == text


# ── Secrets everywhere ─────────────────────────────────────────────


def test_compose_secrets_never_leave_the_file() -> None:
    shown = everything_shown(INFRA, "deploy/compose.yaml", COMPOSE)
    for secret in ("swordfish-list", "swordfish-map", "swordfish-db", "urlsecret"):
        assert secret not in shown, secret
    full = render(INFRA, "deploy/compose.yaml", COMPOSE, "", "FULL_CONFIG")
    assert "- WEB_SECRET_KEY=****" in full and "API_TOKEN: ****" in full and "app:****@db" in full
    # Everything else is the source as written.
    assert full.replace("****", "") == (
        COMPOSE.replace("swordfish-list", "")
        .replace("swordfish-map", "")
        .replace("swordfish-db", "")
        .replace("urlsecret", "")
    )


def test_full_config_is_the_exact_source_without_secrets() -> None:
    text = DEPLOYMENT.replace("--password=swordfish-flag", "--level=3").replace("DB_PASSWORD", "DB_USER")
    assert render(INFRA, "k8s/deployment.yaml", text, "", "FULL_CONFIG") == text
    analysis = analyze(INFRA, "k8s/deployment.yaml", text)
    for node in analysis.entities[1:]:
        written = text.encode()[node.span.start_byte : node.span.end_byte].decode()
        assert written.strip() in render(INFRA, "k8s/deployment.yaml", text, node.key, "FULL_CONFIG")


# ── Real files ─────────────────────────────────────────────────────


def _yaml_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.suffix in (".yml", ".yaml") and p.is_file())


def test_real_compose_files() -> None:
    checked = 0
    for name in ("advanced-alchemy-0.10.0", "aiosql-13.0"):
        root = corpus_dir(name)
        for path in _yaml_files(root):
            relative = path.relative_to(root).as_posix()
            data = path.read_bytes()
            analysis = analyze(INFRA, relative, data)
            assert not analysis.problems, (relative, analysis.problems)
            plain = yaml.safe_load(data)
            if not INFRA.file_types(relative)[1:]:
                continue
            checked += 1
            services = {e.name for e in analysis.entities if SERVICE in e.types}
            assert services == set(plain["services"]), relative
            for name_, spec in plain["services"].items():
                key = f"service/{name_}"
                if "image" in spec:
                    assert value(analysis, key, "image") == [spec["image"]]
                environment = spec.get("environment") or {}
                names = environment if isinstance(environment, dict) else [e.split("=")[0] for e in environment]
                assert {e.name for e in analysis.entities if e.parent == key and ENV_VAR in e.types} == set(names)
    assert checked == 2


def test_real_kubernetes_manifests() -> None:
    root = corpus_dir("kopf-1.37.4")
    kinds: set[str] = set()
    for path in _yaml_files(root):
        relative = path.relative_to(root).as_posix()
        data = path.read_bytes()
        analysis = analyze(INFRA, relative, data)
        assert not analysis.problems, (relative, analysis.problems)
        for doc in yaml.safe_load_all(data):
            if isinstance(doc, dict) and "apiVersion" in doc and "kind" in doc:
                meta = doc.get("metadata") or {}
                kind, namespace = doc["kind"], meta.get("namespace", "default")
                found = [e for e in analysis.entities if e.key.startswith(f"{kind}/") and e.parent == ""]
                assert [e.name for e in found].count(meta["name"]) == 1, (relative, kind)
                if kind not in CLUSTER_SCOPED:
                    assert entity(analysis, f"{kind}/{namespace}/{meta['name']}").types[0] in (
                        DEPLOYMENT_UNIT,
                        SERVICE,
                        CONFIG_BLOCK,
                    )
                kinds.add(doc["kind"])
        for node in analysis.entities:
            request = RenderRequest(node.key, node.types, relative, data, node.span, "CONFIG_VALUES", 5)
            assert (node.name if node.key else path.name) in INFRA.render(request).splitlines()[0]
        if relative.startswith(("docs/", "examples/")):  # manifests without secret-looking keys
            assert render(INFRA, relative, data, "", "FULL_CONFIG") == data.decode()
    assert {"Deployment", "CustomResourceDefinition", "ClusterRole", "ServiceAccount"} <= kinds
    depl = analyze(INFRA, "docs/deployment-depl.yaml", (root / "docs/deployment-depl.yaml").read_bytes())
    (deployment,) = [e for e in depl.entities if e.types == (DEPLOYMENT_UNIT, SERVICE)]
    assert [e.key for e in depl.entities if e.parent == deployment.key and DEPLOYMENT_UNIT in e.types]


def test_vocabulary_is_declared_in_the_ontology() -> None:
    used: set[str] = set()
    for path, text in (
        ("deploy/compose.yaml", COMPOSE),
        ("k8s/all.yaml", DEPLOYMENT + "---\n" + SERVICE_DOC + "---\n" + MORE),
    ):
        analysis = analyze(INFRA, path, text)
        for node in analysis.entities:
            used |= set(node.types) | set(node.values) | {predicate for predicate, _ in node.links}
        used |= {r.predicate for r in analysis.references}
    assert {show_term(term).kind for term in used} <= {"class", "object property", "datatype property"}
    assert UKO_INFRA + "publishedPort" in used and UKO_INFRA + "routePath" in used


def test_handles_yaml_only() -> None:
    assert INFRA.handles("deploy/compose.yaml") and INFRA.handles("k8s/app.YML")
    assert not INFRA.handles("pyproject.toml") and not INFRA.handles("notes.yaml.md")

"""IRIs of the vocabularies the product uses, and the SPARQL prefix table.

Every module takes its IRIs from here so that a namespace is spelled once.
"""

from __future__ import annotations

from typing import Final

UKO: Final = "https://cleveragents.ai/ontology/uko#"
UKO_CODE: Final = "https://cleveragents.ai/ontology/uko/code#"
UKO_OO: Final = "https://cleveragents.ai/ontology/uko/oo#"
UKO_FUNC: Final = "https://cleveragents.ai/ontology/uko/func#"
UKO_PROC: Final = "https://cleveragents.ai/ontology/uko/proc#"
UKO_PY: Final = "https://cleveragents.ai/ontology/uko/py#"
UKO_TS: Final = "https://cleveragents.ai/ontology/uko/ts#"
UKO_RS: Final = "https://cleveragents.ai/ontology/uko/rs#"
UKO_JAVA: Final = "https://cleveragents.ai/ontology/uko/java#"
UKO_GO: Final = "https://cleveragents.ai/ontology/uko/go#"
UKO_DOC: Final = "https://cleveragents.ai/ontology/uko/doc#"
UKO_DATA: Final = "https://cleveragents.ai/ontology/uko/data#"
UKO_INFRA: Final = "https://cleveragents.ai/ontology/uko/infra#"
CA: Final = "https://cleveragents.ai/ontology/ca#"
# SHACL shapes of the product (shapes/*.ttl).
CAS: Final = "https://cleveragents.ai/shapes#"

RDF: Final = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS: Final = "http://www.w3.org/2000/01/rdf-schema#"
OWL: Final = "http://www.w3.org/2002/07/owl#"
XSD: Final = "http://www.w3.org/2001/XMLSchema#"
SH: Final = "http://www.w3.org/ns/shacl#"
PROV: Final = "http://www.w3.org/ns/prov#"
P_PLAN: Final = "http://purl.org/net/p-plan#"
DCTERMS: Final = "http://purl.org/dc/terms/"

# Instance data (resources, projects, plans, commits...) lives under one base.
ID: Final = "https://cleveragents.ai/id/"
# Blank nodes are skolemized on the way in so that every triple can be addressed later.
GENID: Final = "https://cleveragents.ai/.well-known/genid/"

PREFIXES: Final[dict[str, str]] = {
    "uko": UKO,
    "uko-code": UKO_CODE,
    "uko-oo": UKO_OO,
    "uko-func": UKO_FUNC,
    "uko-proc": UKO_PROC,
    "uko-py": UKO_PY,
    "uko-ts": UKO_TS,
    "uko-rs": UKO_RS,
    "uko-java": UKO_JAVA,
    "uko-go": UKO_GO,
    "uko-doc": UKO_DOC,
    "uko-data": UKO_DATA,
    "uko-infra": UKO_INFRA,
    "ca": CA,
    "cas": CAS,
    "rdf": RDF,
    "rdfs": RDFS,
    "owl": OWL,
    "xsd": XSD,
    "sh": SH,
    "prov": PROV,
    "p-plan": P_PLAN,
    "dcterms": DCTERMS,
}

RDF_TYPE: Final = RDF + "type"
RDFS_SUBCLASSOF: Final = RDFS + "subClassOf"
RDFS_SUBPROPERTYOF: Final = RDFS + "subPropertyOf"
# RDF 1.2: a reifier ``rdf:reifies`` the triple term of the edge it annotates.
RDF_REIFIES: Final = RDF + "reifies"


def sparql_prefixes() -> str:
    """The PREFIX block for the standard prefixes, for queries built in code."""
    return "".join(f"PREFIX {name}: <{iri}>\n" for name, iri in PREFIXES.items())


def compact(iri: str) -> str:
    """Shorten an IRI to prefix:local when a known prefix matches (for display only)."""
    best, best_name = "", ""
    for name, base in PREFIXES.items():
        if iri.startswith(base) and len(base) > len(best):
            best, best_name = base, name
    if not best:
        return iri
    local = iri[len(best) :]
    return f"{best_name}:{local}" if local and all(c.isalnum() or c in "_-." for c in local) else iri

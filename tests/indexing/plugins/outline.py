"""A user analyzer for '*.outline' files, loaded from a directory like any user's plugin.

Format: 'def NAME' defines NAME (a function of the file's module), 'call NAME' makes
the last definition call NAME (qualified 'module.NAME' or bare). Small on purpose: the
indexing tests need exact control over definitions and references.
"""

from cleveragents.indexing.model import Entity, FileAnalysis, Problem, Reference, RenderRequest, SourceFile, Span
from cleveragents.terms import UKO_CODE


class OutlineAnalyzer:
    name = "outline"
    version = "1"

    def handles(self, path: str) -> bool:
        return path.endswith(".outline")

    def file_types(self, path: str) -> tuple[str, ...]:
        return (UKO_CODE + "Module",)

    def analyze(self, source: SourceFile) -> FileAnalysis:
        text = source.text()
        if "CRASH" in text:
            raise RuntimeError("this analyzer cannot read CRASH")
        module = source.path.rsplit("/", 1)[-1].removesuffix(".outline")
        entities = [Entity("", (UKO_CODE + "Module",), module, symbols=(("outline", module),))]
        references: list[Reference] = []
        problems: list[Problem] = []
        offset = 0
        for number, line in enumerate(text.splitlines(keepends=True), 1):
            body = line.rstrip("\n")
            span = Span(number, 0, number, len(body.encode()), offset, offset + len(body.encode()))
            offset += len(line.encode())
            words = body.split()
            if len(words) == 2 and words[0] == "def":
                entities.append(
                    Entity(
                        words[1],
                        (UKO_CODE + "Function",),
                        words[1],
                        parent="",
                        span=span,
                        symbols=(("outline", f"{module}.{words[1]}"),),
                    )
                )
            elif len(words) == 2 and words[0] == "call":
                target = words[1]
                references.append(
                    Reference(
                        entities[-1].key,
                        UKO_CODE + "calls",
                        "outline",
                        ((target, 0.9),),
                        simple_name=target.rsplit(".", 1)[-1],
                        line=number,
                    )
                )
            elif words:
                problems.append(Problem(f"unknown statement {words[0]!r}", span))
        return FileAnalysis(entities, references, problems)

    def render(self, request: RenderRequest) -> str:
        if request.span is None:
            return request.content.decode()
        return request.content[request.span.start_byte : request.span.end_byte].decode()


ANALYZERS = [OutlineAnalyzer()]

"""The ``csv`` and ``tsv`` renderers: table elements only, everything else is dropped.

The header row uses column names (the JSON keys), not display labels, so scripts can
rely on it. Several tables are separated by one blank line. CSV quotes as RFC 4180; TSV
never quotes and escapes backslash, tab and newline as ``\\\\``, ``\\t``, ``\\n``.
Errors and the cancellation notice go to stderr as in ``plain``.
"""

from __future__ import annotations

import csv
import io
from typing import Any, TextIO

from cleveragents.output.elements import Data, Element, Table
from cleveragents.output.human import data_as_element, entry_text
from cleveragents.output.render_plain import PlainRenderer


def _tsv_cell(value: Any) -> str:
    return entry_text(value).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "")


class CsvRenderer(PlainRenderer):
    """Tables as csv/tsv on ``out``; everything else (errors, the cancellation notice,
    no animation, flushing) is what ``plain`` does."""

    def __init__(self, out: TextIO, err: TextIO, *, delimiter: str) -> None:
        super().__init__(out, err)
        self.delimiter = delimiter
        self._tables = 0

    def _table(self, element: Element) -> Table | None:
        if isinstance(element, Table):
            return element
        if isinstance(element, Data):
            generic = data_as_element(Data(key=element.key, value=element.value))
            return generic if isinstance(generic, Table) else None
        return None

    def render(self, element: Element) -> None:
        table = self._table(element)
        if table is None:
            return
        names = [c.name for c in table.columns]
        rows = [[row.get(n) for n in names] for row in table.rows]
        buf = io.StringIO()
        if self.delimiter == "\t":
            lines = [names, *([_tsv_cell(v) for v in r] for r in rows)]
            buf.write("".join("\t".join(line) + "\n" for line in lines))
        else:
            writer = csv.writer(buf, delimiter=self.delimiter, lineterminator="\n")
            writer.writerow(names)
            writer.writerows([entry_text(v) for v in r] for r in rows)
        if self._tables:
            self.out.write("\n")
        self.out.write(buf.getvalue())
        self._tables += 1

"""Imported for its effect: the importing process dies when its parent does.

``indexing`` lists it as a forkserver preload, so the forkserver its analysis workers
are forked from exits with ``agents index`` even under ``kill -9`` (the workers then
follow it, see ``indexing.indexer._init_worker``)."""

from cleveragents.processes import die_with_parent

die_with_parent()

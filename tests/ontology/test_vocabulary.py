"""The generated vocabulary (``cleveragents.vocabulary``) matches ``ontology/``: stale
modules fail here (and in `.ci/test`), and a term the ontology lacks fails at import."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

from cleveragents.tbox import generate_vocabulary as generator
from cleveragents.tbox.detail_levels import effective_levels
from cleveragents.tbox.modules import list_modules
from cleveragents.terms import PREFIXES


def test_the_generated_modules_are_current() -> None:
    stale = generator.stale()
    assert stale == [], f"stale: {stale}; run `python -m cleveragents.tbox.generate_vocabulary`"


def test_a_changed_or_missing_or_extra_file_is_reported_stale(tmp_path: Path) -> None:
    copy = tmp_path / "vocabulary"
    shutil.copytree(generator.PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert generator.stale(copy) == []
    edited = copy / "uko_code.py"
    edited.write_text(edited.read_text().replace("# class", "# klass", 1))
    (copy / "uko_py.py").unlink()
    (copy / "uko_retired.py").write_text("")
    assert generator.stale(copy) == ["uko_code.py", "uko_py.py", "uko_retired.py"]
    assert generator.write(copy) == ["uko_code.py", "uko_py.py", "uko_retired.py"]
    assert generator.stale(copy) == []


def test_check_mode_exits_nonzero_on_a_stale_tree(tmp_path: Path) -> None:
    copy = tmp_path / "vocabulary"
    shutil.copytree(generator.PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert generator.main(["--check"], copy) == 0
    (copy / "ca.py").write_text("")
    assert generator.main(["--check"], copy) == 1
    assert generator.main([], copy) == 0
    assert generator.main(["--check"], copy) == 0


def test_every_term_of_every_module_is_a_constant_with_its_iri() -> None:
    for module in list_modules():
        generated = importlib.import_module(f"cleveragents.vocabulary.{generator.module_name(module.prefix)}")
        assert generated.NAMESPACE == module.namespace == PREFIXES[module.prefix]
        for name, iri, _ in generator.terms_of(module):
            assert getattr(generated, name) == iri
    from cleveragents.vocabulary import uko, uko_code

    assert uko_code.calls == "https://cleveragents.ai/ontology/uko/code#calls"
    assert uko.Container == "https://cleveragents.ai/ontology/uko#Container"


def test_an_unknown_term_fails_at_import() -> None:
    """A typo is an ImportError when the importing module loads, not a SHACL violation later."""
    code = "from cleveragents.vocabulary.uko_code import callz"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode != 0
    assert "cannot import name 'callz'" in done.stderr


def test_detail_level_tables_are_the_effective_maps() -> None:
    from cleveragents.vocabulary import detail_levels

    assert tuple(level.name for level in effective_levels("uko-py")) == detail_levels.UKO_PY
    assert detail_levels.UKO_OO[0] == "MODULE_LISTING" and detail_levels.UKO_OO[-1] == "FULL_SOURCE"
    assert detail_levels.UKO_DOC[-1] == "FULL_CONTENT"


def test_keywords_become_identifiers() -> None:
    assert generator.identifier("import") == "import_"
    assert generator.identifier("class") == "class_"
    assert generator.identifier("calls") == "calls"

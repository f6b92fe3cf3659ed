"""The examples of docs/python.md run as shown (doctest, its ```python
blocks): the outputs printed there are what the package prints now, so a
change of the model that moves them fails here until the page is updated."""
import doctest
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_python_md_examples():
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    text = (ROOT / "docs/python.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    test = doctest.DocTestParser().get_doctest("\n\n".join(blocks), {}, "docs/python.md", None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    runner.run(test)
    failed, attempted = runner.summarize(verbose=False)
    assert attempted >= 10
    assert failed == 0


def test_readme_python_block_runs():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    assert blocks, "README.md shows the package in a ```python block"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})

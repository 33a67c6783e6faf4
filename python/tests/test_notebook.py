"""The example notebook runs from top to bottom (nbclient, a fresh kernel)
and draws its figures; the committed copy carries its outputs."""

import json
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "examples" / "660p-slc-cache-and-waf.ipynb"


def _images(nb):
    return sum(1 for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if "image/png" in o.get("data", {}))


def test_the_committed_notebook_has_its_outputs():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and all(c.get("execution_count") for c in code), "executed, outputs saved"
    pngs = [o for c in code for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(pngs) == 2


def test_the_notebook_executes(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("matplotlib")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(str(NOTEBOOK), as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    # MPLBACKEND: figures render inline without a display.
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    assert _images(nb) == 2
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "notebook ran in" in text

"""The package's layout, read from the source with `ast` (nothing is imported):

* the runtime never depends on the evaluation code: no module outside agentic_rag/eval/ imports agentic_rag.eval
  (absolutely or relatively), so the app, the index build and the benches' shared code load without it;
* experiment and training code stays out of the runtime package (bench/, eval/ and scripts/ hold it): no module
  under agentic_rag/ defines a training loop, uses an optimiser or back-propagates.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from agentic_rag.config import PROJECT_ROOT

PACKAGE = PROJECT_ROOT / "agentic_rag"
EVAL = PACKAGE / "eval"


def modules() -> list[Path]:
    found = sorted(PACKAGE.rglob("*.py"))
    assert len(found) > 50 and PACKAGE / "workflow.py" in found
    return found


def module_name(path: Path, root: Path = PROJECT_ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(source: str, name: str, is_package: bool) -> set[str]:
    """Every module name an import statement in `source` can load, relative imports resolved against `name`."""
    package = name if is_package else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.add(module)
            out.update(f"{module}.{a.name}" for a in node.names)  # `from agentic_rag import eval` names a module
    return out


def imports_eval(path: Path) -> list[str]:
    names = imported_names(path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py")
    return sorted(n for n in names if n == "agentic_rag.eval" or n.startswith("agentic_rag.eval."))


@pytest.mark.parametrize("source, name, expected", [
    ("from ..eval import metrics", "agentic_rag.retrieval.adapter", ["agentic_rag.eval", "agentic_rag.eval.metrics"]),
    ("from ..eval.metrics import mrr_at", "agentic_rag.retrieval.adapter",
     ["agentic_rag.eval.metrics", "agentic_rag.eval.metrics.mrr_at"]),
    ("from .. import eval", "agentic_rag.retrieval.adapter", ["agentic_rag.eval"]),
    ("from . import eval", "agentic_rag.workflow", ["agentic_rag.eval"]),
    ("import agentic_rag.eval.e2e as e2e", "agentic_rag.demo", ["agentic_rag.eval.e2e"]),
    ("def f():\n    from agentic_rag.eval import metrics", "agentic_rag.demo",
     ["agentic_rag.eval", "agentic_rag.eval.metrics"]),
    ("from ..evaluation import x\nfrom ..retrieval import eval_x", "agentic_rag.stages.web", []),
])
def test_the_import_check_resolves_every_form(source, name, expected):
    names = imported_names(source, name, is_package=False)
    assert sorted(n for n in names if n == "agentic_rag.eval" or n.startswith("agentic_rag.eval.")) == expected


def test_no_runtime_module_imports_the_evaluation_code():
    offenders = {str(p.relative_to(PROJECT_ROOT)): found for p in modules()
                 if EVAL not in p.parents and (found := imports_eval(p))}
    assert offenders == {}
    # the check reads the evaluation package too (it may import itself)
    assert any(imports_eval(p) for p in EVAL.rglob("*.py"))


TRAINING_MODULES = ("torch.optim", "torch.autograd", "torch.utils.data")
TRAINING_CALLS = {"backward", "zero_grad"}  # loss.backward(), optimiser.zero_grad()
TRAINING_FUNCTIONS = {"train", "fit", "train_epoch", "training_step"}


def training_code(source: str) -> list[str]:
    """What in `source` is a training loop: an optimiser or autograd import or attribute, a backward pass, or a
    function named like a trainer."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in TRAINING_FUNCTIONS:
            found.append(f"def {node.name}")
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith(TRAINING_MODULES)]
        elif isinstance(node, ast.ImportFrom) and node.module:
            full = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            found += [n for n in full if n.startswith(TRAINING_MODULES)]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "torch" \
                and f"torch.{node.attr}" in TRAINING_MODULES:
            found.append(f"torch.{node.attr}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in TRAINING_CALLS:
            found.append(f".{node.func.attr}()")
    return sorted(set(found))


def test_the_training_check_recognises_the_adapters_own_training_code():
    """A positive control: the query adapter's fitting (moved out of the package to bench/) is what it finds."""
    found = training_code((PROJECT_ROOT / "bench" / "adapter_fit.py").read_text(encoding="utf-8"))
    assert {"def train", "torch.optim", ".backward()"} <= set(found)
    assert training_code("from torch import optim\nfrom torch.optim import AdamW\nopt.zero_grad()") == \
        [".zero_grad()", "torch.optim", "torch.optim.AdamW"]
    assert training_code("def fit_to_context(x):\n    return x\nimport torch\ntorch.no_grad()") == []


def test_no_training_code_in_the_runtime_package():
    offenders = {str(p.relative_to(PROJECT_ROOT)): found for p in modules()
                 if (found := training_code(p.read_text(encoding="utf-8")))}
    assert offenders == {}

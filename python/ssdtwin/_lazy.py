"""pandas, imported on first use: sweep workers (processes, Ray tasks) only
simulate and return plain records, so they start without loading pandas."""

import importlib
from typing import Any


class _Lazy:
    def __init__(self, name: str) -> None:
        self._name = name
        self._module: Any = None

    def __getattr__(self, attr: str) -> Any:
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)


#: ``pandas``, loaded when first used.
pd: Any = _Lazy("pandas")

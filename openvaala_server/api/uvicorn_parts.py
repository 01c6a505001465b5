"""The parts of uvicorn the daemon serves with — its server, its config and its HTTP/1.1
protocol — imported without running `uvicorn/__init__.py` first.

That `__init__` imports `uvicorn.main` (uvicorn's command line: click, and the supervisors with
multiprocessing) only to re-export `main` and `run`, which the daemon never calls: ~40 modules on
the way to a start's first answer (docs/design.md, "A cold exec, end to end"). Python runs a
package's `__init__` before any submodule, so the package is put in `sys.modules` as its bare
module object; its `__init__` still runs — once, in place — the first time anything asks the
package for a name it has not got (`uvicorn.run`), so code that imports uvicorn itself later
gets the whole package.

Imported before any other `uvicorn.*` module (`server.py` and `api/listener.py` take uvicorn's
names from here)."""

from __future__ import annotations

import importlib.util
import sys


def _bare_package() -> None:
    if "uvicorn" in sys.modules:  # imported whole already (a test, a tool): nothing to save
        return
    spec = importlib.util.find_spec("uvicorn")
    if spec is None or spec.loader is None:
        raise ImportError("uvicorn is not installed")
    loader = spec.loader
    package = importlib.util.module_from_spec(spec)

    def missing(name: str) -> object:
        # PEP 562: asked only for a name the module lacks. Run the real `__init__` once, in the
        # same module object (the submodules already imported are reused).
        del package.__dict__["__getattr__"]
        loader.exec_module(package)
        return getattr(package, name)

    package.__dict__["__getattr__"] = missing
    sys.modules["uvicorn"] = package


_bare_package()

# The names, from their own modules; the package gets those of its own `__init__` that cost
# nothing more (uvicorn's modules import `from uvicorn import Config` themselves).
from uvicorn._version import __version__  # noqa: E402
from uvicorn.config import Config  # noqa: E402
from uvicorn.protocols.http.h11_impl import H11Protocol  # noqa: E402
from uvicorn.server import Server  # noqa: E402

_package = vars(sys.modules["uvicorn"])
if "__getattr__" in _package:  # still the bare package (asking it with getattr would fill it)
    _package.update(__version__=__version__, Config=Config, Server=Server)

__all__ = ["Config", "H11Protocol", "Server"]

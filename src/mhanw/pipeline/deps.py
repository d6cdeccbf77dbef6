"""The library files a chapter depends on, found in the code (nothing is imported or executed).

A chapter depends on the modules of ``mhanw`` that its code cells import,
directly or through other modules of the package, found with ``ast``.
Understood: ``import mhanw.a.b``, ``from mhanw import x``, ``from mhanw.sub
import y``, relative imports (``from . import x``, ``from ..infra import y``) in
the library, imports inside functions, and ``importlib.import_module("mhanw.x")``
with a literal name.  Importing a module runs every enclosing package's
``__init__.py``, so those count too.

The package tree is walked, never listed: a package directory is a directory
under ``src/mhanw`` that holds ``.py`` files.  Other files (JSON texts, ...) are
package data: they count as dependencies of every module of the nearest
enclosing package directory, since any of its modules may load them.  A code
cell or a library module that does not parse makes the chapter depend on the
whole library (the safe answer; the run itself will then report the error).
The pipeline's own modules (``mhanw.pipeline``) are the build's, not a
chapter's: a chapter that imported them would still depend on them.
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

SRC = Path("src")
PACKAGE = "mhanw"


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse`` without the warnings of the code parsed (e.g. invalid escapes in strings)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source, filename=filename)


def _skipped(path: Path) -> bool:
    """Files that are not part of the library: caches, compiled files, hidden files."""
    return (
        "__pycache__" in path.parts
        or path.suffix in (".pyc", ".pyo")
        or any(part.startswith(".") for part in path.parts)
        or path.name.endswith("~")
    )


def library_files(src: Path = SRC, package: str = PACKAGE) -> list[Path]:
    """Every file of the package tree (relative to the working directory), sorted."""
    root = src / package
    return sorted(p for p in root.rglob("*") if p.is_file() and not _skipped(p.relative_to(src)))


class Library:
    """The modules of the package, their imports and their data files."""

    def __init__(self, src: Path = SRC, package: str = PACKAGE):
        self.src, self.package = src, package
        self.files = library_files(src, package)
        py = [p for p in self.files if p.suffix == ".py"]
        self.package_dirs = {p.parent for p in py}
        self.modules: dict[str, Path | None] = {}  # None: a namespace package, with no file of its own
        for p in py:
            parts = list(p.relative_to(src).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            self.modules[".".join(parts)] = p
        # Namespace packages (a directory of modules without __init__.py) are
        # modules too, with no file of their own.
        for d in self.package_dirs:
            name = ".".join(d.relative_to(src).parts)
            self.modules.setdefault(name, None)
        self.data: dict[Path, list[Path]] = {d: [] for d in self.package_dirs}
        for p in self.files:
            if p.suffix == ".py":
                continue
            d = p.parent
            while d not in self.package_dirs and d != src and d != d.parent:
                d = d.parent
            if d in self.package_dirs:
                self.data[d].append(p)
        self.unparsable: list[str] = []
        self._imports: dict[str, set[str]] = {}

    # -- what one piece of code imports -------------------------------------------
    def _with_parents(self, dotted: str) -> set[str]:
        """``a.b.c`` -> the known modules among ``a``, ``a.b``, ``a.b.c``."""
        parts = dotted.split(".")
        return {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & self.modules.keys()

    def imports_of(self, tree: ast.AST, module: str | None, is_package: bool) -> set[str]:
        """Modules of the package that ``tree`` (the code of ``module``, or a notebook) imports."""
        found: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    found |= self._with_parents(alias.name)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    if module is None:
                        continue  # a relative import in a notebook means nothing here
                    base = module.split(".") if is_package else module.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                found |= self._with_parents(target)
                for alias in node.names:
                    if alias.name != "*":
                        found |= self._with_parents(f"{target}.{alias.name}")
            elif isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
                if name in ("import_module", "__import__") and node.args:
                    arg = node.args[0]
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        found |= self._with_parents(arg.value)
        return found

    def _module_imports(self, module: str) -> set[str]:
        if module not in self._imports:
            path = self.modules[module]
            if path is None:
                self._imports[module] = set()
            else:
                try:
                    tree = parse(path.read_text(encoding="utf-8"), str(path))
                except (SyntaxError, ValueError, UnicodeDecodeError):
                    self.unparsable.append(str(path))
                    self._imports[module] = set(self.modules)
                else:
                    self._imports[module] = self.imports_of(tree, module, path.name == "__init__.py")
        return self._imports[module]

    # -- the closure --------------------------------------------------------------
    def closure(self, roots: set[str]) -> set[str]:
        """``roots`` and every module they import, transitively (with enclosing packages)."""
        seen: set[str] = set()
        todo = list(roots)
        while todo:
            m = todo.pop()
            if m in seen:
                continue
            seen.add(m)
            todo.extend(self._with_parents(m) - seen)
            todo.extend(self._module_imports(m) - seen)
        return seen

    def files_of(self, modules: set[str]) -> list[Path]:
        """The source files of ``modules`` and the data files of their packages."""
        out: set[Path] = set()
        for m in modules:
            path = self.modules[m]
            if path is not None:
                out.add(path)
                out.update(self.data.get(path.parent, ()))
            else:  # a namespace package: its directory's data
                out.update(self.data.get(self.src.joinpath(*m.split(".")), ()))
        return sorted(out)


def notebook_tree(path: Path) -> ast.Module | None:
    """The code cells of a chapter as one module, IPython magics and shell lines removed;
    None when a cell does not parse."""
    from .chapters import code_sources

    body: list[ast.stmt] = []
    for source in code_sources(path):
        if source.lstrip().startswith("%%"):
            continue  # a cell magic: not Python
        lines = [
            "" if line.lstrip().startswith(("%", "!")) or line.rstrip().endswith("?") else line
            for line in source.splitlines()
        ]
        try:
            body.extend(parse("\n".join(lines), str(path)).body)
        except SyntaxError:
            return None
    return ast.Module(body=body, type_ignores=[])


def notebook_dependencies(notebook: Path, lib: Library) -> tuple[set[str], list[Path]]:
    """(modules, files) that ``notebook`` depends on."""
    tree = notebook_tree(notebook)
    if tree is None:
        lib.unparsable.append(str(notebook))
        return set(lib.modules), list(lib.files)
    modules = lib.closure(lib.imports_of(tree, None, False))
    if lib.unparsable:
        return set(lib.modules), list(lib.files)
    return modules, lib.files_of(modules)

#!/usr/bin/env python3
"""Fails when the python under plots/ has an import cycle (a CPU test: ctest plots_import_graph).

    check_imports.py [ROOT]      check ROOT (default: the folder of this script)
    check_imports.py --self-test check that a planted cycle is found and a clean tree passes

Every `import` and `from ... import` inside the tree's own packages counts, at any depth (a
function-level import is a cycle all the same: it only hides it from the interpreter until
the call). Exits 0 when the graph is acyclic, 1 with each cycle printed, 2 on a file that does
not parse.
"""

import ast
import os
import sys
import tempfile


def modules(root):
    """dotted name -> path, for every .py under root (packages: their __init__.py)."""
    out = {}
    for dirpath, dirnames, files in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__pycache__")))
        rel = os.path.relpath(dirpath, root)
        parts = [] if rel == "." else rel.split(os.sep)
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            name = parts + ([] if f == "__init__.py" else [f[:-3]])
            if name:
                out[".".join(name)] = os.path.join(dirpath, f)
    return out


def edges(name, path, known):
    """The modules of the tree that `name` imports."""
    is_pkg = os.path.basename(path) == "__init__.py"
    package = name if is_pkg else name.rpartition(".")[0]
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    out = set()

    def add(target):
        # the deepest module of the tree that the dotted target names
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            out.add(target)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                add(a.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".") if package else []
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for a in node.names:
                add(f"{mod}.{a.name}" if mod else a.name)
            add(mod)
    return out


def cycles(graph):
    """Every elementary cycle found by a depth-first search, each once."""
    found, seen = [], set()
    state = {}

    def visit(n, stack):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                cyc = stack[stack.index(m):] + [m]
                key = frozenset(cyc)
                if key not in seen:
                    seen.add(key)
                    found.append(cyc)
            elif m not in state:
                visit(m, stack)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n, [])
    return found


def check(root):
    known = modules(root)
    try:
        graph = {n: edges(n, p, known) for n, p in known.items()}
    except SyntaxError as exc:
        print(f"check_imports: {exc.filename}:{exc.lineno}: does not parse: {exc.msg}", file=sys.stderr)
        return 2
    cyc = cycles(graph)
    for c in cyc:
        print("import cycle: " + " -> ".join(c), file=sys.stderr)
    if cyc:
        return 1
    print(f"check_imports: {len(known)} modules under {root}, "
          f"{sum(len(e) for e in graph.values())} imports, no cycle")
    return 0


def self_test():
    with tempfile.TemporaryDirectory() as d:
        pkg = os.path.join(d, "pkg")
        os.makedirs(pkg)
        files = {"__init__.py": "", "a.py": "from .b import x\n", "c.py": "import os\n",
                 "b.py": "x = 1\ndef f():\n    from . import a  # a lazy import is still a cycle\n"}
        for n, text in files.items():
            with open(os.path.join(pkg, n), "w", encoding="utf-8") as f:
                f.write(text)
        if check(d) != 1:
            print("check_imports: self-test: the planted cycle pkg.a -> pkg.b -> pkg.a was not found",
                  file=sys.stderr)
            return 1
        with open(os.path.join(pkg, "b.py"), "w", encoding="utf-8") as f:
            f.write("x = 1\n")
        if check(d) != 0:
            print("check_imports: self-test: a tree without a cycle failed", file=sys.stderr)
            return 1
    print("check_imports: self-test passed (a planted cycle is found, a clean tree passes)")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if len(sys.argv) > 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(check(sys.argv[1] if len(sys.argv) == 2 else os.path.dirname(os.path.abspath(__file__))))

#!/usr/bin/env python3
"""include_graph.py: the file graph of the repository drawn from its #include lines, and the
rules it must keep.

A node is a file without its extension: a .c and its same-name .h (runtime/evict.c and
runtime/evict.h) are one node, so "A.c includes B.h while B.c includes A.h" is a circle, as
it is for a reader. An arrow A -> B means a file of A includes a file of B. Includes are
resolved as the compiler would for this repository (Makefile): first next to the including
file, then in the stage folders of tools/ (all on the include path), inc/, runtime/, lib/;
<faultline/...> is inc/faultline/. System headers and generated files are not nodes.
With the objects of a build present (build/obj, build/pic: run make first), calls and data
references are arrows too: A -> B when A's object uses a global symbol B's object defines
(nm, within each program: the command, the runtime library), which finds circles of files
that share one header. The shim calls the runtime through the functions runtime_api.h
declares, so for shim/ -> runtime/ only the includes are checked.

It reports
  - circles: strongly connected components of more than one node;
  - upward arrows in tools/: the stage order of tools/README.md,
        cmd -> record, render -> analyze -> frames -> trace -> base -> inc
    (record and render sit on one level; render may read analyze's models, analyze never
    calls render or record; base includes nothing of tools/ but base; inc includes only inc);
  - shim/ <-> runtime/: the shim may include runtime/runtime_api.h only, and runtime/
    includes nothing of shim/;
  - runtime/runtime (runtime.c, the lifecycle) is the top of runtime/: no file of runtime/
    includes or calls it (docs/design.md, "Layers").

usage: include_graph.py [--root DIR] [--build DIR] [--no-calls] [--dot] [--strict AREA,...] [--show AREA,...]
  --strict: areas (top folders) whose circles and upward arrows are errors (exit 1)
  --show:   areas whose circles are printed as information only
  --dot:    print the graph in Graphviz dot form instead
Without --strict/--show, every area is strict.
"""
import argparse
import os
import re
import subprocess
import sys

SOURCE_EXT = (".c", ".h", ".cc")
TOP_AREAS = ("runtime", "shim", "tools", "lib", "inc", "tests", "examples", "bench", "fuzz")
TOOL_STAGES = {"cmd": 6, "record": 5, "render": 5, "analyze": 4, "frames": 3, "trace": 2, "base": 1}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def source_files(root):
    for area in TOP_AREAS:
        top = os.path.join(root, area)
        for d, dirs, files in os.walk(top):
            dirs[:] = sorted(x for x in dirs if not x.startswith("."))
            for f in sorted(files):
                if f.endswith(SOURCE_EXT):
                    yield os.path.relpath(os.path.join(d, f), root)


def node_of(path):
    return os.path.splitext(path)[0]


def area_of(node):
    return node.split("/", 1)[0]


def tool_stage(node):
    parts = node.split("/")
    if parts[0] == "inc":
        return 0
    if parts[0] == "tools" and len(parts) > 2:
        return TOOL_STAGES.get(parts[1])
    return None


def resolve(root, files, src, quote, name):
    """the repository file that #include names from src, or None for a system header"""
    candidates = []
    if quote == '"':
        candidates.append(os.path.normpath(os.path.join(os.path.dirname(src), name)))
        candidates += [os.path.join("tools", s, name) for s in sorted(TOOL_STAGES)]
        candidates += [os.path.join(d, name) for d in ("runtime", "lib", "shim")]
    candidates.append(os.path.join("inc", name))
    for c in candidates:
        if c in files:
            return c
    return None


def build_graph(root):
    files = set(source_files(root))
    edges = {}  # node -> {node: "src includes target" example}
    for src in sorted(files):
        with open(os.path.join(root, src), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        a = node_of(src)
        edges.setdefault(a, {})
        for quote, name in INCLUDE.findall(text):
            target = resolve(root, files, src, quote, name)
            if target is None:
                continue
            b = node_of(target)
            if b != a:
                edges[a].setdefault(b, "%s includes %s" % (src, target))
    return edges


# The programs of the build, each linked from its own objects: a symbol one object uses binds
# to the object of the same program that defines it (the shim's malloc is the library's, not
# the command's).
LINK_UNITS = (("obj", ("tools", "lib")), ("pic", ("runtime", "shim", "lib")))


def has_source(root, node):
    return any(os.path.exists(os.path.join(root, node + ext)) for ext in (".c", ".cc"))


def add_calls(root, build, edges):
    """arrows for global symbols one object uses and another object of its program defines;
    returns how many objects were read"""
    total = 0
    for sub, areas in LINK_UNITS:
        top = os.path.join(build, sub)
        objects = {}
        for area in areas:
            for d, dirs, files in os.walk(os.path.join(top, area)):
                dirs.sort()
                for f in sorted(files):
                    node = node_of(os.path.relpath(os.path.join(d, f), top))
                    # an object left from a source since removed or renamed draws no arrows
                    if f.endswith(".o") and node in edges and has_source(root, node):
                        objects[os.path.join(d, f)] = node
        if not objects:
            continue
        total += len(objects)
        out = subprocess.run(["nm", "-P", "-A"] + sorted(objects), capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit("nm -P -A on the %d objects of %s failed: %s" % (len(objects), top, out.stderr.strip()))
        defined, used = {}, []
        for line in out.stdout.splitlines():
            head, _, rest = line.partition(": ")
            fields = rest.split()
            if len(fields) < 2 or head not in objects:
                continue
            name, kind = fields[0], fields[1]
            if kind == "U":
                used.append((objects[head], name))
            elif kind in "TDBRVWGSiu":
                if area_of(objects[head]) == "shim" and not name.startswith("fl_"):
                    continue  # an interposer of a libc name (malloc, read): callers mean libc
                defined.setdefault(name, objects[head])
        for a, name in used:
            b = defined.get(name)
            if b and b != a:
                edges[a].setdefault(b, "%s uses %s" % (a, name))
    return total


def strongly_connected(edges):
    """Tarjan's algorithm, iterative; components in no particular order"""
    index, low, on_stack, stack, comps = {}, {}, set(), [], []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, {}))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, {})))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comps.append(sorted(comp))
    return comps


def upward_arrows(edges):
    bad = []
    for a in sorted(edges):
        for b, why in sorted(edges[a].items()):
            sa, sb = tool_stage(a), tool_stage(b)
            aa, ab = area_of(a), area_of(b)
            if aa == "inc" and ab != "inc":
                bad.append("%s -> %s (inc/ includes only inc/): %s" % (a, b, why))
            elif sa is not None and sb is not None and aa == "tools":
                if sb > sa:
                    bad.append("%s -> %s (stage %s above %s): %s" % (a, b, b.split("/")[1], a.split("/")[1], why))
                elif a.split("/")[1] == "analyze" and b.split("/")[1] in ("render", "record"):
                    bad.append("%s -> %s (analyze/ never calls %s/): %s" % (a, b, b.split("/")[1], why))
            elif aa == "tools" and ab in ("runtime", "shim"):
                bad.append("%s -> %s (tools/ reads recordings, not the runtime): %s" % (a, b, why))
            elif aa == "shim" and ab == "runtime" and b != "runtime/runtime_api" and " includes " in why:
                bad.append("%s -> %s (shim/ may include runtime/runtime_api.h only): %s" % (a, b, why))
            elif aa == "runtime" and b == "runtime/runtime":
                bad.append("%s -> %s (runtime.c is the top: nothing in runtime/ includes or calls it): %s" % (a, b, why))
            elif aa == "runtime" and ab == "shim":
                bad.append("%s -> %s (runtime/ includes nothing of shim/): %s" % (a, b, why))
            elif aa == "lib" and ab not in ("lib", "inc"):
                bad.append("%s -> %s (lib/ includes only lib/ and inc/): %s" % (a, b, why))
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--build", default=None, help="build directory with obj/ and pic/ (default ROOT/build)")
    ap.add_argument("--no-calls", action="store_true", help="arrows from #include lines only")
    ap.add_argument("--dot", action="store_true")
    ap.add_argument("--strict", default="")
    ap.add_argument("--show", default="")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    edges = build_graph(root)
    nobjects = 0 if args.no_calls else add_calls(root, args.build or os.path.join(root, "build"), edges)
    if args.dot:
        print("digraph includes {\n\trankdir=TB;\n\tnode [shape=box, fontsize=10];")
        for a in sorted(edges):
            for b in sorted(edges[a]):
                print('\t"%s" -> "%s";' % (a, b))
        print("}")
        return 0
    strict = set(x for x in args.strict.split(",") if x)
    show = set(x for x in args.show.split(",") if x)
    if not strict and not show:
        strict = set(TOP_AREAS)
    errors = 0
    narrows = sum(len(v) for v in edges.values())
    print("%d nodes, %d arrows (includes%s)" % (len(edges), narrows,
          " and the symbols of %d objects" % nobjects if nobjects else " only: no objects built"))
    for comp in sorted(strongly_connected(edges), key=lambda c: (-len(c), c)):
        if len(comp) < 2:
            continue
        areas = set(area_of(n) for n in comp)
        inside = set(comp)
        arrows = ["  %s -> %s: %s" % (a, b, edges[a][b]) for a in comp for b in sorted(edges[a]) if b in inside]
        if areas & strict:
            errors += 1
            print("CIRCLE (%d files): %s" % (len(comp), " ".join(comp)))
            print("\n".join(arrows))
        elif areas & show:
            print("circle (%d files, not yet an error): %s" % (len(comp), " ".join(comp)))
    for line in upward_arrows(edges):
        if area_of(line.split(" ", 1)[0]) in strict:
            errors += 1
            print("UPWARD: " + line)
    print("%d errors" % errors)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

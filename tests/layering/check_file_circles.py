#!/usr/bin/env python3
"""No two files of one engine folder call each other in a circle (engine/README.md, Conventions).

Reads the built objects of libclspeech and clspeech_bench (BUILD/CMakeFiles/*.dir/engine/FOLDER/*.c.o)
with `nm`: an object that leaves a symbol undefined which another object of the same folder defines
calls into that file. Any strongly connected set of two or more files in that graph is a circle; each
is printed with one call that makes each edge. Objects whose source file is gone (left in the build
folder by a rename) are skipped. Folders below a layer (engine/features/augment/) are
folders of their own.

    check_file_circles.py BUILD_DIR SOURCE_DIR   prints "file circles: N files in M folders, K circles"
    check_file_circles.py --selftest     checks the cycle finder on small graphs
"""
import collections
import glob
import os
import subprocess
import sys


def symbols(obj):
    out = subprocess.run(["nm", "-g", "-P", obj], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        (undefined if kind == "U" else defined).add(name)
    return defined, undefined


def circles(graph):
    """The strongly connected components of two or more nodes (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    n = stack.pop()
                    on_stack.discard(n)
                    comp.append(n)
                    if n == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def selftest():
    cases = [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}, "e": {"a", "c"}}, [["a", "b"], ["c", "d"]]),
        ({"a": {"a"}}, []),
        ({"a": {"b", "c"}, "b": {"d"}, "c": {"d"}, "d": set()}, []),
    ]
    wrong = 0
    for graph, want in cases:
        got = sorted(circles(graph))
        if got != sorted(want):
            print("selftest: %r gave %r, expected %r" % (graph, got, want))
            wrong += 1
    print("selftest: %d of %d cases wrong" % (wrong, len(cases)))
    return 1 if wrong else 0


def main():
    if sys.argv[1:] == ["--selftest"]:
        return selftest()
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    build, source = sys.argv[1], sys.argv[2]
    objs = sorted(glob.glob(os.path.join(build, "CMakeFiles", "*.dir", "engine", "**", "*.c.o"), recursive=True))
    if not objs:
        print("file circles: no engine objects under %s (build first)" % build)
        return 1
    by_folder = collections.defaultdict(dict)
    for obj in objs:
        rel = obj.split(".dir" + os.sep + "engine" + os.sep, 1)[1]
        if not os.path.exists(os.path.join(source, "engine", rel[:-len(".o")])):
            continue
        folder, name = os.path.split(rel)
        by_folder[folder][name[:-len(".o")]] = symbols(obj)
    total = 0
    for folder in sorted(by_folder):
        files = by_folder[folder]
        owner = {}
        for f, (defined, _) in files.items():
            for s in defined:
                owner[s] = f
        graph, why = {}, {}
        for f, (_, undefined) in files.items():
            graph[f] = set()
            for s in sorted(undefined):
                g = owner.get(s)
                if g and g != f:
                    graph[f].add(g)
                    why.setdefault((f, g), s)
        for comp in circles(graph):
            total += 1
            print("circle in engine/%s: %s" % (folder, ", ".join(comp)))
            for f in comp:
                for g in sorted(graph[f] & set(comp)):
                    print("    %s calls %s's %s" % (f, g, why[(f, g)]))
    n_files = sum(len(v) for v in by_folder.values())
    print("file circles: %d files in %d folders, %d circles" % (n_files, len(by_folder), total))
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: MIT
"""The layering of canal's objects, read from the symbols they define and use (nm).

canal's library is folders stacked in one direction (docs/architecture.md):

    common < router < core < models < security, db < files, realtime, observability, views,
    cache < openapi < app < controller

An object may use symbols of its own folder and of the folders below it; never of a folder
above, nor of another folder of the same rank (security and db know nothing of each other, nor
do files, realtime, observability, views and cache). The controller layer and the test client go through exported calls only
(canal_*), as an app would.

    python3 test/layers.py BUILD [--stats]

Uses against the layering that are known and not yet removed are listed, one "USER SYMBOL" a
line, in test/layers-debt.txt: each is reported once in a summary line; an unlisted one fails,
and so does a listed one that is gone (the list only shrinks).

BUILD is the build directory (its obj/lib/ holds the objects). Prints "ok - ..." and
"not ok - FOLDER/FILE uses SYMBOL of FOLDER/FILE" lines (test/run counts them) and exits 1 on
a violation. --stats prints the numbers issue 25 asks for instead: the largest cycle between
files, calls from the core into features, declarations in the private headers, exported
symbols.
"""
import collections
import glob
import os
import re
import subprocess
import sys

RANK = {
    "common": 0,
    "router": 1,
    "core": 2,
    "models": 3,
    "redis": 3,
    "security": 4,
    "db": 4,
    "files": 5,
    "realtime": 5,
    "observability": 5,
    "views": 5,
    "cache": 5,
    "openapi": 6,
    "app": 7,
    "controller": 8,
    "testing": 9,
}
PUBLIC_ONLY = {"controller", "testing"}  # above the server: exported calls only
FEATURES = {f for f, r in RANK.items() if r >= 3 and f not in PUBLIC_ONLY}


def read_objects(build):
    """{file: (defined symbols, undefined symbols)} for every object of the library."""
    root = os.path.join(build, "obj", "lib")
    objs = {}
    for o in sorted(glob.glob(os.path.join(root, "*", "*.o"))):
        name = os.path.relpath(o, root)[:-2]
        out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
        defined, used = set(), set()
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBRVWG":
                defined.add(parts[2])
            elif len(parts) == 2 and parts[0] == "U":
                used.add(parts[1])
        objs[name] = (defined, used)
    return objs


def edges_of(objs):
    """[(user file, symbol, defining file)] between different files of the library."""
    owner = {}
    for name, (defined, _) in objs.items():
        for s in defined:
            owner[s] = name
    out = []
    for name, (_, used) in objs.items():
        for s in sorted(used):
            d = owner.get(s)
            if d is not None and d != name:
                out.append((name, s, d))
    return out


def folder(name):
    return name.split("/", 1)[0]


def violation(user, sym, definer):
    fu, fd = folder(user), folder(definer)
    if fu not in RANK or fd not in RANK:
        return "a folder the layering does not know"
    if fu in PUBLIC_ONLY and not sym.startswith("canal_"):
        return "not an exported call"
    if fu == fd:
        return None
    if RANK[fd] > RANK[fu]:
        return "a folder above"
    if RANK[fd] == RANK[fu]:
        return "a folder beside"
    return None


def largest_cycle(objs, edges):
    """The largest strongly connected component of the file graph (Tarjan), as a list."""
    graph = collections.defaultdict(set)
    for u, _, d in edges:
        graph[u].add(d)
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            comps.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(objs):
        if v not in index:
            visit(v)
    return max(comps, key=len)


def private_declarations():
    """Function declarations in lib/**/*.h (a line that ends a prototype with ');')."""
    n = 0
    for h in glob.glob("lib/**/*.h", recursive=True):
        text = open(h).read()
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        for decl in re.findall(r"^[a-zA-Z][^;{}#]*?\b(canal__\w+)\s*\([^;{}]*\)\s*(?:__attribute__\s*\(\(.*?\)\))?\s*;",
                               text, flags=re.M):
            n += 1
    return n


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    build = sys.argv[1]
    objs = read_objects(build)
    if not objs:
        print("not ok - no objects under %s/obj/lib (build first)" % build)
        return 1
    edges = edges_of(objs)
    if "--stats" in sys.argv[2:]:
        cyc = largest_cycle(objs, edges)
        up = sorted({(u, s) for u, s, d in edges if folder(u) == "core" and folder(d) in FEATURES})
        so = os.path.join(build, "lib", "libcanal.so")
        exported = subprocess.run(["nm", "-D", "--defined-only", so], capture_output=True, text=True).stdout
        print("files: %d" % len(objs))
        print("largest cycle between files: %d (%s)" % (len(cyc), " ".join(sorted(cyc))))
        print("core-to-feature references (file, symbol): %d" % len(up))
        for u, s in up:
            print("    %s %s" % (u, s))
        print("canal__ declarations in the private headers: %d" % private_declarations())
        print("exported symbols of libcanal.so: %d" % len(exported.splitlines()))
        return 0
    debt_file = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layers-debt.txt")
    debt = set()
    if os.path.exists(debt_file):
        for line in open(debt_file):
            line = line.split("#", 1)[0].split()
            if len(line) == 2:
                debt.add(tuple(line))
    bad, known = 0, set()
    for user, sym, definer in edges:
        why = violation(user, sym, definer)
        if why is None:
            continue
        if (user, sym) in debt:
            known.add((user, sym))
            continue
        print("not ok - %s uses %s of %s (%s)" % (user, sym, definer, why))
        bad += 1
    for user, sym in sorted(debt - known):
        print("not ok - test/layers-debt.txt lists %s %s, which is gone: take it off" % (user, sym))
        bad += 1
    if bad == 0:
        print("ok - %d objects in %d folders, %d uses between files, none against the layering"
              " but the %d listed in test/layers-debt.txt"
              % (len(objs), len({folder(n) for n in objs}), len(edges), len(known)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

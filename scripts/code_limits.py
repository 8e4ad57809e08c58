#!/usr/bin/env python3
"""Counts what makes ferry's code hard to read and names the offenders.

  scripts/code_limits.py [--root DIR] [--baseline FILE] [--write-baseline]

Four limits over src/ (tests included in the first three: they are read
as often):
  - no file over 600 lines;
  - no function over 80 lines (functions as universal-ctags sees them, from
    the line of the name to the closing brace);
  - no block of 6 or more lines (blank lines and comments left out, spaces
    squeezed) written twice, unless the block's files are named in the
    "Written twice on purpose" list of docs/ARCHITECTURE.md;
  - no #include of a folder outside the includer's layer and the layers it
    declares in src/CMakeLists.txt (`ferry_layer(NAME FOLDER DEPS...)`),
    tests excepted (the build also links each layer alone: see there).

Offenders the baseline file names pass while they do not grow, and an
offender that shrank or went must leave it: the baseline only shrinks (a
ratchet); --write-baseline rewrites it from today's offenders. Exit 0 when nothing new, 1 with one line per new
offender, 2 on bad usage or a missing tool.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80
MIN_DUPLICATE_LINES = 6


def source_files(root):
    out = []
    for dirpath, _, names in os.walk(os.path.join(root, "src")):
        for n in names:
            if n.endswith((".cc", ".h")):
                out.append(os.path.relpath(os.path.join(dirpath, n), root))
    return sorted(out)


def long_files(root, files):
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            n = sum(1 for _ in fh)
        if n > MAX_FILE_LINES:
            yield ("file", f, "-", n)


def long_functions(root, files):
    ctags = shutil.which("ctags-universal") or shutil.which("ctags")
    if not ctags:
        sys.exit("code_limits: universal-ctags is missing (make setup installs it)")
    proc = subprocess.run(
        [ctags, "--languages=C++", "--map-C++=+.h", "--kinds-C++=f",
         "--fields=+ne", "--output-format=json", "-o", "-"] + files,
        cwd=root, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit("code_limits: ctags failed: " + proc.stderr.strip().splitlines()[0])
    for line in proc.stdout.splitlines():
        tag = json.loads(line)
        if tag.get("_type") != "tag" or "end" not in tag:
            continue
        n = tag["end"] - tag["line"] + 1
        if n > MAX_FUNCTION_LINES:
            scope = tag.get("scope", "")
            scope = re.sub(r"__anon\w+", "(anonymous)", scope)
            name = (scope.split("::")[-1] + "::" if scope else "") + tag["name"]
            yield ("function", tag["path"], f"{name}@{tag['line']}", n)


COMMENT = re.compile(r"//.*$")


def normalized_lines(text):
    """(line number, normalized text) of the lines that carry code."""
    out = []
    in_block = False
    for i, raw in enumerate(text.splitlines(), 1):
        line = raw
        if in_block:
            end = line.find("*/")
            if end < 0:
                continue
            line = line[end + 2:]
            in_block = False
        while "/*" in line:
            start = line.find("/*")
            end = line.find("*/", start + 2)
            if end < 0:
                line = line[:start]
                in_block = True
                break
            line = line[:start] + line[end + 2:]
        line = COMMENT.sub("", line)
        line = " ".join(line.split())
        # Lines that say nothing alone (braces, includes, access labels)
        # carry no block; they would make every file look like every other.
        if not line or re.fullmatch(r"[{}();,]*|#include .*|(public|private|protected):|namespace .*|}\s*//.*", line):
            continue
        out.append((i, line))
    return out


def duplicates(root, files, allowed):
    seen = {}
    found = {}
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            lines = normalized_lines(fh.read())
        for k in range(len(lines) - MIN_DUPLICATE_LINES + 1):
            window = lines[k:k + MIN_DUPLICATE_LINES]
            h = hashlib.sha1("\n".join(t for _, t in window).encode()).hexdigest()
            here = (f, window[0][0])
            first = seen.setdefault(h, here)
            if first == here:
                continue
            if first[0] == f and abs(first[1] - here[1]) < MIN_DUPLICATE_LINES:
                continue  # a run of repeated lines overlapping itself
            if first[0] in allowed and f in allowed:
                continue
            key = (first[0], f)
            # One report per pair of files and first place: consecutive
            # windows of one long copy are one duplicate.
            prev = found.get(key)
            if prev and 0 <= here[1] - prev[-1][1][1] <= 3 * MIN_DUPLICATE_LINES:
                prev[-1] = (first, here)
                continue
            found.setdefault(key, []).append((first, here))
    for (a, b), spans in sorted(found.items()):
        for first, here in spans:
            yield ("duplicate", f"{a}:{first[1]}", f"{b}:{here[1]}", MIN_DUPLICATE_LINES)


def allowed_duplicates(root):
    """Files the architecture page names as written twice on purpose."""
    path = os.path.join(root, "docs", "ARCHITECTURE.md")
    out = set()
    if not os.path.exists(path):
        return out
    in_section = False
    for line in open(path, encoding="utf-8"):
        if line.startswith("#"):
            in_section = "written twice on purpose" in line.lower()
            continue
        if in_section:
            out.update(re.findall(r"`(src/[^`]+\.(?:cc|h))`", line))
    return out


def declared_layers(root):
    """{folder: (layer, {layers it may use})} from src/CMakeLists.txt."""
    text = open(os.path.join(root, "src", "CMakeLists.txt")).read()
    out = {}
    for m in re.finditer(r"^ferry_layer\((\w+)\s+(\S+)((?:\s+\w+)*)\)", text, re.M):
        out[m.group(2)] = (m.group(1), set(m.group(3).split()))
    return out


def upward_includes(root, files):
    layers = declared_layers(root)
    by_name = {name: folder for folder, (name, _) in layers.items()}

    def layer_of(path):  # "store/s3/x.h" -> the layer of store/s3, else of store
        folder = os.path.dirname(path)
        while folder and folder not in layers:
            folder = os.path.dirname(folder)
        return layers[folder][0] if folder else None

    for f in files:
        if f.endswith("_test.cc") or f.endswith("/main.cc"):
            continue
        mine = layer_of(os.path.relpath(f, "src"))
        if mine is None:
            yield ("layer", f, "no layer in src/CMakeLists.txt", 1)
            continue
        allowed = layers[by_name[mine]][1] | {mine}
        text = open(os.path.join(root, f), encoding="utf-8", errors="replace").read()
        for m in re.finditer(r'^#include "([^"]+/[^"]+)"', text, re.M):
            theirs = layer_of(m.group(1))
            if theirs is not None and theirs not in allowed:
                yield ("layer", f, m.group(1), 1)


def key(o):
    # Duplicates are named without line numbers in the baseline, which
    # would move with every edit above them.
    if o[0] == "duplicate":
        return (o[0], o[1].split(":")[0], o[2].split(":")[0])
    if o[0] == "function":
        return (o[0], o[1], o[2].split("@")[0])
    return (o[0], o[1], o[2])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--baseline", default=None)
    ap.add_argument("--write-baseline", action="store_true")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    baseline_path = args.baseline or os.path.join(root, "scripts", "code_limits.baseline")
    files = source_files(root)
    offenders = list(long_files(root, files)) + list(long_functions(root, files)) + \
        list(duplicates(root, files, allowed_duplicates(root))) + list(upward_includes(root, files))

    if args.write_baseline:
        counts = {}
        for o in offenders:
            k = key(o)
            counts[k] = max(counts.get(k, 0), o[3]) if o[0] != "duplicate" else counts.get(k, 0) + 1
        with open(baseline_path, "w") as fh:
            fh.write("# Offenders of scripts/code_limits.py that predate it: kind, file,\n"
                     "# name, lines (for duplicates: how many blocks). Only ever shrinks.\n")
            for k in sorted(counts):
                fh.write("\t".join(map(str, k + (counts[k],))) + "\n")
        print(f"code_limits: wrote {len(counts)} offenders to {baseline_path}")
        return 0

    base = {}
    if os.path.exists(baseline_path):
        for line in open(baseline_path):
            if line.startswith("#") or not line.strip():
                continue
            kind, f, name, n = line.rstrip("\n").split("\t")
            base[(kind, f, name)] = int(n)

    dup_counts = {}
    for o in offenders:
        if o[0] == "duplicate":
            dup_counts[key(o)] = dup_counts.get(key(o), 0) + 1
    new = []
    for o in offenders:
        k = key(o)
        limit = base.get(k)
        now = dup_counts[k] if o[0] == "duplicate" else o[3]
        if limit is None or now > limit:
            new.append(o)
    known = len(offenders) - len(new)
    # The ratchet: an entry that no longer offends (or offends less) must
    # leave the baseline, so that it cannot grow back unnoticed.
    now_sizes = {}
    for o in offenders:
        now_sizes[key(o)] = dup_counts[key(o)] if o[0] == "duplicate" else max(now_sizes.get(key(o), 0), o[3])
    fixed = [k for k, n in base.items() if now_sizes.get(k, 0) < n]
    for k in fixed:
        print(f"{k[1]}: {k[0]} {k[2]} is now {now_sizes.get(k, 0) or 'within the limits'}; "
              f"lower the baseline (scripts/code_limits.py --write-baseline)")
    for kind, f, name, n in new:
        if kind == "file":
            print(f"{f}: {n} lines, over {MAX_FILE_LINES}")
        elif kind == "layer":
            print(f"{f}: includes {name}, from a layer its own does not declare (src/CMakeLists.txt)")
        elif kind == "function":
            print(f"{f}: {name} is {n} lines, over {MAX_FUNCTION_LINES}")
        else:
            print(f"{f} and {name}: {MIN_DUPLICATE_LINES}+ lines written twice")
    print(f"code_limits: {len(new)} new offenders, {known} known from the baseline"
          f" ({len(files)} files)")
    return 1 if new or fixed else 0


if __name__ == "__main__":
    sys.exit(main())

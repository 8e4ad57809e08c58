#!/usr/bin/env python3
"""Where compile time goes, by header and by template, from clang's traces.

    bench/compile_profile.sh BUILD_DIR   (builds with clang -ftime-trace, then runs this)
    bench/compile_profile.py BUILD_DIR [TOP]

Reads every *.json trace clang's -ftime-trace wrote beside the objects in
BUILD_DIR and prints, for the whole build:
  - the front end and back end time summed over translation units;
  - the headers whose parsing cost the most, summed over every translation
    unit that included them ("Source" events: a header's time includes
    the headers it includes, so nested rows overlap, as in
    ClangBuildAnalyzer's report);
  - the templates whose instantiation cost the most, by name without
    arguments;
  - the functions whose code generation cost the most ("OptFunction").
"""
import collections
import json
import os
import re
import sys


def traces(build):
    for root, _, files in os.walk(build):
        for f in files:
            if f.endswith(".json") and (f.endswith(".cc.json") or f.endswith(".cxx.json") or ".cpp." in f):
                yield os.path.join(root, f)


def short_header(path):
    for marker in ("/include/c++/", "/include/boost/", "/include/nlohmann/", "/include/spdlog/", "/include/fmt/",
                   "/include/CLI/", "/include/gtest/", "/include/gmock/", "/src/", "/testing/", "/tests/"):
        i = path.find(marker)
        if i >= 0:
            return path[i + 1:] if marker != "/src/" else path[i + 1:]
    return path


def template_name(detail):
    # "ferry::Foo<int, std::string>::bar" -> "ferry::Foo<>::bar"
    out, depth = [], 0
    for ch in detail:
        if ch == "<":
            if depth == 0:
                out.append("<>")
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    return re.sub(r"\s+", " ", "".join(out)).strip()


def main():
    build = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    totals = collections.Counter()
    headers, header_count = collections.Counter(), collections.Counter()
    templates = collections.Counter()
    functions = collections.Counter()
    units = 0
    for path in traces(build):
        try:
            events = json.load(open(path)).get("traceEvents", [])
        except (OSError, ValueError):
            continue
        units += 1
        for e in events:
            name, dur = e.get("name"), e.get("dur", 0) / 1e6
            detail = (e.get("args") or {}).get("detail", "")
            if name in ("Total Frontend", "Total Backend", "Total ExecuteCompiler"):
                totals[name] += dur
            elif name == "Source" and detail:
                headers[short_header(detail)] += dur
                header_count[short_header(detail)] += 1
            elif name in ("InstantiateClass", "InstantiateFunction") and detail:
                templates[template_name(detail)] += dur
            elif name == "OptFunction" and detail:
                functions[detail] += dur
    if units == 0:
        sys.exit(f"compile_profile: no -ftime-trace files under {build}")
    print(f"{units} translation units: compiler {totals['Total ExecuteCompiler']:.0f} s "
          f"(front end {totals['Total Frontend']:.0f} s, back end {totals['Total Backend']:.0f} s)\n")
    print(f"Headers by parse time, summed over the units that include them (top {top}):\n")
    print("| seconds | units | header |\n|---:|---:|---|")
    for h, s in headers.most_common(top):
        print(f"| {s:.1f} | {header_count[h]} | `{h}` |")
    print(f"\nTemplates by instantiation time (top {top}):\n")
    print("| seconds | template |\n|---:|---|")
    for t, s in templates.most_common(top):
        print(f"| {s:.1f} | `{t[:110]}` |")
    print(f"\nFunctions by optimisation and code generation time (top {top}):\n")
    print("| seconds | function |\n|---:|---|")
    for f, s in functions.most_common(top):
        print(f"| {s:.1f} | `{f[:110]}` |")


if __name__ == "__main__":
    main()

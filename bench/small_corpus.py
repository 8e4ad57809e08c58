"""A corpus of small real web objects from Debian packages that `make
setup` installs, for the cache's trained dictionaries:

  api/NNNN.json   answers of AWS APIs as botocore documents them (the
                  "output" of each example in botocore's examples-1.json),
                  indented as APIs send them;
  html/NNNN.html  HTML fragments of Python's library documentation: each
                  function's, class's or data's <dl> block, as a page
                  fetches a partial.

Each from 64 bytes to under 4 KiB (ferry's default --min-size), in a fixed
order; at most 2,000 of each kind, evenly spread over all there are.
Usage: small_corpus.py DIR  (prints the count of each kind)
"""
import glob
import json
import os
import re
import sys

BOTO = "/usr/lib/python3/dist-packages/botocore/data"
DOCS = "/usr/share/doc/python3.11/html/library"
LOW, HIGH = 64, 4096
MOST = 2000


def api_answers():
    for path in sorted(glob.glob(BOTO + "/*/*/examples-1.json")):
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError):
            continue
        for op in sorted(doc.get("examples", {})):
            for ex in doc["examples"][op]:
                out = ex.get("output")
                if out:
                    yield json.dumps(out, indent=2) + "\n"


def html_fragments():
    block = re.compile(r'<dl class="py [a-z]+">.*?</dl>', re.S)
    for path in sorted(glob.glob(DOCS + "/*.html")):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for m in block.finditer(text):
            frag = m.group(0)
            if frag.count("<dl") == frag.count("</dl>"):  # whole (not cut at a nested block)
                yield frag + "\n"


def main():
    out = sys.argv[1]
    counts = {}
    for kind, ext, items in (("api", "json", api_answers()), ("html", "html", html_fragments())):
        os.makedirs(os.path.join(out, kind), exist_ok=True)
        fit = [b for b in (body.encode() for body in items) if LOW <= len(b) < HIGH]
        step = max(1, -(-len(fit) // MOST))
        chosen = fit[::step]
        for n, data in enumerate(chosen):
            with open(os.path.join(out, kind, "%04d.%s" % (n, ext)), "wb") as f:
                f.write(data)
        counts[kind] = len(chosen)
    if min(counts.values()) < 100:
        sys.exit("small_corpus: too few objects (%s): are botocore and python3.11-doc installed?" % counts)
    print(" ".join("%s=%d" % kv for kv in counts.items()))


if __name__ == "__main__":
    main()

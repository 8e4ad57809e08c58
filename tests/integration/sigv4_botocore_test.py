#!/usr/bin/python3
"""SigV4: ferry's signature equals botocore's for a table of S3 requests.

botocore is the copy Debian's awscli package bundles (awscli.botocore). Its
S3SigV4Auth signs each request; ferry_sigv4_sign (ferry's signer) signs the
same request; the Authorization headers must be identical.
Usage: sigv4_botocore_test.py PATH/TO/ferry_sigv4_sign
"""
import datetime
import hashlib
import json
import subprocess
import sys

try:
    import awscli  # noqa: F401 - makes its bundled botocore importable as `botocore`
    import botocore.auth as auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    from botocore.utils import percent_encode
except ImportError as e:  # awscli missing: skip, as automake tests do
    print(f"SKIP: awscli's botocore not importable: {e}")
    sys.exit(77)

FIXED = datetime.datetime(2024, 3, 9, 17, 45, 1)


class _FixedClock:
    """Stands in for the datetime module inside botocore.auth."""

    class datetime:  # noqa: N801 - mirrors the module's attribute name
        @staticmethod
        def utcnow():
            return FIXED

        strptime = datetime.datetime.strptime


auth.datetime = _FixedClock

AK, SK, TOKEN = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "FQoGZXIvYXdzE//token+/="
ODD_KEYS = [
    "plain.txt", "a b c.txt", "plus+sign", "tilde~", "percent%25literal", "100%",
    "ünïcödé/ファイル.txt", "double//slash", "trailing/", "quote'\"<&>", "eq=amp&hash#q?",
    "emoji-😀", "x" * 1024, "dots/../up", "./dot", "sp  ace", "comma,semi;colon:",
]


def cases():
    for i, key in enumerate(ODD_KEYS):
        yield dict(method="GET", key=key, query=[], headers=[["Range", "bytes=0-9"]], body=b"",
                   token=TOKEN if i % 3 == 0 else "", unsigned=False)
        yield dict(method="PUT", key=key, query=[],
                   headers=[["Content-Type", "text/plain"], ["x-amz-meta-note", "  two   spaces  "],
                            ["Content-MD5", "1B2M2Y8AsgTpgAmY7PhCfg=="]],
                   body=("body of " + key).encode(), token="", unsigned=(i % 2 == 0))
    yield dict(method="GET", key="", query=[["list-type", "2"], ["prefix", "a b/+c"], ["delimiter", "/"],
                                          ["continuation-token", "1/abc+def=="], ["encoding-type", "url"]],
               headers=[], body=b"", token="", unsigned=False)
    yield dict(method="POST", key="big file.bin", query=[["uploads", ""]], headers=[], body=b"",
               token=TOKEN, unsigned=False)
    yield dict(method="PUT", key="big file.bin", query=[["partNumber", "7"], ["uploadId", "u/p+id=="]],
               headers=[], body=b"\x00" * 100, token="", unsigned=True)
    yield dict(method="DELETE", key="k", query=[["uploadId", "x y"]], headers=[], body=b"", token="",
               unsigned=False)
    yield dict(method="HEAD", key="k", query=[], headers=[["If-Match", '"abc"']], body=b"", token="",
               unsigned=False)
    yield dict(method="PUT", key="copy dst", query=[],
               headers=[["x-amz-copy-source", "/bucket/src%20key"], ["x-amz-metadata-directive", "COPY"]],
               body=b"", token="", unsigned=False)


def botocore_sign(c):
    # https + Content-MD5 + streaming input is how botocore decides on
    # UNSIGNED-PAYLOAD; plain http always signs the payload.
    scheme = "https" if c["unsigned"] else "http"
    url = f"{scheme}://127.0.0.1:9000/bucket"
    if c["key"]:
        url += "/" + percent_encode(c["key"], safe="/~")
    req = AWSRequest(method=c["method"], url=url, data=c["body"],
                     params={k: v for k, v in c["query"]} if c["query"] else None)
    for k, v in c["headers"]:
        req.headers[k] = v
    req.headers["Host"] = "127.0.0.1:9000"
    if c["unsigned"]:
        if "Content-MD5" not in req.headers:
            req.headers["Content-MD5"] = "AAAAAAAAAAAAAAAAAAAAAA=="
        req.context["has_streaming_input"] = True
    creds = Credentials(AK, SK, c["token"] or None)
    auth.S3SigV4Auth(creds, "s3", "eu-west-3").add_auth(req)
    return req.headers["Authorization"], req.headers["X-Amz-Content-SHA256"], dict(req.headers)


def main():
    signer = sys.argv[1]
    table = list(cases())
    lines, expected = [], []
    for c in table:
        want, payload, headers = botocore_sign(c)
        sent = [[k, v] for k, v in headers.items()
                if k.lower() not in ("authorization", "x-amz-date", "x-amz-content-sha256",
                                     "x-amz-security-token")]
        path = "/bucket" + ("/" + c["key"] if c["key"] else "")
        lines.append(json.dumps(dict(method=c["method"], path=path, query=c["query"], headers=sent,
                                     payload_hash=payload, access_key=AK, secret=SK, token=c["token"],
                                     region="eu-west-3", amz_date=FIXED.strftime("%Y%m%dT%H%M%SZ"))))
        expected.append(want)
        if not c["unsigned"]:
            assert payload == hashlib.sha256(c["body"]).hexdigest(), payload
        else:
            assert payload == "UNSIGNED-PAYLOAD", payload
    out = subprocess.run([signer], input="\n".join(lines) + "\n", capture_output=True, text=True,
                         check=True).stdout.splitlines()
    failed = 0
    for c, want, got in zip(table, expected, out):
        if want != got:
            failed += 1
            print(f"MISMATCH {c['method']} {c['key'][:40]!r} {c['query']}\n  botocore: {want}\n  ferry:    {got}")
    if len(out) != len(table):
        print(f"ferry signed {len(out)} of {len(table)} requests")
        failed += 1
    print(f"sigv4: {len(table) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

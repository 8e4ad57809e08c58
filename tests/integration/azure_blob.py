#!/usr/bin/python3
"""A minimal Azure Blob client, independent of ferry, for the integration
tests: creates containers and reads a blob's properties and bytes from
Azurite with its own Shared Key signature (Python's hmac).

  azure_blob.py ENDPOINT mkcontainer CONTAINER
  azure_blob.py ENDPOINT head CONTAINER BLOB     -> JSON of the headers
  azure_blob.py ENDPOINT get CONTAINER BLOB OUT

ENDPOINT is path-style, http://127.0.0.1:PORT/devstoreaccount1; the account
is Azurite's well-known one."""
import base64, hashlib, hmac, json, sys, urllib.parse, urllib.request
from email.utils import formatdate

ACCOUNT = "devstoreaccount1"
KEY = base64.b64decode(
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==")


def request(method, endpoint, path, query=None):
    query = query or {}
    url = urllib.parse.urlsplit(endpoint)
    full_path = url.path + urllib.parse.quote(path, safe="/~")
    headers = {"x-ms-date": formatdate(usegmt=True), "x-ms-version": "2021-08-06"}
    if method == "PUT":
        headers["Content-Length"] = "0"
    canon_headers = "".join(f"{k}:{v}\n" for k, v in sorted(headers.items()) if k.startswith("x-ms-"))
    canon_resource = f"/{ACCOUNT}{full_path}" + "".join(
        f"\n{k}:{v}" for k, v in sorted(query.items()))
    # VERB, Content-Encoding, -Language, -Length (empty when 0), -MD5, -Type,
    # Date, If-Modified-Since, If-Match, If-None-Match, If-Unmodified-Since, Range
    to_sign = method + "\n" + "\n" * 11 + canon_headers + canon_resource
    sig = base64.b64encode(hmac.new(KEY, to_sign.encode(), hashlib.sha256).digest()).decode()
    headers["Authorization"] = f"SharedKey {ACCOUNT}:{sig}"
    target = f"{url.scheme}://{url.netloc}{full_path}"
    if query:
        target += "?" + urllib.parse.urlencode(query)
    # No body: urllib would add a Content-Type (signed) with one.
    req = urllib.request.Request(target, method=method, headers=headers)
    return urllib.request.urlopen(req)


def main():
    endpoint, op, container = sys.argv[1], sys.argv[2], sys.argv[3]
    if op == "mkcontainer":
        request("PUT", endpoint, "/" + container, {"restype": "container"})
    elif op == "head":
        with request("HEAD", endpoint, f"/{container}/{sys.argv[4]}") as r:
            print(json.dumps({k.lower(): v for k, v in r.headers.items()}))
    elif op == "get":
        with request("GET", endpoint, f"/{container}/{sys.argv[4]}") as r, open(sys.argv[5], "wb") as f:
            f.write(r.read())


main()

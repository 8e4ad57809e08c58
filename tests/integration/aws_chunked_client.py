#!/usr/bin/python3
"""A streaming (aws-chunked) PutObject made by hand, as the AWS SDKs send
it, in each SigV4 payload mode, whole or spoiled on purpose.

    aws_chunked_client.py URL KEY SECRET BUCKET OBJECT MODE SPOIL SIZE

MODE: unsigned-trailer (STREAMING-UNSIGNED-PAYLOAD-TRAILER), signed
(STREAMING-AWS4-HMAC-SHA256-PAYLOAD) or signed-trailer
(STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER). SPOIL: none, checksum (the
trailing CRC32 is another body's), chunk-signature (one byte of the second
chunk's signature changed), trailer-signature, truncate (the body ends in
the middle of a chunk), length (x-amz-decoded-content-length one more than
sent). A truncated body is sent whole as HTTP (its Content-Length is what
is sent): only its aws-chunked framing ends early. The seed signature is
botocore's (Debian's awscli); the chunk chain and the trailer signature are
computed here from AWS's documentation, not by ferry. Prints the HTTP status and the S3 error code ("200 -").
"""
import base64
import hashlib
import hmac
import http.client
import re
import sys
import urllib.parse
import zlib

import awscli  # noqa: F401 - makes its bundled botocore importable as `botocore`
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
MODES = {
    "unsigned-trailer": "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
    "signed": "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
    "signed-trailer": "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER",
}
CHUNK = 65536


def body_of(size):
    return bytes((i * 7 + i // 251) & 0xFF for i in range(size))


def hmac_sha256(key, msg):
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def signing_key(secret, date):
    k = hmac_sha256(("AWS4" + secret).encode(), date)
    for part in ("us-east-1", "s3", "aws4_request"):
        k = hmac_sha256(k, part)
    return k


def main():
    url, key, secret, bucket, obj, mode, spoil, size = sys.argv[1:9]
    payload = body_of(int(size))
    signed = mode.startswith("signed")
    trailer = mode.endswith("trailer")
    crc_of = payload if spoil != "checksum" else payload + b"x"
    crc = base64.b64encode(zlib.crc32(crc_of).to_bytes(4, "big")).decode()

    u = urllib.parse.urlsplit(url)
    path = "/%s/%s" % (bucket, urllib.parse.quote(obj))
    headers = {
        "Content-Encoding": "aws-chunked",
        "X-Amz-Content-SHA256": MODES[mode],
        "X-Amz-Decoded-Content-Length": str(len(payload) + (spoil == "length")),
    }
    if trailer:
        headers["X-Amz-Trailer"] = "x-amz-checksum-crc32"
    req = AWSRequest(method="PUT", url=url + path, headers=headers)
    SigV4Auth(Credentials(key, secret), "s3", "us-east-1").add_auth(req)
    seed = re.search(r"Signature=([0-9a-f]{64})", req.headers["Authorization"]).group(1)
    amz_date = req.headers["X-Amz-Date"]
    scope = "%s/us-east-1/s3/aws4_request" % amz_date[:8]
    kSigning = signing_key(secret, amz_date[:8])

    prev = seed
    out = bytearray()
    chunks = [payload[i:i + CHUNK] for i in range(0, len(payload), CHUNK)] + [b""]
    for n, data in enumerate(chunks):
        line = b"%x" % len(data)
        if signed:
            sts = "\n".join(["AWS4-HMAC-SHA256-PAYLOAD", amz_date, scope, prev, EMPTY_SHA256,
                             hashlib.sha256(data).hexdigest()])
            prev = hmac.new(kSigning, sts.encode(), hashlib.sha256).hexdigest()
            sig = prev
            if spoil == "chunk-signature" and n == 1:
                sig = ("1" if sig[0] == "0" else "0") + sig[1:]
            line += b";chunk-signature=" + sig.encode()
        out += line + b"\r\n" + data + (b"\r\n" if data else b"")
    if trailer:
        out += b"x-amz-checksum-crc32:" + crc.encode() + b"\r\n"
        if signed:
            canonical = "x-amz-checksum-crc32:%s\n" % crc
            sts = "\n".join(["AWS4-HMAC-SHA256-TRAILER", amz_date, scope, prev,
                             hashlib.sha256(canonical.encode()).hexdigest()])
            tsig = hmac.new(kSigning, sts.encode(), hashlib.sha256).hexdigest()
            if spoil == "trailer-signature":
                tsig = ("1" if tsig[0] == "0" else "0") + tsig[1:]
            out += b"x-amz-trailer-signature:" + tsig.encode() + b"\r\n"
    out += b"\r\n"
    if spoil == "truncate":
        out = out[:len(out) // 2]

    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    conn.putrequest("PUT", path, skip_accept_encoding=True)
    for name, value in req.headers.items():
        conn.putheader(name, value)
    conn.putheader("Content-Length", str(len(out)))
    conn.endheaders()
    conn.send(bytes(out))
    try:
        resp = conn.getresponse()
        text = resp.read().decode(errors="replace")
        code = re.search(r"<Code>([^<]+)</Code>", text)
        print(resp.status, code.group(1) if code else "-")
    except (http.client.HTTPException, ConnectionError):
        print("closed -")


if __name__ == "__main__":
    main()

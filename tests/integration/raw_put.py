"""A PUT through the gateway sent by hand over a socket, for tests that cut
or stall a body: botocore (awscli's) signs it with UNSIGNED-PAYLOAD, and
open_put returns the socket with the request's header sent."""
import socket
import urllib.parse

import awscli  # noqa: F401 - makes its bundled botocore importable
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials


def open_put(base, key, length, access="gwkey", secret="gwsecret"):
    url = base + "/bkt/" + key
    req = AWSRequest(method="PUT", url=url, headers={"X-Amz-Content-SHA256": "UNSIGNED-PAYLOAD"})
    SigV4Auth(Credentials(access, secret), "s3", "us-east-1").add_auth(req)
    u = urllib.parse.urlsplit(url)
    s = socket.create_connection((u.hostname, u.port))
    head = "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n" % (u.path, u.netloc, length)
    head += "".join("%s: %s\r\n" % kv for kv in req.headers.items()) + "\r\n"
    s.sendall(head.encode())
    return s

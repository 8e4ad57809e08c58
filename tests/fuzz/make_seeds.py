#!/usr/bin/env python3
"""Writes the seed corpora of the binary and structured fuzz targets
(tests/fuzz/corpus/NAME/*) from first principles: NBD handshakes and
requests (the protocol's doc), HTTP/2 frames with HPACK literals (RFC 9113,
RFC 7541), S3 and Azure answers, test-server requests, control-API bodies
and state-file edits. The cache_disk and snapshot seeds are files ferry
itself writes: those targets write them when run with
FERRY_FUZZ_WRITE_SEEDS=DIR. Run this from anywhere; it rewrites its own
files only."""
import hashlib, json, os, struct, sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# --- NBD (what the client sends after the greeting) -------------------------
OPT_MAGIC = 0x49484156454F5054
REQ_MAGIC = 0x25609513
FLAGS = struct.pack(">I", 1 | 2)  # FIXED_NEWSTYLE | NO_ZEROES


def opt(code, data=b""):
    return struct.pack(">QII", OPT_MAGIC, code, len(data)) + data


def req(cmd, handle, offset, length, flags=0, payload=b""):
    return struct.pack(">IHHQQI", REQ_MAGIC, flags, cmd, handle, offset, length) + payload


def go(name, infos=()):
    n = name.encode()
    return struct.pack(">I", len(n)) + n + struct.pack(">H", len(infos)) + b"".join(struct.pack(">H", i) for i in infos)


def meta(name, queries):
    n = name.encode()
    q = b"".join(struct.pack(">I", len(x)) + x.encode() for x in queries)
    return struct.pack(">I", len(n)) + n + struct.pack(">I", len(queries)) + q


READ, WRITE, DISC, FLUSH, TRIM, CACHE, ZEROES, BLOCK_STATUS = 0, 1, 2, 3, 4, 5, 6, 7
FUA = 1
work = (req(WRITE, 1, 4096, 8, FUA, b"abcdefgh") + req(READ, 2, 4096, 8) + req(FLUSH, 3, 0, 0) +
        req(TRIM, 4, 0, 4096) + req(ZEROES, 5, 8192, 4096) + req(CACHE, 6, 0, 65536) + req(READ, 7, 0, 65536))
put("nbd", "go_simple", FLAGS + opt(7, go("rw")) + work + req(DISC, 8, 0, 0))
put("nbd", "go_structured",
    FLAGS + opt(8) + opt(10, meta("rw", ["base:allocation"])) + opt(7, go("rw", [0, 3])) + work +
    req(BLOCK_STATUS, 9, 0, 1 << 20) + req(DISC, 10, 0, 0))
put("nbd", "list_info", FLAGS + opt(3) + opt(6, go("ro", [1, 2, 3])) + opt(9, meta("ro", [])) + opt(2))
put("nbd", "export_name", FLAGS + opt(1, b"ro") + req(READ, 1, 0, 512) + req(WRITE, 2, 0, 4, 0, b"nope"))
put("nbd", "starttls", FLAGS + opt(5) + opt(7, go("nope")) + opt(2))
put("nbd", "pipelined", FLAGS + opt(8) + opt(7, go("rw")) +
    b"".join(req(READ, i, i * 4096, 4096) for i in range(20)) + req(DISC, 99, 0, 0))
put("nbd", "past_end", FLAGS + opt(7, go("rw")) + req(READ, 1, (1 << 20) - 4, 8) + req(WRITE, 2, 1 << 40, 0))
with open(os.path.join(os.path.dirname(ROOT), "dict", "nbd.dict"), "w") as f:
    f.write("# NBD magics, option and command numbers (big-endian)\n")
    for name, b in [("opt_magic", struct.pack(">Q", OPT_MAGIC)), ("req_magic", struct.pack(">I", REQ_MAGIC)),
                    ("base_alloc", b"base:allocation"), ("rw", b"\x00\x00\x00\x02rw"), ("ro", b"\x00\x00\x00\x02ro")]:
        f.write('%s="%s"\n' % (name, "".join("\\x%02x" % c for c in b)))
    for code in range(1, 11):
        f.write('opt%d="\\x00\\x00\\x00\\x%02x"\n' % (code, code))
    for cmd in range(0, 8):
        f.write('cmd%d="\\x00\\x%02x"\n' % (cmd, cmd))

# --- HTTP/2 (after the preface) ----------------------------------------------


def frame(ftype, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", stream) + payload


def lit(name, value):  # literal header field without indexing, new name
    return b"\x00" + bytes([len(name)]) + name.encode() + bytes([len(value)]) + value.encode()


SETTINGS = frame(4, 0, 0, struct.pack(">HI", 3, 100) + struct.pack(">HI", 4, 65535))
SETTINGS_ACK = frame(4, 1, 0)
get = b"\x82\x84\x86\x41\x09localhost"  # :method GET, :path /, :scheme http, :authority
put("h2", "get", SETTINGS + SETTINGS_ACK + frame(1, 5, 1, get))
put("h2", "get_path", SETTINGS + frame(1, 5, 1, b"\x82\x86\x41\x09localhost" + b"\x04\x06/a/b/c" +
                                           lit("accept-encoding", "zstd, br")))
post = b"\x83\x84\x86\x41\x09localhost" + lit("content-length", "5")
put("h2", "post", SETTINGS + frame(1, 4, 3, post) + frame(0, 1, 3, b"hello"))
put("h2", "reset_and_window", SETTINGS + frame(1, 5, 1, get) + frame(3, 0, 1, struct.pack(">I", 8)) +
    frame(8, 0, 0, struct.pack(">I", 1 << 20)) + frame(6, 0, 0, b"12345678"))
put("h2", "continuation", SETTINGS + frame(1, 1, 1, get[:4]) + frame(9, 4, 1, get[4:]))
put("h2", "many_streams", SETTINGS + b"".join(frame(1, 5, 2 * i + 1, get) for i in range(12)) +
    frame(7, 0, 0, struct.pack(">II", 23, 0)))
put("h2", "priority_ping", SETTINGS + frame(2, 0, 1, struct.pack(">IB", 0, 16)) + frame(6, 0, 0, b"pingping"))
with open(os.path.join(os.path.dirname(ROOT), "dict", "h2.dict"), "w") as f:
    f.write("# HTTP/2 frame heads and HPACK bits\n")
    for name, b in [("settings", frame(4, 0, 0)), ("ack", frame(4, 1, 0)), ("get", get),
                    ("headers1", frame(1, 5, 1)[:9]), ("data1", frame(0, 1, 1)[:9]),
                    ("rst", frame(3, 0, 1, b"\0\0\0\x08")), ("window", frame(8, 0, 0, b"\x7f\xff\xff\xff")),
                    ("goaway", frame(7, 0, 0, b"\0" * 8))]:
        f.write('%s="%s"\n' % (name, "".join("\\x%02x" % c for c in b)))

# --- S3 and Azure answers ------------------------------------------------------


def answer(status, headers, body):
    return "%d\n%s\n%s" % (status, "".join("%s: %s\n" % h for h in headers), body)


put("s3_answers", "list", answer(200, [("Content-Type", "application/xml")],
    '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>b</Name><KeyCount>2</KeyCount>'
    '<IsTruncated>true</IsTruncated><NextContinuationToken>tok</NextContinuationToken>'
    '<Contents><Key>a/b &amp; c</Key><Size>12</Size><ETag>"0cc175b9c0f1b6a831c399e269772661"</ETag>'
    '<LastModified>2024-01-02T03:04:05.000Z</LastModified></Contents>'
    '<Contents><Key>z&#x1;</Key><Size>0</Size><ETag>"x-2"</ETag></Contents>'
    '<CommonPrefixes><Prefix>p/</Prefix></CommonPrefixes></ListBucketResult>'))
put("s3_answers", "list_url", answer(200, [], '<ListBucketResult><EncodingType>url</EncodingType>'
    '<Contents><Key>a%20b+c%2F</Key><Size>1</Size></Contents></ListBucketResult>'))
put("s3_answers", "error", answer(503, [("Retry-After", "2")],
    '<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>'))
put("s3_answers", "error_404", answer(404, [], '<Error><Code>NoSuchKey</Code><Message>x</Message></Error>'))
put("s3_answers", "initiate", answer(200, [], '<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key>'
    '<UploadId>abc-123</UploadId></InitiateMultipartUploadResult>'))
put("s3_answers", "complete_error", answer(200, [], '<Error><Code>InternalError</Code><Message>m</Message></Error>'))
put("s3_answers", "complete", answer(200, [], '<CompleteMultipartUploadResult><ETag>"e-2"</ETag>'
    '</CompleteMultipartUploadResult>'))
put("s3_answers", "parts", answer(200, [], '<ListPartsResult><IsTruncated>true</IsTruncated>'
    '<NextPartNumberMarker>2</NextPartNumberMarker><Part><PartNumber>1</PartNumber><ETag>"p1"</ETag>'
    '<Size>5242880</Size></Part><Part><PartNumber>2</PartNumber><ETag>"p2"</ETag><Size>7</Size></Part>'
    '</ListPartsResult>'))
put("s3_answers", "uploads", answer(200, [], '<ListMultipartUploadsResult><IsTruncated>false</IsTruncated>'
    '<Upload><Key>k</Key><UploadId>u1</UploadId><Initiated>2024-01-02T03:04:05.000Z</Initiated></Upload>'
    '</ListMultipartUploadsResult>'))
put("s3_answers", "copy", answer(200, [], '<CopyObjectResult><ETag>"c"</ETag></CopyObjectResult>'))
put("s3_answers", "head", answer(200, [("ETag", '"0cc175b9c0f1b6a831c399e269772661"'), ("Content-Length", "1"),
    ("Last-Modified", "Tue, 02 Jan 2024 03:04:05 GMT"), ("x-amz-meta-a", "b"), ("Content-Type", "text/plain"),
    ("x-amz-server-side-encryption", "aws:kms")], ""))
put("s3_answers", "azure_list", answer(200, [], '<?xml version="1.0"?><EnumerationResults><Blobs>'
    '<Blob><Name>a</Name><Properties><Content-Length>3</Content-Length><Etag>0x8D</Etag>'
    '<Last-Modified>Tue, 02 Jan 2024 03:04:05 GMT</Last-Modified><Content-MD5>kAFQmDzST7DWlj99KOF/cg==</Content-MD5>'
    '</Properties></Blob><BlobPrefix><Name>p/</Name></BlobPrefix></Blobs><NextMarker>m</NextMarker>'
    '</EnumerationResults>'))
put("s3_answers", "azure_blocks", answer(200, [], '<BlockList><CommittedBlocks><Block><Name>YmxvY2st'
    'MDAwMDE=</Name><Size>5</Size></Block></CommittedBlocks><UncommittedBlocks/></BlockList>'))
put("s3_answers", "azure_error", answer(409, [("x-ms-error-code", "BlobAlreadyExists")],
    '<Error><Code>BlobAlreadyExists</Code><Message>m</Message></Error>'))

# --- the test server's requests --------------------------------------------------
put("s3server", "put", "!PUT /bkt/a%20b\ncontent-type: text/plain\ncontent-md5: XUFAKrxLKna5cZ2REBfFkg==\n\nhello")
put("s3server", "get_range", "!GET /bkt/a%20b\nrange: bytes=1-3\n\n")
put("s3server", "list", "!GET /bkt?list-type=2&prefix=a&delimiter=%2F&max-keys=2&encoding-type=url\n\n")
put("s3server", "list_v1", "!GET /bkt?marker=a&max-keys=1\n\n")
put("s3server", "multipart", "!POST /bkt/big?uploads\n\n")
put("s3server", "part", "!PUT /bkt/big?partNumber=1&uploadId=bogus\n\n0123456789abcdef")
put("s3server", "complete", "!POST /bkt/big?uploadId=bogus\n\n<CompleteMultipartUpload><Part><PartNumber>1"
    "</PartNumber><ETag>\"x\"</ETag></Part></CompleteMultipartUpload>")
put("s3server", "delete_objects", "!POST /bkt?delete\n\n<Delete><Object><Key>a b</Key></Object></Delete>")
put("s3server", "copy", "!PUT /bkt/c\nx-amz-copy-source: /bkt/a%20b\nx-amz-metadata-directive: REPLACE\n\n")
put("s3server", "chunked", "!PUT /bkt/ch\ncontent-encoding: aws-chunked\nx-amz-decoded-content-length: 5\n\n"
    "5;chunk-signature=00\r\nhello\r\n0;chunk-signature=00\r\n\r\n")
put("s3server", "unsigned", "GET /bkt/a%20b\n\n")
put("s3server", "bad_auth", "GET /bkt/x\nauthorization: AWS4-HMAC-SHA256 Credential=ferrytest/20240101/us-east-1/s3/"
    "aws4_request, SignedHeaders=host;x-amz-date, Signature=00\nx-amz-date: 20240101T000000Z\n\n")
put("s3server", "admin_faults", "PUT /_admin/faults\n\n{\"rules\": [{\"kind\": \"503\", \"op\": \"put\", "
    "\"every\": 2, \"count\": 1}], \"latency_ms\": 0}")
put("s3server", "admin_stats", "GET /_admin/stats\n\n")
put("s3server", "buckets", "!GET /\n\n")

# --- control-plane JSON ------------------------------------------------------------
put("control_json", "create_job", 'POST /v1/jobs\ncontent-type: application/json\n\n'
    '{"src": "/tmp/ferry-fuzz-src", "dst": "/tmp/ferry-fuzz-dst", "options": {"concurrency": 4, '
    '"include": ["*.txt"], "dry-run": true}}')
put("control_json", "list", "GET /v1/jobs?all=true&state=running\n\n")
put("control_json", "job", "GET /v1/jobs/job-1\n\n")
put("control_json", "cancel", "POST /v1/jobs/job-1/cancel\n\n")
put("control_json", "resume", "POST /v1/jobs/j/resume\n\n")
put("control_json", "dlq", "POST /v1/jobs/j/dlq/retry\n\n")
put("control_json", "verify", 'POST /v1/verify\n\n{"job": "j", "fix": true, "checksum": true, "concurrency": 2}')
put("control_json", "volume_create", 'POST /v1/none\n\n{"name": "vm", "from": "/repo/base", "size": 1048576, '
    '"count": 3}')
put("control_json", "volume_json", 'GET /metrics\n\n{"name": "vm-1", "from": "s3://b/r/base", "size": 0}')
put("control_json", "snapshot", 'GET /v1/overview\n\n{"to": "/repo/next"}')
spec = {"src": "/a", "dst": "s3://b/p", "src_profile": "", "dst_profile": "p", "concurrency": 8,
        "part_concurrency": 4, "list_concurrency": 2, "list_chunk": 1000, "include": ["a*"], "exclude": [],
        "min_size": 1, "max_size": 100, "overwrite": "changed", "multipart_threshold": 8388608,
        "part_size": 8388608, "bwlimit": 0.0, "tps_limit": 0.0, "max_attempts": 5, "dry_run": False,
        "server_side_copy": True, "pool": True, "since_ms": 0, "delete": False, "max_delete": 0}
put("control_json", "spec", "GET /v1/openapi.json\n\n" + json.dumps(spec))

# --- state-file edits (see state_rows_fuzz.cc) --------------------------------------
def edit(what, table, column, value):
    return bytes([what, table, column]) + value + b"\0"


put("state_rows", "text_in_counter", edit(1, 1, 9, b"lots"))
put("state_rows", "null_spec", edit(3, 1, 3, b"") + edit(1, 3, 1, b"\xff\xfe"))
put("state_rows", "bad_spec_json", edit(1, 1, 3, b'{"src": 1, "dst": []}'))
put("state_rows", "blob_key", edit(2, 3, 1, b"\x00\x01key") + edit(0, 3, 2, b"\xff" * 8))
put("state_rows", "bad_version", edit(1, 0, 1, b"99"))
put("state_rows", "bad_state", edit(1, 1, 4, b"exploded") + edit(1, 9, 2, b"{"))
put("state_rows", "torn", edit(5, 0, 3, b""))
put("state_rows", "page_damage", edit(4, 0, 40, b"\xde\xad\xbe\xef" * 8))
put("state_rows", "negative", edit(0, 6, 2, b"\xff\xff\xff\xff\xff\xff\xff\xff") + edit(0, 4, 6, b"\x80"))
print("seeds written under", ROOT)

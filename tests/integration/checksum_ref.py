"""Reference flexible checksums for the tests, written from the
algorithms' definitions rather than from ferry's code: CRC32 from zlib,
CRC32C (Castagnoli, reflected 0x82F63B78) and CRC64NVME (reflected
0x9A6C9329AC4BC9B5) table-driven here, SHA1/SHA256 from hashlib; each as
S3 sends it (base64 of the big-endian value), and S3's composite of parts.

    checksum_ref.py ALGORITHM FILE...     one value per file
    checksum_ref.py --composite ALGORITHM B64...   the parts' composite
"""
import base64
import hashlib
import struct
import sys
import zlib


def _table(poly, bits):
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        t.append(c)
    return t


_T32C = _table(0x82F63B78, 32)
_T64 = _table(0x9A6C9329AC4BC9B5, 64)


def _reflected(data, table, mask):
    c = mask
    for b in data:
        c = table[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ mask


def raw(algorithm, data):
    a = algorithm.upper()
    if a == "CRC32":
        return struct.pack(">I", zlib.crc32(data))
    if a == "CRC32C":
        return struct.pack(">I", _reflected(data, _T32C, 0xFFFFFFFF))
    if a == "CRC64NVME":
        return struct.pack(">Q", _reflected(data, _T64, 0xFFFFFFFFFFFFFFFF))
    if a == "SHA1":
        return hashlib.sha1(data).digest()
    if a == "SHA256":
        return hashlib.sha256(data).digest()
    raise ValueError(algorithm)


def b64(algorithm, data):
    return base64.b64encode(raw(algorithm, data)).decode()


def composite(algorithm, parts_b64):
    joined = b"".join(base64.b64decode(p) for p in parts_b64)
    return "%s-%d" % (b64(algorithm, joined), len(parts_b64))


if __name__ == "__main__":
    if sys.argv[1] == "--composite":
        print(composite(sys.argv[2], sys.argv[3:]))
    else:
        for path in sys.argv[2:]:
            with open(path, "rb") as f:
                print(b64(sys.argv[1], f.read()))

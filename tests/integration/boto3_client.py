#!/usr/bin/python3
"""Debian's boto3 (python3-boto3, with Debian's own botocore beside awscli's
bundled one) as an application would use it, at its defaults, against one
S3 endpoint: put_object, upload_file (multipart past its threshold),
get_object, download_file, head_object, list_objects_v2, presigned GET
and PUT URLs (generate_presigned_url, fetched with urllib), delete_object
and delete_objects. Prints the versions and one line per step; exit status
0 when every step's bytes and answers were right.

Usage: boto3_client.py ENDPOINT ACCESS_KEY SECRET BUCKET WORK_DIR
"""
import hashlib
import os
import sys
import urllib.request

try:
    import boto3
    import botocore
    from boto3.s3.transfer import TransferConfig
except ImportError as e:
    print(f"SKIP: boto3 not importable: {e}")
    sys.exit(77)


def main():
    endpoint, key, secret, bucket, work = sys.argv[1:6]
    print(f"boto3 {boto3.__version__}, botocore {botocore.__version__}")
    s3 = boto3.session.Session().client(
        "s3", endpoint_url=endpoint, aws_access_key_id=key, aws_secret_access_key=secret,
        region_name="us-east-1")
    small = os.urandom(3000)
    big_path = os.path.join(work, "boto3-big")
    with open(big_path, "wb") as f:
        f.write(os.urandom(12 * 1024 * 1024 + 77))
    big_md5 = hashlib.md5(open(big_path, "rb").read()).hexdigest()

    s3.put_object(Bucket=bucket, Key="boto3/small", Body=small)
    # upload_file goes multipart past multipart_threshold (8 MiB by default).
    s3.upload_file(big_path, bucket, "boto3/big",
                   Config=TransferConfig(multipart_chunksize=5 * 1024 * 1024))
    print("write: put_object, upload_file (multipart)")

    assert s3.get_object(Bucket=bucket, Key="boto3/small")["Body"].read() == small, "small"
    back = os.path.join(work, "boto3-big.back")
    s3.download_file(bucket, "boto3/big", back)
    assert hashlib.md5(open(back, "rb").read()).hexdigest() == big_md5, "download_file"
    head = s3.head_object(Bucket=bucket, Key="boto3/big")
    assert head["ContentLength"] == os.path.getsize(big_path), head
    assert head["ETag"].strip('"').endswith("-3"), f"a 3-part ETag: {head['ETag']}"
    print("read: get_object, download_file, head_object")

    listed = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="boto3/")["Contents"]]
    assert listed == ["boto3/big", "boto3/small"], listed
    print("list: list_objects_v2")

    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "boto3/small"},
                                    ExpiresIn=300)
    assert urllib.request.urlopen(url).read() == small, "presigned GET"
    # At its defaults boto3 1.26 presigns with signature version 2
    # (?AWSAccessKeyId=&Expires=&Signature=), which signs the Content-Type:
    # the application names the one its client will send.
    put_url = s3.generate_presigned_url(
        "put_object", Params={"Bucket": bucket, "Key": "boto3/presigned",
                              "ContentType": "application/octet-stream"}, ExpiresIn=300)
    body = os.urandom(2000)
    urllib.request.urlopen(urllib.request.Request(
        put_url, data=body, method="PUT", headers={"Content-Type": "application/octet-stream"}))
    assert s3.get_object(Bucket=bucket, Key="boto3/presigned")["Body"].read() == body, "presigned PUT"
    kind = "v2" if "AWSAccessKeyId=" in url else "v4"
    print(f"presign: generate_presigned_url GET and PUT (signature {kind})")

    s3.delete_object(Bucket=bucket, Key="boto3/presigned")
    gone = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "boto3/small"},
                                                                {"Key": "boto3/big"}]})
    assert len(gone.get("Deleted", [])) == 2 and not gone.get("Errors"), gone
    left = s3.list_objects_v2(Bucket=bucket, Prefix="boto3/").get("Contents", [])
    assert not left, left
    print("delete: delete_object, delete_objects")
    return 0


if __name__ == "__main__":
    sys.exit(main())

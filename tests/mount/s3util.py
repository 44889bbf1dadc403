#!/usr/bin/env python3
"""Direct S3 access for the mount end-to-end tests, through boto3: an S3
client independent of bucketfs, so the tests check the mount against what
the server really holds rather than against our own client.

Usage (endpoint and credentials from S3_ENDPOINT, AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY):
  s3util.py mkbucket BUCKET
  s3util.py put BUCKET KEY [SIZE]        body: SIZE bytes of a pattern, else stdin
  s3util.py put-many BUCKET PREFIX COUNT [SIZE]  COUNT objects PREFIX00000.. (SIZE bytes, default 1) in parallel
  s3util.py put-links BUCKET PREFIX COUNT TARGET  COUNT links PREFIX00000.. to TARGET, as s3fs writes them
  s3util.py meta BUCKET KEY               the object's user metadata, "name=value" per line, sorted
  s3util.py body BUCKET KEY               the object's body on stdout
  s3util.py list BUCKET [PREFIX]          "KEY<TAB>SIZE" per object, sorted
  s3util.py sha256 BUCKET KEY             hex digest of the object's body
  s3util.py exists BUCKET KEY             exit 0 if the object exists, 1 if not
"""
import concurrent.futures
import hashlib
import os
import sys

import boto3
import botocore
from botocore.config import Config


def client():
    options = dict(s3={"addressing_style": "path"}, retries={"max_attempts": 3},
                   max_pool_connections=32)
    # botocore >= 1.36 adds CRC checksums to every request by default, which
    # S3-compatible test servers reject; older ones (Debian 12: 1.29) neither
    # do that nor know these options.
    if tuple(int(x) for x in botocore.__version__.split(".")[:2]) >= (1, 36):
        options.update(request_checksum_calculation="when_required",
                       response_checksum_validation="when_required")
    cfg = Config(**options)
    return boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT"],
                        aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
                        aws_secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"],
                        region_name=os.environ.get("AWS_REGION", "us-east-1"), config=cfg)


def pattern(size):
    block = bytes((i * 7 + 3) % 251 for i in range(4096))
    return (block * (size // len(block) + 1))[:size]


def main(argv):
    s3 = client()
    cmd = argv[1]
    if cmd == "mkbucket":
        s3.create_bucket(Bucket=argv[2])
    elif cmd == "put":
        body = pattern(int(argv[4])) if len(argv) > 4 else sys.stdin.buffer.read()
        s3.put_object(Bucket=argv[2], Key=argv[3], Body=body)
    elif cmd == "put-many":
        bucket, prefix, count = argv[2], argv[3], int(argv[4])
        body = pattern(int(argv[5])) if len(argv) > 5 else b"x"

        def put(i):
            s3.put_object(Bucket=bucket, Key=f"{prefix}{i:05d}", Body=body)

        with concurrent.futures.ThreadPoolExecutor(32) as pool:
            list(pool.map(put, range(count)))
    elif cmd == "list":
        prefix = argv[3] if len(argv) > 3 else ""
        rows = []
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=argv[2], Prefix=prefix):
            rows += [f"{o['Key']}\t{o['Size']}" for o in page.get("Contents", [])]
        print("\n".join(sorted(rows)))
    elif cmd == "sha256":
        body = s3.get_object(Bucket=argv[2], Key=argv[3])["Body"].read()
        print(hashlib.sha256(body).hexdigest())
    elif cmd == "put-links":
        bucket, prefix, count, target = argv[2], argv[3], int(argv[4]), argv[5].encode()
        for i in range(count):
            s3.put_object(Bucket=bucket, Key=f"{prefix}{i:05d}", Body=target,
                          Metadata={"mode": str(0o120777)})
    elif cmd == "meta":
        meta = s3.head_object(Bucket=argv[2], Key=argv[3])["Metadata"]
        print("\n".join(sorted(f"{k}={v}" for k, v in meta.items())))
    elif cmd == "body":
        sys.stdout.buffer.write(s3.get_object(Bucket=argv[2], Key=argv[3])["Body"].read())
    elif cmd == "exists":
        try:
            s3.head_object(Bucket=argv[2], Key=argv[3])
        except botocore.exceptions.ClientError:
            return 1
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as e:
        print(f"s3util: {e}", file=sys.stderr)
        sys.exit(1)

#!/usr/bin/env python3
"""End-to-end smoke test of s3sim with boto3 (an independent SigV4 signer).

Usage: smoke_boto3.py ENDPOINT  (s3sim started with --min-part-size 5 and the
default credentials). Exits non-zero on the first failed check.
"""
import hashlib
import sys

import boto3
import botocore
from botocore.config import Config

endpoint = sys.argv[1]
cfg = Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1},
             request_checksum_calculation="when_required",
             response_checksum_validation="when_required")


def client(secret="s3simsecret"):
    return boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="s3simkey",
                        aws_secret_access_key=secret, region_name="us-east-1", config=cfg)


s3 = client()


def expect_error(code, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except botocore.exceptions.ClientError as e:
        got = e.response["Error"]["Code"]
        assert got == code, f"expected {code}, got {got}"
        return
    raise AssertionError(f"expected {code}, call succeeded")


s3.create_bucket(Bucket="smoke")
expect_error("BucketAlreadyOwnedByYou", s3.create_bucket, Bucket="smoke")
assert "smoke" in [b["Name"] for b in s3.list_buckets()["Buckets"]]

body = b"0123456789" * 100
r = s3.put_object(Bucket="smoke", Key="a/b/c.txt", Body=body)
assert r["ETag"] == '"%s"' % hashlib.md5(body).hexdigest()
assert s3.get_object(Bucket="smoke", Key="a/b/c.txt")["Body"].read() == body
g = s3.get_object(Bucket="smoke", Key="a/b/c.txt", Range="bytes=10-19")
assert g["Body"].read() == body[10:20] and g["ContentRange"] == "bytes 10-19/1000"
assert s3.get_object(Bucket="smoke", Key="a/b/c.txt", Range="bytes=-5")["Body"].read() == body[-5:]
expect_error("InvalidRange", s3.get_object, Bucket="smoke", Key="a/b/c.txt", Range="bytes=1000-")
h = s3.head_object(Bucket="smoke", Key="a/b/c.txt")
assert h["ContentLength"] == 1000
expect_error("404", s3.head_object, Bucket="smoke", Key="missing")
expect_error("NoSuchKey", s3.get_object, Bucket="smoke", Key="missing")
expect_error("NoSuchBucket", s3.get_object, Bucket="nobucket", Key="x")
expect_error("PreconditionFailed", s3.get_object, Bucket="smoke", Key="a/b/c.txt", IfMatch='"00"')
expect_error("304", s3.get_object, Bucket="smoke", Key="a/b/c.txt", IfNoneMatch=r["ETag"])
s3.get_object(Bucket="smoke", Key="a/b/c.txt", IfMatch=r["ETag"])
import datetime  # noqa: E402
past = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
future = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)
expect_error("304", s3.get_object, Bucket="smoke", Key="a/b/c.txt", IfModifiedSince=future)
expect_error("PreconditionFailed", s3.get_object, Bucket="smoke", Key="a/b/c.txt",
             IfUnmodifiedSince=past)
s3.get_object(Bucket="smoke", Key="a/b/c.txt", IfModifiedSince=past, IfUnmodifiedSince=future)
assert s3.get_object(Bucket="smoke", Key="a/b/c.txt",
                     ResponseContentType="text/x-test")["ContentType"] == "text/x-test"

# Keys with odd characters (signing and listing must agree).
odd = ["sp ace/x", "plus+key", "uni/\u00e9t\u00e9", "q?mark", "pct%20", "tilde~/a=b&c"]
for k in odd:
    s3.put_object(Bucket="smoke", Key=k, Body=k.encode())
    assert s3.get_object(Bucket="smoke", Key=k)["Body"].read() == k.encode()
expect_error("KeyTooLongError", s3.put_object, Bucket="smoke", Key="k" * 1025, Body=b"")

# Listing: delimiter, prefixes holding only sub-prefixes, pagination.
for k in ["d/1", "d/2", "d/sub/x", "d/sub2/deep/y", "e"]:
    s3.put_object(Bucket="smoke", Key=k, Body=b"")
lst = s3.list_objects_v2(Bucket="smoke", Prefix="d/", Delimiter="/")
assert [c["Key"] for c in lst["Contents"]] == ["d/1", "d/2"], lst
assert [p["Prefix"] for p in lst["CommonPrefixes"]] == ["d/sub/", "d/sub2/"]
assert lst["KeyCount"] == 4
lst = s3.list_objects_v2(Bucket="smoke", Delimiter="/")
assert [p["Prefix"] for p in lst["CommonPrefixes"]] == ["a/", "d/", "sp ace/", "tilde~/", "uni/"], lst
keys, token = [], None
while True:
    kw = {"ContinuationToken": token} if token else {}
    page = s3.list_objects_v2(Bucket="smoke", MaxKeys=2, **kw)
    keys += [c["Key"] for c in page.get("Contents", [])]
    if not page["IsTruncated"]:
        break
    token = page["NextContinuationToken"]
assert keys == sorted(keys) and len(keys) == 1 + len(odd) + 5, keys
assert s3.list_objects_v2(Bucket="smoke", StartAfter="d/2")["Contents"][0]["Key"] == "d/sub/x"
pg = s3.get_paginator("list_objects_v2")
pref = [p["Prefix"] for page in pg.paginate(Bucket="smoke", Delimiter="/", PaginationConfig={"PageSize": 1})
        for p in page.get("CommonPrefixes", [])]
assert pref == ["a/", "d/", "sp ace/", "tilde~/", "uni/"], pref

pg1 = s3.get_paginator("list_objects")
pref1 = [p["Prefix"] for page in pg1.paginate(Bucket="smoke", Delimiter="/", PaginationConfig={"PageSize": 1})
         for p in page.get("CommonPrefixes", [])]
assert pref1 == ["a/", "d/", "sp ace/", "tilde~/", "uni/"], pref1
keys1 = [c["Key"] for page in pg1.paginate(Bucket="smoke", PaginationConfig={"PageSize": 2})
         for c in page.get("Contents", [])]
assert keys1 == keys, keys1

# Multipart (server started with --min-part-size 5).
mp = s3.create_multipart_upload(Bucket="smoke", Key="mp")
uid = mp["UploadId"]
assert uid in [u["UploadId"] for u in s3.list_multipart_uploads(Bucket="smoke")["Uploads"]]
p1 = s3.upload_part(Bucket="smoke", Key="mp", UploadId=uid, PartNumber=1, Body=b"A" * 6)
p2 = s3.upload_part_copy(Bucket="smoke", Key="mp", UploadId=uid, PartNumber=2,
                         CopySource={"Bucket": "smoke", "Key": "a/b/c.txt"},
                         CopySourceRange="bytes=0-9")
p3 = s3.upload_part(Bucket="smoke", Key="mp", UploadId=uid, PartNumber=3, Body=b"C")
parts = [{"PartNumber": 1, "ETag": p1["ETag"]}, {"PartNumber": 2, "ETag": p2["CopyPartResult"]["ETag"]},
         {"PartNumber": 3, "ETag": p3["ETag"]}]
assert len(s3.list_parts(Bucket="smoke", Key="mp", UploadId=uid)["Parts"]) == 3
expect_error("InvalidPartOrder", s3.complete_multipart_upload, Bucket="smoke", Key="mp", UploadId=uid,
             MultipartUpload={"Parts": [parts[1], parts[0]]})
expect_error("InvalidPart", s3.complete_multipart_upload, Bucket="smoke", Key="mp", UploadId=uid,
             MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": '"deadbeef"'}]})
done = s3.complete_multipart_upload(Bucket="smoke", Key="mp", UploadId=uid,
                                    MultipartUpload={"Parts": parts})
md5s = b"".join(hashlib.md5(x).digest() for x in [b"A" * 6, body[:10], b"C"])
assert done["ETag"] == '"%s-3"' % hashlib.md5(md5s).hexdigest(), done["ETag"]
assert s3.get_object(Bucket="smoke", Key="mp")["Body"].read() == b"A" * 6 + body[:10] + b"C"
expect_error("NoSuchUpload", s3.upload_part, Bucket="smoke", Key="mp", UploadId=uid, PartNumber=1, Body=b"x")
mp2 = s3.create_multipart_upload(Bucket="smoke", Key="small")
q1 = s3.upload_part(Bucket="smoke", Key="small", UploadId=mp2["UploadId"], PartNumber=1, Body=b"tiny")
q2 = s3.upload_part(Bucket="smoke", Key="small", UploadId=mp2["UploadId"], PartNumber=2, Body=b"z")
expect_error("EntityTooSmall", s3.complete_multipart_upload, Bucket="smoke", Key="small",
             UploadId=mp2["UploadId"], MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": q1["ETag"]},
                                                                  {"PartNumber": 2, "ETag": q2["ETag"]}]})
s3.abort_multipart_upload(Bucket="smoke", Key="small", UploadId=mp2["UploadId"])
expect_error("NoSuchUpload", s3.abort_multipart_upload, Bucket="smoke", Key="small", UploadId=mp2["UploadId"])

# Copy, delete, batch delete.
c = s3.copy_object(Bucket="smoke", Key="copy", CopySource={"Bucket": "smoke", "Key": "a/b/c.txt"})
assert c["CopyObjectResult"]["ETag"] == r["ETag"]
assert s3.get_object(Bucket="smoke", Key="copy")["Body"].read() == body
s3.delete_object(Bucket="smoke", Key="copy")
expect_error("NoSuchKey", s3.get_object, Bucket="smoke", Key="copy")
d = s3.delete_objects(Bucket="smoke", Delete={"Objects": [{"Key": "d/1"}, {"Key": "d/2"}, {"Key": "nope"}]})
assert len(d["Deleted"]) == 3
expect_error("BucketNotEmpty", s3.delete_bucket, Bucket="smoke")

# Auth.
expect_error("SignatureDoesNotMatch", client("wrong").get_object, Bucket="smoke", Key="a/b/c.txt")
bad = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="nobody", aws_secret_access_key="x",
                   region_name="us-east-1", config=cfg)
expect_error("InvalidAccessKeyId", bad.list_buckets)
signed = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="s3simkey",
                      aws_secret_access_key="s3simsecret", region_name="us-east-1",
                      config=Config(s3={"addressing_style": "path", "payload_signing_enabled": True},
                                    request_checksum_calculation="when_required"))
signed.put_object(Bucket="smoke", Key="signed", Body=b"signed payload")
presigner = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="s3simkey",
                         aws_secret_access_key="s3simsecret", region_name="us-east-1",
                         config=Config(s3={"addressing_style": "path"}, signature_version="s3v4"))
url = presigner.generate_presigned_url("get_object", Params={"Bucket": "smoke", "Key": "a/b/c.txt"}, ExpiresIn=60)
import urllib.request  # noqa: E402
assert urllib.request.urlopen(url).read() == body
print("smoke_boto3: all checks passed")

#!/usr/bin/env python3
"""Judges the soak's failures against the faults s3sim injected.

Usage: explain_errors.py REPORT.json FAULT_LOG BUCKET

At 1% faults the client's retries (6 attempts of every request) hide every
fault from applications. A close() failing with EIO after a 500/503 answer to
CompleteMultipartUpload is still explained (a store naming multipart objects
unlike AWS leaves such a close failed) when the fault log holds that fault
for the file's key, and then no object may exist under it.
Any other failure, any wrong byte and any crashed worker fails the soak.
Prints each failure with its verdict; exit 0 when all are explained.
"""
import json
import os
import sys
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mount"))


def complete_faults(fault_log, bucket):
    """Keys whose CompleteMultipartUpload got an injected error answer."""
    keys = set()
    with open(fault_log) as f:
        for line in f:
            fault = json.loads(line)
            if fault["op"] != "CompleteMultipartUpload" or fault["status"] < 500:
                continue
            path = urllib.parse.unquote(fault["path"].split("?", 1)[0])
            prefix = f"/{bucket}/"
            if path.startswith(prefix):
                keys.add(path[len(prefix):])
    return keys


def object_exists(bucket, key):
    from s3util import client  # boto3, independent of bucketfs
    s3 = client()
    try:
        s3.head_object(Bucket=bucket, Key=key)
        return True
    except s3.exceptions.ClientError as e:
        if e.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
            return False
        raise


def main(report_path, fault_log, bucket):
    with open(report_path) as f:
        report = json.load(f)
    unexplained = 0
    for wrong in report["wrong"]:
        print("WRONG (never explained):", json.dumps(wrong))
        unexplained += 1
    if report.get("crashed_workers"):
        print(f"{report['crashed_workers']} worker process(es) crashed")
        unexplained += 1
    faulted = complete_faults(fault_log, bucket)
    explained = 0
    for e in report["errors"]:
        if e["op"] == "close" and e["errno"] == "EIO" and e["path"] in faulted:
            if object_exists(bucket, e["path"]):
                print("UNEXPLAINED (close failed but the object exists):", json.dumps(e))
                unexplained += 1
            else:
                print("explained (CompleteMultipartUpload fault, no object):", json.dumps(e))
                explained += 1
        else:
            print("UNEXPLAINED:", json.dumps(e))
            unexplained += 1
    print(f"{len(report['errors'])} failed operations: {explained} explained by injected "
          f"faults, {unexplained} failures unexplained (wrong bytes included)")
    return 0 if unexplained == 0 else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))

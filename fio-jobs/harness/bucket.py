"""What the harness does in the bucket itself, with `bucketfs s3`."""
import subprocess

from common import BUCKET, log, run


def put_object(bins, server, env, src, key):
    run([bins["bucketfs"], "s3", "put", src, f"s3://{BUCKET}/{key}",
         "--endpoint-url", server.endpoint, "--force-path-style", "--no-progress"], env=env)


def remove_prefix(binary, server, prefix):
    """Deletes every key under prefix (`bucketfs s3 rm -r`): s3sim keeps
    objects in memory, and later runs should neither fill it nor list them."""
    r = subprocess.run([binary, "s3", "rm", "-r", "-q", f"s3://{BUCKET}/{prefix}",
                        "--endpoint-url", server.endpoint, "--force-path-style"],
                       env=server.client_env(), capture_output=True, text=True)
    if r.returncode != 0:
        log(f"removing {prefix} failed: {r.stderr.strip()[-300:]}")


def list_keys(bins, server, prefix):
    """Keys under prefix, with `bucketfs s3 ls --recursive` (the direct client
    of the same library: one LIST per 1,000 keys)."""
    r = subprocess.run([bins["bucketfs"], "s3", "ls", f"s3://{BUCKET}/{prefix}", "--recursive",
                        "--endpoint-url", server.endpoint, "--force-path-style"],
                       env=server.client_env(), capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"bucketfs s3 ls exited {r.returncode}: {r.stderr.strip()[-300:]}")
    return {line.split()[-1] for line in r.stdout.splitlines() if line.strip()}

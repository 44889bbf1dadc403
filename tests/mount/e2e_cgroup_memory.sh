#!/usr/bin/env bash
# The default read-ahead budget follows the cgroup's memory limit: bucketfs
# started in a cgroup limited to 2 GiB (a child of this test's own cgroup,
# v1 memory controller or v2 memory.max) logs "read-ahead memory budget
# 512 MiB: 25% of cgroup limit 2 GiB"; started outside it, the budget comes
# from RAM. Skipped (77) where no child cgroup with a memory limit can be
# made (v2 with processes in our own cgroup, or no cgroup file system).
# Usage: e2e_cgroup_memory.sh s3sim   (root; BUCKETFS=path/to/bucketfs)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[[ $(id -u) -eq 0 ]] || skip "making a cgroup needs root"
setup_bucket e2e-cgroup

# make_cgroup: a child cgroup limited to 2 GiB; sets CG (its directory).
make_cgroup() {
  local v1 v2
  v1=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' /proc/self/cgroup)
  v2=$(awk -F: '$1 == "0" && $2 == "" { print $3 }' /proc/self/cgroup)
  if [[ -n "$v1" && -d /sys/fs/cgroup/memory ]]; then
    CG="/sys/fs/cgroup/memory${v1%/}/bucketfs-e2e-$$"
    mkdir "$CG" && echo $((2 << 30)) >"$CG/memory.limit_in_bytes" && return 0
  elif [[ -n "$v2" && -f /sys/fs/cgroup/cgroup.controllers ]]; then
    CG="/sys/fs/cgroup${v2%/}/bucketfs-e2e-$$"
    mkdir "$CG" && echo $((2 << 30)) >"$CG/memory.max" 2>/dev/null && return 0
  fi
  [[ -z "${CG:-}" ]] || rmdir "$CG" 2>/dev/null || true
  CG=""
  return 1
}
make_cgroup || skip "cannot make a memory-limited child cgroup here"
remove_cgroup() { [[ -z "${CG:-}" ]] || rmdir "$CG" 2>/dev/null || true; }
trap 'cleanup_status=$?; remove_cgroup; (exit $cleanup_status); cleanup' EXIT

log "inside a cgroup limited to 2 GiB"
mkdir -p "$MNT"
MOUNTS+=("$MNT")
# The shell joins the cgroup, then becomes bucketfs (whose daemon stays in it).
check "mount inside the cgroup" timeout 60 sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "$CG" \
  "$BUCKETFS" "s3://$BUCKET" "$MNT" --endpoint-url "$S3_ENDPOINT" --force-path-style \
  --log-file "$LOG"
check "unmount" unmount "$MNT"  # the log is complete once the daemon ended
check "budget from the cgroup's limit" \
  grep -q "read-ahead memory budget 512 MiB: 25% of cgroup limit 2 GiB$" "$LOG"

log "outside it: from RAM (or this test's own limit)"
check "mount outside" mount_bucket "$MNT" "s3://$BUCKET"
check "unmount" unmount "$MNT"
check "budget not from the 2 GiB cgroup" bash -c \
  "grep 'read-ahead memory budget' '$LOG' | tail -1 | grep -vq 'cgroup limit 2 GiB'"
finish

#!/usr/bin/env bash
# Hostile input on a real mount against s3sim: odd keys from the store, a
# store that misbehaves on some keys (s3sim --hostile), and requests with
# huge offsets and sizes. Each gets a clear errno, and after each the mount
# still serves a normal file (checked by `alive`).
# Usage: test_hostile.sh s3sim
source "$(dirname "${BASH_SOURCE[0]}")/../mount/lib.sh"
[[ "$SERVER" == s3sim ]] || skip "s3sim only (s3rver cannot hold these keys)"
setup_bucket hostile --hostile list-loop=loop/ --hostile wrong-range=wrongrange \
  --hostile short-body=shortbody

s3 put "$BUCKET" good/plain 100000
want=$(s3 sha256 "$BUCKET" good/plain)
alive() { test "$(sha256sum <"$MNT/good/plain" | cut -d' ' -f1)" == "$want"; }
# check_then_alive NAME COMMAND...: the check, then a normal read.
check_then_alive() { check "$@"; check "  then the mount serves good/plain" alive; }
errno_then_alive() { expect_errno "$@"; check "  then the mount serves good/plain" alive; }

s3 put "$BUCKET" loop/x 5
s3 put "$BUCKET" wrongrange.bin 1048576
s3 put "$BUCKET" shortbody.bin 1048576
ctl=$'ctl/a\x01b\x7f'
s3 put "$BUCKET" "$ctl" 7
s3 put "$BUCKET" $'ctl/tab\there' 7
# 1,024 bytes, S3's longest key: five components of at most 255 bytes.
c200=$(printf 'k%.0s' $(seq 1 200))
long1024="deep/$c200/$c200/$c200/$c200/$(printf 'e%.0s' $(seq 1 $((1024 - 5 - 4 * 201))))"
[[ ${#long1024} -eq 1024 ]] || { echo "bad test key length ${#long1024}"; exit 1; }
s3 put "$BUCKET" "$long1024" 11
for key in "odd/a//b" "odd/./x" "odd/../y" "odd/$(printf 'n%.0s' $(seq 1 256))" "odd/ok"; do
  s3 put "$BUCKET" "$key" 3
done

check "mount" mount_bucket "$MNT" "s3://$BUCKET" --allow-delete --allow-overwrite
check "good/plain reads back" alive

log "keys from the store"
check_then_alive "a name with control characters is listed" \
  bash -c "ls -A '$MNT/ctl' | grep -c . | grep -qx 2"
check_then_alive "a name with control characters reads back" test "$(wc -c <"$MNT/$ctl")" -eq 7
check_then_alive "a 1,024-byte key reads back" test "$(wc -c <"$MNT/$long1024")" -eq 11
check_then_alive "odd/ lists only ok and a (//, ., .., 256 bytes left out)" \
  bash -c "test \"\$(ls -A '$MNT/odd' | sort | tr '\n' ' ')\" == 'a ok '"
errno_then_alive "a listed name over NAME_MAX" ENAMETOOLONG stat "$MNT/odd/$(printf 'n%.0s' $(seq 1 256))"

log "names written through the mount"
bad_utf8=$'utf/\xff\xfe\xc3(.bin'
check "mkdir utf" mkdir "$MNT/utf"
errno_then_alive "a name that is not UTF-8 is refused (S3 keys are UTF-8)" EILSEQ \
  touch "$MNT/$bad_utf8"
errno_then_alive "and does not exist" ENOENT stat "$MNT/$bad_utf8"
errno_then_alive "creating a name over NAME_MAX" ENAMETOOLONG \
  touch "$MNT/$(printf 'm%.0s' $(seq 1 256))"
# 1,025 bytes: S3 refuses it (KeyTooLongError); the writer hears it.
# Python, not a shell redirect: bash does not report an error of close().
errno_then_alive "writing a 1,025-byte key" ENAMETOOLONG python3 -c "
import sys; f = open(sys.argv[1], 'wb'); f.write(b'x'); f.close()" "$MNT/${long1024}x"

log "a store that misbehaves"
check "the root lists loop" bash -c "ls '$MNT' | grep -qx loop"
start=$SECONDS
errno_then_alive "a listing that repeats its continuation token" EIO ls "$MNT/loop/"
check "  and it ended within 20 s" test $((SECONDS - start)) -lt 20
errno_then_alive "a ranged GET answered for another range" EIO cat "$MNT/wrongrange.bin"
errno_then_alive "a Content-Length the body does not reach" EIO cat "$MNT/shortbody.bin"
faults=$(curl -s "$S3_ENDPOINT/__s3sim/stats")
check "s3sim met list-loop, wrong-range and short-body" python3 -c "
import json,sys; f=json.loads(sys.argv[1]).get('faults', {})
sys.exit(0 if all(f.get(k, 0) > 0 for k in ('list-loop','wrong-range','short-body')) else 1)" "$faults"
check "list-loop was asked at most a few times" python3 -c "
import json,sys; sys.exit(0 if json.loads(sys.argv[1])['faults']['list-loop'] < 20 else 1)" "$faults"

log "huge offsets and sizes"
check_then_alive "pread past EOF, huge offset, huge size" python3 - "$MNT/good/plain" <<'PY'
import errno, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
assert os.pread(fd, 4096, 100000) == b"", "at EOF"
assert os.pread(fd, 4096, 1 << 40) == b"", "past EOF"
assert os.pread(fd, 1 << 30, 1 << 62) == b"", "huge offset"
assert len(os.pread(fd, (1 << 31) - 4096, 0)) == 100000, "huge size"
try:
    os.pread(fd, 4096, (1 << 63) - 1)
except OSError as e:
    assert e.errno == errno.EINVAL, e
os.close(fd)
PY
errno_then_alive "a write past S3's largest object" EFBIG python3 -c "
import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644); os.pwrite(fd, b'x', 1 << 50)" \
  "$MNT/huge-write"
errno_then_alive "truncate past S3's largest object" EFBIG truncate -s 8T "$MNT/huge-write"
check "good/plain is still the bucket's" test "$(s3 sha256 "$BUCKET" good/plain)" == "$want"
check "unmount" unmount "$MNT"
finish

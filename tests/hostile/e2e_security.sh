#!/usr/bin/env bash
# Security end to end against s3sim, whose SigV4 verifier knows only our key
# pair: credentials (and their first 16 characters) appear in no output of
# any command, TLS certificates are verified unless told otherwise (s3sim
# behind a socat proxy with a self-signed certificate), and the local caches
# and the mount are private to the daemon's user.
# Usage: e2e_security.sh s3sim
source "$(dirname "${BASH_SOURCE[0]}")/../mount/lib.sh"
[[ "$SERVER" == s3sim ]] || skip "s3sim only (its verifier takes our own key pair)"
command -v socat >/dev/null || skip "socat is missing (run mount-tools/install-deps.sh)"
command -v openssl >/dev/null || skip "openssl is missing (run mount-tools/install-deps.sh)"
# The machine's bundle would decide what "no CA bundle" means for our processes.
unset AWS_CA_BUNDLE
# The modes checked below must come from bucketfs, not from a strict umask.
umask 022

KEY_ID=AKIDSECURITYTEST0001
SECRET=SECRETsecretSECRET1234567890abcdefghij
TOKEN="TOKENtokenTOKEN$(printf '%s' {0..9}{a..j})/Zz+end"
WRONG=WRONGwrongWRONG0987654321zyxwvutsrqpon
OUT="$TMP/out"
mkdir -p "$OUT"

require_env
start_server --access-key "$KEY_ID" --secret-key "$SECRET"
export AWS_ACCESS_KEY_ID="$KEY_ID" AWS_SECRET_ACCESS_KEY="$SECRET" AWS_SESSION_TOKEN="$TOKEN"
BUCKET=security
MNT="$TMP/mnt"
s3 mkbucket "$BUCKET"

# captured NAME COMMAND...: runs the command with stdout and stderr kept in
# $OUT/NAME.out and .err, for the scan for credentials at the end.
captured() { local name="$1"; shift; "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"; }
# fails_saying NAME TEXT COMMAND...: the command fails and its stderr holds TEXT.
fails_saying() {
  local name="$1" text="$2"; shift 2
  ! captured "$name" "$@" && grep -qF -- "$text" "$OUT/$name.err"
}
cli() { timeout 60 "$BUCKETFS" s3 --endpoint-url "${ENDPOINT:-$S3_ENDPOINT}" --force-path-style "$@"; }
# env_then NAME=VALUE... COMMAND...: runs COMMAND (a function too) with
# these variables set and exported for it alone.
env_then() {
  local -a vars=()
  while [[ "$1" == *=* ]]; do vars+=("$1"); shift; done
  local v
  for v in "${vars[@]}"; do local -x "$v"; done
  "$@"
}
not_mounted() { ! is_mounted "$1"; }

log "credentials: a mount at trace level, credentials from an env file"
ENVF="$TMP/creds.env"
install -m 600 /dev/null "$ENVF"
printf 'AWS_ACCESS_KEY_ID=%s\nAWS_SECRET_ACCESS_KEY=%s\nAWS_SESSION_TOKEN=%s\n' \
  "$KEY_ID" "$SECRET" "$TOKEN" >"$ENVF"
METRICS="127.0.0.1:$(free_port)"
head -c $((3 * 1024 * 1024 + 7)) /dev/urandom >"$TMP/data.bin"
check "mount (trace log, env file, metrics, cache)" captured mount-trace mount_bucket "$MNT" \
  "s3://$BUCKET" --env-file "$ENVF" --log-level trace --metrics-addr "$METRICS" \
  --cache "$TMP/cache" --allow-delete --allow-overwrite
check "write a file" cp "$TMP/data.bin" "$MNT/data.bin"
check "  its object holds the bytes" same_as data.bin "$TMP/data.bin"
check "read it back" cmp "$TMP/data.bin" "$MNT/data.bin"
check "mkdir, rename, list, delete" bash -c "mkdir '$MNT/d' && echo x >'$MNT/d/a' &&
  mv '$MNT/d/a' '$MNT/d/b' && ls -lR '$MNT' >'$OUT/ls.out' && rm '$MNT/d/b'"
expect_errno "a missing file" ENOENT cat "$MNT/missing"
check "metrics answer" bash -c "curl -sf 'http://$METRICS/metrics' >'$OUT/metrics.out' &&
  grep -q bucketfs_s3_requests_total '$OUT/metrics.out'"
check "bucketfs status --once MOUNTPOINT" bash -c "timeout 30 '$BUCKETFS' status --once '$MNT' \
  >'$OUT/status.out' 2>'$OUT/status.err' && grep -qF 's3://$BUCKET' '$OUT/status.out'"
check "bucketfs status --once (every mount)" captured status-all timeout 30 "$BUCKETFS" status --once
check "the daemon's command line" bash -c "tr '\\0' ' ' </proc/$(mount_pid "$MNT")/cmdline >'$OUT/cmdline.out'"

log "file modes: caches, staging and the mount"
# held_write FILE: writes 4 MiB to FILE through the mount and keeps it open
# until $TMP/release exists, so its staging file can be looked at.
held_write() {
  python3 - "$1" "$TMP" <<'PY' &
import os, sys, time
path, tmp = sys.argv[1], sys.argv[2]
with open(path, "wb") as f:
    f.write(os.urandom(4 << 20)); f.flush()
    open(tmp + "/held", "w").close()
    deadline = time.time() + 120
    while not os.path.exists(tmp + "/release") and time.time() < deadline:
        time.sleep(0.1)
PY
  WRITER=$!
}
# staging_modes PID: the mode of every file the daemon holds open in staging.
staging_modes() {
  local fd
  for fd in /proc/"$1"/fd/*; do
    [[ "$(readlink "$fd")" == "$TMP/cache/staging/"* ]] && stat -L -c %a "$fd"
  done
  return 0
}
all_600() { [[ -n "$1" && -z "$(grep -vx 600 <<<"$1")" ]]; }
# none_found FIND-ARGS...: find lists nothing (and its directory exists).
none_found() { local found; found=$(find "$@") && [[ -z "$found" ]] || { echo "$found"; return 1; }; }
check "the data cache filled on the read" wait_for 20 \
  bash -c "find '$TMP/cache/data' -type f -path '*/objects/*' | grep -q ."
held_write "$MNT/held.bin"
check "a write is held open" wait_for 30 test -e "$TMP/held"
modes=$(staging_modes "$(mount_pid "$MNT")")
check "the open write has a staging file, mode 0600 ($(echo $modes))" all_600 "$modes"
check "staging, data and metadata directories are 0700" \
  none_found "$TMP/cache/staging" "$TMP/cache/data" "$TMP/cache/metadata" -type d ! -perm 700
check "data cache and metadata files are 0600" \
  none_found "$TMP/cache/data" "$TMP/cache/metadata" -type f ! -perm 600
check "the log file is 0600" test "$(stat -c %a "$TMP/bucketfs-mnt.log")" = 600
socket=$(sed -n 's/.*control socket \(.*\)$/\1/p' "$TMP/bucketfs-mnt.log" | tail -1)
check "the control socket is 0600 in a 0700 directory" test \
  "$(stat -c %a "$socket" 2>&1) $(stat -c %a "$(dirname "$socket")" 2>&1)" = "600 700"
touch "$TMP/release"
writer_done() { wait "$WRITER"; }
check "the held write closes" writer_done
check "  its object is complete" test "$(s3 list "$BUCKET" held.bin)" = "held.bin"$'\t'"$((4 << 20))"
opts=$(awk -v m="$MNT" '$2 == m { print $4 }' /proc/mounts)
check "the mount has default_permissions ($opts)" grep -qw default_permissions <<<"$opts"
check "and no allow_other" bash -c "! grep -qw allow_other <<<'$opts'"
check "unmount" unmount "$MNT"

log "credentials: a foreground mount with -d (libfuse's trace on stderr)"
mkdir -p "$TMP/mnt-d"
MOUNTS+=("$TMP/mnt-d")
"$BUCKETFS" "s3://$BUCKET" "$TMP/mnt-d" -d --endpoint-url "$S3_ENDPOINT" --force-path-style \
  --allow-delete >"$OUT/debug.out" 2>"$OUT/debug.err" &
check "-d mounts" wait_for 30 is_mounted "$TMP/mnt-d"
check "  and serves reads, listings, writes" bash -c "cmp '$TMP/data.bin' '$TMP/mnt-d/data.bin' &&
  ls -l '$TMP/mnt-d' >/dev/null && echo y >'$TMP/mnt-d/y' && rm '$TMP/mnt-d/y'"
check "  and unmounts" unmount "$TMP/mnt-d"

log "credentials: refusals"
check "a mount with a wrong secret is refused (SignatureDoesNotMatch)" \
  env_then AWS_SECRET_ACCESS_KEY="$WRONG" fails_saying mount-wrong SignatureDoesNotMatch \
  mount_bucket "$TMP/mnt-wrong" "s3://$BUCKET" --log-level trace
check "  and nothing is mounted" not_mounted "$TMP/mnt-wrong"
check "bucketfs s3 ls with a wrong secret (SignatureDoesNotMatch)" fails_saying cli-wrong \
  SignatureDoesNotMatch env AWS_SECRET_ACCESS_KEY="$WRONG" "$BUCKETFS" s3 --log-level trace \
  --endpoint-url "$S3_ENDPOINT" --force-path-style ls "s3://$BUCKET"
check "bucketfs s3 ls of a missing bucket (NoSuchBucket)" fails_saying cli-nobucket NoSuchBucket \
  cli --log-level trace ls "s3://no-such-bucket"
cli_round_trip() {
  captured cli-put cli --log-level trace put "$TMP/data.bin" "s3://$BUCKET/cli.bin" &&
    captured cli-ls cli --log-level trace ls "s3://$BUCKET/" &&
    captured cli-get cli --log-level trace get "s3://$BUCKET/cli.bin" "$TMP/cli.bin" &&
    cmp "$TMP/data.bin" "$TMP/cli.bin"
}
check "bucketfs s3 put, ls, get at trace level" cli_round_trip

log "TLS: s3sim behind a proxy with a self-signed certificate"
CERT="$TMP/tls/cert.pem"
mkdir -p "$TMP/tls"
check "a self-signed certificate for 127.0.0.1" timeout 60 openssl req -x509 -newkey rsa:2048 \
  -nodes -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -days 2 \
  -keyout "$TMP/tls/key.pem" -out "$CERT" 2>"$OUT/openssl.err"
TLS_PORT=$(free_port)
socat "OPENSSL-LISTEN:$TLS_PORT,bind=127.0.0.1,cert=$CERT,key=$TMP/tls/key.pem,verify=0,fork,reuseaddr" \
  "TCP:127.0.0.1:${S3_ENDPOINT##*:}" 2>"$TMP/socat.log" &
PIDS+=("$!")
HTTPS="https://127.0.0.1:$TLS_PORT"
check "the proxy answers" wait_for 20 curl -skf -o /dev/null "$HTTPS/__s3sim/health"
# mount_https MOUNTPOINT [options...]: mounts the bucket through the proxy.
mount_https() {
  local mnt="$1"; shift
  mkdir -p "$mnt"
  MOUNTS+=("$mnt")
  timeout 60 "$BUCKETFS" "s3://$BUCKET" "$mnt" --endpoint-url "$HTTPS" --force-path-style \
    --log-file "$TMP/bucketfs-$(basename "$mnt").log" --log-level debug --allow-overwrite "$@"
}
# round_trip MOUNTPOINT NAME: a file written through the mount reads back and
# is in the bucket byte for byte.
round_trip() {
  head -c $((1024 * 1024 + 3)) /dev/urandom >"$TMP/$2" &&
    cp "$TMP/$2" "$1/$2" && cmp "$TMP/$2" "$1/$2" && same_as "$2" "$TMP/$2" &&
    cmp "$TMP/data.bin" "$1/data.bin"
}

check "a mount without a CA bundle is refused, naming the certificate" fails_saying tls-none \
  "certificate problem: self-signed certificate" mount_https "$TMP/tls-none"
check "  and nothing is mounted" not_mounted "$TMP/tls-none"
check "bucketfs s3 ls without a CA bundle is refused, naming the certificate" \
  env_then ENDPOINT="$HTTPS" fails_saying tls-cli-none "certificate problem" cli ls "s3://$BUCKET"
check "bucketfs s3 ls with --ca-bundle" \
  env_then ENDPOINT="$HTTPS" captured tls-cli-bundle cli --ca-bundle "$CERT" ls "s3://$BUCKET"

check "a mount with --ca-bundle" captured tls-bundle mount_https "$TMP/tls-bundle" --ca-bundle "$CERT"
check "  round trip" round_trip "$TMP/tls-bundle" tls-bundle.bin
check "  unmount" unmount "$TMP/tls-bundle"

check "a mount with AWS_CA_BUNDLE in the environment" \
  env_then AWS_CA_BUNDLE="$CERT" captured tls-env mount_https "$TMP/tls-env"
check "  round trip" round_trip "$TMP/tls-env" tls-env.bin
check "  unmount" unmount "$TMP/tls-env"

# --allow-other here too: it shows in /proc/mounts when asked, so its
# absence above means something.
check "a mount with --no-verify-ssl (and --allow-other)" \
  captured tls-insecure mount_https "$TMP/tls-insecure" --no-verify-ssl --allow-other
check "  round trip" round_trip "$TMP/tls-insecure" tls-insecure.bin
check "  the log warns that verification is off" \
  grep -q "W .*TLS certificate verification is off" "$TMP/bucketfs-tls-insecure.log"
check "  /proc/mounts shows the allow_other asked for" bash -c \
  "awk '\$2 == \"$TMP/tls-insecure\" { print \$4 }' /proc/mounts | grep -qw allow_other"
check "  unmount" unmount "$TMP/tls-insecure"
check "bucketfs s3 ls with --no-verify-ssl works" \
  env_then ENDPOINT="$HTTPS" captured tls-cli-insecure cli --no-verify-ssl ls "s3://$BUCKET/"
check "  and warns that verification is off" grep -q "verification is off" "$OUT/tls-cli-insecure.err"

log "credentials: the scan of every output"
NEEDLES=("$SECRET" "$TOKEN" "${SECRET:0:16}" "${TOKEN:0:16}" "$WRONG" "${WRONG:0:16}")
# holding_credentials FILE...: names each file that holds a credential or its first 16 characters.
holding_credentials() {
  local n
  for n in "${NEEDLES[@]}"; do grep -rlaF -- "$n" "$@" 2>/dev/null || true; done | sort -u
}
# Proves the scan can fail: it must name a file known to hold each credential.
printf '%s\n' "x${SECRET:0:16}x" "x${TOKEN:0:16}x" "$WRONG" >"$TMP/control.txt"
check "control: the scan names the env file" test "$(holding_credentials "$ENVF")" = "$ENVF"
for n in "${NEEDLES[@]}"; do
  check "control: the scan finds ${n:0:6}... (${#n} characters)" grep -qaF -- "$n" "$TMP/control.txt" "$ENVF"
done
outputs=("$OUT" "$TMP"/bucketfs-*.log "$TMP/cache")
count=$(find "${outputs[@]}" -type f | wc -l)
check "$count outputs to scan, the trace log among them" test "$count" -ge 30 -a -s "$TMP/bucketfs-mnt.log"
leaks=$(holding_credentials "${outputs[@]}")
check "no credential in any output${leaks:+: $(echo $leaks)}" test -z "$leaks"
finish

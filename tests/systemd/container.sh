# container.sh: a Debian bookworm root booted with systemd as its PID 1
# (systemd-nspawn), for tests of bucketfs's units under a real service
# manager. Source it from a bash test; the functions:
#
#   container_build_root            debootstrap the root once, cached in $CONTAINER_ROOT
#   container_stage_install BUILD   cmake --install BUILD (prefix /usr) into a staging dir
#   container_boot                  boot it (volatile overlay: the cached root stays clean)
#   container_install_staged        copy the staged install into the running container
#   container_exec CMD...           run CMD inside (all namespaces of its PID 1)
#   container_wait_for_unit_manager wait until systemd inside accepts systemctl
#   container_teardown              power it off (kill nspawn after a bound)
#
# The container shares the host's network (no --private-network), so a
# server on the host's loopback is reachable at 127.0.0.1 from inside.
# Exit status 77 from container_build_root means the mirror is unreachable.

CONTAINER_ROOT=${CONTAINER_ROOT:-/var/cache/bucketfs-test/bookworm}
CONTAINER_MIRROR=${CONTAINER_MIRROR:-http://deb.debian.org/debian}
# The runtime libraries bucketfs links (ldd + dpkg -S), and what a booted
# system with FUSE needs.
# procps: kill, pgrep and ps for tests that signal the daemon inside.
CONTAINER_PACKAGES=systemd,systemd-sysv,dbus,fuse3,ca-certificates,libcurl4,liblmdb0,libfuse3-3,libspdlog1.10,libfmt9,libpugixml1v5,libsystemd0,libssl3,procps
CONTAINER_NSPAWN_ARGS=()  # more systemd-nspawn arguments (binds), set before container_boot
CONTAINER_STAGE=""
CONTAINER_NSPAWN_PID=""
CONTAINER_PID=""
CONTAINER_LOG=""

container_log() { echo "container: $*" >&2; }

# Builds the root once; a root without the marker file (an interrupted
# build) is built again from scratch. The marker holds the package list: a
# cached root built with fewer packages gets the new ones with apt-get.
container_build_root() {
  local marker="$CONTAINER_ROOT/.bucketfs-root-complete"
  if [ -f "$marker" ]; then
    [ "$(cat "$marker")" != "$CONTAINER_PACKAGES" ] || return 0
    container_log "adding packages to the cached root: ${CONTAINER_PACKAGES//,/ }"
    if chroot "$CONTAINER_ROOT" sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends ${CONTAINER_PACKAGES//,/ }" \
        >"$CONTAINER_ROOT.apt.log" 2>&1; then
      echo "$CONTAINER_PACKAGES" >"$marker"
      return 0
    fi
    container_log "apt-get in the cached root failed (log: $CONTAINER_ROOT.apt.log); building anew"
  fi
  command -v debootstrap >/dev/null || { container_log "debootstrap missing (mount-tools/install-deps.sh installs it)"; return 1; }
  if ! curl -fsS --max-time 20 -o /dev/null "$CONTAINER_MIRROR/dists/bookworm/Release"; then
    container_log "cannot reach $CONTAINER_MIRROR: skipping"
    return 77
  fi
  rm -rf "$CONTAINER_ROOT"
  mkdir -p "$(dirname "$CONTAINER_ROOT")"
  local started=$SECONDS
  container_log "debootstrap bookworm into $CONTAINER_ROOT (once; cached afterwards)"
  if ! debootstrap --variant=minbase --include="$CONTAINER_PACKAGES" bookworm "$CONTAINER_ROOT" \
      "$CONTAINER_MIRROR" >"$CONTAINER_ROOT.debootstrap.log" 2>&1; then
    container_log "debootstrap failed; log: $CONTAINER_ROOT.debootstrap.log"
    tail -20 "$CONTAINER_ROOT.debootstrap.log" >&2
    return 1
  fi
  # A quiet boot: no getty on the console, no network management to wait for.
  rm -f "$CONTAINER_ROOT/etc/systemd/system/getty.target.wants/"* 2>/dev/null || true
  echo bucketfs-test >"$CONTAINER_ROOT/etc/hostname"
  echo "$CONTAINER_PACKAGES" >"$marker"
  container_log "root built in $((SECONDS - started)) s"
}

# Stages `cmake --install BUILD --prefix /usr` in a host directory that
# container_boot binds at /opt/bucketfs-stage; container_install_staged
# then copies it into the booted container's /usr (the overlay), so the
# cached root never holds a build.
container_stage_install() {
  local build=$1
  CONTAINER_STAGE=$(mktemp -d /tmp/bucketfs-stage.XXXXXX)
  DESTDIR="$CONTAINER_STAGE" cmake --install "$build" --prefix /usr >/dev/null
  # A sanitizer build links its runtime, which the container's packages do
  # not have: stage it beside the binary's other libraries.
  local soname path real
  while read -r soname path; do
    real=$(readlink -f "$path")
    mkdir -p "$CONTAINER_STAGE$(dirname "$real")"
    cp "$real" "$CONTAINER_STAGE$(dirname "$real")/$soname"
  done < <(ldd "$CONTAINER_STAGE/usr/bin/bucketfs" |
    awk '$1 ~ /^lib(asan|tsan|ubsan|lsan)\.so/ { print $1, $3 }')
}
container_install_staged() {
  container_exec cp -a --no-preserve=ownership /opt/bucketfs-stage/. /
  container_exec systemctl daemon-reload
}

# Boots the root: --volatile=overlay puts a tmpfs over it, so every change
# the test makes vanishes at power-off and the cached root stays as built.
container_boot() {
  CONTAINER_LOG=$(mktemp /tmp/bucketfs-nspawn.XXXXXX.log)
  local binds=(--bind=/dev/fuse)
  if [ -n "${CONTAINER_STAGE:-}" ]; then
    binds+=(--bind-ro="$CONTAINER_STAGE:/opt/bucketfs-stage")
  fi
  # The container's mount namespace starts as a copy of ours. Where mounts
  # are private (no systemd on the host), a copy of another test's FUSE mount
  # would outlive that test's unmount and keep its daemon running, so nspawn
  # starts from a namespace without them (unshare execs: $! stays nspawn).
  unshare --mount --propagation private sh -c '
    awk '"'"'{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) ~ /^fuse(\.|blk$|$)/) print $5; break } }'"'"' \
      /proc/self/mountinfo | while read -r m; do umount -l "$(printf "%b" "$m")" 2>/dev/null || true; done
    exec "$@"' sh \
    systemd-nspawn -q -b --register=no --keep-unit --volatile=overlay -D "$CONTAINER_ROOT" \
    --machine=bucketfs-test-$$ "${binds[@]}" "${CONTAINER_NSPAWN_ARGS[@]+"${CONTAINER_NSPAWN_ARGS[@]}"}" \
    </dev/null >"$CONTAINER_LOG" 2>&1 &
  CONTAINER_NSPAWN_PID=$!
  local deadline=$((SECONDS + 60))
  while [ -z "$CONTAINER_PID" ]; do
    # Not before the exec: the children of the shell above are not the container.
    if [[ "$(cat "/proc/$CONTAINER_NSPAWN_PID/comm" 2>/dev/null)" == systemd-nspawn ]]; then
      CONTAINER_PID=$(container_find_pid1 "$CONTAINER_NSPAWN_PID")
    fi
    if ! kill -0 "$CONTAINER_NSPAWN_PID" 2>/dev/null; then
      container_log "systemd-nspawn exited; its output:"; cat "$CONTAINER_LOG" >&2; return 1
    fi
    [ $SECONDS -lt $deadline ] || { container_log "no PID 1 after 60 s"; return 1; }
    [ -n "$CONTAINER_PID" ] || sleep 0.2
  done
  container_wait_for_unit_manager
}

# nspawn's first child is a short-lived helper that forks the container's
# init and exits; the init is the child that is PID 1 of its own namespace.
container_find_pid1() {
  local child nspid
  for child in $(pgrep -P "$1"); do
    nspid=$(awk '/^NSpid:/ { print $NF }' "/proc/$child/status" 2>/dev/null || true)
    if [ "$nspid" = 1 ]; then echo "$child"; return 0; fi
  done
}

container_exec() {
  nsenter -t "$CONTAINER_PID" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

# systemd answers systemctl once its private socket exists and the boot
# reached a state (running or degraded).
container_wait_for_unit_manager() {
  local deadline=$((SECONDS + 90)) state=""
  while [ $SECONDS -lt $deadline ]; do
    if container_exec test -S /run/systemd/private 2>/dev/null; then
      state=$(container_exec systemctl is-system-running 2>/dev/null || true)
      case "$state" in running|degraded) return 0 ;; esac
    fi
    sleep 0.5
  done
  container_log "systemd inside did not finish booting (state '$state'); nspawn output:"
  cat "$CONTAINER_LOG" >&2
  return 1
}

container_teardown() {
  if [ -n "$CONTAINER_NSPAWN_PID" ] && kill -0 "$CONTAINER_NSPAWN_PID" 2>/dev/null; then
    container_exec systemctl poweroff --no-block >/dev/null 2>&1 || true
    local deadline=$((SECONDS + 30))
    while kill -0 "$CONTAINER_NSPAWN_PID" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.3; done
    kill -9 "$CONTAINER_NSPAWN_PID" 2>/dev/null || true
  fi
  [ -z "$CONTAINER_NSPAWN_PID" ] || wait "$CONTAINER_NSPAWN_PID" 2>/dev/null || true
  CONTAINER_NSPAWN_PID=""
  CONTAINER_PID=""
  [ -z "$CONTAINER_LOG" ] || rm -f "$CONTAINER_LOG"
  [ -z "${CONTAINER_STAGE:-}" ] || rm -rf "$CONTAINER_STAGE"
  CONTAINER_STAGE=""
}

#!/usr/bin/env bash
# `cmake --install` into a temporary DESTDIR, for the prefix /usr/local and
# for /usr: the tree holds the daemon, the mount(8) helper, the systemd
# unit naming the installed daemon, the docs, examples, fio jobs and a man
# page that lists every option of `bucketfs --help`.
# Usage: install_test.sh BUILD_DIR
set -euo pipefail
build=$1
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
tmp=$(mktemp -d /tmp/bucketfs-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failures=0
check() {
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; failures=$((failures + 1)); fi
}

for prefix in /usr/local /usr; do
  dest="$tmp/dest$(echo "$prefix" | tr / _)"
  echo "== cmake --install --prefix $prefix (DESTDIR=$dest)"
  DESTDIR="$dest" cmake --install "$build" --prefix "$prefix" >"$tmp/install.log"
  root="$dest$prefix"
  check "$prefix: daemon" test -x "$root/bin/bucketfs"
  check "$prefix: daemon runs" "$root/bin/bucketfs" --version
  helper=$(find "$dest" -name mount.bucketfs -type f)
  check "$prefix: one mount helper, executable" test -n "$helper" -a -x "$helper"
  check "$prefix: helper in an sbin directory" bash -c "[[ '$helper' == */sbin/mount.bucketfs ]]"
  unit="$root/lib/systemd/system/bucketfs@.service"
  check "$prefix: service unit" test -f "$unit"
  check "$prefix: unit runs the installed daemon" grep -q "^ExecStart=$prefix/bin/bucketfs " "$unit"
  check "$prefix: unit has no unfilled placeholder" bash -c "! grep -q '@BUCKETFS' '$unit'"
  for f in README.md DESIGN.md MOUNTING.md SEMANTICS.md TESTING.md \
           examples/example.env examples/mnt-s3.mount examples/mnt-s3.automount; do
    check "$prefix: doc $f" test -f "$root/share/doc/bucketfs/$f"
  done
  check "$prefix: fio jobs" test -f "$root/share/bucketfs/fio-jobs/read/seq_read_1t_1m_1g.fio" \
    -a -f "$root/share/bucketfs/fio-jobs/write/seq_write_1t_1m_1g.fio"
  check "$prefix: man page" test -f "$root/share/man/man8/bucketfs.8"
done

echo "== the man page lists every option"
man_page="$repo/docs/bucketfs.8"
# Options of --help ("  --name ..."), compared with the roff text with "\-" unescaped.
options=$("$build/mount-tools/bucketfs" s3://b /m --help | sed -n 's/^  \(--[a-z-]*\).*/\1/p')
check "--help lists options" test "$(wc -l <<<"$options")" -gt 30
text=$(sed 's/\\-/-/g' "$man_page")
for o in $options; do
  if ! grep -q -- "$o\\b" <<<"$text"; then echo "FAIL man page lacks $o"; failures=$((failures + 1)); fi
done
if command -v man >/dev/null; then
  check "man renders without warnings" bash -c \
    "[[ -z \"\$(MANWIDTH=80 man --warnings -l '$man_page' 2>&1 >/dev/null)\" ]]"
fi

[[ $failures -eq 0 ]] || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"

#!/usr/bin/env bash
# Builds lifeline_<version>_<arch>.deb from the release binary and packaging/.
# Usage: packaging/debian/build-deb.sh [OUTDIR]   (run `make release` first)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-.}
version=$(.build/release/lifeline --version)
arch=$(dpkg --print-architecture)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

install -Dm755 .build/release/lifeline "$root/usr/bin/lifeline"
install -Dm755 .build/release/lifeline-cli "$root/usr/libexec/lifeline/lifeline-cli"
strip "$root/usr/bin/lifeline" "$root/usr/libexec/lifeline/lifeline-cli"
install -Dm644 packaging/systemd/lifeline.service "$root/usr/lib/systemd/user/lifeline.service"
for f in packaging/dbus/*.service; do [ -e "$f" ] && install -Dm644 "$f" "$root/usr/share/dbus-1/services/$(basename "$f")"; done
for f in packaging/dbus/*.xml; do [ -e "$f" ] && install -Dm644 "$f" "$root/usr/share/dbus-1/interfaces/$(basename "$f")"; done
install -Dm644 packaging/man/lifeline.1 "$root/usr/share/man/man1/lifeline.1"
install -Dm644 packaging/man/lifeline.5 "$root/usr/share/man/man5/lifeline.5"
gzip -9n "$root/usr/share/man/man1/lifeline.1" "$root/usr/share/man/man5/lifeline.5"
install -Dm644 packaging/completions/lifeline.bash "$root/usr/share/bash-completion/completions/lifeline"
install -Dm644 packaging/completions/lifeline.zsh "$root/usr/share/zsh/vendor-completions/_lifeline"
install -Dm644 packaging/completions/lifeline.fish "$root/usr/share/fish/vendor_completions.d/lifeline.fish"
if [ -d packaging/tmux ]; then
  for f in packaging/tmux/*; do install -Dm755 "$f" "$root/usr/share/lifeline/tmux/$(basename "$f")"; done
fi

mkdir -p "$root/DEBIAN"
cat > "$root/DEBIAN/control" <<CONTROL
Package: lifeline
Version: $version
Architecture: $arch
Maintainer: Lifeline developers <lifeline@localhost>
Depends: libc6, libstdc++6, libdbus-1-3, libglib2.0-0, libcurl4, libnotify4
Recommends: dbus-user-session, tmux
Section: net
Priority: optional
Description: connectivity notifier for the Linux desktop
 Tells you once, at the right place, that your connection is gone, limited or
 behind a captive portal, and when it is back: a desktop notification, D-Bus,
 the tmux status line, a log file and hook scripts.
CONTROL
dpkg-deb --root-owner-group --build "$root" "$out/lifeline_${version}_${arch}.deb"

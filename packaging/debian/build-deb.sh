#!/usr/bin/env bash
# Builds lifeline_<version>_<arch>.deb from the release binaries and packaging/.
# Usage: packaging/debian/build-deb.sh [OUTDIR]   (`make deb` builds the binaries first)
#
# The files are laid out by scripts/install.sh (PREFIX=/usr), the same list
# `make install` uses. `Depends:` comes from dpkg-shlibdeps on the binaries
# actually built, so a library the code starts or stops linking changes it,
# plus the libraries the daemon opens at run time, which dpkg-shlibdeps cannot see.
# The GIO module goes into GLib's module folder; no maintainer script refreshes
# GIO's module cache: Debian's libglib2.0-0 watches that folder (a dpkg file
# trigger) and runs gio-querymodules whenever a package adds or removes a file
# there, as for dconf's and glib-networking's modules.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p "${1:-.}"
out=$(realpath "${1:-.}")
build=${BUILD_DIR:-.build/release}
version=$("$build/lifeline" --version)
arch=$(dpkg --print-architecture)
changelog_version=$(dpkg-parsechangelog -l packaging/debian/changelog -S Version)
if [ "$changelog_version" != "$version" ]; then
  echo "build-deb.sh: packaging/debian/changelog is at $changelog_version but lifeline --version says $version: add an entry" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The layout dpkg-shlibdeps expects: debian/control beside debian/PACKAGE/DEBIAN.
root=$work/debian/lifeline
mkdir -p "$root/DEBIAN"
PREFIX=/usr DESTDIR=$root BUILD_DIR=$build ZSH_COMPLETION_DIR=/usr/share/zsh/vendor-completions \
  GIO_MODULE=${GIO_MODULE:-.build/gio/liblifeline-gio.so} scripts/install.sh install >/dev/null
module=$root$(pkg-config --variable=giomoduledir gio-2.0)/liblifeline-gio.so

binaries=("$root/usr/bin/lifeline" "$root/usr/libexec/lifeline/lifeline-cli" "$root/usr/libexec/lifeline/lifeline-daemon")
# As dh_strip does for executables and shared objects.
strip --remove-section=.comment --remove-section=.note "${binaries[@]}"
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$module"
gzip -9n "$root/usr/share/man/man1/lifeline.1" "$root/usr/share/man/man5/lifeline.5"
doc=$root/usr/share/doc/lifeline
install -Dm644 packaging/debian/copyright "$doc/copyright"
# A native package (no Debian revision): its changelog is changelog.gz.
gzip -9n -c packaging/debian/changelog > "$doc/changelog.gz"
install -Dm644 packaging/debian/lintian-overrides "$root/usr/share/lintian/overrides/lifeline"

# dpkg-shlibdeps reads debian/control in the folder it runs in.
printf 'Source: lifeline\n\nPackage: lifeline\nArchitecture: any\n' > "$work/debian/control"
# The front binary is static (it needs no library), so only the others are asked.
dynamic=("${binaries[@]:1}" "$module")
depends=$(cd "$work" && dpkg-shlibdeps -O "${dynamic[@]#"$work/"}" | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "build-deb.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
# The probe loads libcurl-gnutls.so.4 (dlopen) when it first needs it, so no binary
# names it; 7.87.0 is the first libcurl with every option the probe sets (CURLOPT_QUICK_EXIT).
depends="$depends, libcurl3-gnutls (>= 7.87.0)"

(cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
cat > "$root/DEBIAN/control" <<CONTROL
Package: lifeline
Version: $version
Architecture: $arch
Maintainer: Lifeline developers <lifeline-maintainers@users.noreply.github.com>
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends
Recommends: dbus-user-session
Suggests: tmux
Section: net
Priority: optional
Description: connectivity notifier for the Linux desktop
 Tells you once, at the right place, that your connection is gone, limited
 or behind a captive portal, and when it is back: a desktop notification, a
 D-Bus service, the tmux status line and a log file.
CONTROL
deb="$out/lifeline_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"

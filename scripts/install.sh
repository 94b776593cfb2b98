#!/usr/bin/env bash
# Installs or removes Lifeline: `make install` / `make uninstall` run this, and
# packaging/debian/build-deb.sh stages the package with it.
#
#   scripts/install.sh install|uninstall
#
# Environment (the Makefile passes its variables):
#   PREFIX     where it is installed (default /usr/local); unit and D-Bus files name $PREFIX/bin/lifeline
#   DESTDIR    a staging root prepended to every path (packages, tests)
#   BUILD_DIR  where `lifeline`, `lifeline-cli` and `lifeline-daemon` were built (default .build/release)
#   LOCALE_DIR where `make locale` compiled the translations (default .build/locale)
#   ZSH_COMPLETION_DIR  default $PREFIX/share/zsh/site-functions (Debian: /usr/share/zsh/vendor-completions)
#   GIO_MODULE     the built GIO module (default .build/gio/liblifeline-gio.so, `make gio-module`)
#   GIO_MODULE_DIR where GIO loads modules from (default: pkg-config's giomoduledir,
#                  whatever PREFIX is: GIO looks nowhere else)
#
# Installed or removed live (no DESTDIR), the GIO module folder's cache is
# refreshed with gio-querymodules, so GLib finds the module, or stops looking for
# it, in the next application that starts. A package refreshes it its own way.
#
# One list (`manifest`) names every installed file, so uninstall removes exactly
# what install put there. A new file is one line in it.
set -euo pipefail
cd "$(dirname "$0")/.."

action=${1:-}
PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
BUILD_DIR=${BUILD_DIR:-.build/release}
LOCALE_DIR=${LOCALE_DIR:-.build/locale}
ZSH_COMPLETION_DIR=${ZSH_COMPLETION_DIR:-$PREFIX/share/zsh/site-functions}
GIO_MODULE=${GIO_MODULE:-.build/gio/liblifeline-gio.so}
GIO_MODULE_DIR=${GIO_MODULE_DIR:-$(pkg-config --variable=giomoduledir gio-2.0)}
share=$PREFIX/share

# mode  source (relative to the repository, or generated/NAME)  destination
manifest() {
  cat <<EOF
755 $BUILD_DIR/lifeline                      $PREFIX/bin/lifeline
755 $BUILD_DIR/lifeline-cli                  $PREFIX/libexec/lifeline/lifeline-cli
755 $BUILD_DIR/lifeline-daemon               $PREFIX/libexec/lifeline/lifeline-daemon
644 generated/lifeline.service               $PREFIX/lib/systemd/user/lifeline.service
644 generated/org.lifeline.Lifeline1.service $share/dbus-1/services/org.lifeline.Lifeline1.service
644 packaging/dbus/org.lifeline.Lifeline1.xml $share/dbus-1/interfaces/org.lifeline.Lifeline1.xml
644 packaging/man/lifeline.1                 $share/man/man1/lifeline.1
644 packaging/man/lifeline.5                 $share/man/man5/lifeline.5
644 generated/lifeline.bash                  $share/bash-completion/completions/lifeline
644 packaging/completions/lifeline.zsh       $ZSH_COMPLETION_DIR/_lifeline
644 packaging/completions/lifeline.fish      $share/fish/vendor_completions.d/lifeline.fish
755 packaging/tmux/lifeline.tmux             $share/lifeline/tmux/lifeline.tmux
644 generated/config.example.toml            $share/doc/lifeline/config.example.toml
644 $GIO_MODULE                              $GIO_MODULE_DIR/liblifeline-gio.so
EOF
  # One catalog per po/<language>.po.
  for po in po/*.po; do
    lang=$(basename "$po" .po)
    echo "644 $LOCALE_DIR/$lang/LC_MESSAGES/lifeline.mo $share/locale/$lang/LC_MESSAGES/lifeline.mo"
  done
}

# Folders that hold nothing but Lifeline's files: removed by uninstall when empty.
own_folders() {
  printf '%s\n' "$PREFIX/libexec/lifeline" "$share/lifeline/tmux" "$share/lifeline" "$share/doc/lifeline"
}

# The files that depend on where Lifeline is installed or on the built binary.
generate() {
  local out=$1 bin=$PREFIX/bin/lifeline
  sed "s|^ExecStart=/usr/bin/lifeline |ExecStart=$bin |" packaging/systemd/lifeline.service > "$out/lifeline.service"
  sed "s|^Exec=/usr/bin/lifeline |Exec=$bin |" packaging/dbus/org.lifeline.Lifeline1.service > "$out/org.lifeline.Lifeline1.service"
  # bash-completion sources the file: a #! line there only misleads.
  sed '1{/^#!/d}' packaging/completions/lifeline.bash > "$out/lifeline.bash"
  example_config "$out/config.example.toml"
}

# `config show` of the built binary with no user file: the defaults the daemon
# runs, so the example cannot drift from the code. Every line is commented out:
# the file documents and changes nothing until a line is uncommented.
example_config() {
  local empty shown
  empty=$(mktemp -d)
  shown=$(env -u LIFELINE_CONFIG XDG_CONFIG_HOME="$empty" "$BUILD_DIR/lifeline" config show)
  rmdir "$empty"
  {
    echo "# Lifeline configuration, every key with its default (lifeline(5) explains each)."
    echo "# Copy to \$XDG_CONFIG_HOME/lifeline/config.toml (~/.config/lifeline/config.toml),"
    echo "# uncomment what you change, then \`lifeline config check\` and"
    echo "# \`systemctl --user reload lifeline\`. A file that lists any [[monitor]] replaces"
    echo "# the default monitors, and any [[sink]] the default sinks; other sections merge"
    echo "# key by key. Opt-in kinds (exec, …) are described in lifeline(5)."
    echo "#"
    printf '%s\n' "$shown" | grep -v '^# effective configuration' | sed -e 's/^\(.\)/# \1/'
  } > "$1"
}

# GIO's cache of which module implements what, for a live install or removal.
refresh_gio_modules() {
  if [ -z "$DESTDIR" ] && [ -d "$GIO_MODULE_DIR" ]; then
    local query
    query=$(command -v gio-querymodules || pkg-config --variable=gio_querymodules gio-2.0)
    "$query" "$GIO_MODULE_DIR"
  fi
}

case $action in
  install)
    for binary in lifeline lifeline-cli lifeline-daemon; do
      [ -x "$BUILD_DIR/$binary" ] || { echo "install.sh: $BUILD_DIR/$binary is missing: run \`make release\` first" >&2; exit 1; }
    done
    for po in po/*.po; do
      mo=$LOCALE_DIR/$(basename "$po" .po)/LC_MESSAGES/lifeline.mo
      [ -f "$mo" ] || { echo "install.sh: $mo is missing: run \`make locale\` first" >&2; exit 1; }
    done
    [ -f "$GIO_MODULE" ] || { echo "install.sh: $GIO_MODULE is missing: run \`make gio-module\` first" >&2; exit 1; }
    generated=$(mktemp -d)
    trap 'rm -rf "$generated"' EXIT
    generate "$generated"
    manifest | while read -r mode source destination; do
      source=${source/#generated\//$generated/}
      install -D -m "$mode" "$source" "$DESTDIR$destination"
    done
    refresh_gio_modules
    echo "installed into $DESTDIR$PREFIX; start it with: systemctl --user daemon-reload && systemctl --user enable --now lifeline"
    ;;
  uninstall)
    manifest | while read -r _ _ destination; do
      rm -f "$DESTDIR$destination"
    done
    own_folders | while read -r folder; do
      if [ -d "$DESTDIR$folder" ]; then rmdir --ignore-fail-on-non-empty "$DESTDIR$folder"; fi
    done
    refresh_gio_modules
    ;;
  list)
    # What install puts where (for packaging and tests).
    manifest | awk '{ print $3 }'
    ;;
  *)
    echo "usage: $0 install|uninstall|list   (PREFIX, DESTDIR, BUILD_DIR from the environment)" >&2
    exit 2
    ;;
esac

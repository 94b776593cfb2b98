# `make run` builds and starts the daemon with its embedded default config, and
# prints each state it publishes; `make test` installs what the tests need and runs them all.
SWIFT ?= swift
RELEASE_FLAGS = -c release --static-swift-stdlib
# Full RELRO, as Debian builds programs: every symbol bound at start, the GOT read-only.
RELEASE_FLAGS += -Xlinker -z -Xlinker now
# No $ORIGIN run path: the binaries load no library of their own, and glibc refuses
# to start a static PIE (the front `lifeline`) that carries one.
RELEASE_FLAGS += --disable-local-rpath
# Each binary's own link flags, which Package.swift passes to that binary's link alone
# (a plain `swift build` links without them, and its binaries work as they are).
# The front binary, fully static (a static PIE): `status` runs every second in a
# status bar, and it starts faster with no library to load and bind (docs/benchmarks.md).
FRONT_LINK = -static-executable -use-ld=lld -Xclang-linker -static-pie -Xlinker -z -Xlinker pack-relative-relocs
# The daemon: no exported symbol table (no one looks symbols up in it), relocations packed.
DAEMON_LINK = -use-ld=lld -Xlinker --no-export-dynamic -Xlinker -z -Xlinker pack-relative-relocs
# The code that runs from the start to idle, linked first and together, so the
# pages mapped around each fault hold code that runs (scripts/hot-code-order.sh).
DAEMON_LINK += -Xlinker --symbol-ordering-file=$(CURDIR)/Sources/lifeline-daemon/link/hot-code.order -Xlinker --no-warn-symbol-ordering
# -lstdc++ finds link/libstdc++.so first, which names the static library: the
# static Swift runtime takes the C++ code it uses, not the whole shared library.
DAEMON_LINK += -L$(CURDIR)/Sources/lifeline-daemon/link
SWIFT_RELEASE = LIFELINE_FRONT_LINK='$(FRONT_LINK)' LIFELINE_DAEMON_LINK='$(DAEMON_LINK)' $(SWIFT) build $(RELEASE_FLAGS)
# Libraries the daemon links (pkg-config names them to SwiftPM), and libcurl's header
# only: the probe loads libcurl when it first needs it (Sources/CCurl). libcurl's GnuTLS
# flavour, as NetworkManager links: GnuTLS comes with libcurl's dependencies anyway
# (librtmp), OpenSSL's libssl then does not; apt replaces libcurl4-openssl-dev, which conflicts with it.
BUILD_PACKAGES = pkg-config libdbus-1-dev libglib2.0-dev libcurl4-gnutls-dev libnotify-dev
# The tray icon's menu.
BUILD_PACKAGES += libdbusmenu-glib-dev
# Real components the integration tests drive.
TEST_PACKAGES = $(BUILD_PACKAGES) iproute2 procps python3 dbus-daemon dbus-bin libglib2.0-bin coreutils nftables \
                dunst xvfb imagemagick x11-utils tmux xfce4-notifyd notification-daemon libpango-1.0-0 xdotool \
                mount passwd util-linux strace python3-dbusmock
# Spoofed signals are sent on a private system bus with Debian's stock policy (its system.conf).
TEST_PACKAGES += dbus-system-bus-common
# The prometheus sink's file is read back with Prometheus' own parser.
TEST_PACKAGES += python3-prometheus-client
# Router Advertisements carrying the captive-portal option (type 37) are built with scapy.
TEST_PACKAGES += python3-scapy
# libcurl's OpenSSL flavour: the probe loads it when libcurl-gnutls.so.4 is missing.
TEST_PACKAGES += libcurl4
# The diagnosis tests answer DNS with dnsmasq.
TEST_PACKAGES += dnsmasq-base
# The VPN tests run real tunnels in namespaces: userspace WireGuard (no kernel module needed) and OpenVPN.
TEST_PACKAGES += wireguard-go wireguard-tools openvpn
# What the packaging tests run: dpkg-shlibdeps, lintian, man, the three shells, systemd-analyze.
TEST_PACKAGES += dpkg-dev lintian man-db zsh fish bash-completion systemd
# The tray tests: a StatusNotifierWatcher in Python (Gio), waybar's tray under headless sway, grim.
TEST_PACKAGES += python3-gi gir1.2-glib-2.0 sway waybar grim adwaita-icon-theme
# The GIO module's tests: Debian's desktop portal, whose NetworkMonitor asks GLib's default
# monitor, and dbus-launch (which GLib runs to start a session bus, and the module must not cause).
TEST_PACKAGES += xdg-desktop-portal dbus-x11
# The toast on the notification servers of sway (mako, swaync) and GNOME Shell (whose
# org.freedesktop.Notifications is a gjs service the bus starts, and gnome-shell does not depend on gjs).
TEST_PACKAGES += mako-notifier sway-notification-center gnome-shell gjs
# KDE Plasma's notification server and system tray: plasmashell, the activity manager and
# kded5 come with plasma-workspace; its desktop shell (panel layout) is plasma-desktop-data.
TEST_PACKAGES += plasma-workspace plasma-desktop-data
# The desktops are most of the install time (Plasma alone is some 320 packages, 3–4 min):
# `make test` installs them while it builds the tests, and no test runs before both are done.
BACKGROUND_PACKAGES = gnome-shell gjs plasma-workspace plasma-desktop-data chromium
# The side-by-side benchmark drives GLib's GNetworkMonitor from Python.
BENCH_PACKAGES = $(TEST_PACKAGES) hyperfine python3-gi gir1.2-glib-2.0
# `make install`: where, a staging root, and where the binaries were built.
PREFIX ?= /usr/local
DESTDIR ?=
BUILD_DIR ?= .build/release
DEB_DIR ?= .

.PHONY: run build release test bench fuzz fuzz-ci deps test-deps test-deps-first clean install uninstall deb gio-module

# `lifeline watch` beside the daemon prints each published state, one line each;
# Ctrl-C stops both (scripts/run.sh).
run: deps release
	BUILD_DIR=.build/release scripts/run.sh

deps:
	@scripts/ensure-packages.sh $(BUILD_PACKAGES)

test-deps:
	@scripts/ensure-packages.sh $(TEST_PACKAGES)

test-deps-first:
	@scripts/ensure-packages.sh $(filter-out $(BACKGROUND_PACKAGES),$(TEST_PACKAGES))

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT_RELEASE) --product lifeline
	$(SWIFT_RELEASE) --product lifeline-cli
	$(SWIFT_RELEASE) --product lifeline-daemon

# The GIO module (packaging/gio/lifeline-gio.c): GLib applications' network
# monitor, answered by the daemon. Plain C and GIO, built with the C compiler
# (it is loaded into other programs, so it brings no Swift); hardened as Debian
# builds libraries. Its folder gets GIO's module cache, so GIO_EXTRA_MODULES=.build/gio finds it.
GIO_MODULE = .build/gio/liblifeline-gio.so
GIO_CFLAGS = -O2 -g -Wall -Wextra -Wno-unused-parameter -Werror -fPIC -D_FORTIFY_SOURCE=2 -fstack-protector-strong
GIO_LDFLAGS = -shared -Wl,-z,relro -Wl,-z,now -Wl,--as-needed -Wl,-z,defs
# Where GIO looks for modules; installed there whatever PREFIX is (GIO looks nowhere else).
GIO_MODULE_DIR ?= $(shell pkg-config --variable=giomoduledir gio-2.0)

gio-module: $(GIO_MODULE)

$(GIO_MODULE): packaging/gio/lifeline-gio.c
	@mkdir -p $(dir $@)
	$(CC) $(GIO_CFLAGS) $(GIO_LDFLAGS) -o $@ $< $$(pkg-config --cflags --libs gio-2.0)
	gio-querymodules $(dir $@)

# Every file's place is listed once, in scripts/install.sh. NO_BUILD=1 installs
# the binaries BUILD_DIR holds without building (the tests install debug ones);
# the GIO module is always brought up to date (one C file).
install: $(if $(NO_BUILD),,release) gio-module
	PREFIX='$(PREFIX)' DESTDIR='$(DESTDIR)' BUILD_DIR='$(BUILD_DIR)' GIO_MODULE='$(GIO_MODULE)' GIO_MODULE_DIR='$(GIO_MODULE_DIR)' \
	  scripts/install.sh install

uninstall:
	PREFIX='$(PREFIX)' DESTDIR='$(DESTDIR)' GIO_MODULE_DIR='$(GIO_MODULE_DIR)' scripts/install.sh uninstall

# lifeline_<version>_<arch>.deb in DEB_DIR, from the release binaries.
deb: release gio-module
	@scripts/ensure-packages.sh dpkg-dev
	BUILD_DIR=.build/release GIO_MODULE='$(GIO_MODULE)' packaging/debian/build-deb.sh '$(DEB_DIR)'

# Tests run one at a time: several watch what wakes the daemon's threads, or read
# the whole machine's processes and namespaces, which tests beside them would stir.
# scripts/no-leftovers.sh fails the run if any process a test started outlives it.
# The packaging tests install and check the .deb built here, before them: a test
# cannot run SwiftPM while `swift test` holds the build folder.
# The whole output is also kept in .build/test.log; a failed run ends with each
# failed test's name and first issue (scripts/test-summary.sh), as CI shows only the end.
test: test-deps-first gio-module
	@mkdir -p .build
	@scripts/ensure-packages.sh $(BACKGROUND_PACKAGES) >.build/background-packages.log 2>&1 & packages=$$!; \
	  $(SWIFT) build --build-tests; built=$$?; \
	  wait $$packages || { cat .build/background-packages.log; exit 1; }; exit $$built
	$(MAKE) deb DEB_DIR=.build/deb
	@echo 'scripts/no-leftovers.sh $(SWIFT) test --skip-build --no-parallel'
	@{ scripts/no-leftovers.sh $(SWIFT) test --skip-build --no-parallel 2>&1; echo $$? >.build/test.status; } | tee .build/test.log; \
	  status=$$(cat .build/test.status); [ "$$status" = 0 ] || scripts/test-summary.sh .build/test.log; exit $$status

# Each script's output is kept in BENCH_OUT (NAME.txt; NAME.tsv for numbers it
# writes itself to $BENCH_RESULTS); scripts/bench-table.py then prints the one
# table of them all and writes it into docs/benchmarks.md between its markers, and
# scripts/bench-methods.py writes each script's method beside it.
BENCH_OUT ?= .build/bench
bench: release gio-module
	@scripts/ensure-packages.sh $(BENCH_PACKAGES)
	$(SWIFT_RELEASE) --product lifeline-bench
	@rm -rf $(BENCH_OUT) && mkdir -p $(BENCH_OUT) && cat /proc/loadavg > $(BENCH_OUT)/loadavg
	@out=$$(realpath $(BENCH_OUT)); for script in bench/*.sh; do name=$$(basename "$$script" .sh); echo "== $$script"; \
	  { BENCH_RESULTS=$$out/$$name.tsv bash "$$script" 2>&1; echo $$? > $$out/$$name.status; } | tee $$out/$$name.txt; \
	  [ "$$(cat $$out/$$name.status)" = 0 ] || exit 1; done
	@echo "== the table (docs/benchmarks.md)"
	@python3 scripts/bench-table.py $(BENCH_OUT) docs/benchmarks.md
	@python3 scripts/bench-methods.py docs/benchmarks.md

# Soak: MINUTES of random faults and state changes against the release daemon
# in a network-namespace lab; fails when an invariant breaks (scripts/soak.sh).
MINUTES ?= 10
.PHONY: soak
soak: release test-deps
	bash scripts/soak.sh $(MINUTES)

# libFuzzer (toolchain only) on the netlink parser (and the RA options and
# sock_diag answers it reads), the config loader, the readers of other programs'
# text (exec-monitor lines, event JSON, HTTP replies) and D-Bus messages;
# FUZZ_SECONDS per target. A crash stops it with a non-zero status.
FUZZ_SECONDS ?= 60
fuzz: test-deps
	for target in netlink config input dbus; do bash fuzz/run.sh $$target $(FUZZ_SECONDS) || exit 1; done

# For CI: every target for 30 s; fails on any crash.
fuzz-ci:
	$(MAKE) fuzz FUZZ_SECONDS=30

clean:
	rm -rf .build

# Translations: po/<language>.po compiled (and checked) to
# .build/locale/<language>/LC_MESSAGES/lifeline.mo, where the binaries in the
# build folder find them; scripts/install.sh installs them to $(PREFIX)/share/locale.
# `make pot` regenerates po/lifeline.pot from the tr("…") / trn("…", "…") calls
# (xgettext's C reader understands Swift's calls and string literals); po/README.
BUILD_PACKAGES += gettext
LOCALE_DIR = .build/locale
LOCALE_FILES = $(patsubst po/%.po,$(LOCALE_DIR)/%/LC_MESSAGES/lifeline.mo,$(wildcard po/*.po))
.PHONY: locale pot
locale: $(LOCALE_FILES)
build release test install: locale
$(LOCALE_DIR)/%/LC_MESSAGES/lifeline.mo: po/%.po
	@mkdir -p $(dir $@)
	msgfmt --check --output-file=$@ $<
pot:
	xgettext --language=C --from-code=UTF-8 --keyword= --keyword=tr:1 --keyword=trn:1,2 --keyword=trayText:1 \
	  --add-comments=Translators: --package-name=lifeline --sort-by-file --output=po/lifeline.pot \
	  $$(grep -rlE '\b(tr|trn|trayText)\("' Sources Plugins --include='*.swift' | sort)
# The translated toasts are drawn by dunst: Hangul (Nanum) and Persian (DejaVu Sans) glyphs.
TEST_PACKAGES += fonts-nanum fonts-dejavu-core
# The history report is drawn by a real browser (headless, to PNG and its DOM).
TEST_PACKAGES += chromium

# `make run` builds and starts the daemon with its embedded default config;
# `make test` installs what the tests need and runs them all.
SWIFT ?= swift
RELEASE_FLAGS = -c release --static-swift-stdlib
# Libraries the daemon links (pkg-config names them to SwiftPM).
BUILD_PACKAGES = pkg-config libdbus-1-dev libglib2.0-dev libcurl4-openssl-dev libnotify-dev
# Real components the integration tests drive.
TEST_PACKAGES = $(BUILD_PACKAGES) iproute2 procps python3 dbus-daemon dbus-bin libglib2.0-bin coreutils nftables \
                dunst xvfb imagemagick x11-utils tmux xfce4-notifyd notification-daemon libpango-1.0-0 xdotool \
                mount passwd util-linux strace dnsmasq-base
BENCH_PACKAGES = $(TEST_PACKAGES) hyperfine

.PHONY: run build release test bench fuzz fuzz-ci deps test-deps clean

run: deps release
	.build/release/lifeline daemon

deps:
	@scripts/ensure-packages.sh $(BUILD_PACKAGES)

test-deps:
	@scripts/ensure-packages.sh $(TEST_PACKAGES)

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product lifeline
	$(SWIFT) build $(RELEASE_FLAGS) --product lifeline-cli

# Tests run one at a time: several assert latency bounds (a sink delivers within
# 10 ms, tmux redraws within 100 ms) that parallel tests on two cores would blur.
# scripts/no-leftovers.sh fails the run if any process a test started outlives it.
test: test-deps
	$(SWIFT) build --build-tests
	scripts/no-leftovers.sh $(SWIFT) test --skip-build --no-parallel

bench: release
	@scripts/ensure-packages.sh $(BENCH_PACKAGES)
	$(SWIFT) build $(RELEASE_FLAGS) --product lifeline-bench
	@for script in bench/*.sh; do echo "== $$script"; bash "$$script" || exit 1; done

# libFuzzer (toolchain only) on the netlink parser and the config loader;
# FUZZ_SECONDS per target. A crash stops it with a non-zero status.
FUZZ_SECONDS ?= 60
fuzz: test-deps
	bash fuzz/netlink.sh $(FUZZ_SECONDS)
	bash fuzz/config.sh $(FUZZ_SECONDS)

# For CI: every target for 30 s; fails on any crash.
fuzz-ci:
	$(MAKE) fuzz FUZZ_SECONDS=30

clean:
	rm -rf .build

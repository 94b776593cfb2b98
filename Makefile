# `make run` builds and starts the daemon with its embedded default config;
# `make test` installs what the tests need and runs them all.
SWIFT ?= swift
RELEASE_FLAGS = -c release --static-swift-stdlib
# Libraries the daemon links (pkg-config names them to SwiftPM).
BUILD_PACKAGES = pkg-config
# Real components the integration tests drive.
TEST_PACKAGES = $(BUILD_PACKAGES) iproute2 procps python3 tmux
BENCH_PACKAGES = $(TEST_PACKAGES) hyperfine

.PHONY: run build release test bench deps test-deps clean

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

test: test-deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

bench: release
	@scripts/ensure-packages.sh $(BENCH_PACKAGES)
	$(SWIFT) build $(RELEASE_FLAGS) --product lifeline-bench
	@for script in bench/*.sh; do echo "== $$script"; bash "$$script" || exit 1; done

clean:
	rm -rf .build

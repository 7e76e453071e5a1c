# lockbench: build, test and demo targets. `make test` is the fast suite;
# `make test-long` adds the long suites and is what CI (.ci/run) runs.
GO       ?= go
BIN      ?= bin/lockbench
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)

.PHONY: all build install test test-long lint demo redis etcd postgres zookeeper nats prometheus python-driver bench bench-redlock bench-backends fuzz clean
.PHONY: image image-lockbench

all: build

# Static (CGO_ENABLED=0: lockbench needs no C), so the binary at hand is
# also the one lockbench image build lockbench puts in the generators' image.
build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/lockbench

# go install puts lockbench in $(go env GOPATH)/bin; put that on PATH.
install:
	CGO_ENABLED=0 $(GO) install -ldflags "$(LDFLAGS)" ./cmd/lockbench
	@echo "installed $$($(GO) env GOPATH)/bin/lockbench; add $$($(GO) env GOPATH)/bin to PATH if it is not there"

# vet first (cheap), then every test under the race detector, packages in
# parallel. The long suites (every scenario's trials, the Docker engine's
# container and Swarm tests) skip here: they take minutes by design.
# test-long runs them too (LOCKBENCH_LONG_TESTS=1, read by compose/longtest).
test: redis etcd postgres zookeeper nats prometheus python-driver
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 15m ./...

# -p 3: the long suites mostly wait (down-after, elections, restarts), so a
# third package at once on two cores shortens the run without starving them.
# -timeout 40m: bench/cli alone takes 13 min on a quiet host; a loaded one
# must make it slower, not a panic.
test-long: redis etcd postgres zookeeper nats prometheus python-driver
	$(GO) vet ./...
	LOCKBENCH_LONG_TESTS=1 $(GO) test -race -count=1 -p 3 -timeout 40m ./...

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt wants to rewrite:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

# redis-server must be on PATH: lockbench starts its own servers on free ports.
redis:
	@command -v redis-server >/dev/null 2>&1 || { \
		echo "redis-server not found; installing Debian's redis-server (needs root)"; \
		apt-get update -qq && apt-get install -y -qq redis-server redis-tools; }
	@# Debian's package starts a system service; lockbench never uses it.
	@command -v systemctl >/dev/null 2>&1 && systemctl stop redis-server >/dev/null 2>&1 || true

# The reference driver of --lock exec: (lockimpl/drivers/python/redispy_driver.py)
# runs redis-py's redis.lock.Lock: Debian's python3-redis, for Debian's python3.
python-driver:
	@/usr/bin/python3 -c 'import redis' >/dev/null 2>&1 || { \
		echo "python3-redis not found; installing Debian's python3 and python3-redis (needs root)"; \
		apt-get update -qq && apt-get install -y -qq python3 python3-redis; }

# etcd must be on PATH for --topology etcd:N: Debian's etcd-server (3.4).
etcd:
	@command -v etcd >/dev/null 2>&1 || { \
		echo "etcd not found; installing Debian's etcd-server (needs root)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server etcd-client; }
	@# Debian's package starts a system service; lockbench never uses it.
	@command -v systemctl >/dev/null 2>&1 && systemctl stop etcd >/dev/null 2>&1 || true

# PostgreSQL's server binaries for --topology postgres: Debian's postgresql
# (lockbench runs initdb and postgres from /usr/lib/postgresql/15/bin itself).
# Debian's package starts a system cluster; lockbench never uses it, so the
# one just installed is stopped (a cluster that was there before is left alone).
postgres:
	@[ -x /usr/lib/postgresql/15/bin/postgres ] || { \
		echo "PostgreSQL not found; installing Debian's postgresql (needs root)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql && \
		{ service postgresql stop >/dev/null 2>&1 || true; }; }

# ZooKeeper for the zk lock: Debian's zookeeperd brings java and the jars;
# lockbench starts its own members from /usr/share/java/zookeeper.jar. The
# package starts a system service, which lockbench never uses: stopped.
zookeeper:
	@{ command -v java >/dev/null 2>&1 && [ -f /usr/share/java/zookeeper.jar ]; } || { \
		echo "ZooKeeper not found; installing Debian's zookeeperd (needs root)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zookeeperd && \
		{ service zookeeper stop >/dev/null 2>&1 || true; }; }

# nats-server for the nats-kv lock, built from the Go module (Debian's 2.9
# has no per-key TTLs) into the cache directory lockbench looks in (after
# PATH): $XDG_CACHE_HOME/lockbench/bin, else ~/.cache/lockbench/bin.
NATS_VERSION ?= v2.15.3
NATS_BIN_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/lockbench/bin
nats:
	@if "$(NATS_BIN_DIR)/nats-server" --version 2>/dev/null | grep -q "$(NATS_VERSION)"; then :; else \
		echo "building nats-server $(NATS_VERSION) into $(NATS_BIN_DIR)"; \
		GOBIN="$(NATS_BIN_DIR)" $(GO) install github.com/nats-io/nats-server/v2@$(NATS_VERSION); fi

# Debian's prometheus for the tests that scrape real runs (they skip
# without it). The package starts a system Prometheus (and its node
# exporter) on 9090/9100; the tests start their own on free ports: stopped.
prometheus:
	@command -v prometheus >/dev/null 2>&1 || { \
		echo "prometheus not found; installing Debian's prometheus (needs root)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus && \
		{ service prometheus stop >/dev/null 2>&1 || true; service prometheus-node-exporter stop >/dev/null 2>&1 || true; }; }

# The demo runs on Redis alone, so it installs only redis-server; the hints
# that need etcd or PostgreSQL name the target that installs them.
demo: build redis
	./$(BIN) run --label demo
	@echo
	@echo "next: ./$(BIN) results ls                      # the run just stored, and any before it"
	@echo "      ./$(BIN) results show <id>               # its tables again"
	@echo "      ./$(BIN) results report -o report.html <id>   # one offline HTML page"
	@echo "      ./$(BIN) run --topology single --topology redlock:5 -d 5s   # Redlock's cost beside a single master"
	@echo "      make etcd; ./$(BIN) run --topology single --topology redlock:5 --topology etcd:3 -d 5s   # and etcd"
	@echo "      make postgres; ./$(BIN) lock-cost --lock single --lock pg-advisory@postgres   # beside PostgreSQL"

# benchstat-ready: six samples of each (go run golang.org/x/perf/cmd/benchstat
# on two such outputs compares them). The recorder, the tick at 1k and 10k
# workers, memory per worker (B/worker), a worker iteration, key choosers.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./bench/ ./workloads/

bench-redlock:
	$(GO) test -run '^$$' -bench 'AcquireRelease|FanOutFloor' -benchtime 10000x -benchmem ./lockimpl/

# zk and nats-kv beside single Redis, one local server each, in one run.
bench-backends: zookeeper nats
	$(GO) test -run '^$$' -bench 'Backends' -benchtime 2000x ./lockimpl/

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParseKeys -fuzztime 20s ./workloads/
	$(GO) test -run '^$$' -fuzz FuzzParseDist -fuzztime 20s ./workloads/
	$(GO) test -run '^$$' -fuzz FuzzParseRetry -fuzztime 20s ./lockimpl/
	$(GO) test -run '^$$' -fuzz FuzzParseAssertion -fuzztime 20s ./results/
	$(GO) test -run '^$$' -fuzz FuzzParseTags -fuzztime 10s ./bench/plan/
	$(GO) test -run '^$$' -fuzz FuzzParseRedisURL -fuzztime 10s ./bench/plan/
	$(GO) test -run '^$$' -fuzz FuzzParsePeerOptions -fuzztime 20s ./lockimpl/
	$(GO) test -run '^$$' -fuzz FuzzNatsKey -fuzztime 10s ./lockimpl/
	$(GO) test -run '^$$' -fuzz FuzzParseDriverAnswer -fuzztime 20s ./lockimpl/
	$(GO) test -run '^$$' -fuzz FuzzParseDriverCaps -fuzztime 10s ./lockimpl/
	$(GO) test -run '^$$' -fuzz FuzzParseDriverCommand -fuzztime 10s ./lockimpl/
	$(GO) test -run '^$$' -fuzz FuzzParseLockSpec -fuzztime 20s ./bench/sweep/
	$(GO) test -run '^$$' -fuzz FuzzParseEtcdURL -fuzztime 10s ./compose/
	$(GO) test -run '^$$' -fuzz FuzzParsePgURL -fuzztime 10s ./compose/
	$(GO) test -run '^$$' -fuzz FuzzParseZkServers -fuzztime 10s ./compose/
	$(GO) test -run '^$$' -fuzz FuzzParseNatsURL -fuzztime 10s ./compose/
	$(GO) test -run '^$$' -fuzz FuzzCollect -fuzztime 10s ./bench/job/
	$(GO) test -run '^$$' -fuzz FuzzMoveSecrets -fuzztime 10s ./bench/job/
	$(GO) test -run '^$$' -fuzz FuzzEnvFile -fuzztime 10s ./bench/job/
	$(GO) test -run '^$$' -fuzz FuzzParseCandidate -fuzztime 10s ./bench/advise/
	$(GO) test -run '^$$' -fuzz FuzzParseBudget -fuzztime 10s ./bench/advise/
	$(GO) test -run '^$$' -fuzz FuzzParseTarget -fuzztime 10s ./bench/metrics/
	$(GO) test -run '^$$' -fuzz FuzzParseOTLPEndpoint -fuzztime 10s ./bench/metrics/

# lockbench/redis:local: a FROM scratch image of this machine's redis-server and
# its libraries, for a Docker engine that cannot pull redis:7.0 (see README).
image:
	$(GO) run ./cmd/lockbench image build

clean:
	rm -rf bin runs

# lockbench/lockbench:local: a FROM scratch image of a static lockbench, the
# generators' image for lockbench swarm job where no registry is reachable.
image-lockbench:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS) -s -w" -o bin/lockbench-static ./cmd/lockbench
	./bin/lockbench-static image build lockbench

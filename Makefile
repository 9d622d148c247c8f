# Developer shortcuts; the scripts are the source of truth (the README's
# quick start calls them directly, so make is not required).
.PHONY: up test generate tools bench build

build:
	go build -o bin/phantom ./cmd/phantom

up:
	./scripts/up

test:
	./scripts/test

generate:
	./scripts/setup
	./scripts/generate

tools:
	./scripts/setup

bench:
	./scripts/bench

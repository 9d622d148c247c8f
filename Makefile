# Developer shortcuts; the scripts are the source of truth (the README's
# quick start calls them directly, so make is not required).
.PHONY: up test generate tools bench build image compose-test

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

# The Phantom image (deploy/Dockerfile); BASE=debian:bookworm-slim where a
# registry is reachable, else a debootstrap base (deploy/base-image).
image:
	./deploy/build-image

# The compose stack end to end: dockerd, image, stack up, agent, down.
compose-test:
	./deploy/compose-test

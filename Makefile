# Croupier. The two commands: `make run` (bring it up) and `make test` (check everything).
# `make help` lists the rest. Setup steps leave stamp files, so a second run is quick.

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
CROUPIER := $(BIN)/croupier
PYTEST_ARGS ?=

KAFKA_DIR := deploy/kafka
KAFKA_STAMP := $(KAFKA_DIR)/lib/.fetched
INSTALL_STAMP := $(VENV)/.croupier-installed
PROTO_STAMP := $(VENV)/.croupier-proto
# Generated gRPC code goes beside the package: proto/croupier/v1/x.proto becomes
# services/croupier/v1/x_pb2.py, so the generated imports (`from croupier.v1 import ...`) resolve.
PROTO_DIR := proto
PROTO_OUT := services
PROTOS := $(shell find $(PROTO_DIR) -name '*.proto' 2>/dev/null | sort)

# The command that starts the services (rules, projector, gateway) once the stack is up:
# `croupier demo` (Ctrl-C stops the services and the stack). Empty: `make run` starts only the stack.
RUN_SERVICES ?= $(CROUPIER) demo --stop-stack

.PHONY: help setup system-deps run up down status test bench lint clean distclean

help:
	@echo "make run      bring up Kafka, Redis and the services (croupier demo; Ctrl-C stops them all)"
	@echo "make test     the whole test suite (its own Kafka and Redis: containers if Docker answers, else local processes)"
	@echo "make setup    .venv, the croupier command, generated code, Kafka jars, redis-server, kcat"
	@echo "make up | down | status   the local stack (croupier stack up|down|status)"
	@echo "make bench    the benchmarks     make lint   ruff and the import contracts"
	@echo "make clean    stop the stack and delete its state (.croupier/)"

setup: system-deps $(INSTALL_STAMP) $(PROTO_STAMP) $(KAFKA_STAMP)

system-deps:
	@PYTHON=$(PYTHON) bash deploy/system-deps.sh

$(INSTALL_STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "setup: installing croupier and its dependencies into $(VENV)"
	@$(PY) -m pip install -q --disable-pip-version-check -e '.[dev]'
	@touch $@

$(PROTO_STAMP): $(PROTOS) $(INSTALL_STAMP)
ifneq ($(strip $(PROTOS)),)
	@echo "setup: generating gRPC code from $(words $(PROTOS)) .proto file(s) into $(PROTO_OUT)/"
	@$(PY) -m grpc_tools.protoc -I $(PROTO_DIR) --python_out=$(PROTO_OUT) --pyi_out=$(PROTO_OUT) \
		--grpc_python_out=$(PROTO_OUT) $(PROTOS)
	@for d in $$(cd $(PROTO_DIR) && find . -name '*.proto' -exec dirname {} \; | sort -u); do \
		touch $(PROTO_OUT)/$$d/__init__.py; done
endif
	@touch $@

$(KAFKA_STAMP): $(KAFKA_DIR)/pom.xml
	@echo "setup: fetching the Kafka jars with Maven into $(KAFKA_DIR)/lib"
	@rm -rf $(KAFKA_DIR)/lib
	@mvn -q -B -f $(KAFKA_DIR)/pom.xml dependency:copy-dependencies 2>&1 | sed 's/\x1b\[[0-9;]*m//g'
	@touch $@

run: setup
	@$(CROUPIER) stack up
ifneq ($(strip $(RUN_SERVICES)),)
	$(RUN_SERVICES)
else
	@echo "RUN_SERVICES is empty: only the stack was started ('croupier demo' starts the services on it)."
	@echo "The stack keeps running: 'make status' to look, 'make down' to stop it."
endif

up: setup
	@$(CROUPIER) stack up

down:
	@if [ -x $(CROUPIER) ]; then $(CROUPIER) stack down; else echo "nothing to stop (no $(VENV) yet)"; fi

status:
	@if [ -x $(CROUPIER) ]; then $(CROUPIER) stack status; else echo "not set up yet: make setup"; exit 3; fi

test: setup
	@$(PY) -m pytest $(PYTEST_ARGS)

bench: setup
	@if [ -f bench/run.py ]; then $(PY) bench/run.py; else echo "bench/run.py, the benchmarks' runner, is missing from this checkout"; fi

lint: setup
	@$(BIN)/ruff check services gateway tests $(wildcard bench)
	@$(PY) .ci/lint_imports.py

clean: down
	rm -rf .croupier .pytest_cache .hypothesis

distclean: clean
	rm -rf $(VENV) $(KAFKA_DIR)/lib $(KAFKA_DIR)/target

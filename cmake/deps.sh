#!/usr/bin/env bash
# Installs the Debian 12 packages mica builds and tests with, when any is missing.
# As root it runs apt-get; otherwise it prints the exact command and stops.
set -euo pipefail
packages=(
  build-essential cmake
  libabsl-dev libprotobuf-dev protobuf-compiler
  libflatbuffers-dev flatbuffers-compiler flatbuffers-compiler-dev
  catch2 libbenchmark-dev libonnx-dev
  gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib
  libstdc++-arm-none-eabi-dev qemu-system-arm
  clang libclang-rt-14-dev python3
)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "mica: missing Debian packages: ${missing[*]}" >&2
  echo "mica: install them with:  sudo sh -c '$cmd'" >&2
  exit 1
fi
echo "mica: installing ${missing[*]}" >&2
sh -c "$cmd" >&2

# Cross build for ARM64 Linux with Debian's g++-aarch64-linux-gnu, linking
# against the arm64 libraries that scripts/arm64_sysroot.sh unpacks (never
# installed into the host's package set). Tests run under QEMU user mode;
# QEMU_CPU picks the emulated CPU (tests/arm64/run.sh runs each).
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

set(LEAKY_ARM64_SYSROOT "${CMAKE_CURRENT_LIST_DIR}/../../build-arm64/sysroot"
    CACHE PATH "arm64 libraries unpacked by scripts/arm64_sysroot.sh")
get_filename_component(LEAKY_ARM64_SYSROOT "${LEAKY_ARM64_SYSROOT}" ABSOLUTE)
# The cross compiler's own C and C++ runtime live in /usr/aarch64-linux-gnu.
set(CMAKE_FIND_ROOT_PATH "${LEAKY_ARM64_SYSROOT}" /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Debian's multiarch headers (OpenSSL's openssl/configuration.h, which
# toolkit/vega.cc's libcrypto includes) are in the sysroot's
# usr/include/aarch64-linux-gnu, which the cross compiler does not search.
set(CMAKE_C_STANDARD_INCLUDE_DIRECTORIES "${LEAKY_ARM64_SYSROOT}/usr/include/aarch64-linux-gnu")
set(CMAKE_CXX_STANDARD_INCLUDE_DIRECTORIES "${LEAKY_ARM64_SYSROOT}/usr/include/aarch64-linux-gnu")

# -L gives QEMU the arm64 dynamic loader and libc; the sysroot's libraries
# come from the binaries' RUNPATH.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L /usr/aarch64-linux-gnu)

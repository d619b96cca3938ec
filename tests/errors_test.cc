// Bad input gets a clear error, and every output byte stays untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace leaky::test {
namespace {

constexpr size_t kN = 1000;

struct Buffers {
  std::vector<float> data = std::vector<float>(4 * kN, -1.5f);
  std::vector<float> snapshot = data;
  bool Untouched() const { return std::memcmp(data.data(), snapshot.data(), data.size() * 4) == 0; }
};

void ExpectError(leaky_status got, leaky_status expected, const char* needle, const Buffers& b) {
  EXPECT_EQ(got, expected) << leaky_status_string(got) << ": " << leaky_last_error();
  EXPECT_NE(std::strstr(leaky_last_error(), needle), nullptr)
      << "message '" << leaky_last_error() << "' does not mention '" << needle << "'";
  EXPECT_TRUE(b.Untouched()) << "an output was written despite the error";
}

TEST(Errors, ForwardRejectsBadArguments) {
  Buffers b;
  float* x = b.data.data();
  float* y = x + kN;
  ExpectError(leaky_relu_forward(static_cast<leaky_dtype>(9), kN, x, y, 0.1, nullptr),
              LEAKY_ERROR_INVALID_DTYPE, "dtype 9", b);
  ExpectError(leaky_relu_forward(LEAKY_F32, kN, x, y, NAN, nullptr),
              LEAKY_ERROR_INVALID_PARAMETER, "negative_slope", b);
  ExpectError(leaky_relu_forward(LEAKY_F32, kN, x, y, INFINITY, nullptr),
              LEAKY_ERROR_INVALID_PARAMETER, "not finite", b);
  ExpectError(leaky_relu_forward(LEAKY_F32, kN, nullptr, y, 0.1, nullptr),
              LEAKY_ERROR_NULL_POINTER, "x is null", b);
  ExpectError(leaky_relu_forward(LEAKY_F32, kN, x, nullptr, 0.1, nullptr),
              LEAKY_ERROR_NULL_POINTER, "y is null", b);
  // Overlap by one element either way, and a misaligned byte overlap.
  ExpectError(leaky_relu_forward(LEAKY_F32, kN, x, x + 1, 0.1, nullptr), LEAKY_ERROR_OVERLAP,
              "overlaps", b);
  ExpectError(leaky_relu_forward(LEAKY_F32, kN, x + 1, x, 0.1, nullptr), LEAKY_ERROR_OVERLAP,
              "overlaps", b);
  ExpectError(leaky_relu_forward(LEAKY_F16, kN, x, reinterpret_cast<char*>(x) + 1999, 0.1,
                                 nullptr),
              LEAKY_ERROR_OVERLAP, "overlaps", b);
  leaky_options bad_threads{-1, -1};
  ExpectError(leaky_relu_forward(LEAKY_F32, kN, x, y, 0.1, &bad_threads),
              LEAKY_ERROR_INVALID_OPTIONS, "num_threads", b);
  leaky_options bad_stream{0, 2};
  ExpectError(leaky_relu_forward(LEAKY_F32, kN, x, y, 0.1, &bad_stream),
              LEAKY_ERROR_INVALID_OPTIONS, "stream_stores", b);
  ExpectError(leaky_relu_forward(LEAKY_F32, std::numeric_limits<size_t>::max() / 2, x, y, 0.1,
                                 nullptr),
              LEAKY_ERROR_SIZE, "wraps", b);
}

TEST(Errors, BackwardRejectsBadArguments) {
  Buffers b;
  float* dy = b.data.data();
  float* saved = dy + kN;
  float* dx = dy + 2 * kN;
  ExpectError(leaky_relu_backward(LEAKY_F32, kN, dy, saved, 1, dx, -0.1, nullptr),
              LEAKY_ERROR_UNSUPPORTED, "sign cannot be recovered", b);
  ExpectError(leaky_relu_backward(LEAKY_F32, kN, dy, nullptr, 0, dx, 0.1, nullptr),
              LEAKY_ERROR_NULL_POINTER, "saved is null", b);
  ExpectError(leaky_relu_backward(LEAKY_F32, kN, dy, saved, 0, dx - 3, 0.1, nullptr),
              LEAKY_ERROR_OVERLAP, "overlaps saved", b);
  ExpectError(leaky_relu_backward(LEAKY_F32, kN, dy, saved, 0, dy + 7, 0.1, nullptr),
              LEAKY_ERROR_OVERLAP, "overlaps dy", b);
  ExpectError(leaky_relu_backward(LEAKY_F64, kN, dy, saved, 0, dx, -INFINITY, nullptr),
              LEAKY_ERROR_INVALID_PARAMETER, "negative_slope", b);
}

TEST(Errors, ZeroLengthIsANoOpThatAcceptsNull) {
  EXPECT_EQ(leaky_relu_forward(LEAKY_BF16, 0, nullptr, nullptr, 0.1, nullptr), LEAKY_OK);
  EXPECT_EQ(leaky_relu_backward(LEAKY_F64, 0, nullptr, nullptr, 1, nullptr, 0.0, nullptr),
            LEAKY_OK);
}

TEST(Errors, InPlaceAndSharedInputsAreAllowed) {
  std::vector<float> a = {-2, 3}, g = {1, 1};
  ASSERT_EQ(leaky_relu_forward(LEAKY_F32, 2, a.data(), a.data(), 0.5, nullptr), LEAKY_OK);
  EXPECT_EQ(a[0], -1.0f);
  // dx may alias dy or saved; dy and saved may alias each other.
  ASSERT_EQ(leaky_relu_backward(LEAKY_F32, 2, g.data(), a.data(), 1, g.data(), 0.5, nullptr),
            LEAKY_OK);
  EXPECT_EQ(g[0], 0.5f);
  EXPECT_EQ(g[1], 1.0f);
  ASSERT_EQ(leaky_relu_backward(LEAKY_F32, 2, a.data(), a.data(), 0, a.data(), 0.5, nullptr),
            LEAKY_OK);
}

TEST(Errors, StatusStringsAreDistinct) {
  std::set<std::string> seen;
  for (int s = LEAKY_OK; s <= LEAKY_ERROR_DEVICE; ++s) {
    EXPECT_TRUE(seen.insert(leaky_status_string(static_cast<leaky_status>(s))).second) << s;
  }
  EXPECT_STREQ(leaky_status_string(static_cast<leaky_status>(99)), "unknown status");
}

TEST(Errors, CppApiThrowsWithTheSameMessage) {
  std::vector<float> x(4), y(3);
  try {
    leaky_relu_forward<float>(x, y, 0.1);
    FAIL() << "size mismatch not detected";
  } catch (const error& e) {
    EXPECT_EQ(e.status(), LEAKY_ERROR_SIZE);
    EXPECT_NE(std::string(e.what()).find("differ in size"), std::string::npos);
  }
  std::vector<float> z(4, 7.0f);
  try {
    leaky_relu_forward<float>(x, z, NAN);
    FAIL() << "NaN slope not detected";
  } catch (const error& e) {
    EXPECT_EQ(e.status(), LEAKY_ERROR_INVALID_PARAMETER);
    EXPECT_STREQ(e.what(), leaky_last_error());
    EXPECT_EQ(z[0], 7.0f);
  }
}

// The detail is per thread: another thread's failure does not overwrite it.
TEST(Errors, LastErrorIsThreadLocal) {
  ASSERT_NE(leaky_relu_forward(LEAKY_F32, 1, nullptr, nullptr, 0.1, nullptr), LEAKY_OK);
  const std::string mine = leaky_last_error();
  std::thread other([] { (void)leaky_relu_forward(LEAKY_F32, 1, nullptr, nullptr, NAN, nullptr); });
  other.join();
  EXPECT_EQ(mine, leaky_last_error());
}

TEST(Errors, ReluAndEluRejectBadArguments) {
  Buffers b;
  float* x = b.data.data();
  float* y = x + kN;
  float* dx = x + 2 * kN;
  ExpectError(leaky_plain_relu_forward(static_cast<leaky_dtype>(7), kN, x, y, nullptr),
              LEAKY_ERROR_INVALID_DTYPE, "dtype 7", b);
  ExpectError(leaky_plain_relu_forward(LEAKY_F32, kN, x, x + 3, nullptr), LEAKY_ERROR_OVERLAP,
              "overlaps", b);
  ExpectError(leaky_plain_relu_backward(LEAKY_F32, kN, x, nullptr, dx, nullptr),
              LEAKY_ERROR_NULL_POINTER, "saved is null", b);
  ExpectError(leaky_plain_relu_backward(LEAKY_F32, kN, x, y, y + 1, nullptr), LEAKY_ERROR_OVERLAP,
              "overlaps", b);
  ExpectError(leaky_elu_forward(LEAKY_F32, kN, x, y, NAN, 1.0, 1.0, nullptr),
              LEAKY_ERROR_INVALID_PARAMETER, "alpha", b);
  ExpectError(leaky_elu_forward(LEAKY_F32, kN, x, y, 1.0, INFINITY, 1.0, nullptr),
              LEAKY_ERROR_INVALID_PARAMETER, "scale", b);
  ExpectError(leaky_elu_forward(LEAKY_F32, kN, x, y, 1.0, 1.0, -INFINITY, nullptr),
              LEAKY_ERROR_INVALID_PARAMETER, "input_scale", b);
  ExpectError(leaky_elu_backward(LEAKY_F32, kN, x, y, 1, dx, -0.5, 1.0, 1.0, nullptr),
              LEAKY_ERROR_UNSUPPORTED, "alpha >= 0", b);
  leaky_options bad_threads{-2, -1};
  ExpectError(leaky_elu_backward(LEAKY_F64, kN / 2, x, y, 0, dx, 1.0, 1.0, 1.0, &bad_threads),
              LEAKY_ERROR_INVALID_OPTIONS, "num_threads", b);
  // Zero elements: nothing to do, null pointers accepted, as for LeakyReLU.
  EXPECT_EQ(leaky_plain_relu_forward(LEAKY_F16, 0, nullptr, nullptr, nullptr), LEAKY_OK);
  EXPECT_EQ(leaky_elu_backward(LEAKY_BF16, 0, nullptr, nullptr, 1, nullptr, 1.0, 1.0, 1.0,
                               nullptr),
            LEAKY_OK);
}

TEST(Errors, CppApiThrowsForReluAndElu) {
  std::vector<float> x(4, -1.0f), y(3, 7.0f);
  EXPECT_THROW(plain_relu_forward<float>(x, y), error);
  EXPECT_THROW(elu_forward<float>(x, std::span<float>(x), elu_coefficients{NAN, 1, 1}), error);
  EXPECT_TRUE(std::all_of(y.begin(), y.end(), [](float v) { return v == 7.0f; }));
}

}  // namespace
}  // namespace leaky::test

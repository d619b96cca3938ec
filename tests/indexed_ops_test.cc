// The indexed ops together (PReLU, RReLU, bias_act with dropout): errors
// leave every output untouched, and the C++ API matches the C API and
// checks sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "leaky/leaky.h"
#include "leaky/reference.hpp"
#include "plan/cpu_plan.h"
#include "test_util.h"

namespace leaky::test {
namespace {

TEST(IndexedOps, ErrorsLeaveOutputsUntouched) {
  std::vector<float> buffer(5000, 3.0f);
  const std::vector<float> snapshot = buffer;
  float* x = buffer.data();
  float* y = x + 1000;
  float* w = x + 2000;
  float* noise = x + 3000;
  auto* mask = reinterpret_cast<uint8_t*>(x + 4000);
  auto expect = [&](leaky_status got, leaky_status want, const char* needle) {
    EXPECT_EQ(got, want) << leaky_last_error();
    EXPECT_NE(std::strstr(leaky_last_error(), needle), nullptr) << leaky_last_error();
    EXPECT_EQ(buffer, snapshot);
  };
  const leaky_rrelu_params good{0.1, 0.3, 1, 0, 0};
  leaky_rrelu_params bad = good;
  bad.lower = 0.5;
  expect(leaky_rrelu_forward(LEAKY_F32, 1000, x, y, noise, &bad, nullptr),
         LEAKY_ERROR_INVALID_PARAMETER, "greater than upper");
  bad = good;
  bad.upper = NAN;
  expect(leaky_rrelu_backward(LEAKY_F32, 1000, x, x, y, &bad, nullptr),
         LEAKY_ERROR_INVALID_PARAMETER, "upper");
  bad = good;
  bad.offset = UINT64_MAX - 10;
  expect(leaky_rrelu_forward(LEAKY_F32, 1000, x, y, noise, &bad, nullptr), LEAKY_ERROR_SIZE,
         "2^64");
  expect(leaky_rrelu_forward(LEAKY_F32, 1000, x, y, y + 10, &good, nullptr), LEAKY_ERROR_OVERLAP,
         "noise");
  expect(leaky_rrelu_forward(LEAKY_F32, 1000, x, y, noise, nullptr, nullptr),
         LEAKY_ERROR_NULL_POINTER, "params");
  // Evaluation delegates to LeakyReLU, but a bad buffer is still reported
  // under RReLU's name.
  leaky_rrelu_params eval = good;
  eval.training = 0;
  expect(leaky_rrelu_forward(LEAKY_F32, 1000, nullptr, y, nullptr, &eval, nullptr),
         LEAKY_ERROR_NULL_POINTER, "leaky_rrelu_forward");
  expect(leaky_rrelu_backward(LEAKY_F32, 1000, x, x, x + 500, &eval, nullptr), LEAKY_ERROR_OVERLAP,
         "leaky_rrelu_backward");

  const leaky_bias_act_params params{LEAKY_ACT_LRELU, 0.2, 1.4, -1.0};
  for (double p : {-0.1, 1.0, std::nan("")}) {
    const leaky_dropout_params dropout{p, 0, 0};
    expect(leaky_bias_act_dropout_forward(LEAKY_F32, 10, 10, 10, x, w, y, mask, &params, &dropout,
                                          nullptr),
           LEAKY_ERROR_INVALID_PARAMETER, "not in [0, 1)");
    expect(leaky_bias_act_dropout_backward(LEAKY_F32, 10, 10, 10, x, x, w, mask, y, nullptr,
                                           &params, p, nullptr),
           LEAKY_ERROR_INVALID_PARAMETER, "not in [0, 1)");
  }
  const leaky_dropout_params dropout{0.5, 0, 0};
  expect(leaky_bias_act_dropout_forward(LEAKY_F32, 10, 10, 10, x, w, y,
                                        reinterpret_cast<uint8_t*>(y + 990), &params, &dropout,
                                        nullptr),
         LEAKY_ERROR_OVERLAP, "mask");
  expect(leaky_bias_act_dropout_forward(LEAKY_F32, 10, 10, 10, x, w, y, nullptr, &params, &dropout,
                                        nullptr),
         LEAKY_ERROR_NULL_POINTER, "mask is null");
  expect(leaky_bias_act_dropout_forward(LEAKY_F32, 10, 10, 10, x, w, y, mask, &params, nullptr,
                                        nullptr),
         LEAKY_ERROR_NULL_POINTER, "dropout is null");
  expect(leaky_bias_act_dropout_backward(LEAKY_F32, 10, 10, 10, x, x, w, nullptr, y, nullptr,
                                         &params, 0.5, nullptr),
         LEAKY_ERROR_NULL_POINTER, "mask is null");

  expect(leaky_prelu_forward(LEAKY_F32, 10, 10, 10, x, nullptr, y, nullptr),
         LEAKY_ERROR_NULL_POINTER, "weight is null");
  expect(leaky_prelu_forward(LEAKY_F32, 10, 10, 10, x, y + 5, y, nullptr), LEAKY_ERROR_OVERLAP,
         "weight");
  expect(leaky_prelu_backward(LEAKY_F32, 10, 10, 10, x, x, w, y, y + 990, nullptr),
         LEAKY_ERROR_OVERLAP, "dweight overlaps dx");
  expect(leaky_prelu_backward(LEAKY_F32, SIZE_MAX / 2, 4, 4, x, x, w, y, nullptr, nullptr),
         LEAKY_ERROR_SIZE, "overflows");
  expect(leaky_prelu_forward(static_cast<leaky_dtype>(9), 10, 10, 10, x, w, y, nullptr),
         LEAKY_ERROR_INVALID_DTYPE, "dtype");
}

}  // namespace
}  // namespace leaky::test

namespace leaky::test {
namespace {

TEST(IndexedOps, CppApiMatchesTheCApiAndChecksSizes) {
  const size_t n = 600;
  const auto x = RandomWithSpecials<float>(n, 20), dy = RandomWithSpecials<float>(n, 21);
  const std::vector<float> w{0.25f, -0.5f, 1.5f};
  std::vector<float> y(n), expected(n), dx(n), dw(3), noise(n);
  leaky::prelu_forward<float>(x, w, y, 10, 3, 20);
  ASSERT_EQ(leaky_prelu_forward(LEAKY_F32, 10, 3, 20, x.data(), w.data(), expected.data(), nullptr),
            LEAKY_OK);
  EXPECT_EQ(FirstMismatch(y.data(), expected.data(), n), -1);
  EXPECT_THROW(leaky::prelu_forward<float>(x, std::span<const float>(w).first(2), y, 10, 3, 20),
               leaky::error);
  leaky::prelu_backward<float>(dy, x, w, dx, dw, 10, 3, 20);
  const leaky_rrelu_params p{0.1, 0.3, 1, 5, 0};
  leaky::rrelu_forward<float>(x, y, noise, p);
  ASSERT_EQ(leaky_rrelu_forward(LEAKY_F32, n, x.data(), expected.data(), nullptr, &p, nullptr),
            LEAKY_OK);
  EXPECT_EQ(FirstMismatch(y.data(), expected.data(), n), -1);
  leaky::rrelu_backward<float>(dy, x, dx, p);
  std::vector<uint8_t> mask(leaky::dropout_mask_bytes(n)), expected_mask(mask.size());
  const leaky_bias_act_params params{LEAKY_ACT_LRELU, 0.2, 1.0, -1.0};
  const leaky_dropout_params dropout{0.25, 3, 0};
  leaky::bias_act_dropout_forward<float>(x, w, y, mask, 10, 3, 20, params, dropout);
  ASSERT_EQ(
      leaky_bias_act_dropout_forward(LEAKY_F32, 10, 3, 20, x.data(), w.data(), expected.data(),
                                     expected_mask.data(), &params, &dropout, nullptr),
      LEAKY_OK);
  EXPECT_EQ(FirstMismatch(y.data(), expected.data(), n), -1);
  EXPECT_EQ(mask, expected_mask);
  EXPECT_THROW(leaky::bias_act_dropout_forward<float>(x, w, y, std::span<uint8_t>(mask).first(3),
                                                      10, 3, 20, params, dropout),
               leaky::error);
  leaky::bias_act_dropout_backward<float>(dy, x, w, mask, dx, dw, 10, 3, 20, params, 0.25);
}

}  // namespace
}  // namespace leaky::test

// The rest of leaky/family.h on the OpenCL device (PoCL's CPU device here)
// against the CPU library, bit for bit: every op and direction, f32, f64,
// f16 and bf16, values with NaN, +-0, infinities and subnormals (normal
// values for the sums dweight and db), channel layouts whose rows cross
// tiles and cores, and every split of the planner with 1 and 2 buffers,
// tiles small enough for many per core. ELU is compared with the scalar
// reference (leaky/reference.hpp) within the bounds the CPU kernels meet
// too. RReLU's noise, dropout's mask (its last byte's spare bits kept) and
// the sums come out as the CPU's. No OpenCL platform: every test skips
// itself, saying why.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "leaky/leaky.hpp"
#include "leaky/opencl.hpp"
#include "leaky/reference.hpp"
#include "device/launch.h"
#include "test_util.h"

namespace leaky::test {
namespace {

using Device = leaky::cl::Device;

Device Open() {
  leaky_cl_device* device = nullptr;
  if (leaky_cl_open(nullptr, &device) != LEAKY_OK) return nullptr;
  return Device(device);
}
#define OPEN_OR_SKIP(name)  \
  Device name = Open();     \
  if (!name) GTEST_SKIP() << "no OpenCL device: " << leaky_last_error()

const Launch kLaunches[] = {
    {1, LEAKY_SPLIT_GRANULE, 0, 2},  {3, LEAKY_SPLIT_EVEN, 64, 2},
    {4, LEAKY_SPLIT_BALANCED, 96, 1}, {8, LEAKY_SPLIT_GRANULE, 128, 2},
    {2, LEAKY_SPLIT_EVEN, 32, 1},
};


// x with the specials of SpecialFloats at its start, then random values
// with NaN and zeros sprinkled (normal values only: `plain`).
template <class T>
std::vector<T> Values(size_t n, uint32_t seed, bool plain) {
  std::vector<T> v = RandomWithSpecials<T>(n, seed);
  if (plain) {
    for (T& e : v) {
      if (IsNan(e)) e = T(0.5f);
    }
    return v;
  }
  const std::vector<float> specials = SpecialFloats();
  for (size_t i = 0; i < specials.size() && i < n; ++i) v[i] = T(specials[i]);
  return v;
}

template <class T>
void ExpectBitsEqual(const std::vector<T>& device, const std::vector<T>& cpu, const std::string& what) {
  ASSERT_EQ(device.size(), cpu.size());
  const long at = FirstMismatch(device.data(), cpu.data(), cpu.size());
  EXPECT_EQ(at, -1) << what << ": first difference at " << at << " (device "
                    << Hex(device[static_cast<size_t>(at < 0 ? 0 : at)]) << ", CPU "
                    << Hex(cpu[static_cast<size_t>(at < 0 ? 0 : at)]) << ")";
}

// Steps of T's own grid between two values (NaN with NaN: 0; -0 and +0
// are one value).
template <class T>
double Ulps(T a, T b) {
  if (IsNan(a) && IsNan(b)) return 0;
  if (IsNan(a) || IsNan(b)) return 1e9;
  const auto ordered = [](T v) {
    const auto bits = Bits(v);
    using U = decltype(bits);
    const U sign = U(1) << (8 * sizeof(U) - 1);
    const double magnitude = static_cast<double>(bits & static_cast<U>(sign - 1));
    return (bits & sign) ? -magnitude : magnitude;
  };
  return std::fabs(ordered(a) - ordered(b));
}

const char* Name(leaky_dtype dtype) {
  switch (dtype) {
    case LEAKY_F32: return "f32";
    case LEAKY_F64: return "f64";
    case LEAKY_F16: return "f16";
    case LEAKY_BF16: return "bf16";
  }
  return "?";
}

// One op's check for every launch: `run_device(launch)` and the CPU's
// results compared by `compare`.
template <class T>
void ForEachLaunch(leaky_cl_device* device, size_t n, bool backward,
                   const std::function<void(const leaky_plan_request*, const std::string&)>& body) {
  for (const Launch& launch : kLaunches) {
    const leaky_plan_request request = RequestFor(device, dtype_of<T>(), n, backward, launch);
    body(&request, std::string(Name(dtype_of<T>())) + ", " + std::to_string(launch.cores) +
                       " cores, split " + std::to_string(launch.split) + ", tile " +
                       std::to_string(launch.tile_length) + ", " + std::to_string(launch.buffers) +
                       " buffer(s)");
  }
}

constexpr size_t kOuter = 3, kChannels = 5, kInner = 67, kN = kOuter * kChannels * kInner;
const leaky_options kOne{1, 0, nullptr};

template <class T>
void CheckUnaryOps(leaky_cl_device* device) {
  const leaky_dtype dt = dtype_of<T>();
  const std::vector<T> x = Values<T>(kN, 1, false), dy = Values<T>(kN, 2, false);
  ForEachLaunch<T>(device, kN, false, [&](const leaky_plan_request* r, const std::string& where) {
    std::vector<T> cpu(kN), dev(kN);
    ASSERT_EQ(leaky_plain_relu_forward(dt, kN, x.data(), cpu.data(), &kOne), LEAKY_OK);
    ASSERT_EQ(leaky_cl_plain_relu_forward(device, dt, kN, x.data(), dev.data(), r, nullptr), LEAKY_OK)
        << leaky_last_error();
    ExpectBitsEqual(dev, cpu, "relu forward, " + where);
    for (int training = 0; training < 2; ++training) {
      const leaky_rrelu_params p{0.125, 1.0 / 3, training, 0x123456789ull, 1000 + 7ull * training};
      std::vector<T> cpu_noise(kN, T(7.0f)), dev_noise(kN, T(7.0f));
      ASSERT_EQ(leaky_rrelu_forward(dt, kN, x.data(), cpu.data(), cpu_noise.data(), &p, &kOne), LEAKY_OK);
      ASSERT_EQ(leaky_cl_rrelu_forward(device, dt, kN, x.data(), dev.data(), dev_noise.data(), &p, r,
                                       nullptr),
                LEAKY_OK)
          << leaky_last_error();
      ExpectBitsEqual(dev, cpu, "rrelu forward, training " + std::to_string(training) + ", " + where);
      ExpectBitsEqual(dev_noise, cpu_noise, "rrelu noise, training " + std::to_string(training) + ", " + where);
    }
  });
  ForEachLaunch<T>(device, kN, true, [&](const leaky_plan_request* r, const std::string& where) {
    std::vector<T> cpu(kN), dev(kN);
    ASSERT_EQ(leaky_plain_relu_backward(dt, kN, dy.data(), x.data(), cpu.data(), &kOne), LEAKY_OK);
    ASSERT_EQ(leaky_cl_plain_relu_backward(device, dt, kN, dy.data(), x.data(), dev.data(), r, nullptr),
              LEAKY_OK)
        << leaky_last_error();
    ExpectBitsEqual(dev, cpu, "relu backward, " + where);
    for (int training = 0; training < 2; ++training) {
      const leaky_rrelu_params p{0.1, 0.3, training, 42, 5};
      ASSERT_EQ(leaky_rrelu_backward(dt, kN, dy.data(), x.data(), cpu.data(), &p, &kOne), LEAKY_OK);
      ASSERT_EQ(leaky_cl_rrelu_backward(device, dt, kN, dy.data(), x.data(), dev.data(), &p, r, nullptr),
                LEAKY_OK)
          << leaky_last_error();
      ExpectBitsEqual(dev, cpu, "rrelu backward, training " + std::to_string(training) + ", " + where);
    }
  });
}

template <class T>
void CheckElu(leaky_cl_device* device) {
  const leaky_dtype dt = dtype_of<T>();
  const std::vector<T> x = Values<T>(kN, 3, false), dy = Values<T>(kN, 4, false);
  const bool half = !std::is_same_v<T, float> && !std::is_same_v<T, double>;
  for (const auto& [alpha, scale, input_scale] :
       {std::tuple{1.0, 1.0, 1.0}, std::tuple{1.6732632423543772, 1.0507009873554805, 0.75},
        std::tuple{1.0, 1.0, -0.5}}) {
    const int fwd_bound = half ? reference::kEluForwardMaxUlpHalf
                          : std::is_same_v<T, float> ? reference::kEluForwardMaxUlpF32
                          : input_scale < 0 ? reference::kEluForwardMaxUlpF64NegativeInputScale
                                            : reference::kEluForwardMaxUlpF64;
    const int bwd_bound = half ? reference::kEluBackwardMaxUlpHalf
                          : std::is_same_v<T, float> ? reference::kEluBackwardMaxUlpF32
                                                     : reference::kEluBackwardMaxUlpF64;
    const leaky_plan_request request = RequestFor(device, dt, kN, false, kLaunches[1]);
    std::vector<T> dev(kN);
    ASSERT_EQ(leaky_cl_elu_forward(device, dt, kN, x.data(), dev.data(), alpha, scale, input_scale,
                                   &request, nullptr),
              LEAKY_OK)
        << leaky_last_error();
    std::vector<T> cpu(kN);
    ASSERT_EQ(leaky_elu_forward(dt, kN, x.data(), cpu.data(), alpha, scale, input_scale, &kOne), LEAKY_OK);
    double worst = 0;
    for (size_t i = 0; i < kN; ++i) {
      worst = std::max(worst, Ulps(dev[i], reference::elu_forward(x[i], alpha, scale, input_scale)));
      // Zeros with the CPU's sign (PyTorch's): the ulp distance cannot see it.
      const double c = static_cast<double>(reference::widen(cpu[i]));
      if (c == 0) {
        EXPECT_EQ(std::signbit(static_cast<double>(reference::widen(dev[i]))), std::signbit(c))
            << Name(dt) << " ELU forward of " << static_cast<double>(reference::widen(x[i]))
            << " at " << i;
      }
    }
    EXPECT_LE(worst, fwd_bound) << Name(dt) << " ELU forward " << alpha << ", " << scale << ", "
                                << input_scale;
    const leaky_plan_request back = RequestFor(device, dt, kN, true, kLaunches[2]);
    ASSERT_EQ(leaky_cl_elu_backward(device, dt, kN, dy.data(), x.data(), dev.data(), alpha, scale,
                                    input_scale, &back, nullptr),
              LEAKY_OK)
        << leaky_last_error();
    worst = 0;
    for (size_t i = 0; i < kN; ++i) {
      worst = std::max(worst, Ulps(dev[i], reference::elu_backward(dy[i], x[i], alpha, scale, input_scale)));
    }
    EXPECT_LE(worst, bwd_bound) << Name(dt) << " ELU backward";
  }
}

template <class T>
void CheckChannelOps(leaky_cl_device* device) {
  const leaky_dtype dt = dtype_of<T>();
  const std::vector<T> x = Values<T>(kN, 5, false), dy = Values<T>(kN, 6, false);
  const std::vector<T> xs = Values<T>(kN, 7, true), dys = Values<T>(kN, 8, true);  // for the sums
  std::vector<T> side(kChannels);
  for (size_t c = 0; c < kChannels; ++c) side[c] = T(0.25f * static_cast<float>(c) - 0.4f);
  for (const leaky_bias_act_params& p :
       {leaky_bias_act_params{LEAKY_ACT_LRELU, 0.2, 1.4142135623730951, -1},
        leaky_bias_act_params{LEAKY_ACT_RELU, 0.0, 2.0, 1.5},
        leaky_bias_act_params{LEAKY_ACT_LINEAR, 0.0, 0.5, 0.25}}) {
    const std::string act = std::to_string(static_cast<int>(p.activation));
    ForEachLaunch<T>(device, kN, false, [&](const leaky_plan_request* r, const std::string& where) {
      std::vector<T> cpu(kN), dev(kN);
      ASSERT_EQ(leaky_prelu_forward(dt, kOuter, kChannels, kInner, x.data(), side.data(), cpu.data(), &kOne), LEAKY_OK);
      ASSERT_EQ(leaky_cl_prelu_forward(device, dt, kOuter, kChannels, kInner, x.data(), side.data(),
                                       dev.data(), r, nullptr),
                LEAKY_OK)
          << leaky_last_error();
      ExpectBitsEqual(dev, cpu, "prelu forward, " + where);
      for (const T* bias : {static_cast<const T*>(side.data()), static_cast<const T*>(nullptr)}) {
        ASSERT_EQ(leaky_bias_act_forward(dt, kOuter, kChannels, kInner, x.data(), bias, cpu.data(), &p, &kOne), LEAKY_OK);
        ASSERT_EQ(leaky_cl_bias_act_forward(device, dt, kOuter, kChannels, kInner, x.data(), bias,
                                            dev.data(), &p, r, nullptr),
                  LEAKY_OK)
            << leaky_last_error();
        ExpectBitsEqual(dev, cpu, "bias_act forward, act " + act + ", " + where);
      }
      const leaky_dropout_params d{0.3, 99, 77};
      std::vector<uint8_t> cpu_mask((kN + 7) / 8, 0xA5), dev_mask((kN + 7) / 8, 0xA5);
      ASSERT_EQ(leaky_bias_act_dropout_forward(dt, kOuter, kChannels, kInner, x.data(), side.data(),
                                               cpu.data(), cpu_mask.data(), &p, &d, &kOne),
                LEAKY_OK);
      ASSERT_EQ(leaky_cl_bias_act_dropout_forward(device, dt, kOuter, kChannels, kInner, x.data(),
                                                  side.data(), dev.data(), dev_mask.data(), &p, &d,
                                                  r, nullptr),
                LEAKY_OK)
          << leaky_last_error();
      ExpectBitsEqual(dev, cpu, "dropout forward, act " + act + ", " + where);
      EXPECT_EQ(dev_mask, cpu_mask) << "dropout mask, " << where;
    });
    ForEachLaunch<T>(device, kN, true, [&](const leaky_plan_request* r, const std::string& where) {
      std::vector<T> cpu(kN), dev(kN), cpu_sum(kChannels), dev_sum(kChannels);
      ASSERT_EQ(leaky_prelu_backward(dt, kOuter, kChannels, kInner, dys.data(), xs.data(), side.data(),
                                     cpu.data(), cpu_sum.data(), &kOne),
                LEAKY_OK);
      ASSERT_EQ(leaky_cl_prelu_backward(device, dt, kOuter, kChannels, kInner, dys.data(), xs.data(),
                                        side.data(), dev.data(), dev_sum.data(), r, nullptr),
                LEAKY_OK)
          << leaky_last_error();
      ExpectBitsEqual(dev, cpu, "prelu backward, " + where);
      ExpectBitsEqual(dev_sum, cpu_sum, "prelu dweight, " + where);
      ASSERT_EQ(leaky_cl_prelu_backward(device, dt, kOuter, kChannels, kInner, dy.data(), x.data(),
                                        side.data(), dev.data(), nullptr, r, nullptr),
                LEAKY_OK)
          << leaky_last_error();
      ASSERT_EQ(leaky_prelu_backward(dt, kOuter, kChannels, kInner, dy.data(), x.data(), side.data(),
                                     cpu.data(), nullptr, &kOne),
                LEAKY_OK);
      ExpectBitsEqual(dev, cpu, "prelu backward with specials, " + where);
      ASSERT_EQ(leaky_bias_act_backward(dt, kOuter, kChannels, kInner, dys.data(), xs.data(), side.data(),
                                        cpu.data(), cpu_sum.data(), &p, &kOne),
                LEAKY_OK);
      ASSERT_EQ(leaky_cl_bias_act_backward(device, dt, kOuter, kChannels, kInner, dys.data(), xs.data(),
                                           side.data(), dev.data(), dev_sum.data(), &p, r, nullptr),
                LEAKY_OK)
          << leaky_last_error();
      ExpectBitsEqual(dev, cpu, "bias_act backward, act " + act + ", " + where);
      ExpectBitsEqual(dev_sum, cpu_sum, "bias_act db, act " + act + ", " + where);
      std::vector<uint8_t> mask((kN + 7) / 8);
      for (size_t i = 0; i < mask.size(); ++i) mask[i] = static_cast<uint8_t>(i * 37 + 11);
      ASSERT_EQ(leaky_bias_act_dropout_backward(dt, kOuter, kChannels, kInner, dys.data(), xs.data(),
                                                side.data(), mask.data(), cpu.data(), cpu_sum.data(),
                                                &p, 0.3, &kOne),
                LEAKY_OK);
      ASSERT_EQ(leaky_cl_bias_act_dropout_backward(device, dt, kOuter, kChannels, kInner, dys.data(),
                                                   xs.data(), side.data(), mask.data(), dev.data(),
                                                   dev_sum.data(), &p, 0.3, r, nullptr),
                LEAKY_OK)
          << leaky_last_error();
      ExpectBitsEqual(dev, cpu, "dropout backward, act " + act + ", " + where);
      ExpectBitsEqual(dev_sum, cpu_sum, "dropout db, act " + act + ", " + where);
    });
  }
}

template <class T>
void CheckAll(leaky_cl_device* device) {
  CheckUnaryOps<T>(device);
  CheckElu<T>(device);
  CheckChannelOps<T>(device);
}

TEST(OpenclFamily, F32EqualsTheCpu) {
  OPEN_OR_SKIP(device);
  CheckAll<float>(device.get());
}
TEST(OpenclFamily, F16EqualsTheCpu) {
  OPEN_OR_SKIP(device);
  CheckAll<float16>(device.get());
}
TEST(OpenclFamily, Bf16EqualsTheCpu) {
  OPEN_OR_SKIP(device);
  CheckAll<bfloat16>(device.get());
}
TEST(OpenclFamily, F64EqualsTheCpu) {
  OPEN_OR_SKIP(device);
  if (!leaky_cl_has_f64(device.get())) GTEST_SKIP() << "the device has no cl_khr_fp64";
  CheckAll<double>(device.get());
}

// Bad arguments are refused by the CPU's rules before anything runs, and
// the outputs stay as they were.
TEST(OpenclFamily, BadArgumentsLeaveTheOutputsUntouched) {
  OPEN_OR_SKIP(device);
  std::vector<float> x(64, -1.0f), y(64, 9.0f), noise(64, 9.0f), w(4, 0.25f);
  const leaky_rrelu_params backwards{0.5, 0.1, 1, 0, 0};
  EXPECT_EQ(leaky_cl_rrelu_forward(device.get(), LEAKY_F32, 64, x.data(), y.data(), noise.data(),
                                   &backwards, nullptr, nullptr),
            LEAKY_ERROR_INVALID_PARAMETER);
  EXPECT_NE(std::string(leaky_last_error()).find("leaky_cl_rrelu_forward: lower = 0.5 is greater"),
            std::string::npos)
      << leaky_last_error();
  const leaky_bias_act_params bad_act{static_cast<leaky_activation>(7), 0.2, 1.0, -1};
  EXPECT_EQ(leaky_cl_bias_act_forward(device.get(), LEAKY_F32, 2, 4, 8, x.data(), w.data(),
                                      y.data(), &bad_act, nullptr, nullptr),
            LEAKY_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(leaky_cl_prelu_forward(device.get(), LEAKY_F32, 2, 4, 8, x.data(), nullptr, y.data(),
                                   nullptr, nullptr),
            LEAKY_ERROR_NULL_POINTER);
  const leaky_bias_act_params ok{LEAKY_ACT_LRELU, 0.2, 1.0, -1};
  const leaky_dropout_params p_one{1.0, 0, 0};
  std::vector<uint8_t> mask(8, 0x5A);
  EXPECT_EQ(leaky_cl_bias_act_dropout_forward(device.get(), LEAKY_F32, 2, 4, 8, x.data(), w.data(),
                                              y.data(), mask.data(), &ok, &p_one, nullptr, nullptr),
            LEAKY_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(leaky_cl_elu_forward(device.get(), LEAKY_F32, 64, x.data(), y.data(), NAN, 1, 1,
                                 nullptr, nullptr),
            LEAKY_ERROR_INVALID_PARAMETER);
  for (float v : y) EXPECT_EQ(v, 9.0f);
  for (float v : noise) EXPECT_EQ(v, 9.0f);
  for (uint8_t b : mask) EXPECT_EQ(b, 0x5A);
}

}  // namespace
}  // namespace leaky::test

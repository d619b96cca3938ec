// The OpenCL backend on whatever device the ICD loader finds (PoCL's CPU
// device here): host and kernel agree on the tiling data's layout; every
// f16/bf16 pattern x the slopes x both directions, and random f32/f64 with
// specials at sizes around tile and core boundaries, 1..8 work-groups, 1
// and 2 buffers, every split of the planner (granule, even, balanced) and
// the device's own tile, are bit-identical to the CPU library; bad
// arguments are refused before anything runs; and each planted fault of the
// article's troubleshooting table is named by `leaky check`'s diagnosis
// with its core and tile. No OpenCL platform: every test reports itself
// skipped, with the reason.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "diagnose.h"
#include "golden_data.h"
#include "layout.h"
#include "leaky/leaky.hpp"
#include "leaky/opencl.hpp"
#include "device/launch.h"
#include "test_util.h"

namespace leaky::test {
namespace {

using Device = leaky::cl::Device;

// The device, or a skip saying why there is none.
Device Open(int fault = LEAKY_CL_FAULT_NONE) {
  leaky_cl_options options{-1, fault};
  leaky_cl_device* device = nullptr;
  const leaky_status status = leaky_cl_open(&options, &device);
  if (status != LEAKY_OK) {
    EXPECT_EQ(status, LEAKY_ERROR_DEVICE) << leaky_last_error();
    return nullptr;
  }
  return Device(device);
}
#define OPEN_OR_SKIP(name, ...)                                              \
  Device name = Open(__VA_ARGS__);                                           \
  if (!name) GTEST_SKIP() << "no OpenCL device: " << leaky_last_error()

template <class T>
std::vector<T> Cpu(const std::vector<T>& x, const std::vector<T>* dy, double slope) {
  std::vector<T> out(x.size());
  const leaky_options one{1, 0, nullptr};
  if (dy == nullptr) {
    EXPECT_EQ(leaky_relu_forward(dtype_of<T>(), x.size(), x.data(), out.data(), slope, &one), LEAKY_OK);
  } else {
    EXPECT_EQ(leaky_relu_backward(dtype_of<T>(), x.size(), dy->data(), x.data(), 0, out.data(), slope, &one),
              LEAKY_OK);
  }
  return out;
}

template <class T>
void ExpectSame(leaky_cl_device* device, const std::vector<T>& x, const std::vector<T>* dy,
                double slope, const Launch& launch) {
  const std::vector<T> expected = Cpu<T>(x, dy, slope);
  std::vector<T> out(x.size(), T(0));
  const leaky_plan_request request = RequestFor(device, dtype_of<T>(), x.size(), dy != nullptr, launch);
  leaky_cl_profile profile{};
  const leaky_status status =
      dy == nullptr ? leaky_cl_leaky_relu_forward(device, dtype_of<T>(), x.size(), x.data(),
                                                  out.data(), slope, &request, &profile)
                    : leaky_cl_leaky_relu_backward(device, dtype_of<T>(), x.size(), dy->data(),
                                                   x.data(), out.data(), slope, &request, &profile);
  ASSERT_EQ(status, LEAKY_OK) << leaky_last_error();
  const long bad = FirstMismatch(out.data(), expected.data(), x.size());
  ASSERT_EQ(bad, -1) << "n " << x.size() << ", slope " << slope << ", cores "
                     << profile.tiling.cores_used << ", tile " << profile.tiling.tile_length
                     << ", buffers " << launch.buffers << ", split " << launch.split
                     << (dy ? ", backward" : ", forward") << ": element " << bad << " is "
                     << Hex(out[bad]) << ", the CPU library gives " << Hex(expected[bad]);
}

TEST(OpenCl, OpensAndAgreesOnTheTilingLayout) {
  OPEN_OR_SKIP(device);
  // leaky_cl_open ran the layout probe; say which device this is.
  std::printf("[ device   ] %s, f64 %s\n", leaky_cl_device_name(device.get()),
              leaky_cl_has_f64(device.get()) ? "yes" : "no");
  EXPECT_NE(std::string(leaky_cl_device_name(device.get())), "");
}

template <class T>
void EveryHalfPattern(leaky_cl_device* device) {
  std::vector<T> x(65536), dy(65536);
  for (uint32_t i = 0; i < 65536; ++i) {
    x[i] = T::from_bits(static_cast<uint16_t>(i));
    dy[i] = T::from_bits(static_cast<uint16_t>(i * 40503u));  // every pattern again, shuffled
  }
  const Launch launch{8, LEAKY_SPLIT_EVEN, 4096, 2};
  for (double slope : kSlopes) {
    ExpectSame<T>(device, x, nullptr, slope, launch);
    ExpectSame(device, x, &dy, slope, launch);
  }
}

TEST(OpenCl, EveryFloat16PatternAndSlope) {
  OPEN_OR_SKIP(device);
  EveryHalfPattern<float16>(device.get());
}
TEST(OpenCl, EveryBFloat16PatternAndSlope) {
  OPEN_OR_SKIP(device);
  EveryHalfPattern<bfloat16>(device.get());
}

template <class T>
void RandomAndBoundaries(leaky_cl_device* device) {
  std::vector<T> specials;
  if constexpr (sizeof(T) == 4) {
    for (float v : SpecialFloats()) specials.push_back(v);
  } else {
    for (double v : SpecialDoubles()) specials.push_back(v);
  }
  for (size_t n : {size_t{1}, size_t{7}, size_t{255}, size_t{256}, size_t{257}, size_t{4095},
                   size_t{4097}, size_t{10007}, size_t{65537}}) {
    std::vector<T> x = RandomWithSpecials<T>(n, static_cast<uint32_t>(n));
    std::vector<T> dy = RandomWithSpecials<T>(n, static_cast<uint32_t>(n + 1));
    for (size_t i = 0; i < specials.size() && i < n; ++i) x[(i * 7919) % n] = specials[i];
    for (uint32_t cores : {1u, 3u, 8u}) {
      for (uint32_t buffers : {1u, 2u}) {
        for (uint32_t split : {LEAKY_SPLIT_GRANULE, LEAKY_SPLIT_EVEN, LEAKY_SPLIT_BALANCED}) {
          // A fixed tile, and (granule split) the planner's from local memory.
          for (uint64_t tile : {n > 4096 ? uint64_t{4096} : uint64_t{256}, uint64_t{0}}) {
            if (tile == 0 && split != LEAKY_SPLIT_GRANULE) continue;
            const Launch launch{cores, split, tile, buffers};
            ExpectSame<T>(device, x, nullptr, 0.2, launch);
            ExpectSame(device, x, &dy, -0.5, launch);
            if (::testing::Test::HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

TEST(OpenCl, RandomFloat32WithSpecialsAtBoundaries) {
  OPEN_OR_SKIP(device);
  RandomAndBoundaries<float>(device.get());
}
TEST(OpenCl, RandomFloat64WithSpecialsAtBoundaries) {
  OPEN_OR_SKIP(device);
  if (!leaky_cl_has_f64(device.get())) GTEST_SKIP() << "no cl_khr_fp64 on this device";
  RandomAndBoundaries<double>(device.get());
}

TEST(OpenCl, BadArgumentsAreRefusedBeforeAnythingRuns) {
  OPEN_OR_SKIP(device);
  std::vector<float> x(100, -1.0f), y(100, 7.0f);
  const leaky_plan_request good = RequestFor(device.get(), LEAKY_F32, 100, false, {8, 1, 256, 2});
  auto forward = [&](leaky_dtype dtype, const leaky_plan_request* r, double slope = 0.2) {
    return leaky_cl_leaky_relu_forward(device.get(), dtype, x.size(), x.data(), y.data(), slope, r, nullptr);
  };
  EXPECT_EQ(forward(static_cast<leaky_dtype>(9), &good), LEAKY_ERROR_INVALID_DTYPE);
  EXPECT_EQ(forward(LEAKY_F32, &good, NAN), LEAKY_ERROR_INVALID_PARAMETER);
  // Requests the planner refuses, that do not describe the call, or whose
  // tiles do not fit the device's local memory.
  std::vector<leaky_plan_request> bad(7, good);
  bad[0].max_cores = 0;
  bad[1].split = 5;
  bad[2].buffer_count = 3;
  bad[3].tile_length = uint64_t{1} << 30;
  bad[4].total_length = 99;
  bad[5].streams = 3;
  bad[6].element_bytes = 2;
  for (const leaky_plan_request& r : bad) {
    EXPECT_EQ(forward(LEAKY_F32, &r), LEAKY_ERROR_INVALID_OPTIONS) << leaky_last_error();
    EXPECT_EQ(std::string(leaky_last_error()).find('\n'), std::string::npos);
  }
  EXPECT_EQ(leaky_cl_leaky_relu_backward(device.get(), LEAKY_F32, 100, x.data(), nullptr, y.data(),
                                         0.2, nullptr, nullptr),
            LEAKY_ERROR_NULL_POINTER);
  EXPECT_EQ(leaky_cl_plan_request(nullptr, LEAKY_F32, 100, 2, nullptr), LEAKY_ERROR_NULL_POINTER);
  for (float v : y) ASSERT_EQ(v, 7.0f) << "an output was touched";
  // No request: the device's own plan.
  EXPECT_EQ(forward(LEAKY_F32, nullptr), LEAKY_OK) << leaky_last_error();
  for (float v : y) ASSERT_EQ(v, -0.2f);
  leaky_cl_options unknown{-1, 99};
  leaky_cl_device* none = nullptr;
  EXPECT_EQ(leaky_cl_open(&unknown, &none), LEAKY_ERROR_INVALID_OPTIONS);
  leaky_cl_options missing{1000, 0};
  EXPECT_EQ(leaky_cl_open(&missing, &none), LEAKY_ERROR_INVALID_OPTIONS);
  EXPECT_EQ(none, nullptr);
}

// --- the article's faults, planted into the device kernel and diagnosed

struct Planted {
  int fault;
  uint32_t buffers;
  std::set<std::string> kinds;  // what the diagnosis must say, exactly
};

toolkit::CheckResult RunFault(leaky_cl_device* device, const Planted& p, toolkit::Layout* layout) {
  toolkit::GoldenDescription d;
  d.dtype = LEAKY_F16;
  d.elements = 10007;
  d.shape = {d.elements};
  d.negative_slope = 0.2;
  d.distribution = "hard";
  d.seed = 5;
  const toolkit::GoldenArrays a = toolkit::MakeGolden(d);
  std::vector<uint16_t> x(a.x.begin(), a.x.end()), out(x.size(), 0);
  // One request: the kernel runs it and the diagnosis maps elements with it.
  const leaky_plan_request request =
      RequestFor(device, LEAKY_F16, x.size(), false, {8, LEAKY_SPLIT_EVEN, 256, p.buffers});
  EXPECT_EQ(leaky_cl_leaky_relu_forward(device, LEAKY_F16, x.size(), x.data(), out.data(), 0.2,
                                        &request, nullptr),
            LEAKY_OK)
      << leaky_last_error();
  *layout = toolkit::LayoutOf(request);
  toolkit::CheckInput in;
  in.dtype = LEAKY_F16;
  in.negative_slope = 0.2;
  auto array = [&](const std::vector<uint64_t>& bits) {
    return toolkit::DecodeArray("x", toolkit::ToBytes(LEAKY_F16, bits), LEAKY_F16, bits.size());
  };
  in.input = array(a.x);
  in.golden = array(a.golden);
  in.output = array(std::vector<uint64_t>(out.begin(), out.end()));
  in.plan = *layout;
  return toolkit::Diagnose(in);
}

TEST(OpenCl, EveryPlantedFaultIsNamed) {
  const Planted faults[] = {
      {LEAKY_CL_FAULT_COMPUTE_BEFORE_WAIT, 2, {"compute_before_copy"}},
      {LEAKY_CL_FAULT_REMAINDER_DROPPED, 2, {"not_written"}},
      {LEAKY_CL_FAULT_SLOPE_LAYOUT, 2, {"slope_mismatch"}},
      {LEAKY_CL_FAULT_HALF_FLUSH, 2, {"f16_underflow"}},
      {LEAKY_CL_FAULT_SINGLE_BUFFER, 1, {"overwritten_tile"}},
      {LEAKY_CL_FAULT_SELECT_MISSING, 2, {"select_missing"}},
      {LEAKY_CL_FAULT_CORE_OFFSET, 2, {"misplaced"}},
  };
  for (const Planted& p : faults) {
    OPEN_OR_SKIP(device, p.fault);
    toolkit::Layout layout;
    const toolkit::CheckResult r = RunFault(device.get(), p, &layout);
    std::set<std::string> kinds;
    std::string messages;
    for (const toolkit::Finding& f : r.findings) {
      kinds.insert(f.kind);
      messages += "\n  " + f.kind + ": " + f.message;
    }
    EXPECT_FALSE(r.pass) << "fault " << p.fault;
    EXPECT_EQ(kinds, p.kinds) << "fault " << p.fault << messages;
    std::printf("[ fault %d  ]%s\n", p.fault, messages.c_str());
    for (const toolkit::Finding& f : r.findings) {
      if (f.kind == "not_written") {  // the even split's n % cores, left by core 7
        EXPECT_EQ(f.details["region"], "remainder");
        EXPECT_EQ(f.details["core"].get<uint32_t>(), 7u);
        EXPECT_EQ(f.details["first"].get<uint64_t>(), 8u * (10007 / 8));
      }
      if (f.kind == "compute_before_copy") {  // tile i holds tile i - 2; the first two zeros
        EXPECT_EQ(f.details["tiles_apart"].get<int64_t>(), -2);
        EXPECT_EQ(f.details["unwritten"]["region"], "first_tiles");
        EXPECT_EQ(f.details["unwritten"]["tiles_per_core"].get<uint64_t>(), 2u);
      }
      if (f.kind == "overwritten_tile") EXPECT_EQ(f.details["tiles_apart"].get<int64_t>(), 1);
      if (f.kind == "misplaced") {  // each core's first copy-in 16 elements early
        EXPECT_EQ(f.details["shift"].get<int64_t>(), -16);
      }
    }
  }
}

}  // namespace
}  // namespace leaky::test

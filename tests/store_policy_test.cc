// The automatic store policy each op's call resolves to, read from the plan
// the call ran with: above the streaming threshold the light loops stream
// their stores (non-temporal), the compute-bound ones (ELU's exponentials,
// the Philox rounds of RReLU in training and of dropout's forward) and in-place
// calls keep them cached, and an explicit stream_stores stands either way
// (docs/design.md, "Automatic non-temporal stores").
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "leaky/leaky.h"
#include "leaky/tiling.h"
#include "plan/cpu_plan.h"

namespace leaky::test {
namespace {

// f32 elements whose unary pass moves twice the library's streaming
// threshold (read from its own request: 16 MiB now, so 4 Mi elements; 0
// if the request fails, which fails every case below).
size_t StreamingLength() {
  leaky_plan_request request{};
  if (leaky_cpu_plan_request(LEAKY_F32, 1, 2, nullptr, &request) != LEAKY_OK) return 0;
  return static_cast<size_t>(request.stream_threshold_bytes / sizeof(float));
}
const size_t kN = StreamingLength();
constexpr size_t kChannels = 64;

struct Arrays {
  std::vector<float> x = std::vector<float>(kN, -1.5f), dy = std::vector<float>(kN, 1.0f),
                     y = std::vector<float>(kN), bias = std::vector<float>(kChannels, 0.25f);
  std::vector<uint8_t> mask = std::vector<uint8_t>(kN / 8);
};

struct Case {
  std::string name;
  int automatic;  // the plan's stream_stores under stream_stores = -1
  std::function<leaky_status(Arrays&, const leaky_options*)> call;
};

const leaky_bias_act_params kBiasAct{LEAKY_ACT_LRELU, 0.2, 1.4142135623730951, -1.0};
const leaky_dropout_params kDropout{0.1, 7, 0};
const leaky_rrelu_params kTraining{0.125, 1.0 / 3, 1, 7, 0};
const leaky_rrelu_params kEvaluation{0.125, 1.0 / 3, 0, 7, 0};

std::vector<Case> Cases() {
  return {
      {"leaky_relu_forward", 1,
       [](Arrays& a, auto o) {
         return leaky_relu_forward(LEAKY_F32, kN, a.x.data(), a.y.data(), 0.01, o);
       }},
      {"leaky_relu_forward in place", 0,
       [](Arrays& a, auto o) {
         return leaky_relu_forward(LEAKY_F32, kN, a.y.data(), a.y.data(), 0.01, o);
       }},
      {"leaky_relu_backward", 1,
       [](Arrays& a, auto o) {
         return leaky_relu_backward(LEAKY_F32, kN, a.dy.data(), a.x.data(), 0, a.y.data(), 0.01, o);
       }},
      {"plain_relu_forward", 1,
       [](Arrays& a, auto o) {
         return leaky_plain_relu_forward(LEAKY_F32, kN, a.x.data(), a.y.data(), o);
       }},
      {"elu_forward", 0,
       [](Arrays& a, auto o) {
         return leaky_elu_forward(LEAKY_F32, kN, a.x.data(), a.y.data(), 1.0, 1.0, 1.0, o);
       }},
      {"elu_backward from the input", 0,
       [](Arrays& a, auto o) {
         return leaky_elu_backward(LEAKY_F32, kN, a.dy.data(), a.x.data(), 0, a.y.data(), 1.0, 1.0,
                                   1.0, o);
       }},
      {"elu_backward from the result", 1,
       [](Arrays& a, auto o) {
         return leaky_elu_backward(LEAKY_F32, kN, a.dy.data(), a.x.data(), 1, a.y.data(), 1.0, 1.0,
                                   1.0, o);
       }},
      {"rrelu_forward in training", 0,
       [](Arrays& a, auto o) {
         return leaky_rrelu_forward(LEAKY_F32, kN, a.x.data(), a.y.data(), nullptr, &kTraining, o);
       }},
      {"rrelu_backward in training", 0,
       [](Arrays& a, auto o) {
         return leaky_rrelu_backward(LEAKY_F32, kN, a.dy.data(), a.x.data(), a.y.data(), &kTraining,
                                     o);
       }},
      {"rrelu_forward in evaluation", 1,
       [](Arrays& a, auto o) {
         return leaky_rrelu_forward(LEAKY_F32, kN, a.x.data(), a.y.data(), nullptr, &kEvaluation,
                                    o);
       }},
      {"rrelu_backward in evaluation", 1,
       [](Arrays& a, auto o) {
         return leaky_rrelu_backward(LEAKY_F32, kN, a.dy.data(), a.x.data(), a.y.data(),
                                     &kEvaluation, o);
       }},
      {"prelu_forward", 1,
       [](Arrays& a, auto o) {
         return leaky_prelu_forward(LEAKY_F32, 1, kChannels, kN / kChannels, a.x.data(),
                                    a.bias.data(), a.y.data(), o);
       }},
      {"bias_act_forward", 1,
       [](Arrays& a, auto o) {
         return leaky_bias_act_forward(LEAKY_F32, 1, kChannels, kN / kChannels, a.x.data(),
                                       a.bias.data(), a.y.data(), &kBiasAct, o);
       }},
      {"bias_act_dropout_forward", 0,
       [](Arrays& a, auto o) {
         return leaky_bias_act_dropout_forward(LEAKY_F32, 1, kChannels, kN / kChannels, a.x.data(),
                                               a.bias.data(), a.y.data(), a.mask.data(), &kBiasAct,
                                               &kDropout, o);
       }},
      {"bias_act_dropout_backward", 1,
       [](Arrays& a, auto o) {
         return leaky_bias_act_dropout_backward(LEAKY_F32, 1, kChannels, kN / kChannels,
                                                a.dy.data(), a.x.data(), a.bias.data(),
                                                a.mask.data(), a.y.data(), nullptr, &kBiasAct, 0.1,
                                                o);
       }},
  };
}

// The plan of this thread's last call, after a call that must succeed. A
// small call first leaves a plan of another length behind, so a call that
// ran without planning shows as one.
int StreamStoresOf(const Case& c, Arrays& arrays, int stream_stores) {
  float small[8] = {};
  EXPECT_EQ(leaky_relu_forward(LEAKY_F32, 8, small, small, 0.01, nullptr), LEAKY_OK);
  const leaky_options options{1, stream_stores, nullptr};
  EXPECT_EQ(c.call(arrays, &options), LEAKY_OK) << c.name << ": " << leaky_last_error();
  leaky_tiling tiling{};
  EXPECT_TRUE(internal::LastPlanForTesting(&tiling)) << c.name;
  EXPECT_EQ(tiling.total_length, kN) << c.name << ": the plan is not this call's";
  return static_cast<int>(tiling.stream_stores);
}

TEST(StorePolicy, EachOpResolvesTheAutomaticPolicyAndKeepsAnExplicitOne) {
  Arrays arrays;
  for (const Case& c : Cases()) {
    EXPECT_EQ(StreamStoresOf(c, arrays, -1), c.automatic) << c.name << ", automatic";
    EXPECT_EQ(StreamStoresOf(c, arrays, 1), 1) << c.name << ", stream_stores = 1";
    EXPECT_EQ(StreamStoresOf(c, arrays, 0), 0) << c.name << ", stream_stores = 0";
  }
}

// Below the threshold a light op does not stream automatically either.
TEST(StorePolicy, SmallCallsStayCached) {
  std::vector<float> x(4096, -1.0f), y(4096);
  const leaky_options automatic{1, -1, nullptr};
  ASSERT_EQ(leaky_relu_forward(LEAKY_F32, x.size(), x.data(), y.data(), 0.01, &automatic), LEAKY_OK);
  leaky_tiling tiling{};
  ASSERT_TRUE(internal::LastPlanForTesting(&tiling));
  EXPECT_EQ(tiling.stream_stores, 0);
}

}  // namespace
}  // namespace leaky::test

// Every row of leaky/family.h has its C entry point (<c_name>_<direction>)
// and its C++ template (leaky::<cpp_name>_<direction>): taking their addresses
// fails to compile when a row lacks one. The other layers are checked
// against the same list by python/tests/test_family_layers.py.
#include "leaky/family.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>

#include "leaky/leaky.h"
#include "leaky/leaky.hpp"

namespace {

struct Row {
  std::string_view op, direction, c_name, inputs, outputs, scalars, exactness;
  int random;
  bool has_c, has_cpp;
};

#define LEAKY_ROW(op, direction, c_name, cpp_name, inputs, outputs, scalars, exactness, random) \
  Row{#op,                                                                                      \
      #direction,                                                                               \
      #c_name "_" #direction,                                                                   \
      inputs,                                                                                   \
      outputs,                                                                                  \
      scalars,                                                                                  \
      exactness,                                                                                \
      random,                                                                                   \
      &::c_name##_##direction != nullptr,                                                       \
      &::leaky::cpp_name##_##direction<float> != nullptr},
const Row kRows[] = {LEAKY_FAMILY(LEAKY_ROW)};  // (not constexpr: ASan's addresses are not)
#undef LEAKY_ROW

TEST(Family, EveryRowHasItsCAndCppEntryPoints) {
  for (const Row& row : kRows) {
    EXPECT_TRUE(row.has_c) << row.c_name;
    EXPECT_TRUE(row.has_cpp) << row.c_name;
  }
}

TEST(Family, EachOpHasOneForwardAndOneBackwardRow) {
  std::set<std::string> forward, backward;
  for (const Row& row : kRows) {
    ASSERT_TRUE(row.direction == "forward" || row.direction == "backward") << row.op;
    auto& seen = row.direction == "forward" ? forward : backward;
    EXPECT_TRUE(seen.insert(std::string(row.op)).second) << row.op << " " << row.direction;
    EXPECT_FALSE(row.inputs.empty()) << row.op;
    EXPECT_FALSE(row.outputs.empty()) << row.op;
    EXPECT_TRUE(row.exactness == "exact" ||
                row.exactness.find("reference.hpp") != std::string_view::npos)
        << row.op;
  }
  EXPECT_EQ(forward, backward);
  EXPECT_EQ(forward.size(), 7u);
}

}  // namespace

// Every row of leaky/family.h has its C entry point (<c_name>_<direction>)
// and its C++ template (leaky::<cpp_name>_<direction>): taking their addresses
// fails to compile when a row lacks one. The other layers are checked
// against the same list by python/tests/test_family_layers.py.
#include "leaky/family.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>
#include <type_traits>

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

// Every row's C entry point, called with every pointer null (sizes 8,
// scalars valid), refuses the call by name: one generated case per row, so
// a row added to the list is checked the day it is added.
template <class T>
T Argument() {
  if constexpr (std::is_same_v<T, leaky_dtype>) {
    return LEAKY_F32;
  } else if constexpr (std::is_pointer_v<T>) {
    return nullptr;
  } else if constexpr (std::is_floating_point_v<T>) {
    return T(0.2);
  } else {
    return T(8);
  }
}
template <class... A>
leaky_status CallWithNulls(leaky_status (*f)(A...)) {
  return f(Argument<A>()...);
}

struct Refusal {
  std::string_view c_name;
  leaky_status status;
  std::string error;
};

#define LEAKY_REFUSAL(op, direction, c_name, cpp_name, inputs, outputs, scalars, exactness, random) \
  [] {                                                                                             \
    const leaky_status status = CallWithNulls(&::c_name##_##direction);                            \
    return Refusal{#c_name "_" #direction, status, leaky_last_error()};                            \
  },

TEST(Family, EveryRowRefusesNullOperandsByName) {
  using Call = Refusal (*)();
  const Call calls[] = {LEAKY_FAMILY(LEAKY_REFUSAL)};
  ASSERT_EQ(std::size(calls), std::size(kRows));
  for (const Call call : calls) {
    const Refusal r = call();
    EXPECT_EQ(r.status, LEAKY_ERROR_NULL_POINTER) << r.c_name << ": " << r.error;
    EXPECT_EQ(r.error.rfind(std::string(r.c_name) + ": ", 0), 0u) << r.c_name << ": " << r.error;
  }
}
#undef LEAKY_REFUSAL

}  // namespace

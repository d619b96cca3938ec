// XNNPACK's and PyTorch's quantized (qu8) LeakyReLU against the exact
// result (tests/eight_bit_reference.h) over every input byte, and the table
// of docs/eight_bit.md that reports it: the test recomputes each row and
// fails when the document says something else (it prints the table as
// measured, ready to paste).
//
// The peers take float scales and a float slope, so every case uses
// parameters that are floats: both sides then compute from the same real
// numbers and a difference is the peer's rounding, not its input's.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>
#include <xnnpack.h>

#include <charconv>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "eight_bit_reference.h"
#include "leaky/eight_bit.h"

namespace leaky::test::eight_bit {
namespace {

struct PeerCase {
  float input_scale;
  int input_zero_point;
  float output_scale;
  int output_zero_point;
  float slope;
};

// Typical scales and slopes, non-powers of two, the negative side only,
// parameters some peer refuses (slope 0, negative, above 1; a scale ratio
// of 1000), and exact ties.
const PeerCase kCases[] = {
    {0.1f, 128, 0.1f, 128, 0.01f},
    {0.1f, 128, 0.1f, 128, 0.2f},
    {0.05f, 128, 0.025f, 64, 0.1f},
    {1.0f / 3.0f, 100, 0.2f, 30, 1.0f / 3.0f},
    {0.0078125f, 0, 0.0078125f, 0, 0.01f},
    {0.0033f, 200, 0.01f, 50, 0.25f},
    {1.0f, 128, 0.5f, 128, 1.0f},
    {0.017f, 17, 0.043f, 211, 0.3f},
    {0.1f, 255, 0.05f, 255, 0.01f},
    {0.02f, 128, 0.02f, 128, 5.0f},
    {0.1f, 128, 0.1f, 128, 0.0f},
    {0.1f, 128, 0.1f, 128, -0.5f},
    {1.0f, 128, 0.001f, 128, 0.1f},
    // Exact ties of the real result (a scale ratio of 1/2 or a slope of
    // 1/2 or 1/4): round-half-even decides them, a float computation that
    // misses the tie by an ulp does not.
    {0.1f, 128, 0.1f, 128, 0.5f},
    {0.2f, 128, 0.4f, 128, 1.0f},
    {0.3f, 100, 0.6f, 100, 0.25f},
    {0.0117647f, 0, 0.0235294f, 0, 1.0f},
    {0.7f, 200, 1.4f, 60, 0.5f},
};

std::string Shortest(float f) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), f);
  return std::string(buffer, result.ptr);
}

std::string Label(const PeerCase& c) {
  return "s_in " + Shortest(c.input_scale) + ", zp_in " + std::to_string(c.input_zero_point) +
         ", s_out " + Shortest(c.output_scale) + ", zp_out " + std::to_string(c.output_zero_point) +
         ", slope " + Shortest(c.slope);
}

std::array<uint8_t, 256> Exact(const PeerCase& c) {
  const Quantized q{
      false, c.input_scale, c.input_zero_point, c.output_scale, c.output_zero_point, 0, 255};
  const Rational slope = eight_bit::Exact(c.slope);
  return QuantizedTable(q, [&](const Rational& v) { return LeakyReluReal(v, slope); }).expected;
}

// "k / d": k of the 256 inputs differ, by at most d steps.
std::string Compare(const std::array<uint8_t, 256>& got, const std::array<uint8_t, 256>& exact) {
  int differing = 0, largest = 0;
  for (int i = 0; i < 256; ++i) {
    const int d = std::abs(int{got[i]} - int{exact[i]});
    differing += d != 0;
    largest = std::max(largest, d);
  }
  return std::to_string(differing) + " / " + std::to_string(largest);
}

// This library, for comparison (its own tests: eight_bit_test).
std::string RunLeaky(const PeerCase& c, const std::array<uint8_t, 256>& exact) {
  leaky_q8_params p = leaky_q8_params_init(LEAKY_QU8);
  p.input = {c.input_scale, c.input_zero_point};
  p.output = {c.output_scale, c.output_zero_point};
  std::array<uint8_t, 256> input{}, output{};
  for (int i = 0; i < 256; ++i) input[i] = static_cast<uint8_t>(i);
  const leaky_status s =
      leaky_q8_leaky_relu_forward(&p, 256, input.data(), output.data(), c.slope, nullptr);
  if (s != LEAKY_OK) return std::string("refused (") + leaky_status_string(s) + ")";
  return Compare(output, exact);
}

// XNNPACK's operator, or why it would not build one.
std::string RunXnnpack(const PeerCase& c, const std::array<uint8_t, 256>& exact) {
  xnn_operator_t op = nullptr;
  const xnn_status created = xnn_create_leaky_relu_nc_qu8(
      1, 1, 1, c.slope, static_cast<uint8_t>(c.input_zero_point), c.input_scale,
      static_cast<uint8_t>(c.output_zero_point), c.output_scale, 0, 255, 0, &op);
  if (created != xnn_status_success) {
    return created == xnn_status_unsupported_parameter ? "refused (unsupported)"
                                                       : "refused (invalid)";
  }
  std::array<uint8_t, 256> input{}, output{};
  for (int i = 0; i < 256; ++i) input[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(xnn_status_success,
            xnn_setup_leaky_relu_nc_qu8(op, 256, input.data(), output.data(), nullptr));
  EXPECT_EQ(xnn_status_success, xnn_run_operator(op, nullptr));
  xnn_delete_operator(op);
  return Compare(output, exact);
}

// PyTorch's quantized::leaky_relu (explicit output scale and zero point) on
// a quint8 tensor of the 256 bytes, under the given engine.
std::string RunPyTorch(const PeerCase& c, at::QEngine engine,
                       const std::array<uint8_t, 256>& exact) {
  at::globalContext().setQEngine(engine);
  at::Tensor x = at::_empty_affine_quantized({256}, at::device(at::kCPU).dtype(at::kQUInt8),
                                             c.input_scale, c.input_zero_point);
  auto* data = reinterpret_cast<uint8_t*>(x.data_ptr<c10::quint8>());
  for (int i = 0; i < 256; ++i) data[i] = static_cast<uint8_t>(i);
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("quantized::leaky_relu", "")
          .typed<at::Tensor(at::Tensor, const at::Scalar&, bool, double, int64_t)>();
  const at::Tensor y = op.call(x, at::Scalar(static_cast<double>(c.slope)), false,
                               static_cast<double>(c.output_scale), c.output_zero_point);
  std::array<uint8_t, 256> output{};
  const auto* out = reinterpret_cast<const uint8_t*>(y.data_ptr<c10::quint8>());
  std::copy(out, out + 256, output.begin());
  return Compare(output, exact);
}

bool EngineAvailable(at::QEngine engine) {
  const auto& engines = at::globalContext().supportedQEngines();
  return std::find(engines.begin(), engines.end(), engine) != engines.end();
}

std::vector<std::string> Cells(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream stream(line);
  std::string cell;
  std::getline(stream, cell, '|');  // before the first bar
  while (std::getline(stream, cell, '|')) {
    const auto first = cell.find_first_not_of(" `");
    const auto last = cell.find_last_not_of(" `");
    cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
  }
  if (!cells.empty() && cells.back().empty()) cells.pop_back();  // after the last bar
  return cells;
}

// The rows of docs/eight_bit.md's "Peers against the exact result" table,
// keyed by their parameters.
std::map<std::string, std::vector<std::string>> DocumentedTable(std::string* error) {
  std::ifstream file(std::string(LEAKY_SOURCE_DIR) + "/docs/eight_bit.md");
  if (!file) {
    *error = "cannot read docs/eight_bit.md";
    return {};
  }
  std::map<std::string, std::vector<std::string>> rows;
  std::string line;
  bool in_section = false;
  int table_lines = 0;
  while (std::getline(file, line)) {
    if (line.rfind("## ", 0) == 0) {
      if (in_section) break;
      in_section = line == "## Peers against the exact result";
      continue;
    }
    if (!in_section || line.rfind("|", 0) != 0) continue;
    if (++table_lines <= 2) continue;  // the header and its rule
    std::vector<std::string> cells = Cells(line);
    if (cells.empty()) continue;
    const std::string key = cells.front();
    cells.erase(cells.begin());
    rows[key] = cells;
  }
  if (!in_section && rows.empty()) *error = "no section \"## Peers against the exact result\"";
  return rows;
}

TEST(EightBitPeers, LeakyReluQu8AgainstExactAsDocumented) {
  if (xnn_initialize(nullptr) != xnn_status_success) {
    GTEST_SKIP() << "XNNPACK does not initialize on this CPU: the table cannot be measured";
  }
  if (!EngineAvailable(at::QEngine::QNNPACK) || !EngineAvailable(at::QEngine::ONEDNN)) {
    GTEST_SKIP() << "this PyTorch lacks the qnnpack or the onednn quantized engine";
  }
  const at::QEngine saved_engine = at::globalContext().qEngine();

  std::ostringstream measured;
  measured << "| parameters | leaky | XNNPACK | PyTorch qnnpack | PyTorch onednn |\n"
           << "| --- | --- | --- | --- | --- |\n";
  std::vector<std::pair<std::string, std::vector<std::string>>> rows;
  for (const PeerCase& c : kCases) {
    const std::array<uint8_t, 256> exact = Exact(c);
    std::vector<std::string> cells = {RunLeaky(c, exact), RunXnnpack(c, exact),
                                      RunPyTorch(c, at::QEngine::QNNPACK, exact),
                                      RunPyTorch(c, at::QEngine::ONEDNN, exact)};
    measured << "| `" << Label(c) << "` |";
    for (const std::string& cell : cells) measured << " " << cell << " |";
    measured << "\n";
    rows.emplace_back(Label(c), std::move(cells));
  }
  at::globalContext().setQEngine(saved_engine);
  std::cout << "Measured (differing inputs of 256 / largest difference in steps):\n"
            << measured.str();

  std::string error;
  const auto documented = DocumentedTable(&error);
  ASSERT_TRUE(error.empty()) << error << "\nThe table as measured:\n" << measured.str();
  EXPECT_EQ(documented.size(), rows.size())
      << "docs/eight_bit.md's table has other rows than the test's cases\nThe table as measured:\n"
      << measured.str();
  for (const auto& [label, cells] : rows) {
    const auto it = documented.find(label);
    if (it == documented.end()) {
      ADD_FAILURE() << "docs/eight_bit.md has no row for `" << label << "`";
      continue;
    }
    EXPECT_EQ(it->second, cells) << "docs/eight_bit.md's row `" << label
                                 << "` differs from the measurement";
  }
  if (HasFailure()) std::cout << "Paste into docs/eight_bit.md:\n" << measured.str();
}

}  // namespace
}  // namespace leaky::test::eight_bit

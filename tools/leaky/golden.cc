// `leaky golden`: input and golden output files, bit-exact from the
// library's scalar reference (8-bit data: its exact 8-bit path), for a
// developer's own device kernel.
#include <bit>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <stdexcept>

#include "cli_checks.h"
#include "commands.h"
#include "eight_bit_data.h"
#include "eight_bit_flags.h"
#include "family_golden.h"
#include "family_io.h"
#include "golden_data.h"
#include "golden_io.h"
#include "layout.h"
#include "leaky/reference.hpp"
#include "plan_flags.h"

namespace leaky::cli {
using namespace leaky::toolkit;  // the toolkit library the commands are made of
namespace {

struct GoldenSettings {
  uint64_t elements = 0;
  std::vector<uint64_t> shape;
  std::string dtype = "f16";
  double slope = 0.2;
  std::string op = "forward";
  std::string distribution = "hard";
  uint64_t seed = 1;
  std::string out = "golden";
  bool record_plan = false;
  PlanOptions plan;
  EightBitFlags eight_bit;
  bool dist_given = false;
  // A family op (leaky/family.h besides LeakyReLU): --op names it.
  std::string direction = "forward";
  uint64_t channels = 4;
  std::vector<std::string> params;  // NAME=VALUE
  const CLI::App* command = nullptr;  // which options were given
  bool op_by_family_name = false;     // --op leaky_relu: --direction names LeakyReLU's
};

// An option that would do nothing for the op asked is refused in one line,
// not ignored (--param on LeakyReLU, --slope or the 8-bit scales on ELU).
void RefuseIgnoredOptions(const GoldenSettings& s) {
  const auto given = [&](const char* name) { return s.command->count(name) > 0; };
  const bool leaky_relu = s.op == "forward" || s.op == "backward";
  if (leaky_relu) {
    for (const char* name : {"--param", "--channels"}) {
      if (given(name)) {
        throw UsageError(std::string(name) + " is for the family's other ops (--op relu, elu, "
                         "prelu, ...); LeakyReLU's scalar is --slope");
      }
    }
    if (given("--direction") && !s.op_by_family_name) {
      throw UsageError("--direction goes with a family op (--op leaky_relu --direction " +
                       s.direction + "); --op " + s.op + " names LeakyReLU's direction itself");
    }
    return;
  }
  if (given("--slope")) {
    throw UsageError("--slope is LeakyReLU's; --op " + s.op +
                     " takes its scalars as --param NAME=VALUE");
  }
  if (const char* flag = GivenEightBitFlag(s.eight_bit)) {
    throw UsageError(std::string(flag) + " is for LeakyReLU's 8-bit data; --op " + s.op +
                     " takes f32, f64, f16 or bf16");
  }
  if (given("--channels") && !IsChannelOp(s.op)) {
    throw UsageError("--channels is PReLU's and bias_act's; --op " + s.op + " is elementwise");
  }
}

// --param NAME=VALUE pairs as JSON: numbers, true/false and null as such,
// anything else a string (act=lrelu).
nlohmann::json ParseParams(const std::vector<std::string>& pairs) {
  nlohmann::json j = nlohmann::json::object();
  for (const std::string& pair : pairs) {
    const size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--param " + pair + ": expected NAME=VALUE");
    const std::string value = pair.substr(eq + 1);
    nlohmann::json v = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
    j[pair.substr(0, eq)] = v.is_discarded() || v.is_structured() ? nlohmann::json(value) : v;
  }
  return j;
}

// What the 8-bit parameters are, for the line `leaky golden` prints.
std::string EightBitSummary(const leaky_q8_params& q) {
  if (!IsQuantized(q.type)) return std::string("saturate ") + (q.saturate ? "1" : "0");
  auto number = [](double v) {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", v);
    return std::string(text);
  };
  return "input scale " + number(q.input.scale) + " zero point " +
         std::to_string(q.input.zero_point) + ", output scale " + number(q.output.scale) +
         " zero point " + std::to_string(q.output.zero_point) + ", clamp " +
         std::to_string(q.output_min) + ".." + std::to_string(q.output_max);
}

// The plan options golden.json records (`--plan`), refused first when the
// planner refuses them: (the line printed, a warning when a flag had no
// effect).
std::pair<std::string, std::string> RecordPlan(const GoldenSettings& s, bool eight_bit,
                                               leaky_dtype dtype, uint64_t elements,
                                               nlohmann::json* recorded) {
  std::string plan_line, plan_warning;
  if (s.record_plan) {
    PlanOptions plan = s.plan;
    plan.op = s.op == "forward" || s.op == "backward" ? s.op : s.direction;
    const Layout layout =  // refuses a bad plan first
        eight_bit ? MakeByteLayout(plan, elements) : MakeLayout(plan, dtype, elements);
    *recorded = plan.ToJson();
    uint32_t used = 0;
    for (uint64_t length : layout.core_length) used += length > 0;
    plan_line = "plan recorded: " + std::to_string(used) + " core" + (used == 1 ? "" : "s") +
                " used, " + layout.split + " split, tiles of " +
                std::to_string(layout.tile_length) + " elements, " +
                std::to_string(layout.buffers) + " buffer" + (layout.buffers == 1 ? "" : "s") +
                " (preset " + plan.preset + ")";
    // A flag the planner overrode: say so, rather than record another plan
    // than the one asked for in silence.
    if (plan.cores != 0 && used != plan.cores) {
      plan_warning = "--cores " + std::to_string(plan.cores) + " had no effect: the " +
                     plan.preset + " preset's " + layout.split + " split uses " +
                     std::to_string(used) + " for " + std::to_string(elements) +
                     " elements (--preset npu --split even gives the article's split)";
    } else if (plan.tile_elems != 0 && layout.tile_length != plan.tile_elems) {
      plan_warning = "--tile-elems " + std::to_string(plan.tile_elems) + " had no effect: tiles "
                     "are " + std::to_string(layout.tile_length) + " elements";
    }
  }
  return {plan_line, plan_warning};
}

// `leaky golden --op prelu|elu|...`: a family op's inputs and golden
// outputs (family_io.h's files).
int RunFamilyGolden(const GoldenSettings& s) {
  if (s.dtype != "f32" && s.dtype != "f64" && s.dtype != "f16" && s.dtype != "bf16") {
    throw UsageError("--dtype " + s.dtype + " is LeakyReLU's only; --op " + s.op +
                     " takes f32, f64, f16 or bf16");
  }
  if (!s.shape.empty())
    throw UsageError("--shape is LeakyReLU's; --op " + s.op + " takes --elems and --channels");
  FamilyDescription d;
  d.op = s.op;
  d.backward = s.direction == "backward";
  d.dtype = ParseDtype(s.dtype);
  d.elements = s.elements;
  d.channels = s.channels;
  d.distribution = s.dist_given ? s.distribution : FamilyDefaultDistribution(d.op, d.backward);
  d.seed = s.seed;
  d.scalars = ParseParams(s.params);
  nlohmann::ordered_json scalars;
  FamilyProblem p;
  try {
    p = MakeFamilyProblem(d, &scalars);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  nlohmann::json plan;
  const auto [plan_line, plan_warning] = RecordPlan(s, false, p.dtype, p.elements(), &plan);
  WriteFamilyGolden(s.out, p, d, scalars, plan);
  std::string files;
  for (const Operand& o : p.inputs) files += (files.empty() ? "" : ", ") + o.name + ".bin";
  for (const Operand& o : p.golden) files += ", golden_" + o.name + ".bin";
  std::printf(
      "wrote %s: %s %s, %llu %s elements (outer %llu, channels %llu, inner %llu), distribution %s; "
      "scalars %s; files %s\n",
      s.out.c_str(), p.op.c_str(), s.direction.c_str(),
      static_cast<unsigned long long>(p.elements()), s.dtype.c_str(),
      static_cast<unsigned long long>(p.outer), static_cast<unsigned long long>(p.channels),
      static_cast<unsigned long long>(p.inner), d.distribution.c_str(), scalars.dump().c_str(),
      files.c_str());
  if (!plan_line.empty()) std::printf("%s\n", plan_line.c_str());
  if (!plan_warning.empty())
    std::fprintf(stderr, "leaky golden: warning: %s\n", plan_warning.c_str());
  return 0;
}

int RunGolden(const GoldenSettings& s) {
  RefuseIgnoredOptions(s);
  if (s.op != "forward" && s.op != "backward") return RunFamilyGolden(s);
  GoldenDescription d;
  d.op = s.op == "backward" ? "leaky_relu_backward" : "leaky_relu_forward";
  d.eight_bit = EightBitParams(s.dtype, s.eight_bit, s.op, s.dist_given);
  if (!d.eight_bit) d.dtype = ParseDtype(s.dtype);
  d.shape = s.shape.empty() ? std::vector<uint64_t>{s.elements} : s.shape;
  d.elements = 1;
  for (uint64_t extent : d.shape) {
    // Each extent is at most 2^32 (checked when parsed), so the product
    // cannot wrap before it is seen to pass the limit.
    d.elements *= extent;
    if (d.elements > kMaxGoldenElements) {
      throw UsageError("--shape holds more than " + std::to_string(kMaxGoldenElements) +
                       " elements");
    }
  }
  d.negative_slope = s.slope;
  d.distribution = d.eight_bit ? "all_bytes" : s.distribution;
  d.seed = s.seed;
  const auto [plan_line, plan_warning] =
      RecordPlan(s, d.eight_bit.has_value(), d.dtype, d.elements, &d.plan);
  const GoldenArrays a = MakeGolden(d);
  const std::filesystem::path dir(s.out);
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw GoldenError("cannot create " + dir.string() + ": " + error.message());
  auto write = [&](const char* name, const std::vector<uint64_t>& bits) {
    const std::vector<uint8_t> bytes = ToBytes(ElementBytes(d), bits);
    WriteFile((dir / name).string(), bytes.data(), bytes.size());
  };
  write("input.bin", a.x);
  if (d.op == "leaky_relu_backward") {
    GoldenDescription forward = d;
    forward.op = "leaky_relu_forward";
    write("golden.bin", ReferenceOutput(forward, a.x, {}, d.negative_slope));
    write("dy.bin", a.dy);
    write("golden_dx.bin", a.golden);
  } else {
    write("golden.bin", a.golden);
  }
  const std::string description = DescriptionToJson(d);
  WriteFile((dir / "golden.json").string(), description.data(), description.size());
  std::printf("wrote %s: %llu %s elements, %s, slope %g, %s\n", dir.c_str(),
              static_cast<unsigned long long>(d.elements), s.dtype.c_str(), d.op.c_str(), s.slope,
              d.eight_bit ? ("every byte value, shuffled; " + EightBitSummary(*d.eight_bit)).c_str()
                          : ("distribution " + s.distribution).c_str());
  if (!plan_line.empty()) std::printf("%s\n", plan_line.c_str());
  if (!plan_warning.empty()) std::fprintf(stderr, "leaky golden: warning: %s\n", plan_warning.c_str());
  return 0;
}

}  // namespace

void AddGoldenCommand(CLI::App& app, std::function<int()>& run) {
  auto s = std::make_shared<GoldenSettings>();
  auto* command = app.add_subcommand("golden", "Write input and bit-exact golden files");
  auto* elements = WholeNumber(command->add_option("--elems", s->elements,
                                                   "Number of elements (default 10007: a prime, "
                                                   "so it divides by no core count or vector "
                                                   "width)"),
                               uint64_t{1}, kMaxGoldenElements);
  WholeNumber(command->add_option("--shape", s->shape, "Shape, e.g. --shape 8,3,37")
                  ->delimiter(',')
                  ->excludes(elements),
              uint64_t{1}, kMaxGoldenElements);
  command->add_option("--dtype", s->dtype,
                      "f32, f64, f16, bf16, or 8-bit (leaky/eight_bit.h): qu8, qs8, fp8_e4m3, "
                      "fp8_e5m2, whose input is every byte value, shuffled by --seed")
      ->check(CLI::IsMember({"f32", "f64", "f16", "bf16", "qu8", "qs8", "fp8_e4m3", "fp8_e5m2"}))
      ->capture_default_str();
  FiniteNumber(command->add_option("--slope", s->slope, "negative_slope")->capture_default_str());
  std::vector<std::string> ops = {"forward", "backward"};
  for (const FamilyRow& row : FamilyRows()) {
    if (!row.backward) ops.push_back(row.op);
  }
  command
      ->add_option("--op", s->op,
                   "LeakyReLU's forward or backward, or an op of leaky/family.h (relu, elu, "
                   "prelu, rrelu, bias_act, bias_act_dropout; leaky_relu is LeakyReLU's) with "
                   "--direction")
      ->check(CLI::IsMember(ops))
      ->capture_default_str();
  command->add_option("--direction", s->direction, "A family op's direction")
      ->check(CLI::IsMember({"forward", "backward"}))
      ->capture_default_str();
  WholeNumber(command
                  ->add_option("--channels", s->channels,
                               "PReLU's and bias_act's channels (x is [2, channels, elems / (2 * "
                               "channels)])")
                  ->capture_default_str(),
              uint64_t{1}, uint64_t{1} << 20);
  command->add_option("--param", s->params,
                      "A family op's scalar, NAME=VALUE (repeatable; e.g. alpha=1.5, act=relu, "
                      "clamp=256, training=false); the rest take their defaults");
  auto* dist = command->add_option("--dist", s->distribution, DistributionHelp() + " (float dtypes)")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& spec) -> std::string {
            try {
              CheckDistribution(spec);
            } catch (const std::invalid_argument& e) {
              throw UsageError(e.what());
            }
            return {};
          },
          ""));
  WholeNumber(command->add_option("--seed", s->seed)->capture_default_str(), uint64_t{0});
  DirectoryPath(command->add_option("--out", s->out, "Output directory")->capture_default_str(),
                /*must_exist=*/false);
  command->add_flag("--plan", s->record_plan,
                    "Record these plan options in golden.json: `leaky check` then maps indices "
                    "to your kernel's cores and tiles without repeating them");
  AddPlanOptions(command, s->plan, /*with_op=*/false);
  AddEightBitOptions(command, s->eight_bit);
  s->command = command;
  command->callback([&run, s, elements, dist] {
    if (elements->count() == 0 && s->shape.empty()) s->elements = 10007;
    s->dist_given = dist->count() > 0;
    s->op_by_family_name = s->op == "leaky_relu";
    if (s->op_by_family_name) s->op = s->direction;
    run = [s] { return RunGolden(*s); };
  });
}

}  // namespace leaky::cli

// `leaky check OUTPUT --golden DIR`: pass/fail with error statistics, and a
// diagnosis of the classic kernel bugs. Exit status: 0 pass, 1 mismatch,
// 2 unusable input (a one-line error, never a crash or a wrong verdict:
// main.cc prints it, and with --json a JSON object {"error": ...} too).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli_checks.h"
#include "commands.h"
#include "diagnose.h"
#include "eight_bit_data.h"
#include "family_check.h"
#include "family_io.h"
#include "golden_io.h"
#include "layout.h"
#include "plan_flags.h"

namespace leaky::cli {
using namespace leaky::toolkit;  // the toolkit library the commands are made of
namespace {

constexpr int kExitMismatch = 1;

struct CheckSettings {
  std::string output;
  std::string golden_dir;
  bool json_output = false;
  int64_t max_ulp = -1;  // -1: the dtype's default
  bool use_plan = false;
  std::vector<std::string> plan_flags;  // the plan options given on the command line
  bool strict_zero_sign = false;
  bool allow_rounding = false;
  PlanOptions plan;
  std::vector<std::string> sides;  // NAME=FILE: a family op's other outputs
};

std::string Text(const std::filesystem::path& path) {
  const std::vector<uint8_t> bytes = ReadFile(path.string(), 1 << 20);
  return std::string(bytes.begin(), bytes.end());
}

// The plan `leaky golden --plan` recorded is the kernel's: flags given
// here may repeat it, never change it (the same output would otherwise be
// diagnosed against another split). Without a recorded plan, the flags.
std::optional<PlanOptions> PlanOf(const CheckSettings& s, const nlohmann::json& recorded) {
  std::optional<PlanOptions> plan = RecordedPlan(recorded);
  if (plan) {
    for (const std::string& flag : s.plan_flags) {
      const std::string given = PlanOptionValue(s.plan, flag),
                        recorded_value = PlanOptionValue(*plan, flag);
      if (given != recorded_value) {
        throw UsageError(flag + " " + given + " contradicts the plan golden.json recorded (" +
                         flag + " " + recorded_value +
                         "): drop it, or record another plan with "
                         "`leaky golden --plan`");
      }
    }
  } else if (!s.plan_flags.empty() || s.use_plan) {
    plan = s.plan;
  }
  return plan;
}

void PrintFindings(const CheckResult& result) {
  for (const Finding& f : result.findings)
    std::printf("- %s: %s\n", f.kind.c_str(), f.message.c_str());
}

// An op of leaky/family.h besides LeakyReLU (golden.json in the family's
// format): its first output is OUTPUT, the others --side NAME=FILE.
int RunFamilyCheck(const CheckSettings& s, const std::filesystem::path& dir,
                   const std::string& text) {
  if (s.allow_rounding)
    throw UsageError(
        "--allow-rounding is LeakyReLU's; the family's ops are checked by their models");
  nlohmann::json recorded;
  const FamilyProblem p = ReadFamilyGolden(dir.string(), text, &recorded);
  const std::string what = p.op + " " + (p.backward ? "backward" : "forward");
  Operands results = {ReadFamilyOutput(s.output, p.golden[0], p.elements())};
  if (results[0].size() != p.golden[0].size()) {
    throw GoldenError("the output " + s.output + " holds " + std::to_string(results[0].size()) +
                      " elements; " + what + "'s " + p.golden[0].name + " has " +
                      std::to_string(p.golden[0].size()));
  }
  std::string names;
  for (size_t k = 1; k < p.golden.size(); ++k)
    names += (names.empty() ? "" : ", ") + p.golden[k].name;
  std::vector<std::string> unchecked;
  for (size_t k = 1; k < p.golden.size(); ++k) {
    const std::string prefix = p.golden[k].name + "=";
    auto given = std::find_if(s.sides.begin(), s.sides.end(),
                              [&](const std::string& v) { return v.rfind(prefix, 0) == 0; });
    if (given == s.sides.end()) {
      if (k == results.size()) unchecked.push_back(p.golden[k].name);
      continue;
    }
    if (k != results.size())
      throw UsageError("--side " + p.golden[k].name + " needs the outputs before it");
    results.push_back(
        ReadFamilyOutput(given->substr(prefix.size()), p.golden[k], 8 * p.elements() + 8));
  }
  for (const std::string& side : s.sides) {
    const std::string name = side.substr(0, side.find('='));
    if (side.find('=') == std::string::npos ||
        std::none_of(p.golden.begin() + 1, p.golden.end(),
                     [&](const Operand& o) { return o.name == name; })) {
      throw UsageError("--side " + side + ": " + what +
                       (names.empty() ? " has no other output" : "'s other outputs are " + names) +
                       " (--side NAME=FILE)");
    }
  }
  const std::optional<PlanOptions> options = PlanOf(s, recorded);
  std::optional<Layout> plan;
  if (options) {
    PlanOptions o = *options;
    o.op = p.backward ? "backward" : "forward";
    plan = MakeLayout(o, p.dtype, p.elements());
  }
  const uint64_t max_ulp =
      s.max_ulp >= 0 ? static_cast<uint64_t>(s.max_ulp) : DefaultMaxUlp(p.dtype);
  const CheckResult result = CheckFamily(p, results, max_ulp, s.strict_zero_sign, plan);
  const uint64_t tolerance = std::max(max_ulp, FamilyMaxUlp(p));
  if (s.json_output) {
    nlohmann::json j = result.ToJson();
    j["dtype"] = DtypeName(p.dtype);
    j["op"] = p.op;
    j["direction"] = p.backward ? "backward" : "forward";
    j["tolerance_ulp"] = tolerance;
    j["unchecked"] = unchecked;
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("%s: %llu of %llu elements of %s outside %llu ulp (%s, %s)\n",
                result.pass ? "PASS" : "FAIL", static_cast<unsigned long long>(result.mismatches),
                static_cast<unsigned long long>(result.elements), p.golden[0].name.c_str(),
                static_cast<unsigned long long>(tolerance), DtypeName(p.dtype), what.c_str());
    if (!result.pass) {
      std::printf("max error: %llu ulp, %.6g absolute, %.6g relative (finite, non-NaN pairs)\n",
                  static_cast<unsigned long long>(result.max_ulp), result.max_abs_error,
                  result.max_rel_error);
    }
    PrintFindings(result);
    for (const std::string& name : unchecked) {
      std::printf("(%s not checked: give it with --side %s=FILE)\n", name.c_str(), name.c_str());
    }
  }
  return result.pass ? 0 : kExitMismatch;
}

int RunCheck(const CheckSettings& s) {
  // Everything is read and checked (a failure throws: exit 2, main.cc) before a
  // word of the verdict is printed.
  const std::filesystem::path dir(s.golden_dir);
  const std::string text = Text(dir / "golden.json");
  if (IsFamilyGolden(text)) return RunFamilyCheck(s, dir, text);
  if (!s.sides.empty())
    throw UsageError("--side is for the family's other outputs; this golden is LeakyReLU's");
  const GoldenDescription d = DescriptionFromJson(text);
  CheckInput input;
  if (d.eight_bit) {
    // One byte has no ulp to tolerate and no rounding mode to allow.
    if (s.max_ulp > 0 || s.allow_rounding) {
      throw UsageError(std::string(s.max_ulp > 0 ? "--max-ulp" : "--allow-rounding") +
                       " does not apply to " + TypeName(d) +
                       " data: its golden is exact and bytes compare exactly");
    }
    input.eight_bit = d.eight_bit;
  }
  const uint64_t bytes = d.elements * ElementBytes(d);
  // x and dy decode with the input's encoding, the results with the output's.
  auto load = [&](const std::string& what, const std::string& path, bool result = true) {
    std::error_code error;
    const uintmax_t size = std::filesystem::file_size(path, error);
    if (!error && size != bytes) {
      throw GoldenError(what + " holds " + std::to_string(size) + " bytes; " +
                        std::to_string(d.elements) + " " + TypeName(d) +
                        " elements are exactly " + std::to_string(bytes) + " bytes");
    }
    if (d.eight_bit) return DecodeBytes(what, ReadFile(path, bytes), *d.eight_bit, result, d.elements);
    return DecodeArray(what, ReadFile(path, bytes), d.dtype, d.elements);
  };
  input.dtype = d.dtype;
  input.backward = d.op == "leaky_relu_backward";
  input.negative_slope = d.negative_slope;
  input.input = load("input.bin", (dir / "input.bin").string(), false);
  input.golden = load(input.backward ? "golden_dx.bin" : "golden.bin",
                      (dir / (input.backward ? "golden_dx.bin" : "golden.bin")).string());
  if (input.backward) input.dy = load("dy.bin", (dir / "dy.bin").string(), false);
  input.output = load("the output " + s.output, s.output);
  input.max_ulp = s.max_ulp >= 0 ? static_cast<uint64_t>(s.max_ulp) : DefaultMaxUlp(d.dtype);
  input.strict_zero_sign = s.strict_zero_sign;
  input.allow_rounding = s.allow_rounding;
  std::optional<PlanOptions> plan = PlanOf(s, d.plan);
  if (plan) {
    plan->op = input.backward ? "backward" : "forward";
    input.plan =
        d.eight_bit ? MakeByteLayout(*plan, d.elements) : MakeLayout(*plan, d.dtype, d.elements);
  }
  const CheckResult result = Diagnose(input);
  if (s.json_output) {
    nlohmann::json j = result.ToJson();
    j["dtype"] = TypeName(d);
    j["op"] = d.op;
    j["tolerance_ulp"] = input.max_ulp;
    std::printf("%s\n", j.dump(2).c_str());
  } else if (d.eight_bit) {
    std::printf("%s: %llu of %llu bytes differ from the golden (%s, %s, byte-exact)\n",
                result.pass ? "PASS" : "FAIL", static_cast<unsigned long long>(result.mismatches),
                static_cast<unsigned long long>(result.elements), TypeName(d).c_str(), d.op.c_str());
    if (!result.pass) {
      std::printf("max error: %llu steps, %.6g absolute, %.6g relative (in real values)\n",
                  static_cast<unsigned long long>(result.max_ulp), result.max_abs_error,
                  result.max_rel_error);
    }
    PrintFindings(result);
  } else {
    std::printf("%s: %llu of %llu elements outside %llu ulp (%s, %s)\n",
                result.pass ? "PASS" : "FAIL", static_cast<unsigned long long>(result.mismatches),
                static_cast<unsigned long long>(result.elements),
                static_cast<unsigned long long>(input.max_ulp), DtypeName(d.dtype), d.op.c_str());
    std::printf("max error: %llu ulp, %.6g absolute, %.6g relative (finite, non-NaN pairs)\n",
                static_cast<unsigned long long>(result.max_ulp), result.max_abs_error,
                result.max_rel_error);
    PrintFindings(result);
  }
  return result.pass ? 0 : kExitMismatch;
}

}  // namespace

void AddCheckCommand(CLI::App& app, std::function<int()>& run) {
  auto s = std::make_shared<CheckSettings>();
  auto* command = app.add_subcommand("check", "Compare a kernel's output with a golden and "
                                     "diagnose the failure (exit 0 pass, 1 mismatch, 2 unusable)");
  NotADirectory(
      command->add_option("output", s->output, "The kernel's output file (raw, little-endian)")
          ->required(),
      "a golden file");
  DirectoryPath(
      command->add_option("--golden", s->golden_dir, "Directory written by `leaky golden`")
          ->required(),
      /*must_exist=*/true);
  command->add_flag("--json", s->json_output, "JSON instead of text");
  WholeNumber(command->add_option("--max-ulp", s->max_ulp,
                                  "Tolerance in ulp (default 0: the golden is exact in every "
                                  "dtype; 1 for a device that can only compute in f16/bf16 "
                                  "arithmetic)"),
              int64_t{0}, int64_t{1} << 62);
  command->add_flag("--strict-zero-sign", s->strict_zero_sign,
                    "Count -0 against +0 as a mismatch (by default it is reported apart)");
  command->add_flag("--allow-rounding", s->allow_rounding,
                    "Accept a systematic rounding mode (toward or away from zero) within "
                    "--max-ulp; by default it fails, whatever the tolerance");
  command->add_flag("--plan", s->use_plan,
                    "Map indices to cores and tiles (the plan golden.json recorded, or these "
                    "plan options)");
  command->add_option("--side", s->sides,
                      "Another output of a family op's kernel, NAME=FILE (dweight, db, noise, "
                      "mask; repeatable): checked bit for bit, and read by the op's models");
  AddPlanOptions(command, s->plan, /*with_op=*/false);
  command->callback([&run, s, command] {
    s->plan_flags = GivenPlanOptions(command);
    run = [s] { return RunCheck(*s); };
  });
}

}  // namespace leaky::cli

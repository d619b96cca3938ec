// `leaky device`: the OpenCL backend from the shell.
//   leaky device run --golden DIR --out FILE   the device kernel on a golden's
//       input, planned by the library's planner: golden.json's recorded plan
//       if any, else the device's own request (compute units, local memory,
//       granule split), with --cores/--split/--tile-elems/--buffers on top, so `leaky check FILE --golden DIR` checks it
//       end to end; --fault NAME plants a troubleshooting-table fault;
//       --kernel FILE.cl runs a kernel of your own in the library's place
//       (leaky_cl_options.source), --build-options "..." adds compiler
//       options (e.g. -cl-denorms-are-zero).
//   leaky device bench --golden DIR            kernel time from profiling
//       events for 1 and 2 buffers beside `leaky plan --timeline`'s model, and
//       the CPU library on the same data in the same run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_checks.h"
#include "commands.h"
#include "family_golden.h"
#include "family_io.h"
#include "golden_data.h"
#include "golden_io.h"
#include "layout.h"
#include "leaky/opencl.hpp"
#include "plan_flags.h"
#include "plan_options.h"
#include "timeline.h"
#include "user_message.h"

namespace leaky::cli {
using namespace leaky::toolkit;  // the toolkit library the commands are made of
namespace {

const std::map<std::string, int> kFaults = {
    {"none", LEAKY_CL_FAULT_NONE},
    {"compute-before-wait", LEAKY_CL_FAULT_COMPUTE_BEFORE_WAIT},
    {"remainder-dropped", LEAKY_CL_FAULT_REMAINDER_DROPPED},
    {"slope-layout", LEAKY_CL_FAULT_SLOPE_LAYOUT},
    {"half-flush", LEAKY_CL_FAULT_HALF_FLUSH},
    {"single-buffer", LEAKY_CL_FAULT_SINGLE_BUFFER},
    {"select-missing", LEAKY_CL_FAULT_SELECT_MISSING},
    {"core-offset", LEAKY_CL_FAULT_CORE_OFFSET},
};

struct DeviceSettings {
  std::string golden_dir, out;
  int device = -1;
  std::string fault = "none";
  std::string kernel, build_options;  // empty: the library's kernel, no extra options
  uint32_t cores = 0, tile_elems = 0, buffers = 0;
  std::string split;
  int repeats = 9;
};

struct Loaded {
  GoldenDescription d;
  std::vector<uint8_t> input, dy;
  std::optional<PlanOptions> recorded;  // golden.json's plan, if it has one
};

Loaded Load(const DeviceSettings& s) {
  Loaded l;
  const std::filesystem::path dir(s.golden_dir);
  const std::vector<uint8_t> text = ReadFile((dir / "golden.json").string(), 1 << 20);
  l.d = DescriptionFromJson(std::string(text.begin(), text.end()));
  if (l.d.eight_bit) {
    throw GoldenError("the OpenCL kernel has no 8-bit version; " + (dir / "golden.json").string() +
                      " describes " + TypeName(l.d) + " data");
  }
  const uint64_t bytes = l.d.elements * DtypeBytes(l.d.dtype);
  l.input = ReadFile((dir / "input.bin").string(), bytes);
  if (l.input.size() != bytes) throw GoldenError("input.bin is not " + std::to_string(bytes) + " bytes");
  if (l.d.op == "leaky_relu_backward") {
    l.dy = ReadFile((dir / "dy.bin").string(), bytes);
    if (l.dy.size() != bytes) throw GoldenError("dy.bin is not " + std::to_string(bytes) + " bytes");
  }
  l.recorded = RecordedPlan(l.d.plan);
  return l;
}

bool Backward(const Loaded& l) { return l.d.op == "leaky_relu_backward"; }

// The request the kernel is planned with: golden.json's recorded plan (so
// `leaky check` maps elements to the same cores and tiles), else the
// device's own; the flags given here on top.
leaky_plan_request RequestFor(leaky_cl_device* device, const DeviceSettings& s,
                              const std::optional<PlanOptions>& recorded, leaky_dtype dtype,
                              uint64_t n, bool backward) {
  PlanOptions flags;
  flags.cores = s.cores;
  flags.tile_elems = s.tile_elems;
  flags.buffers = s.buffers;
  leaky_plan_request request;
  if (recorded) {
    PlanOptions plan = *recorded;
    plan.op = backward ? "backward" : "forward";
    request = MakePlanRequest(plan, dtype, n);
    flags.split = s.split.empty() ? plan.split : s.split;
  } else {
    if (leaky_cl_plan_request(device, dtype, n, backward ? 3 : 2, &request) != LEAKY_OK) {
      throw std::runtime_error(leaky::toolkit::LastErrorForUser());
    }
    flags.split = s.split.empty() ? "granule" : s.split;
  }
  ApplyPlanOverrides(flags, &request);
  return request;
}

leaky_plan_request RequestFor(leaky_cl_device* device, const DeviceSettings& s, const Loaded& l) {
  return RequestFor(device, s, l.recorded, l.d.dtype, l.d.elements, Backward(l));
}

using Device = leaky::cl::Device;

Device Open(const DeviceSettings& s, int fault) {
  std::string source;
  if (!s.kernel.empty()) {
    const std::vector<uint8_t> text = ReadFile(s.kernel, 1 << 24);
    source.assign(text.begin(), text.end());
    if (source.empty()) throw std::invalid_argument("--kernel " + s.kernel + " is empty");
  }
  const leaky_cl_options options{s.device, fault, source.empty() ? nullptr : source.c_str(),
                                 s.build_options.empty() ? nullptr : s.build_options.c_str()};
  leaky_cl_device* device = nullptr;
  if (leaky_cl_open(&options, &device) != LEAKY_OK) throw std::runtime_error(leaky::toolkit::LastErrorForUser());
  return Device(device);
}

leaky_status Launch(leaky_cl_device* device, const Loaded& l, const leaky_plan_request& request,
                    std::vector<uint8_t>& out, leaky_cl_profile* profile) {
  if (Backward(l)) {
    return leaky_cl_leaky_relu_backward(device, l.d.dtype, l.d.elements, l.dy.data(), l.input.data(),
                                        out.data(), l.d.negative_slope, &request, profile);
  }
  return leaky_cl_leaky_relu_forward(device, l.d.dtype, l.d.elements, l.input.data(), out.data(),
                                     l.d.negative_slope, &request, profile);
}

// The output file of a family op's other output: beside --out, the name
// added to its stem (y.bin -> y_noise.bin).
std::string SideFile(const std::string& out, const std::string& name) {
  const std::filesystem::path p(out);
  return (p.parent_path() / (p.stem().string() + "_" + name + p.extension().string())).string();
}

// An op of leaky/family.h besides LeakyReLU (golden.json in the family's
// format): its first output to --out, the others beside it.
int RunFamilyDevice(const DeviceSettings& s, const std::string& text) {
  nlohmann::json recorded_json;
  const FamilyProblem p = ReadFamilyGolden(s.golden_dir, text, &recorded_json);
  const std::string what = p.op + " " + (p.backward ? "backward" : "forward");
  if (s.fault != "none" || !s.kernel.empty() || !s.build_options.empty()) {
    throw UsageError("--fault, --kernel and --build-options are LeakyReLU's; " + what +
                     " runs the library's kernel");
  }
  const std::optional<PlanOptions> recorded = RecordedPlan(recorded_json);
  Device device = Open(s, LEAKY_CL_FAULT_NONE);
  const leaky_plan_request request =
      RequestFor(device.get(), s, recorded, p.dtype, p.elements(), p.backward);
  std::vector<std::vector<uint8_t>> in;
  auto input = [&](const char* name) -> const void* {
    const Operand* o = FindOperand(p.inputs, name);
    if (!o) return nullptr;
    in.push_back(OperandBytes(*o));
    return in.back().data();
  };
  in.reserve(p.inputs.size());
  std::vector<std::vector<uint8_t>> out;  // what a kernel never writes stays 0
  for (const Operand& o : p.golden) out.emplace_back(OperandBytes(o).size(), 0);
  const FamilyScalars& k = p.scalars;
  leaky::cl::FamilyArgs a;
  a.dtype = p.dtype;
  a.outer = p.outer;
  a.channels = p.channels;
  a.inner = p.inner;
  a.x = FindOperand(p.inputs, "x") ? input("x") : input("saved");
  a.dy = input("dy");
  a.side = p.op == "prelu" ? input("weight") : input("bias");
  a.mask = static_cast<const uint8_t*>(input("mask"));
  a.out = out[0].data();
  a.second = out.size() > 1 ? out[1].data() : nullptr;
  a.alpha = k.alpha;
  a.scale = k.scale;
  a.input_scale = k.input_scale;
  a.rrelu = {k.lower, k.upper, k.training ? 1 : 0, k.seed, k.offset};
  a.bias_act = {k.act, k.act_alpha, k.gain, k.clamp};
  a.dropout = {k.dropout_p, k.seed, k.offset};
  leaky_cl_profile profile{};
  if (leaky::cl::RunFamily(device.get(), p.op, p.backward, a, &request, &profile) != LEAKY_OK) {
    throw std::runtime_error(leaky::toolkit::LastErrorForUser());
  }
  WriteFile(s.out, out[0].data(), out[0].size());
  std::string sides;
  for (size_t i = 1; i < out.size(); ++i) {
    const std::string file = SideFile(s.out, p.golden[i].name);
    WriteFile(file, out[i].data(), out[i].size());
    sides += " --side " + p.golden[i].name + "=" + file;
  }
  const leaky_tiling& t = profile.tiling;
  std::printf(
      "%s: %s, %llu %s elements on %u work-groups (%s split, %llu-element tiles, %u "
      "buffer(s)) in %.0f us -> %s\n",
      leaky_cl_device_name(device.get()), what.c_str(),
      static_cast<unsigned long long>(p.elements()), DtypeName(p.dtype), t.cores_used,
      SplitName(t.split), static_cast<unsigned long long>(t.tile_length), t.buffer_count,
      profile.kernel_ns / 1e3, s.out.c_str());
  std::printf("check: leaky check %s --golden %s%s\n", s.out.c_str(), s.golden_dir.c_str(),
              sides.c_str());
  return 0;
}

int RunDevice(const DeviceSettings& s) {
  {
    const std::vector<uint8_t> text =
        ReadFile((std::filesystem::path(s.golden_dir) / "golden.json").string(), 1 << 20);
    const std::string json(text.begin(), text.end());
    if (IsFamilyGolden(json)) return RunFamilyDevice(s, json);
  }
  const Loaded l = Load(s);
  Device device = Open(s, kFaults.at(s.fault));
  const leaky_plan_request request = RequestFor(device.get(), s, l);
  std::vector<uint8_t> out(l.input.size(), 0);  // what a kernel never writes stays 0
  leaky_cl_profile profile{};
  if (Launch(device.get(), l, request, out, &profile) != LEAKY_OK) throw std::runtime_error(leaky::toolkit::LastErrorForUser());
  WriteFile(s.out, out.data(), out.size());
  std::string extras;
  if (s.fault != "none") extras += ", fault " + s.fault;
  if (!s.kernel.empty()) extras += ", kernel " + s.kernel;
  if (!s.build_options.empty()) extras += ", options " + s.build_options;
  const leaky_tiling& t = profile.tiling;
  std::printf("%s: %llu %s elements on %u work-groups (%s split, %llu-element tiles, %u buffer(s)%s) "
              "in %.0f us -> %s\n",
              leaky_cl_device_name(device.get()), static_cast<unsigned long long>(l.d.elements),
              DtypeName(l.d.dtype), t.cores_used, SplitName(t.split),
              static_cast<unsigned long long>(t.tile_length), t.buffer_count, extras.c_str(),
              profile.kernel_ns / 1e3, s.out.c_str());
  return 0;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int BenchDevice(const DeviceSettings& s) {
  const Loaded l = Load(s);
  Device device = Open(s, LEAKY_CL_FAULT_NONE);
  const leaky_plan_request request = RequestFor(device.get(), s, l);
  std::vector<uint8_t> out(l.input.size(), 0);
  std::printf("%s, %llu %s elements, %s split, medians of %d\n", leaky_cl_device_name(device.get()),
              static_cast<unsigned long long>(l.d.elements), DtypeName(l.d.dtype),
              SplitName(request.split), s.repeats);
  // Each buffer count's plan, measured and modelled (`leaky plan
  // --timeline`'s model at the npu example's rates) from the same layout.
  std::map<uint32_t, double> measured, modelled;
  for (uint32_t buffers : {1u, 2u}) {
    leaky_plan_request with = request;
    with.buffer_count = buffers;
    const Layout layout = LayoutOf(with);
    std::vector<double> kernel_us;
    for (int r = 0; r < s.repeats; ++r) {
      leaky_cl_profile profile{};
      if (Launch(device.get(), l, with, out, &profile) != LEAKY_OK) throw std::runtime_error(leaky::toolkit::LastErrorForUser());
      kernel_us.push_back(profile.kernel_ns / 1e3);
    }
    measured[buffers] = Median(kernel_us);
    modelled[buffers] = ModelTimeline(layout, buffers, 32.0, 64.0).makespan;
    std::printf("  %u buffer(s), %u work-groups, %llu-element tiles: kernel %.1f us measured; "
                "model %.1f us\n",
                buffers, layout.cores(), static_cast<unsigned long long>(layout.tile_length),
                measured[buffers], modelled[buffers] / 1e3);
  }
  std::printf("  2 over 1 buffer: %.2fx measured, %.2fx modelled\n", measured[1] / measured[2],
              modelled[1] / modelled[2]);
  // The CPU library on the same data, same run.
  std::vector<double> cpu_us;
  const leaky_options cpu_options{0, -1, nullptr};
  for (int r = 0; r < s.repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    const leaky_status status =
        Backward(l)
            ? leaky_relu_backward(l.d.dtype, l.d.elements, l.dy.data(), l.input.data(), 0, out.data(),
                                  l.d.negative_slope, &cpu_options)
            : leaky_relu_forward(l.d.dtype, l.d.elements, l.input.data(), out.data(),
                                 l.d.negative_slope, &cpu_options);
    if (status != LEAKY_OK) throw std::runtime_error(leaky::toolkit::LastErrorForUser());
    cpu_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  const double cpu = Median(cpu_us);
  std::printf("  CPU library (%s, all cores): %.1f us; device kernel with 2 buffers / CPU: %.1fx\n",
              leaky_simd_target(), cpu, measured[2] / cpu);
  return 0;
}

void AddSplitOptions(CLI::App* command, DeviceSettings& s) {
  DirectoryPath(command->add_option("--golden", s.golden_dir, "Directory written by `leaky golden`")
                    ->required(),
                /*must_exist=*/true);
  // Not given: -1 inside, a GPU if any, else the first device.
  WholeNumber(command->add_option("--device", s.device,
                                  "OpenCL device index over all platforms (default: a GPU if "
                                  "any, else the first)"),
              0, 1 << 20);
  WholeNumber(command->add_option("--cores", s.cores,
                                  "Work-groups (default: golden.json's plan, else the device's "
                                  "compute units)"),
              1u, 65536u);
  command->add_option("--split", s.split,
                      "granule, even or balanced (default: golden.json's plan, else granule)")
      ->check(CLI::IsMember({"granule", "even", "balanced"}));
  WholeNumber(command->add_option("--tile-elems", s.tile_elems,
                                  "Elements per tile (default: golden.json's plan, else sized "
                                  "from the device's local memory)"),
              1u, 1u << 24);
  WholeNumber(command->add_option("--buffers", s.buffers, "1 or 2 local buffers"), 1u, 2u);
}

}  // namespace

void AddDeviceCommand(CLI::App& app, std::function<int()>& run) {
  auto* device = app.add_subcommand("device", "The OpenCL device backend (run, bench)");
  device->require_subcommand(1);
  auto s = std::make_shared<DeviceSettings>();
  auto* run_command = device->add_subcommand("run", "Run the device kernel on a golden's input");
  AddSplitOptions(run_command, *s);
  NotADirectory(
      run_command->add_option("--out", s->out, "The output file, for `leaky check`")->required(),
      "an output file");
  std::vector<std::string> names;
  for (const auto& [name, code] : kFaults) names.push_back(name);
  run_command->add_option("--fault", s->fault, "Plant a troubleshooting-table fault")
      ->check(CLI::IsMember(names));
  ReadableFile(run_command->add_option("--kernel", s->kernel,
                                       "OpenCL C source of your own leaky_relu_tiles (the library "
                                       "kernel's arguments and -D defines) to run instead"),
               "an OpenCL C kernel");
  run_command->add_option("--build-options", s->build_options,
                          "Extra OpenCL compiler options, e.g. -cl-denorms-are-zero");
  run_command->callback([&run, s] { run = [s] { return RunDevice(*s); }; });
  auto b = std::make_shared<DeviceSettings>();
  auto* bench_command = device->add_subcommand("bench", "Kernel time for 1 and 2 buffers, the "
                                               "model's, and the CPU library's");
  AddSplitOptions(bench_command, *b);
  WholeNumber(bench_command->add_option("--repeats", b->repeats), 1, 1000);
  bench_command->callback([&run, b] { run = [b] { return BenchDevice(*b); }; });
}

}  // namespace leaky::cli

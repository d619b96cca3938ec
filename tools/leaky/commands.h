// The `leaky` CLI: each subcommand registers itself on the CLI11 app and
// runs on top of the public API only.
#ifndef LEAKY_CLI_COMMANDS_H_
#define LEAKY_CLI_COMMANDS_H_

#include <CLI/CLI.hpp>
#include <functional>

namespace leaky::toolkit {}  // the library the commands are made of (toolkit/)

namespace leaky::cli {

// Adds the subcommand; `run` is set to its body when it is selected.
void AddDemoCommand(CLI::App& app, std::function<int()>& run);
void AddBenchCommand(CLI::App& app, std::function<int()>& run);
void AddPlanCommand(CLI::App& app, std::function<int()>& run);
void AddGoldenCommand(CLI::App& app, std::function<int()>& run);
void AddCheckCommand(CLI::App& app, std::function<int()>& run);
// The OpenCL backend's commands (device.cc), in builds with OpenCL.
void AddDeviceCommand(CLI::App& app, std::function<int()>& run);
// The GAN lab's commands (gan.cc, on the lab library in gan/), in builds
// with LibTorch: the leaky-gan program's (gan_main.cc), which `leaky` runs
// for them; their one-line summaries are also `leaky --help`'s.
inline constexpr char kGanSummary[] =
    "the GAN lab: what ReLU, LeakyReLU and relatives do to a discriminator";
inline constexpr char kPrecisionSummary[] =
    "16-bit LeakyReLU error on captured pre-activations (raw f32 file)";
void AddGanCommand(CLI::App& app, std::function<int()>& run);
void AddPrecisionCommand(CLI::App& app, std::function<int()>& run);

}  // namespace leaky::cli

#endif  // LEAKY_CLI_COMMANDS_H_

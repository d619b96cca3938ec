// `leaky golden`: input and golden output files, bit-exact from the
// library's scalar reference, for a developer's own device kernel.
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>

#include "commands.h"
#include "golden_io.h"
#include "leaky/reference.hpp"

namespace leaky::tools {
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
};

// Draws one value, as a double, from the named distribution; `hard` returns
// nullopt when it wants a raw bit pattern instead (see HardBits).
class Distribution {
 public:
  Distribution(const std::string& spec, uint64_t seed) : rng_(seed) {
    const auto colon = spec.find(':');
    kind_ = spec.substr(0, colon);
    if (kind_ == "uniform" || kind_ == "normal") {
      a_ = kind_ == "uniform" ? -1.0 : 0.0;
      b_ = 1.0;
      if (colon != std::string::npos) {
        const std::string args = spec.substr(colon + 1);
        const auto comma = args.find(',');
        if (comma == std::string::npos) throw std::invalid_argument("expected " + kind_ + ":A,B");
        a_ = std::stod(args.substr(0, comma));
        b_ = std::stod(args.substr(comma + 1));
      }
      if (!std::isfinite(a_) || !std::isfinite(b_) || (kind_ == "uniform" && a_ > b_) ||
          (kind_ == "normal" && b_ < 0)) {
        throw std::invalid_argument("bad parameters in distribution '" + spec + "'");
      }
    } else if (kind_ != "hard" || colon != std::string::npos) {
      throw std::invalid_argument("unknown distribution '" + spec +
                                  "' (uniform:A,B, normal[:MEAN,STD] or hard)");
    }
  }

  // One stored bit pattern of `dtype`.
  uint64_t Next(leaky_dtype dtype) {
    if (kind_ == "uniform") return Encode(dtype, std::uniform_real_distribution<double>(a_, b_)(rng_));
    if (kind_ == "normal") return Encode(dtype, std::normal_distribution<double>(a_, b_)(rng_));
    return HardBits(dtype);
  }

 private:
  static uint64_t Encode(leaky_dtype dtype, double v) {
    switch (dtype) {
      case LEAKY_F32: return std::bit_cast<uint32_t>(static_cast<float>(v));
      case LEAKY_F64: return std::bit_cast<uint64_t>(v);
      case LEAKY_F16: return float16(static_cast<float>(v)).bits;
      case LEAKY_BF16: return bfloat16(static_cast<float>(v)).bits;
    }
    return 0;
  }

  // The cases that break device kernels: subnormals, values whose product
  // with a slope underflows in f16, signed zeros, infinities, NaNs, extremes.
  uint64_t HardBits(leaky_dtype dtype) {
    std::uniform_int_distribution<int> pick(0, 9);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const bool negative = unit(rng_) < 0.6;
    const double sign = negative ? -1.0 : 1.0;
    switch (pick(rng_)) {
      case 0: return Encode(dtype, sign * 0.0);
      case 1: return Encode(dtype, sign * INFINITY);
      case 2: return Encode(dtype, NAN) | (negative ? uint64_t{1} << (DtypeBytes(dtype) * 8 - 1) : 0);
      case 3:  // subnormal of this dtype
        return Encode(dtype, sign * unit(rng_) * DtypeSmallestNormal(dtype));
      case 4:  // tiny f16 normals: x * 0.2 lands below f16's normal range
        return Encode(dtype, sign * (1.0 + 3.0 * unit(rng_)) * DtypeSmallestNormal(LEAKY_F16));
      case 5: return Encode(dtype, sign * LargestFinite(dtype) * (0.5 + 0.5 * unit(rng_)));
      default: return Encode(dtype, std::normal_distribution<double>(0.0, 2.0)(rng_));
    }
  }
  static double LargestFinite(leaky_dtype d) {
    return d == LEAKY_F64 ? 1.7976931348623157e308 : d == LEAKY_F16 ? 65504.0 : 3.3895313892515355e38;
  }

  std::mt19937_64 rng_;
  std::string kind_;
  double a_ = 0, b_ = 1;
};

template <class T>
std::vector<T> FromBits(const std::vector<uint64_t>& bits) {
  std::vector<T> out(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) std::memcpy(static_cast<void*>(&out[i]), &bits[i], sizeof(T));
  return out;
}

template <class T>
void WriteGoldens(const GoldenDescription& d, const std::vector<uint64_t>& x_bits,
                  const std::vector<uint64_t>& dy_bits, const std::filesystem::path& dir) {
  const std::vector<T> x = FromBits<T>(x_bits);
  std::vector<T> y(x.size());
  const reference::ieee_environment ieee;
  for (size_t i = 0; i < x.size(); ++i) y[i] = reference::leaky_relu_forward(x[i], d.negative_slope);
  WriteFile((dir / "input.bin").string(), x.data(), x.size() * sizeof(T));
  WriteFile((dir / "golden.bin").string(), y.data(), y.size() * sizeof(T));
  if (d.op == "leaky_relu_backward") {
    const std::vector<T> dy = FromBits<T>(dy_bits);
    std::vector<T> dx(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      dx[i] = reference::leaky_relu_backward(dy[i], x[i], d.negative_slope);
    }
    WriteFile((dir / "dy.bin").string(), dy.data(), dy.size() * sizeof(T));
    WriteFile((dir / "golden_dx.bin").string(), dx.data(), dx.size() * sizeof(T));
  }
}

int RunGolden(const GoldenSettings& s) {
  GoldenDescription d;
  d.op = s.op == "backward" ? "leaky_relu_backward" : "leaky_relu_forward";
  d.dtype = ParseDtype(s.dtype);
  d.shape = s.shape.empty() ? std::vector<uint64_t>{s.elements} : s.shape;
  d.elements = std::accumulate(d.shape.begin(), d.shape.end(), uint64_t{1},
                               [](uint64_t a, uint64_t b) { return a * b; });
  if (d.elements > kMaxGoldenElements) throw std::invalid_argument("too many elements");
  if (!std::isfinite(s.slope)) throw std::invalid_argument("--slope must be finite");
  d.negative_slope = s.slope;
  d.distribution = s.distribution;
  d.seed = s.seed;

  Distribution inputs(s.distribution, s.seed), gradients(s.distribution, s.seed + 1);
  std::vector<uint64_t> x(d.elements), dy;
  for (auto& v : x) v = inputs.Next(d.dtype);
  if (d.op == "leaky_relu_backward") {
    dy.resize(d.elements);
    for (auto& v : dy) v = gradients.Next(d.dtype);
  }
  const std::filesystem::path dir(s.out);
  std::filesystem::create_directories(dir);
  switch (d.dtype) {
    case LEAKY_F32: WriteGoldens<float>(d, x, dy, dir); break;
    case LEAKY_F64: WriteGoldens<double>(d, x, dy, dir); break;
    case LEAKY_F16: WriteGoldens<float16>(d, x, dy, dir); break;
    case LEAKY_BF16: WriteGoldens<bfloat16>(d, x, dy, dir); break;
  }
  const std::string description = DescriptionToJson(d);
  WriteFile((dir / "golden.json").string(), description.data(), description.size());
  std::printf("wrote %s: %llu %s elements, %s, slope %g, distribution %s\n", dir.c_str(),
              static_cast<unsigned long long>(d.elements), s.dtype.c_str(), d.op.c_str(), s.slope,
              s.distribution.c_str());
  return 0;
}

}  // namespace

void AddGoldenCommand(CLI::App& app, std::function<int()>& run) {
  auto s = std::make_shared<GoldenSettings>();
  auto* command = app.add_subcommand("golden", "Write input and bit-exact golden files");
  auto* elements = command->add_option("--elems", s->elements,
                                       "Number of elements (default 10007: a prime, so it divides "
                                       "by no core count or vector width)")
                        ->check(CLI::PositiveNumber);  // "-5" would wrap around in a uint64_t
  command->add_option("--shape", s->shape, "Shape, e.g. --shape 8,3,37")->delimiter(',')
      ->excludes(elements)->check(CLI::PositiveNumber);
  command->add_option("--dtype", s->dtype)->check(CLI::IsMember({"f32", "f64", "f16", "bf16"}))
      ->capture_default_str();
  command->add_option("--slope", s->slope, "negative_slope")->capture_default_str();
  command->add_option("--op", s->op)->check(CLI::IsMember({"forward", "backward"}))
      ->capture_default_str();
  command->add_option("--dist", s->distribution, "uniform:A,B | normal[:MEAN,STD] | hard")
      ->capture_default_str();
  command->add_option("--seed", s->seed)->capture_default_str();
  command->add_option("--out", s->out, "Output directory")->capture_default_str();
  command->callback([&run, s, elements] {
    if (elements->count() == 0 && s->shape.empty()) s->elements = 10007;
    run = [s] { return RunGolden(*s); };
  });
}

}  // namespace leaky::tools

#include "models.h"

#include <leaky/torch.hpp>

#include "spectral_norm.h"

namespace leaky::gan {

torch::nn::AnyModule MakeActivation(const ActivationSpec& spec, int64_t channels, int64_t seed) {
  namespace tnn = torch::nn;
  switch (spec.kind) {
    case ActivationKind::kRelu:
      return spec.torch_impl ? tnn::AnyModule(tnn::ReLU()) : tnn::AnyModule(leaky::nn::ReLU());
    case ActivationKind::kLeakyRelu: {
      const auto options = tnn::LeakyReLUOptions().negative_slope(spec.slope);
      return spec.torch_impl ? tnn::AnyModule(tnn::LeakyReLU(options))
                             : tnn::AnyModule(leaky::nn::LeakyReLU(options));
    }
    case ActivationKind::kPrelu: {
      const auto options =
          tnn::PReLUOptions().num_parameters(channels).init(spec.slope);
      return spec.torch_impl ? tnn::AnyModule(tnn::PReLU(options))
                             : tnn::AnyModule(leaky::nn::PReLU(options));
    }
    case ActivationKind::kElu:
      return spec.torch_impl ? tnn::AnyModule(tnn::ELU()) : tnn::AnyModule(leaky::nn::ELU());
    case ActivationKind::kRrelu:
      break;
  }
  // rrelu: an explicit seed, so building it draws nothing from torch's
  // generator and every variant starts from the same weights.
  return spec.torch_impl ? tnn::AnyModule(tnn::RReLU())
                         : tnn::AnyModule(leaky::nn::RReLU(tnn::RReLUOptions(), seed));
}

namespace {

template <class... Impl>
bool IsA(const torch::nn::Module& m) {
  return (... || (dynamic_cast<const Impl*>(&m) != nullptr));
}

// One module's own parameters, by its type (InitParameters' rule).
void DcganInit(torch::nn::Module& module) {
  namespace tnn = torch::nn;
  const bool weighted = IsA<tnn::Conv2dImpl, tnn::ConvTranspose2dImpl, tnn::LinearImpl>(module);
  const bool norm = IsA<tnn::BatchNorm1dImpl, tnn::BatchNorm2dImpl>(module);
  if (!weighted && !norm) return;  // activations (PReLU's slope) keep their own values
  torch::NoGradGuard no_grad;
  for (auto& p : module.named_parameters(false)) {
    if (p.key() == "weight") {
      p.value().normal_(norm ? 1.0 : 0.0, 0.02);
    } else if (p.key() == "bias") {
      p.value().zero_();
    }
  }
}

constexpr int64_t kMnistChannels[5] = {1, 16, 32, 64, 64};  // width 1
constexpr int64_t kRingWidth = 64;

int64_t Scaled(int64_t channels, const ModelShape& shape) {
  TORCH_CHECK(shape.width == 1 || shape.width == 2, "model width must be 1 or 2");
  return channels * shape.width;
}

}  // namespace

void InitParameters(torch::nn::Module& module, Init init) {
  if (init == Init::kDefault) return;
  module.apply([](torch::nn::Module& m) { DcganInit(m); });
}

DiscriminatorImpl::DiscriminatorImpl(Dataset data, const std::vector<ActivationSpec>& acts,
                                     bool batch_norm, int64_t seed, ModelShape shape)
    : image_(IsImages(data)) {
  TORCH_CHECK(acts.size() == kHidden, "the discriminator has 4 hidden layers");
  namespace tnn = torch::nn;
  for (int i = 0; i < kHidden; ++i) {
    int64_t width;
    tnn::AnyModule layer, norm;
    if (image_) {
      // 28 -> 14 -> 7 -> 4 -> 4.
      const int64_t in = i == 0 ? 1 : Scaled(kMnistChannels[i], shape);
      const int64_t out = Scaled(kMnistChannels[i + 1], shape);
      const auto options = i < 2 ? tnn::Conv2dOptions(in, out, 4).stride(2).padding(1)
                           : i == 2 ? tnn::Conv2dOptions(in, out, 3).stride(2).padding(1)
                                    : tnn::Conv2dOptions(in, out, 3).stride(1).padding(1);
      if (shape.spectral_norm) {
        // Its own seed for the power iteration's start, so spectral norm
        // draws nothing from torch's generator either.
        auto conv = SpectralConv2d(options, static_cast<uint64_t>(seed) * 16 + 8 + i);
        if (i == 0) first_weight_ = conv->inner->weight;
        layer = tnn::AnyModule(conv);
      } else {
        auto conv = tnn::Conv2d(options);
        if (i == 0) first_weight_ = conv->weight;
        layer = tnn::AnyModule(conv);
      }
      if (batch_norm && i > 0) norm = tnn::AnyModule(tnn::BatchNorm2d(out));
      width = out;
    } else {
      auto linear = tnn::Linear(i == 0 ? 2 : kRingWidth, kRingWidth);
      if (i == 0) first_weight_ = linear->weight;
      layer = tnn::AnyModule(linear);
      if (batch_norm && i > 0) norm = tnn::AnyModule(tnn::BatchNorm1d(kRingWidth));
      width = kRingWidth;
    }
    layers_.push_back(layer);
    register_module("layer" + std::to_string(i + 1), layer.ptr());
    norms_.push_back(norm);
    if (!norm.is_empty()) register_module("norm" + std::to_string(i + 1), norm.ptr());
    acts_.push_back(MakeActivation(acts[static_cast<size_t>(i)], width, seed * 16 + i));
    register_module("act" + std::to_string(i + 1), acts_.back().ptr());
  }
  const auto head = tnn::LinearOptions(image_ ? Scaled(kMnistChannels[4], shape) * 4 * 4 : kRingWidth, 1);
  head_ = shape.spectral_norm
              ? tnn::AnyModule(SpectralLinear(head, static_cast<uint64_t>(seed) * 16 + 12))
              : tnn::AnyModule(tnn::Linear(head));
  register_module("head", head_.ptr());
  InitParameters(*this, shape.init);
}

torch::Tensor DiscriminatorImpl::forward(const torch::Tensor& x, DiscriminatorCapture* capture) {
  torch::Tensor h = x;
  for (size_t i = 0; i < layers_.size(); ++i) {
    h = layers_[i].forward(h);
    if (!norms_[i].is_empty()) h = norms_[i].forward(h);
    if (capture != nullptr && i == 1) capture->preact2 = h.detach();
    h = acts_[i].forward(h);
    if (capture != nullptr) capture->hidden.push_back(h.detach());
  }
  return head_.forward(h.flatten(1)).squeeze(1);
}

GeneratorImpl::GeneratorImpl(Dataset data, ModelShape shape) {
  namespace tnn = torch::nn;
  if (IsImages(data)) {
    latent_ = LatentSize(data, shape);
    const int64_t c1 = Scaled(64, shape), c2 = Scaled(32, shape);
    body_ = tnn::Sequential(
        tnn::Linear(latent_, c1 * 7 * 7), tnn::BatchNorm1d(c1 * 7 * 7), tnn::ReLU(),
        tnn::Unflatten(tnn::UnflattenOptions(1, {c1, 7, 7})),
        tnn::ConvTranspose2d(tnn::ConvTranspose2dOptions(c1, c2, 4).stride(2).padding(1)),
        tnn::BatchNorm2d(c2), tnn::ReLU(),
        tnn::ConvTranspose2d(tnn::ConvTranspose2dOptions(c2, 1, 4).stride(2).padding(1)),
        tnn::Tanh());
  } else {
    latent_ = LatentSize(data, shape);
    body_ = tnn::Sequential(tnn::Linear(latent_, 128), tnn::ReLU(), tnn::Linear(128, 128),
                            tnn::ReLU(), tnn::Linear(128, 2));
  }
  register_module("body", body_);
  InitParameters(*this, shape.init);
}

torch::Tensor GeneratorImpl::forward(const torch::Tensor& z) { return body_->forward(z); }

ClassifierImpl::ClassifierImpl() {
  namespace tnn = torch::nn;
  const auto conv = [](int64_t in, int64_t out) {
    return tnn::Conv2d(tnn::Conv2dOptions(in, out, 3).padding(1));
  };
  features_ = register_module(
      "features",
      tnn::Sequential(conv(1, 32), tnn::ReLU(), conv(32, 32), tnn::ReLU(), tnn::MaxPool2d(2),
                      conv(32, 64), tnn::ReLU(), conv(64, 64), tnn::ReLU(), tnn::MaxPool2d(2),
                      tnn::Flatten(), tnn::Linear(64 * 7 * 7, kClassifierFeatures), tnn::ReLU()));
  dropout_ = register_module("dropout", tnn::Dropout(0.3));
  out_ = register_module("out", tnn::Linear(kClassifierFeatures, 10));
}
torch::Tensor ClassifierImpl::Features(const torch::Tensor& x) {
  // In slices of 200 images: a whole 1,000-sample set made 100 MB
  // activations per layer, and their page faults cost more than the
  // arithmetic (measured: 5 s per quality point on one thread, a third in
  // the kernel).
  constexpr int64_t kSlice = 200;
  if (x.size(0) <= kSlice) return features_->forward(x);
  std::vector<torch::Tensor> parts;
  for (int64_t from = 0; from < x.size(0); from += kSlice) {
    parts.push_back(features_->forward(x.narrow(0, from, std::min(kSlice, x.size(0) - from))));
  }
  return torch::cat(parts, 0);
}
torch::Tensor ClassifierImpl::Logits(const torch::Tensor& features) {
  return out_->forward(dropout_->forward(features));
}
torch::Tensor ClassifierImpl::forward(const torch::Tensor& x) { return Logits(Features(x)); }

std::string DescribeModels(Dataset data, ModelShape shape, Loss loss) {
  std::string init = shape.init == Init::kDcgan
                         ? "DCGAN init by module type (conv/linear N(0, 0.02), zero bias; "
                           "BN N(1, 0.02); activation parameters their own)"
                         : "LibTorch's default init";
  if (shape.spectral_norm) {
    init += "; D's convolutions and head spectrally normalised (one power iteration per step)";
  }
  const std::string loss_name = std::string(LossName(loss)) + " loss";
  if (IsImages(data)) {
    const auto c = [&](int64_t channels) { return std::to_string(channels * shape.width); };
    return "width " + std::to_string(shape.width) + ". G: z(" + std::to_string(LatentSize(data, shape)) +
           ") -> Linear " + std::to_string(64 * shape.width * 49) + " -> BN -> ReLU -> [" + c(64) +
           ",7,7] -> ConvT 4x4/2 " + c(32) + " -> BN -> ReLU -> ConvT 4x4/2 1 -> tanh (28x28). "
           "D: Conv 4x4/2 " + c(16) + " (14x14) -> act1 -> Conv 4x4/2 " + c(32) +
           " (7x7) -> [BN] -> act2 -> Conv 3x3/2 " + c(64) + " (4x4) -> [BN] -> act3 -> Conv "
           "3x3/1 " + c(64) + " (4x4) -> [BN] -> act4 -> Linear " + std::to_string(64 * shape.width * 16) +
           " -> 1. Adam 2e-4, betas (0.5, 0.999), batch 64, " + loss_name + "; " + init + ".";
  }
  return "G: z(8) -> 128 -> ReLU -> 128 -> ReLU -> 2. D: 2 -> 64 -> act1 -> 64 -> [BN] -> act2 "
         "-> 64 -> [BN] -> act3 -> 64 -> [BN] -> act4 -> 1. Adam 2e-4, betas (0.5, 0.999), batch "
         "256, " + loss_name + "; " + init + ".";
}

}  // namespace leaky::gan

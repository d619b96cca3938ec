// `leaky gan`'s speed check: this library's LeakyReLU against
// torch::nn::LeakyReLU in a discriminator training step, in the same run
// (the tensor work is in speed_check.cc; callers need no LibTorch headers).
#ifndef LEAKY_GAN_SPEED_CHECK_H_
#define LEAKY_GAN_SPEED_CHECK_H_

#include "config.h"
#include "records.h"

namespace leaky::gan {

SpeedCheck MeasureSpeedCheck(Dataset data, ModelShape shape, int batch);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_SPEED_CHECK_H_

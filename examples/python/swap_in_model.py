import torch
import leaky

discriminator = torch.nn.Sequential(
    torch.nn.Linear(784, 256),
    leaky.nn.LeakyReLU(0.2),  # was: torch.nn.ReLU()
    torch.nn.Linear(256, 1),
)
score = discriminator(torch.randn(8, 784))
print(discriminator[1], tuple(score.shape))

"""A few training steps of a tiny discriminator, with an R1 penalty (double
backward), built once with torch.nn.LeakyReLU and once with leaky's: the loss
trajectories must agree."""
import copy

import torch

import leaky


def make_discriminator(act):
    return torch.nn.Sequential(
        torch.nn.Linear(20, 32), act(),
        torch.nn.Linear(32, 32), act(),
        torch.nn.Linear(32, 1))


def train(model, steps=20):
    torch.manual_seed(1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(steps):
        real = torch.randn(64, 20) + 1
        fake = torch.randn(64, 20)
        real.requires_grad_(True)
        d_real = model(real)
        loss = (torch.nn.functional.softplus(-d_real).mean()
                + torch.nn.functional.softplus(model(fake)).mean())
        (grad_real,) = torch.autograd.grad(d_real.sum(), real, create_graph=True)
        loss = loss + 5.0 * grad_real.pow(2).sum(dim=1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_loss_trajectory_matches_torch_leaky_relu():
    torch.manual_seed(0)
    reference = make_discriminator(lambda: torch.nn.LeakyReLU(0.2))
    ours = copy.deepcopy(reference)
    for i, layer in enumerate(ours):
        if isinstance(layer, torch.nn.LeakyReLU):
            ours[i] = leaky.nn.LeakyReLU(0.2)  # the one-line swap
    expected = train(reference)
    actual = train(ours)
    assert expected[0] != expected[-1]  # it trained
    torch.testing.assert_close(torch.tensor(actual), torch.tensor(expected), rtol=1e-6, atol=0)

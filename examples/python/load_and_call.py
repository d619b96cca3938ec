import torch
import leaky  # loads the operator library: torch.ops.leaky.*

x = torch.tensor([-2.0, -0.5, 0.0, 3.0], requires_grad=True)
y = torch.ops.leaky.leaky_relu(x, 0.2)
y.sum().backward()
print(y.detach().tolist(), x.grad.tolist())

import leaky.numpy  # the same kernels on NumPy arrays, no PyTorch needed
import numpy as np
print(leaky.numpy.leaky_relu(np.array([-2.0, 3.0], dtype=np.float32), 0.2).tolist())

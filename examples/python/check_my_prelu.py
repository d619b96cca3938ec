"""PReLU with the article's structure, written in NumPy and checked by
leaky.testing like any op of leaky/family.h: every core takes step = total
/ cores elements (the last also the remainder), tile by tile, each element
scaled by its channel's weight where it is not positive. Its tile loop
stops before a short last tile, so each core's tail never reaches the
output, and the diagnosis says where."""
import numpy as np

import leaky.testing

CORES, BLOCK_ELEMS = 4, 1024


def broken_prelu(x, weight):
    """x is [outer, channels, inner] (NCHW's view); one weight per channel."""
    channel = np.broadcast_to(np.arange(x.shape[1])[None, :, None], x.shape).reshape(-1)
    flat = x.reshape(-1)
    total = flat.size
    step = total // CORES
    y = np.zeros_like(flat)
    for core in range(CORES):
        start = core * step
        length = step + (total % CORES if core == CORES - 1 else 0)
        for tile in range(start, start + length - BLOCK_ELEMS + 1, BLOCK_ELEMS):  # full tiles only
            local = flat[tile:tile + BLOCK_ELEMS].astype(np.float32)
            w = weight[channel[tile:tile + BLOCK_ELEMS]].astype(np.float32)
            with np.errstate(over="ignore"):  # f16's overflow to inf is the op's
                y[tile:tile + BLOCK_ELEMS] = np.where(local > 0, local, local * w).astype(x.dtype)
    return y.reshape(x.shape)


if __name__ == "__main__":
    diagnosis = leaky.testing.check_op(broken_prelu, op="prelu", dtype="f16", elems=10000,
                                       channels=5, split="even", cores=CORES,
                                       tile_elems=BLOCK_ELEMS)
    print(diagnosis)
    assert diagnosis.kinds() == ["not_written"], diagnosis.kinds()

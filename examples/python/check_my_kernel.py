"""A kernel with the article's structure, written in NumPy, checked by
leaky.testing: every core takes step = total / cores elements (the last also
the remainder), tile by tile (4096 elements), widening f16 to f32 for the
compute. Its compute step multiplies by the slope and stops there - the
Select is commented out, as in the article's listing - and the diagnosis
names it."""
import numpy as np

import leaky.testing

CORES, BLOCK_ELEMS = 8, 4096


def broken_leaky_relu(x, slope):
    total = x.size
    step = total // CORES
    y = np.empty_like(x)
    for core in range(CORES):
        start = core * step
        length = step + (total % CORES if core == CORES - 1 else 0)
        for tile in range(start, start + length, BLOCK_ELEMS):
            local = x[tile:min(tile + BLOCK_ELEMS, start + length)].astype(np.float32)  # copy-in
            out = local * np.float32(slope)                                           # Muls
            # out = np.where(local > 0, local, out)                                   # Select
            y[tile:tile + local.size] = out.astype(x.dtype)                           # copy-out
    return y


if __name__ == "__main__":
    diagnosis = leaky.testing.check_op(broken_leaky_relu, dtype="f16", elems=10007, slope=0.2,
                                       dist="hard", split="even", cores=CORES,
                                       tile_elems=BLOCK_ELEMS, buffers=2)
    print(diagnosis)
    assert diagnosis.kinds() == ["select_missing"], diagnosis.kinds()

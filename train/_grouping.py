"""Length grouping: an example order whose batches hold examples of similar length, so a batch is
padded little (the Trainer's sampler when `group_by_length` is on; see train/_trainer.py)."""

from __future__ import annotations

import numpy as np

MEGA_BATCHES = 50     # length grouping sorts this many batches at a time (transformers' largest)


def length_grouped_order(lengths: list[int], batch: int, rng) -> list[int]:
    """Example order for batches of similar length: a random permutation, sorted by length within
    mega-batches of MEGA_BATCHES x batch examples, cut into batches of `batch`, whose order is then
    shuffled with the longest batch first (an out-of-memory error shows at once).

    transformers' LengthGroupedSampler keeps four mega-batches even on a small subset, so on a
    curated subset of a few dozen examples it sorts only within each batch; sorting larger groups
    and shuffling the batches instead keeps padding small at any size."""
    lengths = np.asarray(lengths)
    perm = rng.permutation(lengths.size)
    size = MEGA_BATCHES * batch
    order = np.concatenate([m[np.argsort(-lengths[m], kind="stable")] for m in
                            np.array_split(perm, range(size, lengths.size, size))]) if lengths.size else perm
    batches = [order[i:i + batch] for i in range(0, order.size, batch)]
    if not batches:
        return []
    first = int(np.argmax([lengths[b].max() for b in batches]))
    rest = [b for i, b in enumerate(batches) if i != first]
    return [int(i) for b in [batches[first]] + [rest[j] for j in rng.permutation(len(rest))] for i in b]

"""Pure tensor functions of the pre-training step: randomness, masking, sampling, scatter/gather, labels."""

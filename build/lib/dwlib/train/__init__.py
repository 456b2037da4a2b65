"""Training the decoder of section 5: the plain model, its opt-in fast path, data, step and loop."""

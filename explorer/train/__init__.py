"""Fine-tuning a head or the whole model, and the bundled sentiment head's training."""

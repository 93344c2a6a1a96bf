// Placeholder: the device's measured peaks (owned by the cuDNN/bench work of issue 5).

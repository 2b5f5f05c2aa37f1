"""The trained ONNX models of the tile recogniser and their licence (data only, no code)."""

"""The generated inputs: the scale transformer, the 10k-node TF graph, the traced corpus."""

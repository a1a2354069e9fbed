"""Many passages, one graph: `dagmca build`."""

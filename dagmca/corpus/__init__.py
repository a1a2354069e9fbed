"""Many passages, one graph: `dagmca build` (DESIGN §11)."""

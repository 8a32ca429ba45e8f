"""Model architectures of the zoo, defined here (torchvision is not a dependency); workloads build them."""

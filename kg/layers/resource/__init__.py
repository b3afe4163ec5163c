"""The information-resource layer: documents and the references between them."""

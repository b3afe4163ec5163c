"""The retrieval methods, one module each, named as the method is named on the command line."""

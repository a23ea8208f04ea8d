"""Import and export formats: readers and writers, one module per format (see .catalogue)."""

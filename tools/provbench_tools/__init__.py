"""Project tools that are not plugins: generators of invented datasets in the official formats."""

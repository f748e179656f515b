"""Data adapters and figure builders of the pages (one module per page stem)."""

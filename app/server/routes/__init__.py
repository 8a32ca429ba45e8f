"""One router per resource, all included under /api/v1 by the app factory."""

"""The FastAPI server: app factory, routes, auth and error mapping."""

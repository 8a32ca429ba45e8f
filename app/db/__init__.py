"""The database: models, engine and sessions, and the query/service functions that own transactions."""

"""Online mode (``reader.type: online``): the database session, its SQL, the first schema checkpoint."""

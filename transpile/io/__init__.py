"""What touches the user's disk: reading and writing files and trees (``files``), the
cache of results (``cache``), the decisions of ``transpile review`` (``decisions``) and
the hand edits carried onto a new conversion (``merge``)."""

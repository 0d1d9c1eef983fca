"""Re-identification attack harness: does the sanitized text still tell which document source
(company, person, ...) a chunk comes from? ``harness`` is the pure core, ``cli`` the ``anonstream
attack`` command."""

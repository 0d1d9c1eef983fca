"""Store implementations (in-memory and Redis) behind the stage cores' small interfaces."""

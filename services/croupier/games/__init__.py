"""The games Croupier hosts, one package each (see croupier.engine.registry)."""

"""The gateway: the public door for players, programs and operators."""

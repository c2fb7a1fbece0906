"""The projector: folds the event log into Redis read models."""

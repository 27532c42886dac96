"""Stand-in for flax.training.train_state."""


class TrainState:
    @classmethod
    def create(cls, *, apply_fn, params, tx, **kwargs):
        return cls()

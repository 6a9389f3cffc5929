"""Learnability: a policy-gradient learner trained on the environment's reward, evaluated on held-out
tickets. `python -m training` (`make train`) trains one policy per seed on the `train` split,
evaluates it on `validation` while it learns and on `test` at the end, and writes
docs/learning_curve.png and docs/learning_curve.json.

- `training.reinforce`: the learner (REINFORCE with a value baseline, numpy only).
- `training.evaluate`: scores of the trained policy and of the random, rule and oracle references.
- `training.experiment`: one seed's run, the reference lines, and the JSON summary.
- `training.plot`: the figure.

Nothing is imported here, so `python -m training` can pin numpy's thread pools before numpy loads.
"""

"""Gymnasium adapters. Importing this package registers two environments:

- ``SupportEnv-v0`` (`SupportTextEnv`): a text observation and a structured `spaces.Dict` action.
- ``SupportEnvFeatures-v0`` (`SupportFeatureEnv`): a float32 feature vector built from the public
  observation only, and 85 discrete macro-actions, for classic RL.

Both take ``task_id`` (default ``end_to_end_resolution``), ``split`` (default ``train``),
``render_mode="ansi"`` and ``remote="HOST:PORT"`` to play through a running env service instead of
in-process (grpc is imported only then). ``reset(seed=N)`` plays scenario seed N; ``reset()``
draws the next seed from the env's ``np_random``; ``options={"task_id": ..., "split": ...}``
overrides the task or split for that episode. Needs the ``gym`` extra (gymnasium, numpy).
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

from supportenv.gym.feature_env import SupportFeatureEnv
from supportenv.gym.features import MACRO_ACTIONS, N_MACRO_ACTIONS, FeatureEncoder, macro_action, macro_index
from supportenv.gym.text_env import TEXT_ACTION_CHOICES, SupportTextEnv, decode_action, encode_action

TEXT_ENV_ID = "SupportEnv-v0"
FEATURE_ENV_ID = "SupportEnvFeatures-v0"

if TEXT_ENV_ID not in registry:
    register(id=TEXT_ENV_ID, entry_point="supportenv.gym.text_env:SupportTextEnv")
if FEATURE_ENV_ID not in registry:
    register(id=FEATURE_ENV_ID, entry_point="supportenv.gym.feature_env:SupportFeatureEnv")

__all__ = [
    "FEATURE_ENV_ID",
    "MACRO_ACTIONS",
    "N_MACRO_ACTIONS",
    "TEXT_ACTION_CHOICES",
    "TEXT_ENV_ID",
    "FeatureEncoder",
    "SupportFeatureEnv",
    "SupportTextEnv",
    "decode_action",
    "encode_action",
    "macro_action",
    "macro_index",
]

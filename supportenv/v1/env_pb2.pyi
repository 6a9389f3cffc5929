from supportenv.v1 import types_pb2 as _types_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ListTasksRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListTasksResponse(_message.Message):
    __slots__ = ("tasks",)
    TASKS_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_types_pb2.TaskInfo]
    def __init__(self, tasks: _Optional[_Iterable[_Union[_types_pb2.TaskInfo, _Mapping]]] = ...) -> None: ...

class ResetRequest(_message.Message):
    __slots__ = ("task_id", "split", "seed", "episode_id")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    SPLIT_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    split: _types_pb2.Split
    seed: int
    episode_id: str
    def __init__(self, task_id: _Optional[str] = ..., split: _Optional[_Union[_types_pb2.Split, str]] = ..., seed: _Optional[int] = ..., episode_id: _Optional[str] = ...) -> None: ...

class ResetResponse(_message.Message):
    __slots__ = ("observation", "state_token", "episode_id", "task")
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    STATE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    observation: _types_pb2.Observation
    state_token: bytes
    episode_id: str
    task: _types_pb2.TaskInfo
    def __init__(self, observation: _Optional[_Union[_types_pb2.Observation, _Mapping]] = ..., state_token: _Optional[bytes] = ..., episode_id: _Optional[str] = ..., task: _Optional[_Union[_types_pb2.TaskInfo, _Mapping]] = ...) -> None: ...

class StepRequest(_message.Message):
    __slots__ = ("state_token", "action", "next_episode")
    STATE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    NEXT_EPISODE_FIELD_NUMBER: _ClassVar[int]
    state_token: bytes
    action: _types_pb2.Action
    next_episode: ResetRequest
    def __init__(self, state_token: _Optional[bytes] = ..., action: _Optional[_Union[_types_pb2.Action, _Mapping]] = ..., next_episode: _Optional[_Union[ResetRequest, _Mapping]] = ...) -> None: ...

class StepResponse(_message.Message):
    __slots__ = ("observation", "reward", "terminated", "truncated", "reward_breakdown", "state_token", "cumulative_reward", "next_episode")
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    REWARD_FIELD_NUMBER: _ClassVar[int]
    TERMINATED_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    REWARD_BREAKDOWN_FIELD_NUMBER: _ClassVar[int]
    STATE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    CUMULATIVE_REWARD_FIELD_NUMBER: _ClassVar[int]
    NEXT_EPISODE_FIELD_NUMBER: _ClassVar[int]
    observation: _types_pb2.Observation
    reward: float
    terminated: bool
    truncated: bool
    reward_breakdown: _containers.RepeatedCompositeFieldContainer[_types_pb2.RewardComponent]
    state_token: bytes
    cumulative_reward: float
    next_episode: ResetResponse
    def __init__(self, observation: _Optional[_Union[_types_pb2.Observation, _Mapping]] = ..., reward: _Optional[float] = ..., terminated: _Optional[bool] = ..., truncated: _Optional[bool] = ..., reward_breakdown: _Optional[_Iterable[_Union[_types_pb2.RewardComponent, _Mapping]]] = ..., state_token: _Optional[bytes] = ..., cumulative_reward: _Optional[float] = ..., next_episode: _Optional[_Union[ResetResponse, _Mapping]] = ...) -> None: ...

class StateRequest(_message.Message):
    __slots__ = ("state_token",)
    STATE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    state_token: bytes
    def __init__(self, state_token: _Optional[bytes] = ...) -> None: ...

class EpisodeState(_message.Message):
    __slots__ = ("episode_id", "task_id", "split", "seed", "step", "max_steps", "terminated", "truncated", "cumulative_reward", "actions", "rewards", "observation", "identity_verified", "changes")
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    SPLIT_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    MAX_STEPS_FIELD_NUMBER: _ClassVar[int]
    TERMINATED_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    CUMULATIVE_REWARD_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    REWARDS_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    IDENTITY_VERIFIED_FIELD_NUMBER: _ClassVar[int]
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    episode_id: str
    task_id: str
    split: _types_pb2.Split
    seed: int
    step: int
    max_steps: int
    terminated: bool
    truncated: bool
    cumulative_reward: float
    actions: _containers.RepeatedCompositeFieldContainer[_types_pb2.Action]
    rewards: _containers.RepeatedScalarFieldContainer[float]
    observation: _types_pb2.Observation
    identity_verified: bool
    changes: _containers.RepeatedCompositeFieldContainer[RecordChange]
    def __init__(self, episode_id: _Optional[str] = ..., task_id: _Optional[str] = ..., split: _Optional[_Union[_types_pb2.Split, str]] = ..., seed: _Optional[int] = ..., step: _Optional[int] = ..., max_steps: _Optional[int] = ..., terminated: _Optional[bool] = ..., truncated: _Optional[bool] = ..., cumulative_reward: _Optional[float] = ..., actions: _Optional[_Iterable[_Union[_types_pb2.Action, _Mapping]]] = ..., rewards: _Optional[_Iterable[float]] = ..., observation: _Optional[_Union[_types_pb2.Observation, _Mapping]] = ..., identity_verified: _Optional[bool] = ..., changes: _Optional[_Iterable[_Union[RecordChange, _Mapping]]] = ...) -> None: ...

class RecordChange(_message.Message):
    __slots__ = ("tool", "target", "value")
    TOOL_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    tool: str
    target: str
    value: str
    def __init__(self, tool: _Optional[str] = ..., target: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class StateResponse(_message.Message):
    __slots__ = ("state",)
    STATE_FIELD_NUMBER: _ClassVar[int]
    state: EpisodeState
    def __init__(self, state: _Optional[_Union[EpisodeState, _Mapping]] = ...) -> None: ...

class ResetBatchRequest(_message.Message):
    __slots__ = ("requests",)
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.RepeatedCompositeFieldContainer[ResetRequest]
    def __init__(self, requests: _Optional[_Iterable[_Union[ResetRequest, _Mapping]]] = ...) -> None: ...

class ResetBatchResponse(_message.Message):
    __slots__ = ("responses",)
    RESPONSES_FIELD_NUMBER: _ClassVar[int]
    responses: _containers.RepeatedCompositeFieldContainer[ResetResponse]
    def __init__(self, responses: _Optional[_Iterable[_Union[ResetResponse, _Mapping]]] = ...) -> None: ...

class StepBatchRequest(_message.Message):
    __slots__ = ("requests",)
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.RepeatedCompositeFieldContainer[StepRequest]
    def __init__(self, requests: _Optional[_Iterable[_Union[StepRequest, _Mapping]]] = ...) -> None: ...

class StepBatchResponse(_message.Message):
    __slots__ = ("responses",)
    RESPONSES_FIELD_NUMBER: _ClassVar[int]
    responses: _containers.RepeatedCompositeFieldContainer[StepResponse]
    def __init__(self, responses: _Optional[_Iterable[_Union[StepResponse, _Mapping]]] = ...) -> None: ...

class SessionRequest(_message.Message):
    __slots__ = ("reset", "step", "state", "resume", "want_token", "next_episode")
    RESET_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    WANT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    NEXT_EPISODE_FIELD_NUMBER: _ClassVar[int]
    reset: ResetRequest
    step: _types_pb2.Action
    state: StateRequest
    resume: bytes
    want_token: bool
    next_episode: ResetRequest
    def __init__(self, reset: _Optional[_Union[ResetRequest, _Mapping]] = ..., step: _Optional[_Union[_types_pb2.Action, _Mapping]] = ..., state: _Optional[_Union[StateRequest, _Mapping]] = ..., resume: _Optional[bytes] = ..., want_token: _Optional[bool] = ..., next_episode: _Optional[_Union[ResetRequest, _Mapping]] = ...) -> None: ...

class SessionResponse(_message.Message):
    __slots__ = ("reset", "step", "state")
    RESET_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    reset: ResetResponse
    step: StepResponse
    state: StateResponse
    def __init__(self, reset: _Optional[_Union[ResetResponse, _Mapping]] = ..., step: _Optional[_Union[StepResponse, _Mapping]] = ..., state: _Optional[_Union[StateResponse, _Mapping]] = ...) -> None: ...

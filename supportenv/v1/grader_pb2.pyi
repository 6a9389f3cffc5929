from supportenv.v1 import types_pb2 as _types_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GradeRequest(_message.Message):
    __slots__ = ("trajectory",)
    TRAJECTORY_FIELD_NUMBER: _ClassVar[int]
    trajectory: _types_pb2.Trajectory
    def __init__(self, trajectory: _Optional[_Union[_types_pb2.Trajectory, _Mapping]] = ...) -> None: ...

class GradeComponent(_message.Message):
    __slots__ = ("name", "score", "weight", "detail")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    name: str
    score: float
    weight: float
    detail: str
    def __init__(self, name: _Optional[str] = ..., score: _Optional[float] = ..., weight: _Optional[float] = ..., detail: _Optional[str] = ...) -> None: ...

class GradeResponse(_message.Message):
    __slots__ = ("score", "passed", "components", "grader_version", "task_id", "pass_threshold", "steps", "terminated", "truncated", "cumulative_reward", "rewards", "episode_id", "failed_gates")
    SCORE_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    COMPONENTS_FIELD_NUMBER: _ClassVar[int]
    GRADER_VERSION_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    PASS_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    TERMINATED_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    CUMULATIVE_REWARD_FIELD_NUMBER: _ClassVar[int]
    REWARDS_FIELD_NUMBER: _ClassVar[int]
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    FAILED_GATES_FIELD_NUMBER: _ClassVar[int]
    score: float
    passed: bool
    components: _containers.RepeatedCompositeFieldContainer[GradeComponent]
    grader_version: str
    task_id: str
    pass_threshold: float
    steps: int
    terminated: bool
    truncated: bool
    cumulative_reward: float
    rewards: _containers.RepeatedScalarFieldContainer[float]
    episode_id: str
    failed_gates: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, score: _Optional[float] = ..., passed: _Optional[bool] = ..., components: _Optional[_Iterable[_Union[GradeComponent, _Mapping]]] = ..., grader_version: _Optional[str] = ..., task_id: _Optional[str] = ..., pass_threshold: _Optional[float] = ..., steps: _Optional[int] = ..., terminated: _Optional[bool] = ..., truncated: _Optional[bool] = ..., cumulative_reward: _Optional[float] = ..., rewards: _Optional[_Iterable[float]] = ..., episode_id: _Optional[str] = ..., failed_gates: _Optional[_Iterable[str]] = ...) -> None: ...
